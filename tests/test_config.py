"""fastnb.show_config: one line per fact, matching the running build."""

import doctest
import os
import platform
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy
import sklearn

import fastnb
from fastnb import _config
from fastnb._simd import kernels as _kernels
from fastnb._threads import effective_n_threads

# Also run on the aarch64 wheel under qemu-user (.ci/run).
pytestmark = pytest.mark.emulated


def shown(capsys):
    """show_config's output as a dict of name to value, checking the layout."""
    assert fastnb.show_config() is None
    lines = capsys.readouterr().out.splitlines()
    items = {}
    for line in lines:
        name, sep, value = line.partition(": ")
        assert sep, f"not a 'name: value' line: {line!r}"
        items[name] = value.strip()
    assert len(items) == len(lines), "a name is printed twice"
    return items


def test_every_fact_is_printed(capsys):
    items = shown(capsys)
    assert list(items) == [
        "fastnb",
        "OpenMP",
        "threads",
        "debug build",
        "SIMD target",
        "ABI",
        "Python",
        "platform",
        "NumPy",
        "SciPy",
        "scikit-learn",
    ]


def test_values_match_the_running_build(capsys):
    items = shown(capsys)
    version, location = items["fastnb"].split(" ", 1)
    assert version == fastnb.__version__
    assert location == f"({os.path.dirname(os.path.abspath(fastnb.__file__))})"
    if _kernels.openmp_enabled():
        # The runtime is a library this process has mapped, by its file name.
        runtime = items["OpenMP"].removeprefix("yes (").removesuffix(")")
        mapped = Path("/proc/self/maps").read_text()
        assert os.path.basename(runtime) in mapped, runtime
        assert "omp" in os.path.basename(runtime), runtime
    else:
        assert items["OpenMP"] == "no"
    suffix = Path(_kernels.__file__).suffixes[-2]
    assert items["ABI"].startswith("abi3" if suffix == ".abi3" else "CPython 3.")
    assert items["threads"] == str(effective_n_threads())
    assert items["debug build"] == ("yes" if _kernels.debug_build() else "no")
    assert items["SIMD target"] == _config._simd_target()
    assert items["Python"].startswith(platform.python_version() + " ")
    assert items["NumPy"] == np.__version__
    assert items["SciPy"] == scipy.__version__
    assert items["scikit-learn"] == sklearn.__version__


def test_exported():
    assert "show_config" in fastnb.__all__


def test_docstring_examples():
    failed, attempted = doctest.testmod(_config, optionflags=doctest.ELLIPSIS)
    assert attempted > 0
    assert failed == 0


def test_dir_lists_the_public_names():
    # Not the names __init__ imports for itself (typing's Any, TYPE_CHECKING,
    # the __future__ import's annotations) nor the private modules.
    assert dir(fastnb) == sorted(fastnb.__all__)
    assert all(hasattr(fastnb, name) for name in dir(fastnb))


def test_the_suite_takes_warnings_for_errors():
    # pyproject.toml's filterwarnings: a warning no test asserts fails the
    # test where it is raised (issue 54: 11 went by unnoticed).
    with pytest.raises(UserWarning, match="no test expects"):
        warnings.warn("a warning no test expects", UserWarning, stacklevel=1)
