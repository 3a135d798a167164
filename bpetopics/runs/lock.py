"""An exclusive lock on a training run's working folder (``RUN.partial``).

``bpetopics train --out RUN`` holds it from start to finish, so that a second process
given the same ``--out`` stops at once, naming the first, and touches nothing of it.

The lock is a file created with ``O_CREAT | O_EXCL`` (atomic on local file systems)
holding the owner's pid, host and start time as JSON, and where the system tells it
(Linux's ``/proc/PID/stat``) the owner process's own start time. It is removed when the
owner exits; one left behind by a process that was killed (``kill -9``, a crash, a power
cut) is *stale*: its pid no longer runs on this host, or now belongs to another process
(one started at another time than the owner), and the next process takes it over.
"""

from __future__ import annotations

import errno
import json
import os
import socket
import time
from pathlib import Path

#: Name of the lock file inside the locked folder.
LOCK_FILE = "train.lock"


class RunLockedError(RuntimeError):
    """The folder is locked by another live process; the message is one line."""


def _pid_alive(pid: int) -> bool:
    """True when a process ``pid`` exists on this host (signal 0 checks, sends nothing)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, owned by another user
        return True
    except OSError:
        return False
    return True


def process_start(pid: int) -> int | None:
    """When process ``pid`` started, in clock ticks after boot (field 22 of Linux's
    ``/proc/PID/stat``); None where that cannot be read (no such process, no /proc)."""
    try:
        with open(f"/proc/{int(pid)}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()     # after the name, which may hold ")"
        return int(fields[19])                              # fields 3, 4, ... : 22 is the 20th
    except (OSError, ValueError, IndexError):
        return None


def _owner_alive(owner: dict) -> bool:
    """True when the lock's owner still runs: its pid exists and, when the lock recorded
    the process's start time and the system tells the pid's, they are the same (a pid
    reused by an unrelated process after the owner died is not the owner)."""
    if not _pid_alive(owner["pid"]):
        return False
    recorded = owner.get("process_start")
    if not isinstance(recorded, int):       # a lock written without it: the pid alone decides
        return True
    now = process_start(owner["pid"])
    return now is None or now == recorded


def _read(path: Path) -> dict | None:
    """The lock's owner ({pid, host, started}), or None when it is unreadable (being written)."""
    try:
        owner = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    return owner if isinstance(owner, dict) else None


def _describe(owner: dict | None, path: Path) -> str:
    if not owner:
        return f"another process (lock {path})"
    started = owner.get("started")
    when = time.strftime(" since %Y-%m-%d %H:%M:%S", time.localtime(started)) if isinstance(
        started, (int, float)) else ""
    return f"process {owner.get('pid')} on {owner.get('host')}{when}"


class RunLock:
    """The lock on ``folder`` (created if missing); :meth:`release` gives it back.

    Parameters
    ----------
    folder : path
        The folder to lock (``RUN.partial``).
    """

    def __init__(self, folder):
        self.folder = Path(folder)
        self.path = self.folder / LOCK_FILE
        self.owner = {"pid": os.getpid(), "host": socket.gethostname(), "started": time.time()}
        start = process_start(os.getpid())
        if start is not None:
            self.owner["process_start"] = start
        self.created_folder = False
        self.held = False

    def acquire(self) -> "RunLock":
        """Take the lock, taking over a stale one; raise RunLockedError when a live process
        holds it."""
        if self.folder.exists() and not self.folder.is_dir():
            raise RunLockedError(f"{self.folder} is a file, not a training folder: move it away")
        if not self.folder.exists():
            self.folder.mkdir(parents=True)
            self.created_folder = True
        for _ in range(3):  # a stale lock moved away by us or by another process: try again
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                self._take_over_if_stale()
                continue
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(self.owner, f)
            self.held = True
            return self
        raise RunLockedError(f"{self.folder} is being trained by {_describe(_read(self.path), self.path)}: "
                             "wait for it to finish, or choose another --out")

    def _take_over_if_stale(self) -> None:
        """Move a stale lock out of the way, or raise RunLockedError naming its live owner."""
        owner = _read(self.path)
        if owner is None:  # just created and not yet written, or damaged: look once more
            time.sleep(0.2)
            owner = _read(self.path)
        if owner is not None and owner.get("host") == self.owner["host"] and isinstance(owner.get("pid"), int):
            if owner["pid"] != os.getpid() and _owner_alive(owner):
                raise RunLockedError(f"{self.folder} is being trained by {_describe(owner, self.path)}: "
                                     "wait for it to finish (or stop it), or choose another --out")
        elif owner is not None:  # another host: its pids cannot be checked from here
            raise RunLockedError(f"{self.folder} is being trained by {_describe(owner, self.path)}; if that "
                                 f"process has ended, delete {self.path}")
        else:
            raise RunLockedError(f"{self.path} is an unreadable lock: if no training of this run is going "
                                 "on, delete it")
        # Stale: rename it aside (atomic), then check that what we moved is the stale lock
        # and not one a faster process created meanwhile; if it is not, put it back.
        aside = self.path.with_name(f"{LOCK_FILE}.stale-{os.getpid()}")
        try:
            os.replace(self.path, aside)
        except FileNotFoundError:
            return
        moved = _read(aside)
        if moved != owner:
            try:
                os.link(aside, self.path)
            except OSError as exc:
                if exc.errno != errno.EEXIST:
                    raise
            aside.unlink(missing_ok=True)
            raise RunLockedError(f"{self.folder} is being trained by {_describe(moved, self.path)}: "
                                 "wait for it to finish, or choose another --out")
        aside.unlink(missing_ok=True)

    def release(self) -> None:
        """Remove the lock if it is still ours (and the folder, if we made it and it is empty)."""
        if not self.held:
            return
        self.held = False
        if _read(self.path) == self.owner:
            self.path.unlink(missing_ok=True)
        if self.created_folder:
            try:
                self.folder.rmdir()
            except OSError:
                pass

    def others(self) -> list[Path]:
        """What the folder holds besides the lock."""
        if not self.folder.is_dir():
            return []
        return sorted(p for p in self.folder.iterdir() if p.name != LOCK_FILE)

    def clear(self) -> None:
        """Delete everything in the folder but the lock (to start a training again)."""
        import shutil

        for p in self.others():
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p)
            else:
                p.unlink()

    def __enter__(self):
        return self.acquire()

    def __exit__(self, *exc):
        self.release()


def lock_run(folder) -> RunLock:
    """Acquire and return the lock of ``folder`` (see :class:`RunLock`)."""
    return RunLock(folder).acquire()
