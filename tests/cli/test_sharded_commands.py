"""``bpetopics corpus INPUT --format sharded`` and ``bpetopics train`` on a sharded corpus
(issue #15): the run equals one trained on the same counts in memory; an interrupted
training resumes from the shards; damaged shards and bad lines are one-line errors."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

import bpetopics.runs as run_io
import bpetopics.runs.job as run_job
from bpetopics.cli import main
from bpetopics.text import Corpus, save_splits
from bpetopics.text.sharded import open_sharded
from tests.cli.conftest import TINY, one_line_error

WORDS = ["--stopwords", "none", "--min-df", "2", "--vocab-size", "60"]


@pytest.fixture(scope="module")
def jsonl(tmp_path_factory):
    rng = np.random.default_rng(3)
    vocab = [f"word{chr(97 + i % 26)}{chr(97 + i // 26)}" for i in range(120)]
    path = tmp_path_factory.mktemp("jsonl") / "docs.jsonl"
    with open(path, "w") as f:
        for i in range(160):
            topic = i % 4
            p = np.full(120, 0.2)
            p[topic * 30:(topic + 1) * 30] += 5
            words = rng.choice(vocab, size=int(rng.integers(5, 40)), p=p / p.sum())
            f.write(json.dumps({"text": " ".join(words), "id": f"d{i}", "topic": f"t{topic}"}) + "\n")
    return path


@pytest.fixture(scope="module")
def sharded(jsonl, tmp_path_factory):
    out = tmp_path_factory.mktemp("corpora") / "sharded"
    result = CliRunner().invoke(main, ["corpus", str(jsonl), "--format", "sharded", "--out", str(out), "--nproc", "2",
                                       "--shard-docs", "50", "--id-field", "id", "--label-field", "topic", "-q",
                                       *WORDS])
    assert result.exit_code == 0, result.output
    assert "documents 160" in result.output and "4 shard(s)" in result.output
    return out


def in_memory_copy(sharded, folder):
    """The same corpus as a saved in-memory one (the counts gathered from the shards)."""
    c = open_sharded(sharded)
    counts = c.counts[np.arange(c.n_docs)]
    texts = [[] for _ in range(c.n_docs)]   # not used by training
    corpus = Corpus(counts=counts, vocabulary=c.vocabulary, texts=texts, ids=c.ids, labels=np.asarray(c.labels),
                    label_names=c.label_names, pipeline=c.pipeline, source=str(sharded))
    save_splits({"train": corpus}, folder)
    return folder


def _weights(run):
    return run_io.load_run(run).model.state_dict()


def test_train_on_a_sharded_corpus_equals_training_in_memory(sharded, tmp_path):
    memory = in_memory_copy(sharded, tmp_path / "memory")
    runner = CliRunner()
    for corpus, out in ((sharded, tmp_path / "disk"), (memory, tmp_path / "mem")):
        result = runner.invoke(main, ["train", str(corpus), "--out", str(out), "--quiet", "--batch-size", "16",
                                      *TINY])
        assert result.exit_code == 0, result.output
    disk, mem = _weights(tmp_path / "disk"), _weights(tmp_path / "mem")
    assert all(np.array_equal(disk[k].numpy(), mem[k].numpy()) for k in mem)
    assert (run_io.load_run(tmp_path / "disk").doc_codes() != run_io.load_run(tmp_path / "mem").doc_codes()).nnz == 0
    config = json.loads((tmp_path / "disk" / "config.json").read_text())
    assert config["corpus"]["settings"] == {"sharded_corpus": str(sharded.resolve())}
    assert not (tmp_path / "disk" / "counts.npz").exists()      # the shards are not copied into the run
    # (evaluate, graph and ldavis on such a run: tests/cli/test_sharded_runs.py)


def test_an_interrupted_training_resumes_from_the_shards(sharded, tmp_path, monkeypatch):
    runner = CliRunner()
    real = run_io.save_checkpoint

    def save_then_interrupt(path, model, extra=None):
        real(path, model, extra)
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(run_job, "save_checkpoint", save_then_interrupt)
        result = runner.invoke(main, ["train", str(sharded), "--out", str(tmp_path / "run"), "--quiet", *TINY])
    assert result.exit_code == 130, result.output
    corpus_dir = run_io.partial_path(tmp_path / "run") / "corpus"
    assert [p.name for p in corpus_dir.iterdir()] == ["sharded_reference.json"]    # a reference, not a copy
    result = runner.invoke(main, ["train", "--out", str(tmp_path / "run"), "--resume", "--quiet"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(main, ["train", str(sharded), "--out", str(tmp_path / "whole"), "--quiet", *TINY])
    assert result.exit_code == 0, result.output
    resumed, whole = _weights(tmp_path / "run"), _weights(tmp_path / "whole")
    assert all(np.array_equal(resumed[k].numpy(), whole[k].numpy()) for k in whole)


def test_an_altered_shard_stops_train_with_one_line(sharded, tmp_path):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(sharded, copy)
    data = copy / "shard-00002.data.npy"
    raw = bytearray(data.read_bytes())
    raw[-1] ^= 1
    data.write_bytes(bytes(raw))
    result = CliRunner().invoke(main, ["train", str(copy), "--out", str(tmp_path / "run"), *TINY])
    one_line_error(result, "shard-00002.data.npy does not match its sha256", "build the corpus again")
    assert not (tmp_path / "run").exists()


def test_a_bad_line_is_one_line_naming_file_and_line(jsonl, tmp_path):
    bad = tmp_path / "bad.jsonl"
    lines = jsonl.read_text().splitlines()
    lines[6] = lines[6][:-3]
    bad.write_text("\n".join(lines) + "\n")
    runner = CliRunner()
    result = runner.invoke(main, ["corpus", str(bad), "--format", "sharded", "--out", str(tmp_path / "c"), "-q",
                                  *WORDS])
    one_line_error(result, "bad.jsonl:7: not a JSON object", "--skip-bad-lines")
    result = runner.invoke(main, ["corpus", str(bad), "--format", "sharded", "--out", str(tmp_path / "c"), "-q",
                                  "--skip-bad-lines", *WORDS])
    assert result.exit_code == 0, result.output
    assert "1 malformed line" in result.output
    result = runner.invoke(main, ["corpus", str(bad), "--out", str(tmp_path / "m")])     # in memory: the same rule
    one_line_error(result, "bad.jsonl:7: not a JSON object", "--skip-bad-lines")
    result = runner.invoke(main, ["corpus", str(bad), "--format", "sharded", "--max-docs", "5",
                                  "--out", str(tmp_path / "n")])
    one_line_error(result, "--max-docs", "does not apply to --format sharded")
    result = runner.invoke(main, ["corpus", str(tmp_path / "c")])      # a sharded corpus: verified, summarised
    assert result.exit_code == 0, result.output
    assert "checksums verified" in result.output and "1 malformed line" in result.output


@pytest.mark.parametrize("failure", [OSError(28, "No space left on device"),
                                     OSError("8000 requested and 4096 written")])   # numpy's short write
def test_a_sharded_build_on_a_full_disk_says_so(jsonl, tmp_path, monkeypatch, failure):
    def full(*args, **kwargs):
        raise failure

    monkeypatch.setattr(np, "save", full)
    out = tmp_path / "c"
    result = CliRunner().invoke(main, ["corpus", str(jsonl), "--format", "sharded", "--out", str(out), "-q", *WORDS])
    one_line_error(result, "no space left on the device", str(out), "choose another --out")
    assert list(tmp_path.iterdir()) == []
