"""Which process writes an answer, and whether that process is still there.

Every streaming answer records the process running it (`THIS_PROCESS`: host name, pid and the
pid's start time). After a crash (SIGKILL, OOM, power), any process on the same host sees at once
that the recorded process is gone, so the thread is not locked until the answer's heartbeat goes
stale (chat.turns.STALE_AFTER). The start time tells a restarted server that got the same pid (pid
1 in a container) from the one that died. An answer written on another host is judged by its
heartbeat alone.
"""

import os
import socket


def start_time(pid: int) -> str | None:
    """When `pid` started, in clock ticks since boot (Linux); "" when this system cannot tell;
    None when there is no such process."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            # The command name (field 2) may hold spaces and parentheses: count from its end.
            fields = stat.read().rsplit(")", 1)[1].split()
        return fields[19]  # field 22, starttime (the list starts at field 3)
    except FileNotFoundError:
        return None if os.path.isdir("/proc/self") else _exists_elsewhere(pid)
    except (OSError, IndexError):
        return ""


def _exists_elsewhere(pid: int) -> str | None:
    # No /proc (macOS): whether the pid exists at all, without its start time.
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:  # someone else's process: it exists
        return ""
    return ""


def identity(pid: int) -> str:
    return f"{socket.gethostname()}:{pid}:{start_time(pid) or ''}"


_this: tuple[int, str] | None = None


def this_process() -> str:
    """This process, as recorded on the answers it runs (Message.runner); computed again in a
    forked child, which has a pid of its own."""
    global _this
    pid = os.getpid()
    if _this is None or _this[0] != pid:
        _this = (pid, identity(pid))
    return _this[1]


def is_gone(runner: str) -> bool:
    """Whether the process recorded as `runner` is known to have died: it ran on this host, and
    its pid is now free or belongs to a process started at another time. False when unknown (no
    runner recorded, another host)."""
    parts = runner.rsplit(":", 2)
    if len(parts) != 3 or not parts[1].isdigit():
        return False
    host, pid, started = parts[0], int(parts[1]), parts[2]
    if host != socket.gethostname():
        return False
    now = start_time(pid)
    if now is None:
        return True
    return bool(started and now and started != now)
