"""``bpetopics train --nproc 2`` stopped from outside: SIGTERM to the launcher, Ctrl-C at a
terminal (SIGINT to the whole process group) and a launcher killed outright each stop both
training processes (none left running), release the run's lock and keep the last
checkpoint; the first two say how to resume, as one process does, and exit 143 or 130.
Options that cannot train in several processes are refused before any starts."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import bpetopics.runs as run_io
import bpetopics.runs.job as run_job
import bpetopics.runs.launch as launch_module
from bpetopics.cli import main
from bpetopics.runs.lock import LOCK_FILE
from tests.cli.conftest import TINY, one_line_error
from tests.cli.test_distributed_commands import spawned_children

REPO = Path(__file__).resolve().parents[2]
#: Seconds any one wait below may take before the test fails (and kills what it started).
DEADLINE_S = 60


def _running(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie waiting for a parent that does not reap it
    has stopped)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _start(saved_corpus, out, **popen):
    """The launcher of a long ``--nproc 2`` training, once both processes run and the
    first checkpoint is written: (launcher, its two training processes)."""
    args = [sys.executable, "-m", "bpetopics", "train", str(saved_corpus), "--out", str(out), "--quiet",
            "--topics", "5", "--bits", "8", "--epochs", "3000", "--device", "cpu", "--nproc", "2"]
    proc = subprocess.Popen(args, env=dict(os.environ, PYTHONPATH=str(REPO)), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            # signals as at a terminal: a child inherits an ignored SIGINT
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL), **popen)
    partial = run_io.partial_path(out)
    deadline = time.monotonic() + DEADLINE_S
    while not (partial / "checkpoint.safetensors").is_file():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"no checkpoint: {proc.communicate()[1][-2000:]}")
        time.sleep(0.05)
    ranks = spawned_children(proc.pid)
    assert len(ranks) == 2
    return proc, ranks


def _ended(proc, ranks):
    """The launcher's (return code, stderr lines) once it has ended; kills everything
    still running when it does not end in time."""
    try:
        _, stderr = proc.communicate(timeout=DEADLINE_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        for pid in ranks:
            if _running(pid):
                os.kill(pid, signal.SIGKILL)
        raise AssertionError(f"the launcher did not end: {proc.communicate()[1][-2000:]}")
    return proc.returncode, [line for line in stderr.splitlines() if line.strip()]


def _stopped_cleanly(out, ranks, lines, code):
    assert not [pid for pid in ranks if _running(pid)]          # no process left behind
    partial = run_io.partial_path(out)
    assert not (partial / LOCK_FILE).exists()                   # the lock released
    saved = run_io.load_checkpoint(partial / "checkpoint.safetensors")[0].epoch_
    assert saved >= 1
    # one process's report, after the note on the small minibatch
    assert lines[0].startswith("Note: with --batch-size 64") and len(lines) == 3, lines
    assert re.fullmatch(rf"Interrupted: the checkpoint after epoch (\d+) of 3000 is in {re.escape(str(partial))}\. "
                        r"Resume with:", lines[1]), lines
    assert lines[2].strip() == f"bpetopics train --out {out} --resume --nproc 2"
    assert code in (130, 143)


def test_sigterm_to_the_launcher_stops_both_processes_and_says_how_to_resume(saved_corpus, tmp_path):
    out = tmp_path / "run"
    proc, ranks = _start(saved_corpus, out)
    proc.send_signal(signal.SIGTERM)
    code, lines = _ended(proc, ranks)
    assert code == 143, lines
    _stopped_cleanly(out, ranks, lines, code)


def test_ctrl_c_stops_both_processes_releases_the_lock_and_says_how_to_resume(saved_corpus, tmp_path):
    out = tmp_path / "run"
    proc, ranks = _start(saved_corpus, out, start_new_session=True)
    os.killpg(proc.pid, signal.SIGINT)              # Ctrl-C: the launcher and its processes
    code, lines = _ended(proc, ranks)
    assert code == 130, lines
    _stopped_cleanly(out, ranks, lines, code)


def test_ctrl_c_under_torchrun_stops_quietly_but_for_rank_0s_report(saved_corpus, tmp_path):
    """torchrun passes a Ctrl-C on to its processes after the terminal's own: rank 0 says
    how to resume, releases the lock and keeps the checkpoint; rank 1 says nothing (no
    click "Aborted!"); neither prints a traceback."""
    out = tmp_path / "run"
    args = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", "-m", "bpetopics", "train",
            str(saved_corpus), "--out", str(out), "--quiet", "--topics", "5", "--bits", "8", "--epochs", "3000",
            "--device", "cpu"]
    proc = subprocess.Popen(args, env=dict(os.environ, PYTHONPATH=str(REPO)), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    partial = run_io.partial_path(out)
    deadline = time.monotonic() + DEADLINE_S
    while not (partial / "checkpoint.safetensors").is_file():
        if proc.poll() is not None or time.monotonic() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            raise AssertionError(f"no checkpoint: {proc.communicate()[1][-2000:]}")
        time.sleep(0.05)
    ranks = spawned_children(proc.pid)
    os.killpg(proc.pid, signal.SIGINT)              # Ctrl-C: torchrun and its processes
    code, lines = _ended(proc, ranks)
    assert not [pid for pid in ranks if _running(pid)] and code != 0     # torchrun reports a failure
    assert "Aborted!" not in lines and not [line for line in lines if line.startswith("[rank")], lines
    reports = [i for i, line in enumerate(lines) if line.startswith("Interrupted")]
    assert len(reports) == 1, lines
    assert re.fullmatch(rf"Interrupted: the checkpoint after epoch \d+ of 3000 is in {re.escape(str(partial))}\. "
                        r"Resume with:", lines[reports[0]]), lines
    # the next line of rank 0's, though torchrun's own log lines may come between them
    resume = f"the same torchrun command with `bpetopics train --out {out} --resume`"
    assert resume in [line.strip() for line in lines[reports[0] + 1:]], lines
    assert not (partial / LOCK_FILE).exists()
    assert run_io.load_checkpoint(partial / "checkpoint.safetensors")[0].epoch_ >= 1


def test_a_killed_launcher_leaves_no_process_and_no_lock(saved_corpus, tmp_path):
    out = tmp_path / "run"
    proc, ranks = _start(saved_corpus, out)
    proc.kill()
    proc.communicate(timeout=DEADLINE_S)
    deadline = time.monotonic() + DEADLINE_S
    while [pid for pid in ranks if _running(pid)] and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [pid for pid in ranks if _running(pid)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left                                   # the kernel's SIGTERM stopped them
    partial = run_io.partial_path(out)
    assert not (partial / LOCK_FILE).exists()         # rank 0 released it on the way out
    assert run_io.load_checkpoint(partial / "checkpoint.safetensors")[0].epoch_ >= 1


@pytest.fixture
def no_launch(monkeypatch):
    """Fail the test if a process would be started."""
    def refuse(*args, **kwargs):
        raise AssertionError("processes were started")

    monkeypatch.setattr(launch_module, "launch", refuse)


def test_soft_codes_with_nproc_is_refused_before_any_process_starts(saved_corpus, tmp_path, no_launch):
    out = tmp_path / "run"
    result = CliRunner().invoke(main, ["train", str(saved_corpus), "--out", str(out), *TINY, "--soft-codes", "3",
                                       "--nproc", "2"])
    one_line_error(result, "--soft-codes 3 trains in one process only; use --soft-codes 1 with several processes")
    assert not out.exists() and not run_io.partial_path(out).exists()
    # a bad option, a size, too: before the processes start
    result = CliRunner().invoke(main, ["train", str(saved_corpus), "--out", str(out), "--topics", "5",
                                       "--bits", "1000000000", "--nproc", "2"])
    one_line_error(result, "--bits 1000000000 is more than 65,536 bits")
    assert not run_io.partial_path(out).exists()


def test_resume_with_nproc_of_a_soft_codes_run_is_refused_before_any_process_starts(saved_corpus, tmp_path,
                                                                                    monkeypatch):
    out = tmp_path / "run"
    real = run_io.save_checkpoint

    def save_then_interrupt(path, model, extra=None):
        real(path, model, extra)
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(run_job, "save_checkpoint", save_then_interrupt)
        result = CliRunner().invoke(main, ["train", str(saved_corpus), "--out", str(out), "--quiet", *TINY,
                                           "--soft-codes", "3"])
    assert result.exit_code == 130, result.output
    assert "--resume\n" in result.output and "--nproc" not in result.output
    partial = run_io.partial_path(out)
    before = {p.name: p.read_bytes() for p in partial.iterdir() if p.is_file()}
    monkeypatch.setattr(launch_module, "launch", lambda *a, **k: pytest.fail("processes were started"))
    result = CliRunner().invoke(main, ["train", "--out", str(out), "--resume", "--nproc", "2"])
    one_line_error(result, f"{out} cannot resume in several processes: --soft-codes 3 trains in one process only",
                   "resume it in one process (without --nproc)")
    assert {p.name: p.read_bytes() for p in partial.iterdir() if p.is_file()} == before
    assert json.loads((partial / "job.json").read_text())["params"]["soft_codes"] == 3


def test_a_stopped_process_exits_with_the_signal_code():
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        with pytest.raises(launch_module.Stopped) as stop:
            with launch_module.stop_on_signals():
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(5)
        assert stop.value.exit_code == 143 and isinstance(stop.value, KeyboardInterrupt)
        # the process is stopping: later signals are ignored until it has cleaned up
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)
