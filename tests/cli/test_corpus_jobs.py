"""``bpetopics corpus --format sharded --nproc N`` starts at most one worker a CPU (saying so
in one note when N is more) and one a chunk: the same corpus as one process builds."""

from __future__ import annotations

import json
import multiprocessing

import numpy as np
import pytest
from click.testing import CliRunner

import bpetopics.text.streaming as streaming
from bpetopics.cli import main
from bpetopics.text import TextPipeline

SETTINGS = dict(vocab_size=40, min_df=2, max_df=0.9, stopwords="none")


def _jsonl(path, n_docs: int):
    rng = np.random.default_rng(5)
    words = [f"w{chr(97 + i % 26)}{chr(97 + i // 26)}x" for i in range(60)]
    with open(path, "w") as f:
        for i in range(n_docs):
            f.write(json.dumps({"text": " ".join(rng.choice(words, size=int(rng.integers(3, 20))))}) + "\n")
    return path


def _files(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != "sharded.json"}


@pytest.fixture
def pools(monkeypatch):
    """The worker count of every pool the build starts (the pools run as usual)."""
    started = []
    real = multiprocessing.get_context

    class Counting:
        def __init__(self, method=None):
            self.context = real(method)

        def Pool(self, processes=None, *args, **kwargs):
            started.append(processes)
            return self.context.Pool(processes, *args, **kwargs)

    monkeypatch.setattr(multiprocessing, "get_context", Counting)
    return started


def test_jobs_beyond_the_cpus_are_cut_to_them_with_a_note(tmp_path, pools):
    source = _jsonl(tmp_path / "docs.jsonl", 60)
    cpus = streaming.usable_cpus()
    runner = CliRunner()
    one = runner.invoke(main, ["corpus", str(source), "--format", "sharded", "--out", str(tmp_path / "one"), "-q",
                               "--stopwords", "none", "--min-df", "2"])
    assert one.exit_code == 0 and "Note" not in one.output, one.output
    many = runner.invoke(main, ["corpus", str(source), "--format", "sharded", "--out", str(tmp_path / "many"),
                                "-q", "--stopwords", "none", "--min-df", "2", "--nproc", str(cpus + 100)])
    assert many.exit_code == 0, many.output
    notes = [line for line in many.stderr.splitlines() if line.startswith("Note")]
    assert notes == [f"Note: --nproc {cpus + 100} is more than the {cpus} CPUs this process may use; "
                     f"using {cpus}"]
    assert all(n <= cpus for n in pools)
    assert _files(tmp_path / "one") == _files(tmp_path / "many")


def test_no_more_workers_than_chunks(tmp_path, monkeypatch, pools):
    monkeypatch.setattr(streaming, "usable_cpus", lambda: 64)      # a large machine
    source = _jsonl(tmp_path / "docs.jsonl", 60)
    streaming.build_sharded(source, tmp_path / "three", TextPipeline(**SETTINGS), jobs=64, chunk_docs=25)
    assert pools == [3, 3]                            # 3 chunks of 25: each pass, one worker a chunk
    pools.clear()
    streaming.build_sharded(source, tmp_path / "one", TextPipeline(**SETTINGS), jobs=64, chunk_docs=100)
    assert pools == []                                # a single chunk: cleaned in this process
    streaming.build_sharded(source, tmp_path / "serial", TextPipeline(**SETTINGS), jobs=1, chunk_docs=25)
    assert _files(tmp_path / "three") == _files(tmp_path / "one") == _files(tmp_path / "serial")
