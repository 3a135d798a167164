"""``bpetopics train --nproc 2`` (issue #15): the run equals the one 1 process trains, on
a sharded corpus too; a killed process stops the job with one line, keeping the last
checkpoint, from which ``--resume --nproc 2`` finishes it; ``--nproc`` under torchrun is
refused."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import bpetopics.runs as run_io
from bpetopics.cli import main
from tests.cli.conftest import TINY, one_line_error
from tests.cli.test_sharded_commands import WORDS, jsonl, sharded  # noqa: F401 - fixtures

REPO = Path(__file__).resolve().parents[2]


def _same_model(a, b):
    a, b = run_io.load_run(a), run_io.load_run(b)
    sa, sb = a.model.state_dict(), b.model.state_dict()
    for name in sa:
        np.testing.assert_allclose(sa[name].numpy(), sb[name].numpy(), rtol=2e-4, atol=2e-5, err_msg=name)
    assert (a.doc_codes() != b.doc_codes()).nnz <= 0.01 * a.doc_codes().shape[0] * a.model.n_bits
    assert len(a.model.history_) == len(b.model.history_)


def test_train_nproc_2_on_a_sharded_corpus_equals_one_process(sharded, tmp_path):  # noqa: F811
    runner = CliRunner()
    for out, extra in ((tmp_path / "two", ["--nproc", "2"]), (tmp_path / "one", ["--no-pipeline"])):
        result = runner.invoke(main, ["train", str(sharded), "--out", str(out), "--quiet", "--batch-size", "16",
                                      *extra, *TINY])
        assert result.exit_code == 0, result.output
        assert "Saved run to" in result.output
        # a minibatch of 16 is far too small for processes to pay: said once, not an error
        assert ("trains little faster than one process, or slower" in result.output) == ("--nproc" in extra)
    _same_model(tmp_path / "two", tmp_path / "one")
    assert not (tmp_path / "two.partial").exists()
    # the two processes shared the final encoding: each row's code is the one the run's
    # model gives it, and the distinct codes' weights add up to the corpus
    from bpetopics.runs.sharded_codes import read_distinct
    from bpetopics.text.sharded import open_sharded

    two = run_io.load_run(tmp_path / "two")
    counts = open_sharded(sharded).counts
    rows = counts[np.arange(counts.shape[0])]
    assert np.array_equal(two.doc_codes().toarray(), two.model.transform(rows))
    distinct = read_distinct(two)
    assert distinct.documents.sum() == counts.shape[0] and distinct.tokens.sum() == rows.sum()
    assert np.array_equal(distinct.term_frequency, np.asarray(rows.sum(axis=0)).ravel())


def spawned_children(pid: int) -> list[int]:
    """The processes ``multiprocessing`` spawned under ``pid`` (not its resource tracker)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid and "spawn_main" in cmdline:
            found.append(int(entry.name))
    return found


def test_a_killed_process_stops_the_job_with_one_line_and_resume_finishes_it(saved_corpus, tmp_path):
    out = tmp_path / "run"
    args = ["train", str(saved_corpus), "--out", str(out), "--quiet", "--topics", "5", "--bits", "8",
            "--epochs", "30", "--device", "cpu"]
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen([sys.executable, "-m", "bpetopics", *args, "--nproc", "2"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    partial = tmp_path / "run.partial"
    try:
        while not (partial / "checkpoint.safetensors").exists() and proc.poll() is None:
            time.sleep(0.02)
        rank0 = json.loads((partial / "train.lock").read_text())["pid"]   # rank 0 holds the lock
        others = [pid for pid in spawned_children(proc.pid) if pid != rank0]
        assert len(others) == 1
        os.kill(others[0], signal.SIGKILL)
        stdout, stderr = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 2, stderr
    lines = [line for line in (stdout + stderr).splitlines() if line.strip()]
    # the default minibatch (64) is too small for processes to pay: said once, at the start
    assert lines[0].startswith("Note: with --batch-size 64"), lines
    lines = lines[1:]
    assert len(lines) == 1, lines
    pattern = (r"Error: training process 1 of 2 was killed \(SIGKILL\); the checkpoint after epoch (\d+) of 30 "
               r"is kept in .*run\.partial: resume with `bpetopics train --out .*run --resume --nproc 2`")
    match = re.fullmatch(pattern, lines[0])
    assert match, lines[0]
    saved = int(match.group(1))
    assert 1 <= saved < 30
    result = CliRunner().invoke(main, ["train", "--out", str(out), "--resume", "--nproc", "2", "--quiet"])
    assert result.exit_code == 0, result.output
    run = run_io.load_run(out)
    assert [h["epoch"] for h in run.model.history_] == list(range(1, 31))
    assert not partial.exists()


def test_nproc_under_torchrun_is_refused(saved_corpus, tmp_path, monkeypatch):
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "0")
    result = CliRunner().invoke(main, ["train", str(saved_corpus), "--out", str(tmp_path / "r"), "--nproc", "2"])
    one_line_error(result, "--nproc starts its own processes", "torchrun")
    assert not (tmp_path / "r.partial").exists()


def test_small_batch_note_only_where_processes_cannot_pay():
    from bpetopics.runs.launch import SMALL_BATCH, small_batch_note

    assert f"--batch-size {2 * SMALL_BATCH} or more" in small_batch_note(64, 2, "cpu")
    assert small_batch_note(SMALL_BATCH, 2, "cpu") is None
    assert small_batch_note(64, 1, "cpu") is None
    assert small_batch_note(64, 2, "cuda") is None


@pytest.mark.parametrize("saved, expected", [(512, "Note: with --batch-size 512 "), (2048, None)])
def test_resume_with_nproc_notes_the_interrupted_runs_batch_size(tmp_path, monkeypatch, saved, expected):
    import bpetopics.cli.train as train_command

    partial = tmp_path / "run.partial"
    partial.mkdir()
    (partial / "job.json").write_text(json.dumps({"format": "bpetopics.train_job",
                                                  "params": {"batch_size": saved, "device": "cpu"}}))
    launched = []
    monkeypatch.setattr(train_command, "_launch", lambda options, nproc: launched.append(nproc))
    result = CliRunner().invoke(main, ["train", "--out", str(tmp_path / "run"), "--resume", "--nproc", "2"])
    assert result.exit_code == 0 and launched == [2], result.output
    notes = [line for line in result.output.splitlines() if line.startswith("Note: with --batch-size")]
    assert notes == ([] if expected is None else [notes[0]]) and (expected is None or notes[0].startswith(expected))
