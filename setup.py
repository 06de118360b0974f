"""Build the compiled kernels, ``fastnb._kernels`` and ``fastnb._vectorised``.

The kernels are fastnb/_kernels.pyx, whose speed does not depend on the
instruction set, and fastnb/_vectorised.pyx, whose speed does; both cimport
the plain-C helpers of fastnb/_rows.pxd (declaring fastnb/_rows.h; rendered
here from the Tempita template fastnb/_rows.pxd.tp, which lists each row
helper's specialisations once) and the inline helpers of
fastnb/_kernel_helpers.pxd. OpenMP is used when the
compiler can build and link a small OpenMP program; otherwise the kernels are
built single-threaded. fastnb._kernels is compiled once; fastnb._vectorised
is compiled again for newer instruction sets, on x86-64
(``fastnb._vectorised_avx2``, ``fastnb._vectorised_avx512``) and on aarch64
(``fastnb._vectorised_sve``), from copies of its .pyx under build/simd/,
which find the .pxd and .h files on the include paths; ``fastnb._simd``
picks the best one the CPU runs, once, at import; a variant the compiler
cannot target is left out. The extensions compile in parallel, one a core.
The architecture is sysconfig's platform, so a cross build
(CC=aarch64-linux-gnu-gcc, _PYTHON_HOST_PLATFORM=linux-aarch64:
tools/build_dist.sh) gets its own variants. Environment switches:

* ``FASTNB_DEBUG=1`` builds with bounds and initialisation checks on, and
  without optimisation, for tests and fuzzing (baseline only): an index out
  of range raises IndexError, in the C row helpers of _rows.h too. Negative
  indices are out of range as well (no wraparound: the kernels use none).
* ``FASTNB_NO_OPENMP=1`` builds without OpenMP even when it is available.
* ``FASTNB_NO_DISPATCH=1`` builds the baseline kernels only.
* ``FASTNB_NATIVE=1`` builds the baseline kernels only, both modules for
  this machine's CPU (``-march=native``): a local build to compare the
  dispatch against.
"""

import os
import shutil
import sysconfig
import tempfile

from Cython import Tempita
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


def _env_flag(name):
    return os.environ.get(name, "").strip() not in ("", "0")


DEBUG = _env_flag("FASTNB_DEBUG")

# The kernels use Python's limited C API of CPython 3.11 (and no NumPy C API:
# arrays come in as buffers), so one build, tagged cp311-abi3, imports on
# CPython 3.11 and every later version.
LIMITED_API = "0x030B0000"

DIRECTIVES = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": False,
    "initializedcheck": DEBUG,
    "cdivision": True,
}

OPENMP_CHECK = """
#include <omp.h>
int main(void) { return omp_get_max_threads() > 0 ? 0 : 1; }
"""

EMPTY_PROGRAM = "int main(void) { return 0; }\n"

# The modules built once (for the baseline of the architecture), each from
# fastnb/<name>.pyx; the second is built again for each variant.
KERNELS = "fastnb._kernels"
VECTORISED = "fastnb._vectorised"

# Instruction-set variants of each architecture: module suffix -> compiler flag.
SIMD_VARIANTS = {
    "x86_64": {"avx2": "-march=haswell", "avx512": "-march=skylake-avx512"},
    "aarch64": {"sve": "-march=armv8.2-a+sve"},
}


def target_machine():
    """The architecture the extension is built for: sysconfig's platform,
    which a cross build sets with _PYTHON_HOST_PLATFORM (linux-aarch64)."""
    machine = sysconfig.get_platform().rsplit("-", 1)[-1].lower()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)


class BuildExtOpenMP(build_ext):
    """build_ext that adds the compiler's OpenMP flag when it works, and
    leaves debug information out of a release build (Python's CFLAGS ask
    for -g: on the kernels' 9 MB of C, a third of the compile time)."""

    def build_extensions(self):
        unix = self.compiler.compiler_type != "msvc"
        if unix and not DEBUG:
            for ext in self.extensions:
                ext.extra_compile_args.append("-g0")
        flag = "-fopenmp" if unix else "/openmp"
        if _env_flag("FASTNB_NO_OPENMP"):
            print("fastnb: FASTNB_NO_OPENMP set, building without OpenMP")
        elif self._compiles_with(flag, OPENMP_CHECK):
            for ext in self.extensions:
                ext.extra_compile_args.append(flag)
                if unix:
                    ext.extra_link_args.append(flag)
        else:
            print("fastnb: the compiler cannot build OpenMP code; single-threaded")
        self.extensions = [
            ext
            for ext in self.extensions
            if ext.name in (KERNELS, VECTORISED)
            or (unix and self._compiles_with(ext.extra_compile_args[0], EMPTY_PROGRAM))
        ]
        self.parallel = self.parallel or os.cpu_count()
        super().build_extensions()

    def _compiles_with(self, flag, program):
        with tempfile.TemporaryDirectory() as tmp:
            source = os.path.join(tmp, "check.c")
            with open(source, "w") as f:
                f.write(program)
            try:
                objects = self.compiler.compile(
                    [source], output_dir=tmp, extra_postargs=[flag]
                )
                self.compiler.link_executable(
                    objects, os.path.join(tmp, "check"), extra_postargs=[flag]
                )
            except Exception:  # any compiler or linker failure means "no"
                return False
        return True


# Tempita templates, rendered before Cython runs: the file less ".tp".
TEMPLATES = [os.path.join("fastnb", "_rows.pxd.tp")]


def render_templates():
    """Write each template's file (fastnb/_rows.pxd from fastnb/_rows.pxd.tp),
    headed by a line saying where it comes from; unchanged files are left
    as they are."""
    for template in TEMPLATES:
        with open(template) as f:
            text = Tempita.Template(f.read(), name=template).substitute()
        target = template.removesuffix(".tp")
        text = (
            f"# Generated by setup.py from {os.path.basename(template)}: "
            "edit that file, not this one.\n" + text
        )
        if os.path.exists(target):
            with open(target) as f:
                if f.read() == text:
                    continue
        with open(target, "w") as f:
            f.write(text)


def kernels_extension(name, source, flags):
    return Extension(
        name,
        [source],
        # fastnb/ for _rows.h, also from the copies under build/simd/.
        include_dirs=["fastnb"],
        define_macros=[("Py_LIMITED_API", LIMITED_API)]
        + ([("FASTNB_DEBUG", "1")] if DEBUG else []),
        py_limited_api=True,
        extra_compile_args=flags + (["-O0", "-g"] if DEBUG else []),
    )


def source_of(module):
    """The Cython source of a module: fastnb/_x.pyx for fastnb._x."""
    return module.replace(".", "/") + ".pyx"


def kernels_extensions():
    """fastnb._kernels and fastnb._vectorised for the baseline, and a copy of
    fastnb._vectorised per instruction-set variant of the target
    architecture."""
    if _env_flag("FASTNB_NATIVE"):
        return [
            kernels_extension(module, source_of(module), ["-march=native"])
            for module in (KERNELS, VECTORISED)
        ]
    extensions = [
        kernels_extension(module, source_of(module), [])
        for module in (KERNELS, VECTORISED)
    ]
    variants = SIMD_VARIANTS.get(target_machine(), {})
    if DEBUG or _env_flag("FASTNB_NO_DISPATCH") or not variants:
        return extensions
    os.makedirs(os.path.join("build", "simd"), exist_ok=True)
    for suffix, flag in variants.items():
        name = f"{VECTORISED}_{suffix}"
        source = os.path.join("build", "simd", os.path.basename(source_of(name)))
        shutil.copyfile(source_of(VECTORISED), source)
        extensions.append(kernels_extension(name, source, [flag]))
    return extensions


# Each kind of build in its own folder: a debug or baseline-only build must
# not pick up the release variants an earlier build left in build/lib.
if DEBUG:
    BUILD_KIND = "debug"
elif _env_flag("FASTNB_NATIVE"):
    BUILD_KIND = "native"
elif _env_flag("FASTNB_NO_DISPATCH"):
    BUILD_KIND = "baseline"
else:
    BUILD_KIND = "release"

render_templates()
setup(
    options={
        "build": {"build_base": os.path.join("build", BUILD_KIND)},
        "bdist_wheel": {"py_limited_api": "cp311"},
    },
    # force: the generated C depends on the directives (debug or not), which
    # Cython's timestamp check does not see.
    # include_path: the copies under build/simd/ cimport fastnb's .pxd files too.
    # nthreads: the modules and the variants' copies are translated in parallel.
    ext_modules=cythonize(
        kernels_extensions(),
        compiler_directives=DIRECTIVES,
        include_path=["."],
        force=True,
        nthreads=os.cpu_count() or 1,
    ),
    cmdclass={"build_ext": BuildExtOpenMP},
)
