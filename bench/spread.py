"""How an operation's work spreads over OpenMP threads, on any machine.

A machine with fewer cores than threads still shows whether a kernel gives
every thread a share: ask for T threads (more than the cores is fine), let
waiting threads sleep (``OMP_WAIT_POLICY=passive``, set before the OpenMP
runtime loads, so in a fresh process), and read each thread's CPU time
(nanoseconds, ``/proc/self/task/<tid>/schedstat``) before and after one
call of the operation. The kernels cap their threads at the usable CPUs,
so the process pretends that T are usable.

The figures of a call: how many threads did at least 1/(2T) of its work,
and the busiest thread's share of it (the main thread's share holds the
serial Python around the kernels too). A dynamic schedule hands the tasks
to other threads on each call, so the figures are taken call by call, and
their medians over the calls reported. A thread that ends during a call
takes its time with it: the calls in which one did are counted too
(GCC's OpenMP runtime ends the threads a smaller team leaves idle).
"""

import os
import statistics
import threading
import time

# How many calls are measured, and for how long at most.
CALLS = 30
MAX_WALL_SECONDS = 60.0
SPREAD_ENVIRONMENT = "FASTNB_BENCH_SPREAD"


def spread_environment(n_threads):
    """The environment of a process that measures the spread over n_threads."""
    return {
        **os.environ,
        "OMP_WAIT_POLICY": "passive",
        "OMP_NUM_THREADS": str(n_threads),
        SPREAD_ENVIRONMENT: str(n_threads),
    }


def pretend_usable_cpus(n_threads):
    """Make os.sched_getaffinity report n_threads usable CPUs, so that the
    kernels' cap at the usable CPUs lets n_threads run."""
    os.sched_getaffinity = lambda pid: set(range(n_threads))


def thread_cpu_ns():
    """{thread id: nanoseconds on a CPU} of this process's threads."""
    spent = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/schedstat") as f:
                spent[tid] = int(f.read().split()[0])
        except OSError:  # the thread ended meanwhile
            continue
    return spent


def call_spread(function, n_threads):
    """``(busy threads, busiest share, a thread ended)`` of one call.

    The calling thread's time is read from its own clock next to the call:
    reading the other threads' files takes it about 0.3 ms (20 threads),
    which their figures would otherwise charge to the call.
    """
    before = thread_cpu_ns()
    own_before = time.thread_time_ns()
    function()
    own = time.thread_time_ns() - own_before
    after = thread_cpu_ns()
    caller = str(threading.get_native_id())
    spent = [
        own if tid == caller else ns - before.get(tid, 0) for tid, ns in after.items()
    ]
    total = sum(spent)
    if total == 0:
        return 0, 1.0, False
    busy = sum(ns >= total / (2 * n_threads) for ns in spent)
    return busy, max(spent) / total, not before.keys() <= after.keys()


def measure_spread(function, n_threads):
    """``(busy threads, busiest share, calls with a thread ended, calls)``:
    the medians over up to CALLS calls of ``function`` (a thread is busy if
    it did at least 1/(2 n_threads) of a call's work)."""
    function()  # the OpenMP threads start, and caches fill
    start = time.perf_counter()
    calls = []
    while len(calls) < CALLS and time.perf_counter() - start < MAX_WALL_SECONDS:
        calls.append(call_spread(function, n_threads))
    busy, busiest, ended = zip(*calls, strict=True)
    return statistics.median(busy), statistics.median(busiest), sum(ended), len(calls)
