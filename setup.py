"""Build the compiled kernels, ``fastnb._kernels``.

OpenMP is used when the compiler can build and link a small OpenMP program;
otherwise the kernels are built single-threaded.  Environment switches:

* ``FASTNB_DEBUG=1`` builds with bounds checks, wraparound and initialisation
  checks on, and without optimisation, for tests and fuzzing.
* ``FASTNB_NO_OPENMP=1`` builds without OpenMP even when it is available.
"""

import os
import tempfile

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


def _env_flag(name):
    return os.environ.get(name, "").strip() not in ("", "0")


DEBUG = _env_flag("FASTNB_DEBUG")

DIRECTIVES = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    "cdivision": True,
}

OPENMP_CHECK = """
#include <omp.h>
int main(void) { return omp_get_max_threads() > 0 ? 0 : 1; }
"""


class BuildExtOpenMP(build_ext):
    """build_ext that adds the compiler's OpenMP flag when it works."""

    def build_extensions(self):
        flag = "/openmp" if self.compiler.compiler_type == "msvc" else "-fopenmp"
        if _env_flag("FASTNB_NO_OPENMP"):
            print("fastnb: FASTNB_NO_OPENMP set, building without OpenMP")
        elif self._compiles_with(flag):
            for ext in self.extensions:
                ext.extra_compile_args.append(flag)
                if self.compiler.compiler_type != "msvc":
                    ext.extra_link_args.append(flag)
        else:
            print("fastnb: the compiler cannot build OpenMP code; single-threaded")
        super().build_extensions()

    def _compiles_with(self, flag):
        with tempfile.TemporaryDirectory() as tmp:
            source = os.path.join(tmp, "openmp_check.c")
            with open(source, "w") as f:
                f.write(OPENMP_CHECK)
            try:
                objects = self.compiler.compile(
                    [source], output_dir=tmp, extra_postargs=[flag]
                )
                self.compiler.link_executable(
                    objects, os.path.join(tmp, "openmp_check"), extra_postargs=[flag]
                )
            except Exception:  # any compiler or linker failure means "no"
                return False
        return True


extension = Extension(
    "fastnb._kernels",
    ["fastnb/_kernels.pyx"],
    include_dirs=[np.get_include()],
    define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")]
    + ([("FASTNB_DEBUG", "1")] if DEBUG else []),
    extra_compile_args=["-O0", "-g"] if DEBUG else [],
)

setup(
    # force: the generated C depends on the directives (debug or not), which
    # Cython's timestamp check does not see.
    ext_modules=cythonize([extension], compiler_directives=DIRECTIVES, force=True),
    cmdclass={"build_ext": BuildExtOpenMP},
)
