"""The run lock tells its owner from an unrelated process that got the owner's pid after
it died: the lock records the owner's own start time, and a lock whose pid now belongs to
a process started at another time is stale."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bpetopics.runs.lock import LOCK_FILE, RunLock, RunLockedError, process_start

LINUX_PROC = Path("/proc/self/stat").is_file()


@pytest.fixture
def other_process():
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    yield proc
    proc.kill()
    proc.wait()


def _lock_of(folder: Path, pid: int, **extra) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / LOCK_FILE).write_text(json.dumps({"pid": pid, "host": socket.gethostname(), "started": 0, **extra}))


@pytest.mark.skipif(not LINUX_PROC, reason="process start times are read from Linux's /proc")
def test_the_lock_records_its_process_start_time(tmp_path):
    stat = Path("/proc/self/stat").read_text()
    assert process_start(os.getpid()) == int(stat.rsplit(")", 1)[1].split()[19])
    with RunLock(tmp_path / "run.partial") as lock:
        owner = json.loads(lock.path.read_text())
        assert owner["pid"] == os.getpid() and owner["process_start"] == process_start(os.getpid())


@pytest.mark.skipif(not LINUX_PROC, reason="process start times are read from Linux's /proc")
def test_a_lock_whose_pid_now_belongs_to_another_process_is_taken_over(tmp_path, other_process):
    folder = tmp_path / "run.partial"
    # the owner died and its pid went to other_process, which started at another time
    _lock_of(folder, other_process.pid, process_start=process_start(other_process.pid) - 1)
    with RunLock(folder) as lock:
        assert json.loads(lock.path.read_text())["pid"] == os.getpid()
    assert other_process.poll() is None               # untouched


@pytest.mark.skipif(not LINUX_PROC, reason="process start times are read from Linux's /proc")
def test_a_lock_of_a_live_owner_stops_a_second_process(tmp_path, other_process):
    folder = tmp_path / "run.partial"
    deadline = time.monotonic() + 30
    while process_start(other_process.pid) is None and time.monotonic() < deadline:
        time.sleep(0.01)
    _lock_of(folder, other_process.pid, process_start=process_start(other_process.pid))
    with pytest.raises(RunLockedError, match=f"process {other_process.pid} on "):
        RunLock(folder).acquire()
    assert json.loads((folder / LOCK_FILE).read_text())["pid"] == other_process.pid


def test_a_lock_without_a_start_time_trusts_a_live_pid(tmp_path, other_process):
    """A lock written before start times were recorded (or where none can be read)."""
    folder = tmp_path / "run.partial"
    _lock_of(folder, other_process.pid)
    with pytest.raises(RunLockedError, match=f"process {other_process.pid} on "):
        RunLock(folder).acquire()


def test_no_start_time_for_a_pid_that_does_not_run():
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    assert process_start(dead.pid) is None
