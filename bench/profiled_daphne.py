"""daphne under yappi (CPU clock, every thread), profiling only between two signals, for
`bench_chat concurrent --profile yappi`: SIGUSR1 starts, SIGUSR2 stops and writes the profile
(pstats format) to the path given first. yappi is not a dependency: install it apart.

python -m bench.profiled_daphne OUT.prof [daphne arguments]
"""

import signal
import sys

import yappi


def _start(*_):
    yappi.clear_stats()
    yappi.set_clock_type("cpu")
    yappi.start(builtins=True, profile_threads=True)


def _stop(*_):
    yappi.stop()
    yappi.get_func_stats().save(OUT, type="pstat")


if __name__ == "__main__":
    OUT = sys.argv[1]
    signal.signal(signal.SIGUSR1, _start)
    signal.signal(signal.SIGUSR2, _stop)
    from daphne.cli import CommandLineInterface

    sys.argv = ["daphne", *sys.argv[2:]]
    CommandLineInterface.entrypoint()
