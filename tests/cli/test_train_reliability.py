"""Issue #11 for ``bpetopics train``: the run lock, size checks, a full disk, thread counts."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

import bpetopics.runs as run_io
import bpetopics.runs.job as run_job
from bpetopics.cli import main
from bpetopics.runs.lock import LOCK_FILE, RunLock, RunLockedError
from tests.cli.conftest import TINY, one_line_error


def _snapshot(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def other_process():
    """A live process that is not this one (its pid owns a lock in the tests)."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    yield proc
    proc.kill()
    proc.wait()


def _interrupted(saved_corpus, out, monkeypatch):
    """RUN.partial of a training stopped after its first epoch (job.json, corpus/, checkpoint)."""
    real = run_io.save_checkpoint

    def save_then_interrupt(path, model, extra=None):
        real(path, model, extra)
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(run_job, "save_checkpoint", save_then_interrupt)
        result = CliRunner().invoke(main, ["train", str(saved_corpus), "--out", str(out), "--quiet", *TINY])
    assert result.exit_code == 130, result.output
    partial = run_io.partial_path(out)
    assert not (partial / LOCK_FILE).exists()  # released on the way out
    return partial


def test_a_second_train_on_the_same_out_stops_at_once(saved_corpus, tmp_path, monkeypatch, other_process):
    out = tmp_path / "run"
    partial = _interrupted(saved_corpus, out, monkeypatch)
    # another process is training it now: its lock is in RUN.partial
    (partial / LOCK_FILE).write_text(json.dumps({"pid": other_process.pid, "host": socket.gethostname(),
                                                 "started": time.time()}))
    before = _snapshot(partial)
    runner = CliRunner()
    for args in (["train", str(saved_corpus), "--out", str(out), *TINY],
                 ["train", str(saved_corpus), "--out", str(out), "--overwrite", *TINY],
                 ["train", "--out", str(out), "--resume"]):
        one_line_error(runner.invoke(main, args), f"process {other_process.pid} on {socket.gethostname()}")
        assert _snapshot(partial) == before  # job.json, corpus/, checkpoint and the lock untouched
    assert not out.exists()


def test_a_stale_lock_is_taken_over(saved_corpus, tmp_path, monkeypatch):
    out = tmp_path / "run"
    partial = _interrupted(saved_corpus, out, monkeypatch)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()  # its pid no longer runs: the lock of a training killed with kill -9
    (partial / LOCK_FILE).write_text(json.dumps({"pid": dead.pid, "host": socket.gethostname(), "started": 0}))
    result = CliRunner().invoke(main, ["train", "--out", str(out), "--resume", "--quiet"])
    assert result.exit_code == 0, result.output
    assert run_io.is_run(out) and not partial.exists()


def test_lock_of_another_host_is_not_taken_over(tmp_path):
    folder = tmp_path / "run.partial"
    folder.mkdir()
    (folder / LOCK_FILE).write_text(json.dumps({"pid": 1, "host": "elsewhere.example", "started": 0}))
    with pytest.raises(RunLockedError, match="elsewhere.example.*delete"):
        RunLock(folder).acquire()


def test_lock_is_exclusive_and_released(tmp_path):
    folder = tmp_path / "run.partial"
    with RunLock(folder) as lock:
        assert json.loads((folder / LOCK_FILE).read_text())["pid"] == os.getpid()
        (folder / "job.json").write_text("{}")
        assert [p.name for p in lock.others()] == ["job.json"]
        lock.clear()
        assert lock.others() == [] and (folder / LOCK_FILE).is_file()
    assert not folder.exists()  # made by the lock, left empty: removed


def test_failed_train_leaves_no_lock_and_no_folder(saved_corpus, tmp_path):
    out = tmp_path / "run"
    one_line_error(CliRunner().invoke(main, ["train", "--out", str(out), "--resume"]), "nothing to resume")
    assert not run_io.partial_path(out).exists() and not out.exists()


# ----------------------------------------------------------------------- item 5: sizes
def test_more_topics_than_documents_is_refused_at_once(saved_corpus, tmp_path):
    out = tmp_path / "run"
    result = CliRunner().invoke(main, ["train", str(saved_corpus), "--out", str(out), "--topics", "1000",
                                       "--device", "cpu"])
    one_line_error(result, "--topics 1000 is more than the 300 documents; lower --topics")
    assert not out.exists() and not run_io.partial_path(out).exists()
    # a count that no corpus could train with is refused before the corpus is read
    result = CliRunner().invoke(main, ["train", str(saved_corpus), "--out", str(out), "--topics", "1000000000",
                                       "--device", "cpu"])
    one_line_error(result, "--topics 1000000000 gives default codes of 141,424 bits, more than the 65,536")
    assert not out.exists() and not run_io.partial_path(out).exists()


def test_the_api_shares_the_size_checks():
    import numpy as np
    import scipy.sparse as sp

    from bpetopics import PoissBPE
    from bpetopics.bpe.sizes import SizeError

    X = sp.csr_matrix(np.random.default_rng(0).poisson(1.0, size=(30, 40)))
    with pytest.raises(SizeError, match="n_topics=31 is more than the 30 documents; lower n_topics"):
        PoissBPE(n_topics=31, device="cpu", progress=False).fit(X)
    with pytest.raises(SizeError, match="n_topics=25 is more than the 20 words"):
        PoissBPE(n_topics=25, device="cpu", progress=False).fit(X[:, :20])
    with pytest.raises(SizeError, match="n_bits=100000 is more than 65,536 bits"):
        PoissBPE(n_topics=5, n_bits=100_000, device="cpu", progress=False).fit(X)


def test_a_run_too_big_for_the_memory_is_refused_naming_the_option(saved_corpus, tmp_path, monkeypatch):
    from bpetopics.bpe import sizes

    monkeypatch.setattr(sizes, "free_memory_bytes", lambda device=None: 150 * 10**6)  # 150 MB free
    out = tmp_path / "run"
    result = CliRunner().invoke(main, ["train", str(saved_corpus), "--out", str(out), "--topics", "5",
                                       "--bits", "64", "--hidden", "100000", "--device", "cpu"])
    # a hidden layer of 100,000 drives the decoder, its minibatch activations and the
    # pursuit's candidate pass: named as what would save most, before the corpus is read
    one_line_error(result, "--hidden 100000 needs about", "of memory to train, more than the 150 MB free; "
                                                          "lower --hidden")
    assert not out.exists() and not run_io.partial_path(out).exists()
    parts = sizes.estimate_fit_bytes(300, 500, 64, 250, (), 64, 250)
    assert parts["total"] == sum(v for k, v in parts.items() if k != "total")
    # topics dominate a huge vocabulary
    monkeypatch.setattr(sizes, "free_memory_bytes", lambda device=None: 10**9)
    with pytest.raises(sizes.SizeError, match="lower n_topics"):
        from bpetopics import PoissBPE

        PoissBPE(n_topics=2000, device="cpu").check_sizes(5000, 200_000)


# ------------------------------------------------------------------- item 6: disk full
def _disk_full_on(monkeypatch, match):
    """Path.write_bytes writes half its bytes, then fails with ENOSPC, for files whose
    name contains ``match`` (a disk filling up mid-write)."""
    import errno
    from pathlib import Path

    real = Path.write_bytes

    def write_bytes(self, data):
        if match in self.name:
            with open(self, "wb") as f:
                f.write(data[: len(data) // 2])
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, data)

    monkeypatch.setattr(Path, "write_bytes", write_bytes)


def test_disk_full_during_a_checkpoint(saved_corpus, tmp_path, monkeypatch):
    out = tmp_path / "run"
    args = ["train", str(saved_corpus), "--quiet", *TINY, "--epochs", "3"]
    assert CliRunner().invoke(main, [*args, "--out", str(tmp_path / "whole")]).exit_code == 0
    real = run_io.save_checkpoint
    calls = []

    def save(path, model, extra=None):  # the disk fills up after the first checkpoint
        calls.append(model.epoch_)
        if len(calls) == 2:
            _disk_full_on(monkeypatch, "checkpoint")
        return real(path, model, extra)

    with monkeypatch.context() as m:
        m.setattr(run_job, "save_checkpoint", save)
        result = CliRunner().invoke(main, [*args, "--out", str(out)])
    monkeypatch.undo()
    one_line_error(result, "no space left", "checkpoint", "--resume")
    partial = run_io.partial_path(out)
    assert sorted(p.name for p in partial.iterdir()) == ["checkpoint.safetensors", "corpus", "job.json"]
    assert run_io.load_checkpoint(partial / "checkpoint.safetensors")[0].epoch_ == 1  # the previous one, intact
    assert CliRunner().invoke(main, ["train", "--out", str(out), "--resume", "--quiet"]).exit_code == 0
    assert (out / "model.safetensors").read_bytes() == (tmp_path / "whole" / "model.safetensors").read_bytes()


def test_disk_full_while_saving_the_run(saved_corpus, tmp_path, monkeypatch):
    out = tmp_path / "run"
    with monkeypatch.context() as m:
        _disk_full_on(m, "model.safetensors")
        result = CliRunner().invoke(main, ["train", str(saved_corpus), "--out", str(out), "--quiet", *TINY])
    one_line_error(result, "no space left", "--resume")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.partial"]  # no temp folder left
    assert CliRunner().invoke(main, ["train", "--out", str(out), "--resume", "--quiet"]).exit_code == 0
    assert run_io.is_run(out)


def test_any_os_error_is_one_line(runner, saved_corpus, tmp_path, monkeypatch):
    """An OSError no command expected (here: the corpus cannot be written) is one line, exit 2."""
    _disk_full_on(monkeypatch, "texts.txt.gz")
    result = runner.invoke(main, ["corpus", str(saved_corpus), "--out", str(tmp_path / "copy")])
    one_line_error(result, "no space left")
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------- item 7: thread count
def test_thread_count_is_recorded_and_a_resume_with_another_warns(saved_corpus, tmp_path, monkeypatch):
    import torch

    threads = torch.get_num_threads()
    out = tmp_path / "run"
    partial = _interrupted(saved_corpus, out, monkeypatch)
    _, extra = run_io.load_checkpoint(partial / "checkpoint.safetensors")
    assert extra["torch_threads"] == threads
    other = 2 if threads == 1 else 1
    torch.set_num_threads(other)
    try:
        result = CliRunner().invoke(main, ["train", "--out", str(out), "--resume", "--quiet"])
    finally:
        torch.set_num_threads(threads)
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stderr.splitlines() if line.startswith("Warning:")]
    assert len(warnings) == 1 and f"trained with {threads} torch threads" in warnings[0]
    assert f"uses {other}" in warnings[0]
    config = json.loads((out / "config.json").read_text())
    assert config["training"]["torch_threads"] == other


def test_a_resume_with_the_same_thread_count_does_not_warn(saved_corpus, tmp_path, monkeypatch):
    out = tmp_path / "run"
    _interrupted(saved_corpus, out, monkeypatch)
    result = CliRunner().invoke(main, ["train", "--out", str(out), "--resume", "--quiet"])
    assert result.exit_code == 0 and "Warning" not in result.stderr, result.output


def test_two_real_trainings_on_one_out(saved_corpus, tmp_path):
    """A second `bpetopics train` while a first one runs: it stops at once naming the first,
    which goes on untouched and finishes."""
    import signal
    from pathlib import Path

    out = tmp_path / "run"
    partial = run_io.partial_path(out)
    repo = Path(__file__).resolve().parents[2]
    first = subprocess.Popen([sys.executable, "-m", "bpetopics", "train", str(saved_corpus), "--out", str(out),
                              "--quiet", *TINY, "--epochs", "3000"],  # stopped by Ctrl-C below
                             env=dict(os.environ, PYTHONPATH=str(repo)), stderr=subprocess.PIPE, text=True,
                             # Ctrl-C as at a terminal: a child inherits an ignored SIGINT
                             # (some library in the suite leaves it ignored in this process)
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 120
        while not (partial / "checkpoint.safetensors").is_file():  # the first has trained an epoch
            assert first.poll() is None and time.monotonic() < deadline, first.stderr.read()
            time.sleep(0.1)
        job = (partial / "job.json").read_bytes()
        result = CliRunner().invoke(main, ["train", str(saved_corpus), "--out", str(out), "--overwrite", *TINY])
        one_line_error(result, f"process {first.pid} on {socket.gethostname()}")
        assert (partial / "job.json").read_bytes() == job and (partial / "corpus").is_dir()
        assert first.poll() is None  # still training
    finally:
        first.send_signal(signal.SIGINT)
        try:
            first.wait(timeout=120)
        except subprocess.TimeoutExpired:
            first.kill()
            raise AssertionError(f"no exit 120 s after Ctrl-C; stderr: {first.communicate()[1][-2000:]}")
    assert first.returncode == 130, first.stderr.read()[-3000:]
    assert not (partial / LOCK_FILE).exists()  # lock released on Ctrl-C
    assert run_io.load_checkpoint(partial / "checkpoint.safetensors")[0].epoch_ >= 1  # resumable
