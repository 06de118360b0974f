"""The quick benchmark's output: what bench/bench_naive_bayes.py prints
where a peer is not installed. (Its timings are the bench's business, not
the tests'.)"""

import pathlib

from _helpers import run_child

BENCH = pathlib.Path(__file__).resolve().parent.parent / "bench"


def test_a_peer_not_installed_is_said_once_with_no_column(tmp_path):
    # Issue 54: the Adult-size case printed a column of n/a for
    # mixed-naive-bayes where it was not installed.
    result = run_child(
        f"""
        import runpy, sys
        sys.modules["mixed_naive_bayes"] = None  # as if not installed
        sys.path.insert(0, {str(BENCH)!r})
        sys.argv = ["bench_naive_bayes.py", "--quick", "--case", "adult-size",
                    "--repeats", "1"]
        runpy.run_path({str(BENCH / "bench_naive_bayes.py")!r}, run_name="__main__")
        """,
        tmp_path,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    said = [line for line in lines if "mixed-naive-bayes" in line]
    assert said == [
        "mixed-naive-bayes: not installed (pip install mixed-naive-bayes), "
        "left out of the table"
    ]
    header = next(line for line in lines if line.startswith("operation"))
    assert header.split() == [
        "operation",
        "fastnb",
        "s",
        "sklearn",
        "s",
        "sklearn/fastnb",
    ]
    assert "n/a" not in result.stdout


def test_the_cases_of_shared_data_skip_naming_the_file(tmp_path):
    # Without the shared data, the real-text and text-pipeline cases say
    # which file they looked for, and where, and the run goes on.
    empty = tmp_path / "no data"
    empty.mkdir()
    result = run_child(
        f"""
        import os, runpy, sys
        os.environ["FASTNB_DATA_DIR"] = {str(empty)!r}
        sys.path.insert(0, {str(BENCH)!r})
        for case in ("real-text", "text-pipeline"):
            sys.argv = ["bench_naive_bayes.py", "--quick", "--case", case]
            runpy.run_path({str(BENCH / "bench_naive_bayes.py")!r}, run_name="__main__")
        """,
        tmp_path,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    skipped = [line for line in result.stdout.splitlines() if "skipped" in line]
    assert [line.split(":")[0] for line in skipped] == ["real-text", "text pipeline"]
    for line in skipped:
        assert f"no 20newsgroups/20news-bydate.tar.gz in {empty} " in line
