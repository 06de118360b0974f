"""Importing fastnb without its compiled kernels: the error says why and
what to do.

Each case runs in a fresh interpreter, which qemu-user cannot start without
binfmt_misc: so these tests are not among those marked "emulated" (they run
on every x86-64 pass of CI).
"""

import shutil
from pathlib import Path

import pytest

import fastnb

from _helpers import run_child

# Also run on the wheel built from the sdist (.ci/run step 3).
pytestmark = pytest.mark.wheel


def pure_python_copy(folder, source_files=True):
    """fastnb's Python files, without any compiled kernels, in ``folder/fastnb``.

    With ``source_files``, a ``_kernels.pyx`` beside them as in a checkout
    (the installed package has none: only its presence matters here).
    """
    package = folder / "fastnb"
    package.mkdir()
    for path in Path(fastnb.__file__).parent.glob("*.py"):
        shutil.copy(path, package / path.name)
    if source_files:
        (package / "_kernels.pyx").write_text("# the kernels' Cython source\n")
    return package


def test_import_from_the_source_folder_says_what_to_do(tmp_path):
    # As `python -c "import fastnb"` run in a checkout that was installed
    # but not built in place: the folder comes first on sys.path.
    package = pure_python_copy(tmp_path)
    child = run_child("import fastnb", tmp_path)
    assert child.returncode != 0
    message = child.stderr.strip().splitlines()[-1]
    assert message.startswith("ImportError: fastnb's compiled kernels")
    assert f"source folder, {package}," in message
    assert "run Python from another folder" in message
    assert f"pip install -e . in {tmp_path}" in message
    assert "circular import" not in child.stderr


def test_import_without_kernels_outside_a_source_folder(tmp_path):
    package = pure_python_copy(tmp_path, source_files=False)
    child = run_child("import fastnb", tmp_path)
    assert child.returncode != 0
    message = child.stderr.strip().splitlines()[-1]
    assert message == (
        "ImportError: fastnb's compiled kernels (fastnb._kernels) are missing "
        f"from {package}: the installation is incomplete; reinstall fastnb."
    )
