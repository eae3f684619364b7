"""Spawning, reaping and stopping benchmark processes.

Each peer process runs in its own session (so its whole process group can be signalled) and
is reaped with ``os.wait4``, whose rusage gives its CPU time (utime + stime) and peak RSS
(``ru_maxrss``).

Peak RSS needs care: Linux folds the memory of the image a process had *before* ``exec``
into its ``ru_maxrss``, and a child forked from this Python interpreter starts as a copy of
it (≈14 MB, more than a whole ddsperf). So the campaign makes itself a child subreaper
(``prctl(PR_SET_CHILD_SUBREAPER)``) and starts each program from a tiny ``/bin/sh`` that
backgrounds it and exits at once: the program is forked from the ~1 MB shell, is reparented
to this process (it waits on a pipe until the shell is gone, so the shell never reaps it),
and its own ``wait4`` rusage is clean. Where that is impossible the program
is spawned directly and its RSS is flagged as including the spawner's image.

Every live process is tracked; :func:`Spawner.cleanup` (called on exit, exception and
Ctrl-C) terminates them all: SIGTERM to the group, then SIGKILL.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import time
from dataclasses import dataclass, field

PR_SET_CHILD_SUBREAPER = 36


@dataclass
class Proc:
    """A spawned program and, once reaped, its exit status and resource usage."""

    argv: list[str]
    pid: int
    pgid: int
    t_start: float
    stdout: str
    stderr: str
    popen: subprocess.Popen | None = None  # only when spawned directly
    t_end: float | None = None
    exit_code: int | None = None  # >= 0 exit status, < 0 killed by signal -N
    utime: float = 0.0
    stime: float = 0.0
    maxrss_kb: int = 0
    stopped_by_campaign: bool = False
    timed_out: bool = False
    extra: dict = field(default_factory=dict)

    @property
    def running(self) -> bool:
        return self.t_end is None

    @property
    def wall(self) -> float:
        return (self.t_end or time.monotonic()) - self.t_start

    @property
    def cpu_pct(self) -> float:
        w = self.wall
        return 100.0 * (self.utime + self.stime) / w if w > 0 else 0.0


def _set_subreaper() -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


class Spawner:
    """Starts programs, reaps them with wait4 and never leaves one behind."""

    # The program is forked by this tiny shell, which exits at once; the forked child first
    # waits on fd 3 (our pipe) until we have reaped the shell, so it is our child (subreaper)
    # before it can exit, and only then execs the program.
    _SH = ('o=$1; e=$2; shift 2; exec 3<&0; '
           '{ read _go <&3; exec "$@" >"$o" 2>"$e" </dev/null 3<&-; } & echo $!')

    def __init__(self) -> None:
        self.clean_rss = os.path.exists("/bin/sh") and _set_subreaper()
        self.live: dict[int, Proc] = {}

    def spawn(self, argv: list[str], env: dict[str, str], stdout: str, stderr: str) -> Proc:
        """Starts ``argv`` with stdout/stderr to the given files, in a new session."""
        if self.clean_rss:
            go_r, go_w = os.pipe()
            try:
                sh = subprocess.Popen(
                    ["/bin/sh", "-c", self._SH, "sh", stdout, stderr, *argv], env=env,
                    stdin=go_r, stdout=subprocess.PIPE, start_new_session=True,
                )
                os.close(go_r)
                go_r = -1
                assert sh.stdout is not None
                line = sh.stdout.readline()
                sh.stdout.close()
                sh.wait()
            finally:
                if go_r >= 0:
                    os.close(go_r)
                os.close(go_w)  # releases the child: it execs the program now
            try:
                pid = int(line)
            except ValueError as e:
                raise OSError(f"could not start {argv[0]}") from e
            proc = Proc(argv=list(argv), pid=pid, pgid=sh.pid, t_start=time.monotonic(),
                        stdout=stdout, stderr=stderr)
        else:
            with open(stdout, "wb") as out, open(stderr, "wb") as err:
                p = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                     start_new_session=True)
            proc = Proc(argv=list(argv), pid=p.pid, pgid=p.pid, t_start=time.monotonic(),
                        stdout=stdout, stderr=stderr, popen=p)
            proc.extra["rss_includes_spawner"] = True
        self.live[proc.pid] = proc
        return proc

    def poll(self, proc: Proc) -> bool:
        """Reaps ``proc`` if it has exited; returns True when it is finished."""
        if proc.t_end is not None:
            return True
        try:
            pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
        except ChildProcessError:
            # Someone else reaped it (should not happen); record what we can.
            proc.t_end = time.monotonic()
            proc.exit_code = proc.exit_code if proc.exit_code is not None else -999
            self.live.pop(proc.pid, None)
            return True
        if pid == 0:
            return False
        proc.t_end = time.monotonic()
        proc.exit_code = os.waitstatus_to_exitcode(status)
        proc.utime, proc.stime, proc.maxrss_kb = ru.ru_utime, ru.ru_stime, ru.ru_maxrss
        if proc.popen is not None:
            proc.popen.returncode = proc.exit_code
        self.live.pop(proc.pid, None)
        return True

    def wait(self, procs: list[Proc], timeout: float, poll_s: float = 0.02) -> bool:
        """Waits until every process in ``procs`` has exited or ``timeout`` passed."""
        deadline = time.monotonic() + timeout
        while True:
            pending = [p for p in procs if not self.poll(p)]
            if not pending:
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(poll_s)

    def signal_group(self, proc: Proc, sig: int) -> None:
        """Sends ``sig`` to the process's group (and to the process itself)."""
        for target in (lambda: os.killpg(proc.pgid, sig), lambda: os.kill(proc.pid, sig)):
            try:
                target()
            except (ProcessLookupError, PermissionError):
                pass

    def stop(self, procs: list[Proc], term_grace: float = 2.0) -> None:
        """SIGTERM the still-running ones, then SIGKILL after ``term_grace`` seconds."""
        running = [p for p in procs if not self.poll(p)]
        for p in running:
            p.stopped_by_campaign = True
            self.signal_group(p, signal.SIGTERM)
        if running and not self.wait(running, term_grace):
            for p in running:
                if not self.poll(p):
                    self.signal_group(p, signal.SIGKILL)
            self.wait(running, 5.0)

    def cleanup(self) -> None:
        """Stops every process still alive and reaps stray reparented children."""
        self.stop(list(self.live.values()), term_grace=1.0)
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
