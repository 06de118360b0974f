"""The Python examples of the README and of the user guide run, each alone,
and print what the page says.

The documents are README.md, the site's getting-started page and every page
of docs/user_guide/. Each block
runs as a reader would run it: by itself, in a fresh interpreter, in an
empty folder (so the installed fastnb is imported, and a data path relative
to the working folder fails), with no variable from another block. Blocks
that read the shared data folder find it as a reader does without
``$FASTNB_DATA_DIR``, at ``../shared/data`` (the empty folder has the data
folder there), and again with ``$FASTNB_DATA_DIR`` naming it and nothing at
``../shared/data``; they skip, naming the file, where the data set is
absent. Blocks that need an optional package skip
where it is not installed. Where the documents are not beside the tests
(tests copied elsewhere, or the sdist, which has no docs/), the tests of
the missing ones skip.

What a block prints is checked where the page states it: in a comment on
a ``print(...)`` line (``print(labels)  # ['spam' 'ham']``; a remark may
follow the output after ", as"), or in a plain block introduced by
"prints" right after the example.
"""

import importlib.util
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from _helpers import data_dir, require_data

# Also run on the wheel built from the sdist (.ci/run step 3).
pytestmark = pytest.mark.wheel

ROOT = Path(__file__).parents[1]
README = ROOT / "README.md"
GUIDE = ROOT / "docs" / "user_guide"
# The README, the getting-started page, then the guide's pages in name order
# (those that are there).
DOCUMENTS = [README, ROOT / "docs" / "getting_started.md", *sorted(GUIDE.glob("*.md"))]

# Packages of the extras (and the fastnb modules that need them): a block
# that imports one skips where it is not installed.
OPTIONAL = {
    "dask",
    "matplotlib",
    "onnx",
    "onnxruntime",
    "pyspark",
    "skl2onnx",
    "skops",
}
NEEDED_BY = {
    "fastnb.dask": {"dask"},
    "fastnb.spark": {"pyspark"},
    "fastnb.onnx": {"onnx", "onnxruntime", "skl2onnx"},
    "fastnb.plot": {"matplotlib"},
}
# The files of the shared data folder each data set's examples read.
DATA_FILES = {
    "sms_spam": "sms_spam/SMSSpamCollection",
    "20newsgroups": "20newsgroups/20news-bydate.tar.gz",
}
# Files examples write to the working folder.
WRITTEN = ["reading-a-model.png", "spam.skops"]
# Where a block finds the shared data folder (see the guide's index page):
# the variable, else this path relative to the working folder.
DATA_FOLDER = 'os.environ.get("FASTNB_DATA_DIR", "../shared/data")'
# A print call whose line states its output in a comment.
STATED = re.compile(r"^\s*print\(.*\)\s+#\s+(?P<output>.*?)(?:, as .*)?$")
# A figure a page shows: ![text](path), the path relative to the page.
FIGURE = re.compile(r"!\[[^\]]*\]\((?P<path>[^)\s]+)\)")


@dataclass
class Example:
    """A Python block of a document: where it is, its code, and what the
    document says it prints (None where it does not say)."""

    document: Path
    heading: str
    line: int
    code: str
    prints: str | None

    @property
    def id(self):
        return f"{self.document.stem}-{self.heading}-line{self.line}"


def examples(document):
    """The Python blocks of ``document``, in order."""
    lines = document.read_text().splitlines()
    found, heading, i = [], "", 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            heading = re.sub(r"\W+", "-", line.lstrip("# ")).strip("-").lower()
        if not line.startswith("```"):
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        if line.strip() == "```python":
            code = "\n".join(lines[i + 1 : end]) + "\n"
            prints = stated_output(lines, end)
            found.append(Example(document, heading, i + 1, code, prints))
        i = end + 1
    return found


def stated_output(lines, end):
    """What the document says the block ending at line ``end`` prints."""
    rest = lines[end + 1 :]
    # A plain block introduced by "prints" right after the example.
    if [line.strip() for line in rest[:4]] == ["", "prints", "", "```"]:
        stop = next(j for j in range(4, len(rest)) if rest[j].startswith("```"))
        return "\n".join(rest[4:stop])
    code = lines[: end + 1]
    start = max(j for j, line in enumerate(code) if line.startswith("```python"))
    stated = [STATED.match(line) for line in code[start + 1 : end]]
    outputs = [match["output"] for match in stated if match]
    return "\n".join(outputs) if outputs else None


EXAMPLES = [e for doc in DOCUMENTS if doc.exists() for e in examples(doc)]
# Each block once, found as a reader finds the data without the variable
# (the folder beside the working one); those that read data once more, with
# the variable naming the folder.
RUNS = [pytest.param(e, "beside", id=e.id) for e in EXAMPLES] + [
    pytest.param(e, "variable", id=f"{e.id}-variable")
    for e in EXAMPLES
    if "FASTNB_DATA_DIR" in e.code
]


def test_the_documents_have_examples():
    if not README.exists():
        pytest.skip(f"{README} is not beside the tests (tests copied elsewhere)")
    assert [e for e in EXAMPLES if e.document == README]
    if not GUIDE.exists():
        pytest.skip(f"{GUIDE} is not beside the tests (the sdist has no docs/)")
    assert len(EXAMPLES) >= 20


def needed_packages(code):
    """The optional packages ``code`` imports, itself or through fastnb."""
    modules = re.findall(r"^\s*(?:from|import)\s+([\w.]+)", code, re.MULTILINE)
    needed = set()
    for module in modules:
        needed |= {module.split(".")[0]} & OPTIONAL
        needed |= NEEDED_BY.get(module, set())
    return sorted(needed)


@pytest.mark.parametrize(("example", "data_from"), RUNS)
def test_example_runs_alone(example, data_from, tmp_path, request):
    code = example.code
    # Offline, and no data path relative to the working folder but the data
    # folder's default.
    assert "../" not in code.replace(DATA_FOLDER, "")
    if "fetch_" in code:
        assert "download_if_missing=False" in code
    missing = [m for m in needed_packages(code) if not importlib.util.find_spec(m)]
    if missing:
        pytest.skip(f"the example needs {', '.join(missing)}")
    data = data_dir()
    if "FASTNB_DATA_DIR" in code:
        assert DATA_FOLDER in code, "an example reads the data folder another way"
        used = [name for name in DATA_FILES if name in code]
        assert used, "an example reads a data set this test does not know"
        for name in used:
            require_data(DATA_FILES[name])
        if "20newsgroups" in used:
            data = request.getfixturevalue("newsgroups_data")
    # The working folder, empty; the data folder is ../shared/data from it,
    # or only where $FASTNB_DATA_DIR says.
    work = tmp_path / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "FASTNB_DATA_DIR"}
    env["MPLBACKEND"] = "Agg"
    if data_from == "beside":
        (tmp_path / "shared").mkdir()
        (tmp_path / "shared" / "data").symlink_to(data, target_is_directory=True)
    else:
        env["FASTNB_DATA_DIR"] = str(data)
    # Named for its document and line, so that a traceback points into it.
    script = work / f"{example.document.stem}_line_{example.line}.py"
    script.write_text(code)
    child = subprocess.run(
        [sys.executable, script.name],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert child.returncode == 0, child.stderr
    printed = child.stdout.strip()
    if example.prints is None:
        assert not printed, "the document does not say what this example prints"
    else:
        assert printed == example.prints.strip()
    for name in WRITTEN:
        if f'"{name}"' in code:
            assert (work / name).exists()


@pytest.mark.parametrize("document", DOCUMENTS, ids=[d.name for d in DOCUMENTS])
def test_the_figures_are_there(document):
    if not document.exists():
        pytest.skip(f"{document} is not beside the tests")
    for match in FIGURE.finditer(document.read_text()):
        assert (document.parent / match["path"]).exists(), match["path"]


def test_the_guide_shows_the_figure_its_example_draws():
    page = GUIDE / "reading_a_model.md"
    if not page.exists():
        pytest.skip(f"{page} is not beside the tests")
    assert "](reading-a-model.png)" in page.read_text()
    assert (GUIDE / "reading-a-model.png").exists()


# The install guide's command that adds an extra to an installed fastnb.
EXTRA_BY_NAME = re.compile(r'^pip install "(?P<requirement>fastnb\[[\w,]+\])"$', re.M)


def test_the_guide_adds_an_extra_without_a_build(tmp_path):
    # pip takes the installed fastnb for the name and builds nothing (a
    # dry run, offline, without the extra's packages: what it would do with
    # fastnb itself).
    pytest.importorskip("pip")
    page = GUIDE / "install.md"
    if not page.exists():
        pytest.skip(f"{page} is not beside the tests")
    commands = EXTRA_BY_NAME.findall(page.read_text())
    assert commands, "the install guide shows no extra added by name"
    for requirement in commands:
        child = subprocess.run(
            [sys.executable, "-m", "pip", "install", "--dry-run", "--no-index"]
            + ["--no-deps", "--disable-pip-version-check", requirement],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert child.returncode == 0, child.stderr
        assert f"Requirement already satisfied: {requirement}" in child.stdout
        assert "Would install" not in child.stdout
