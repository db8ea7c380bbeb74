"""CPU time spent on a piece of work on both sides of the database connection.

A search costs CPU in this process (every thread: the event loop, the embedding model's threads,
the search lanes) and in the PostgreSQL processes that run its SQL. Wall-clock time on a shared
machine mostly measures the neighbours; CPU time measures the work.

- this process: `time.process_time_ns()` (all threads, nanoseconds);
- PostgreSQL: `/proc/<pid>/schedstat` (time on a CPU, nanoseconds) of the backends behind the
  connections the work uses (`pg_backend_pid()` of each; the search lanes' connections are
  opened for that), plus the server's other processes (io workers, writers) and the children
  the postmaster has reaped (parallel query workers) as "server other".

Linux only (it reads /proc); the embedded PostgreSQL runs on the same machine.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from django.db import connection

from chat.lanes import search_db_lanes

_TICK_NS = 1_000_000_000 // os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class CpuSample:
    process_ns: int
    backends_ns: int
    server_other_ns: int

    def __sub__(self, other: CpuSample) -> CpuSample:
        return CpuSample(
            self.process_ns - other.process_ns,
            self.backends_ns - other.backends_ns,
            self.server_other_ns - other.server_other_ns,
        )

    def __add__(self, other: CpuSample) -> CpuSample:
        return CpuSample(
            self.process_ns + other.process_ns,
            self.backends_ns + other.backends_ns,
            self.server_other_ns + other.server_other_ns,
        )

    @property
    def total_ns(self) -> int:
        """This process and its own backends. The server's other processes are reported apart:
        they also run autovacuum and checkpoints, whoever caused them, so they are noisy."""
        return self.process_ns + self.backends_ns

    def per(self, n: int) -> dict[str, float]:
        """Milliseconds per item over `n` items."""
        n = max(n, 1)
        return {
            "total_ms": round(self.total_ns / n / 1e6, 3),
            "python_ms": round(self.process_ns / n / 1e6, 3),
            "sql_ms": round(self.backends_ns / n / 1e6, 3),
            "server_other_ms": round(self.server_other_ns / n / 1e6, 3),
        }


ZERO = CpuSample(0, 0, 0)


def _on_cpu_ns(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            return int(f.read().split()[0])
    except FileNotFoundError:  # the process ended (a connection closed): nothing more to add
        return 0


def _reaped_children_ns(pid: int) -> int:
    """CPU of the postmaster's exited children (cutime + cstime), in clock ticks."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return 0
    return (int(fields[13]) + int(fields[14])) * _TICK_NS  # fields 16 and 17 of stat(5)


def _backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


class CpuMeter:
    """Reads the CPU used so far by this process and by the PostgreSQL processes serving it."""

    def __init__(self):
        self.backends = self._backends()
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pid FROM pg_stat_activity WHERE backend_type <> 'client backend'"
            )
            self.server_others = [row[0] for row in cursor.fetchall()]
            cursor.execute("SELECT pg_postmaster_start_time()")  # also proves the server is local
        self.postmaster = self._postmaster_pid()

    @staticmethod
    def _backends() -> list[int]:
        # This thread's connection and every search lane's (each lane thread opens its own).
        pids = {_backend_pid()}
        for executor in search_db_lanes.executors:
            pids.add(executor.submit(_backend_pid).result())
        return sorted(pids)

    @staticmethod
    def _postmaster_pid() -> int | None:
        with connection.cursor() as cursor:
            cursor.execute("SHOW data_directory")
            data_directory = cursor.fetchone()[0]
        try:
            with open(os.path.join(data_directory, "postmaster.pid")) as f:
                return int(f.readline())
        except (OSError, ValueError):
            return None

    def read(self) -> CpuSample:
        backends = sum(_on_cpu_ns(pid) for pid in self.backends)
        other = sum(_on_cpu_ns(pid) for pid in self.server_others)
        if self.postmaster is not None:
            other += _on_cpu_ns(self.postmaster) + _reaped_children_ns(self.postmaster)
        return CpuSample(time.process_time_ns(), backends, other)

    def overhead(self, reads: int = 50) -> CpuSample:
        """What one read costs (it opens a dozen /proc files): the median of back-to-back reads,
        to take off every metered span."""
        spans = []
        for _ in range(reads):
            first = self.read()
            spans.append(self.read() - first)
        spans.sort(key=lambda s: s.total_ns)
        return spans[len(spans) // 2]

    def unchanged(self) -> bool:
        """The connections are still those measured (none was closed and reopened)."""
        return self._backends() == self.backends


def postmaster_pid() -> int | None:
    """The PostgreSQL server's main process, from its data directory's postmaster.pid."""
    return CpuMeter._postmaster_pid()


def process_cpu_s(pid: int, *, reaped: bool = False) -> float:
    """CPU seconds of one process (all its threads); with `reaped`, also of its children that
    have exited (a PostgreSQL server's finished backends and parallel workers)."""
    import psutil

    times = psutil.Process(pid).cpu_times()
    total = times.user + times.system
    if reaped:
        total += times.children_user + times.children_system
    return total


def server_cpu_s(postmaster: int) -> float:
    """CPU seconds of a whole PostgreSQL server: the postmaster, every live child (backends,
    io workers, writers) and the children already reaped."""
    import psutil

    total = process_cpu_s(postmaster, reaped=True)
    for child in psutil.Process(postmaster).children():
        try:
            times = child.cpu_times()
        except psutil.NoSuchProcess:  # exited meanwhile: now among the reaped
            continue
        total += times.user + times.system
    return total


def busy_baseline(rounds: int = 200_000) -> int:
    """CPU nanoseconds of a fixed pure-Python workload: divide by it to compare runs made while
    the machine's load (and so its caches and clock) differ."""
    started = time.process_time_ns()
    total = 0
    for i in range(rounds):
        total += (i * 7919) % 104729
    assert total > 0
    return time.process_time_ns() - started


AUTOGROUP = "/proc/sys/kernel/sched_autogroup_enabled"


def scheduler_note(path: str = AUTOGROUP) -> str:
    """What a run's share of the cores depends on: with Linux's autogroup scheduling on, `nice`
    ranks processes only within their own session, so a neighbour at nice 19 started from
    another terminal still gets an equal share of the cores (seen in session 16: the benchmark
    and a helper's work split the machine whatever their nice values)."""
    try:
        with open(path) as f:
            enabled = f.read().strip() == "1"
    except OSError:
        return ""
    if enabled:
        return "; autogroup on: nice does not rank processes of other sessions"
    return "; autogroup off"
