"""daphne under yappi (CPU clock, every thread), for `bench_chat concurrent --profile yappi`:
profiling from the start to the end of the process (SIGTERM from the bench), then written
(pstats format) to the path given first. Starting or clearing it from a signal handler while
daphne served hung every handshake, so the profile holds the startup and the warm-up too: read
the answer path's functions. yappi is not a dependency: install it apart.

python -m bench.profiled_daphne OUT.prof [daphne arguments]
"""

import sys

import yappi

if __name__ == "__main__":
    out = sys.argv[1]
    yappi.set_clock_type("cpu")
    yappi.start(builtins=False, profile_threads=True)
    from daphne.cli import CommandLineInterface

    sys.argv = ["daphne", *sys.argv[2:]]
    try:
        CommandLineInterface.entrypoint()
    finally:
        yappi.stop()
        yappi.get_func_stats().save(out, type="pstat")
