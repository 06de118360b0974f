#!/usr/bin/env bash
# The "every core" measurements in one command, for a many-core machine
# where nothing can be installed but a wheel carried there (the device
# machine: Python with NumPy, SciPy, scikit-learn and threadpoolctl).
#
# Here, once a build (a wheel from pip wheel links the machine's OpenMP
# runtime, libgomp; tools/build_dist.sh's manylinux wheel carries its own):
#     python -m pip wheel --no-deps -w .whl .
#     echo /.whl/ >> .git/info/exclude
# There (carry .whl; a command may run 10 minutes):
#     bash bench/on_16_cores.sh [--quick]
#
# The wheel is installed into a folder of its own, and the bench is run
# from outside the checkout (whose fastnb/ has no kernels): the machine's
# facts, the scaling table at 1, 4, 8 and 16 threads with each operation's
# serial share (--threads), and the spread of each operation's CPU time
# over 16 threads (--spread 16); then fastnb.text's (bench_text.py). Each is
# printed and written to $OUT (or ./on_16_cores) for bench/README.md. Other
# arguments go to the first two runs.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$repo/on_16_cores}
mkdir -p "$out"
wheels=("$repo"/.whl/fastnb-*.whl)
if [[ ${#wheels[@]} != 1 || ! -f ${wheels[0]} ]]; then
    echo "on_16_cores: expected one fastnb wheel in $repo/.whl (see this script's head)" >&2
    exit 1
fi
site=$(mktemp -d)
python3 -m pip install --quiet --no-index --no-deps --no-compile --no-cache-dir \
    --target "$site" "${wheels[0]}"
export PYTHONPATH=$site PYTHONUNBUFFERED=1
cd "$site"
{
    lscpu
    python3 -c "import fastnb; fastnb.show_config()"
} 2>&1 | tee "$out/machine.txt"
python3 "$repo/bench/bench_naive_bayes.py" --threads 1,4,8,16 "$@" 2>&1 \
    | tee "$out/scaling.txt"
python3 "$repo/bench/bench_naive_bayes.py" --spread 16 "$@" 2>&1 | tee "$out/spread.txt"
# fastnb.text on 20 Newsgroups (the shared data, when the machine has it):
# the vectorizers and a text model at 1 and 16 threads, and their spread.
python3 "$repo/bench/bench_text.py" --threads 1,16 2>&1 | tee "$out/text.txt"
python3 "$repo/bench/bench_text.py" --spread 16 2>&1 | tee "$out/text_spread.txt"
