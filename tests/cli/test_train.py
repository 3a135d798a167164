"""``bpetopics train``: the run folder, refusals, bad options, Ctrl-C and --resume."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
import torch
from click.testing import CliRunner

import bpetopics.runs as run_io
from bpetopics.models.poissbpe.compiled import kernels
from bpetopics.cli import main
from tests.cli.conftest import TINY, one_line_error

RUN_FILES = ["config.json", "counts.npz", "doc_codes.npz", "doc_topics.npz", "history.csv", "model.safetensors",
             "labels.json", "summary.json", "topics.csv", "vocabulary.txt"]


def test_train_writes_a_complete_run(trained_run, saved_corpus):
    out, result = trained_run
    assert f"Saved run to {out}: 5 topics, 8 bits, 2 epoch(s), 300 documents" in result.output
    table = [line for line in result.output.splitlines() if line[:5].strip().isdigit()]
    labels = run_io.topic_labels(run_io.load_run(out))
    assert len(table) == 5 and all(line.count(label) == 1 for line, label in zip(table, labels))
    # topic, share, label, 10 x (word, weight)
    assert all(len(line.replace(label, "").split()) == 2 + 2 * 10 for line, label in zip(table, labels))
    assert sorted(p.name for p in out.iterdir()) == sorted(RUN_FILES)
    assert not run_io.partial_path(out).exists()

    config = json.loads((out / "config.json").read_text())
    assert config["format"] == "bpetopics.run" and config["format_version"] == 1
    assert config["params"]["n_topics"] == 5 and config["params"]["n_bits"] == 8 and config["seed"] == 0
    assert (config["n_data"], config["n_features"]) == (300, 500)
    assert config["corpus"]["source"] == str(saved_corpus)
    assert config["corpus"]["settings"] == {"saved_corpus": str(saved_corpus)}
    assert config["corpus"]["pipeline"]["format"] == "bpetopics.text_pipeline"
    assert {"torch", "numpy", "safetensors", "bpetopics", "numba"} <= set(config["versions"])
    # the backend the run trained on (the CPU: numba's kernels where numba imports)
    assert config["training"]["backend"] == ("numba" if kernels.AVAILABLE else "torch")
    with open(out / "history.csv") as f:
        history = list(csv.DictReader(f))
    assert [h["epoch"] for h in history] == ["1", "2"]
    assert list(history[0]) == ["epoch", "objective", "active_bits", "topic_overlap", "restarted_topics", "topics",
                                "seconds"]
    assert [h["topics"] for h in history] == ["5", "5"]
    assert 0 <= float(history[-1]["topic_overlap"]) <= 1
    assert sp.load_npz(out / "doc_codes.npz").shape == (300, 8)
    assert sp.load_npz(out / "counts.npz").shape == (300, 500)
    assert len((out / "vocabulary.txt").read_text().splitlines()) == 500
    summary = json.loads((out / "summary.json").read_text())
    assert abs(sum(summary["topic_share"]) - 1) < 1e-4
    # the Dirichlet prior's eta in use: by the corpus's size (a small one: more than 0.1)
    from bpetopics.models.poissbpe.topic_priors import smoothing_for

    tokens = sp.load_npz(out / "counts.npz").sum()
    assert summary["topic_smoothing"] == pytest.approx(smoothing_for(tokens)) and summary["topic_smoothing"] > 0.1


def test_existing_run_is_refused_unless_overwrite(trained_run, saved_corpus, runner, tmp_path):
    out, _ = trained_run
    before = (out / "model.safetensors").read_bytes()
    result = runner.invoke(main, ["train", str(saved_corpus), "--out", str(out), "--quiet", *TINY])
    one_line_error(result, "already holds a finished run", "--overwrite")
    assert (out / "model.safetensors").read_bytes() == before
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    result = runner.invoke(main, ["train", str(saved_corpus), "--out", str(tmp_path / "other"), *TINY])
    one_line_error(result, "is not a run folder", "never deleted")

    copy = tmp_path / "copy"
    result = runner.invoke(main, ["train", str(saved_corpus), "--out", str(copy), "--quiet", *TINY, "--epochs", "1"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(main, ["train", str(saved_corpus), "--out", str(copy), "--quiet", "--overwrite", *TINY])
    assert result.exit_code == 0, result.output
    assert json.loads((copy / "config.json").read_text())["params"]["epochs"] == 2
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary folders left


@pytest.mark.parametrize("args, fragments", [
    (["--topics", "-3"], ["--topics must be a positive integer", "-3"]),
    (["--bits", "0"], ["--bits must be a positive integer"]),
    (["--epochs", "0"], ["--epochs must be a positive integer"]),
    (["--device", "tpu"], ["unknown device 'tpu'"]),
    (["--gamma", "50"], ["gamma must lie in (0, n_bits=8)"]),
    (["--lr", "0"], ["--lr must be positive"]),
    (["--topic-repulsion", "-1"], ["--topic-repulsion must be zero or more"]),
    (["--hidden", "64,x"], ["--hidden takes comma-separated integers"]),
    (["--activation", "swish"], ["unknown --activation 'swish'"]),
])
def test_bad_options_give_one_line(runner, tmp_path, args, fragments):
    result = runner.invoke(main, ["train", "no/such/corpus", "--out", str(tmp_path / "r"), *TINY, *args])
    one_line_error(result, *fragments)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_cuda_asked_but_absent(runner, tmp_path):
    result = runner.invoke(main, ["train", "20newsgroups", "--out", str(tmp_path / "r"), "--device", "cuda"])
    one_line_error(result, "CUDA is not available", "--device cpu")


def test_bad_corpora_give_one_line(runner, tmp_path):
    one_line_error(runner.invoke(main, ["train", str(tmp_path / "nope"), "--out", str(tmp_path / "r"), *TINY]),
                   "does not exist")
    (tmp_path / "empty").mkdir()
    one_line_error(runner.invoke(main, ["train", str(tmp_path / "empty"), "--out", str(tmp_path / "r"), *TINY]),
                   "is empty")
    one_line_error(runner.invoke(main, ["train", "--out", str(tmp_path / "r")]), "give a CORPUS")
    one_line_error(runner.invoke(main, ["train", "--out", str(tmp_path / "r"), "--resume"]), "nothing to resume")
    assert not (tmp_path / "r").exists() and not (tmp_path / "r.partial").exists()


def test_train_on_20newsgroups_with_progress(runner, shared_data, tmp_path):
    out = tmp_path / "ng"
    result = runner.invoke(main, [
        "train", "20newsgroups", "--out", str(out), "--data-home", str(shared_data / "sklearn"),
        "--categories", "sci.space,rec.autos", "--max-docs", "150", "--vocab-size", "300", "--min-df", "3",
        "--stopwords", str(shared_data / "stopwords" / "nltk_english.txt"), *TINY, "--epochs", "1", "--top-n", "4"])
    assert result.exit_code == 0, result.output
    assert "Training on 20newsgroups: 1" in result.stderr  # ~150 documents, less the empty ones
    # a corpus this small gets the note on what was measured below 1,000 documents
    assert "training documents; below about 1,000, LDA by Gibbs sampling trained faster" in result.stderr
    assert "bpetopics compare 20newsgroups --topics 5 --models poissbpe,tomotopy" in result.stderr
    assert "objective" in result.stderr and "mean active bits" in result.stderr and "1/1" in result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"Saved run to {out}: 5 topics") and len(lines) == 1 + 1 + 5  # header, 5 topics
    labels = run_io.topic_labels(run_io.load_run(out))
    assert all(len(line.replace(label, "", 1).split()) == 2 + 2 * 4 for line, label in zip(lines[2:], labels))
    config = json.loads((out / "config.json").read_text())
    assert config["corpus"]["source"] == "20newsgroups"
    assert config["corpus"]["settings"]["categories"] == ["sci.space", "rec.autos"]
    assert set(config["corpus"]["splits"]) == {"train", "test"}


def test_train_on_a_folder_of_texts(runner, raw_folder, tmp_path, monkeypatch):
    out = tmp_path / "texts"
    monkeypatch.chdir(raw_folder.parent)  # a relative CORPUS is recorded as an absolute path
    result = runner.invoke(main, ["train", raw_folder.name, "--out", str(out), "--min-df", "1", "--max-df", "1.0",
                                  "--stopwords", "none", "--quiet", *TINY, "--topics", "2"])
    assert result.exit_code == 0, result.output
    config = json.loads((out / "config.json").read_text())
    source = Path(config["corpus"]["source"])
    assert source.is_absolute() and source.samefile(raw_folder)
    assert config["n_data"] == 3 and config["corpus"]["settings"]["stopwords"] == "none"
    assert "the" in (out / "vocabulary.txt").read_text().split()


def test_without_out_the_run_is_named_after_its_corpus(runner, raw_folder, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = ["train", str(raw_folder), "--min-df", "1", "--max-df", "1.0", "--stopwords", "none", "--quiet", *TINY,
            "--topics", "2", "--epochs", "1"]
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.output
    out = Path("runs") / raw_folder.name
    assert f"Saved run to {out}:" in result.stdout
    assert json.loads((tmp_path / out / "config.json").read_text())["n_data"] == 3
    before = (tmp_path / out / "model.safetensors").read_bytes()
    one_line_error(runner.invoke(main, args), "already holds a finished run", "--overwrite")   # never overwritten
    assert (tmp_path / out / "model.safetensors").read_bytes() == before
    one_line_error(runner.invoke(main, ["train", "--resume"]), "--resume needs --out")
    one_line_error(runner.invoke(main, ["train", "."]), "cannot name a run after the corpus .", "give --out")
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == [raw_folder.name]


@pytest.mark.parametrize("corpus, folder", [
    ("20newsgroups", "runs/20newsgroups"), ("corpora/20ng/", "runs/20ng"), ("data/posts.jsonl.gz", "runs/posts"),
    ("notes.v2.csv", "runs/notes.v2"), (".hidden.csv", "runs/.hidden"),
])
def test_the_default_run_folder_drops_the_corpus_file_extensions(corpus, folder):
    from bpetopics.cli.train import default_run_folder

    assert default_run_folder(corpus) == Path(folder)


def _interrupt_after_epoch(monkeypatch, epoch):
    import bpetopics.runs.job as run_job

    real = run_io.save_checkpoint

    def save_then_interrupt(path, model, extra=None):
        real(path, model, extra)
        if model.epoch_ == epoch:
            raise KeyboardInterrupt

    monkeypatch.setattr(run_job, "save_checkpoint", save_then_interrupt)


def test_interrupted_training_resumes_to_the_same_model(saved_corpus, tmp_path, monkeypatch):
    runner = CliRunner()
    args = ["train", str(saved_corpus), "--quiet", *TINY, "--epochs", "3", "--seed", "7"]
    whole = tmp_path / "whole"
    assert runner.invoke(main, [*args, "--out", str(whole)]).exit_code == 0

    out = tmp_path / "cut"
    with monkeypatch.context() as m:
        _interrupt_after_epoch(m, 1)
        result = runner.invoke(main, [*args, "--out", str(out)])
    assert result.exit_code == 130, result.output
    assert "checkpoint after epoch 1 of 3" in result.stderr and f"bpetopics train --out {out} --resume" in result.stderr
    assert not out.exists() and (tmp_path / "cut.partial" / "checkpoint.safetensors").is_file()
    one_line_error(runner.invoke(main, ["topics", str(out)]), "did not finish", "--resume")
    one_line_error(runner.invoke(main, [*args, "--out", str(out)]), "interrupted training", "--resume")

    result = runner.invoke(main, ["train", "--out", str(out), "--resume", "--quiet"])
    assert result.exit_code == 0, result.output
    assert not (tmp_path / "cut.partial").exists()
    a, b = run_io.load_run(whole), run_io.load_run(out)
    sa, sb = a.model.state_dict(), b.model.state_dict()
    assert sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)
    assert (a.model.codes_ == b.model.codes_).all()
    assert [h["objective"] for h in a.model.history_] == [h["objective"] for h in b.model.history_]


def test_python_dash_m_and_every_help_has_examples(runner):
    proc = subprocess.run([sys.executable, "-m", "bpetopics", "--help"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "train" in proc.stdout and "encode" in proc.stdout
    for command in ("train", "topics", "encode", "info"):
        result = runner.invoke(main, [command, "--help"])
        assert result.exit_code == 0 and "Examples:" in result.output and f"bpetopics {command} " in result.output


def test_every_model_option_is_checked_by_the_estimators_own_rule():
    from bpetopics.cli import model_parameters
    from bpetopics.models import PoissBPE

    assert set(model_parameters()) <= set(PoissBPE._parameter_rules)


def test_the_model_options_read_without_import_are_the_signatures_defaults():
    import inspect

    from bpetopics.cli import NOT_OPTIONS, model_parameters
    from bpetopics.models import PoissBPE

    signature = {name: p.default for name, p in inspect.signature(PoissBPE.__init__).parameters.items()
                 if name not in NOT_OPTIONS}
    assert model_parameters() == signature


def test_the_small_corpus_note_names_the_corpus_and_stops_at_1000_documents():
    from bpetopics.cli import small_corpus_note

    note = small_corpus_note(999, "my texts/", 12)
    assert note.startswith("Note: 999 training documents") and "\n" not in note
    assert "bpetopics compare 'my texts/' --topics 12 --models poissbpe,tomotopy" in note  # quoted for the shell
    assert small_corpus_note(1000, "corpus", 20) is None and small_corpus_note(11_227, "20newsgroups", 20) is None
    assert note.endswith("(and the same corpus options) checks on this corpus")


def test_the_cuda_note_only_below_its_minibatch_and_only_on_cuda():
    from bpetopics.cli.corpus_notes import CUDA_MIN_BATCH, cuda_batch_note

    note = cuda_batch_note("cuda", 64)
    assert note.startswith("Note: training on CUDA at 64 documents a step") and "\n" not in note
    assert "--device cpu" in note and f"--batch-size {CUDA_MIN_BATCH}" in note
    assert cuda_batch_note("cuda:1", CUDA_MIN_BATCH - 1) is not None
    assert cuda_batch_note("cuda", CUDA_MIN_BATCH) is None and cuda_batch_note("cuda:0", 4096) is None
    assert cuda_batch_note("cpu", 64) is None


def test_the_short_texts_note_only_for_short_texts_at_many_topics(runner, tmp_path):
    from bpetopics.cli import short_texts_note
    from bpetopics.cli.corpus_notes import SHORT_TEXT_TOPICS

    note = short_texts_note(10_499, 29_400, "my titles.jsonl", 200)
    assert note.startswith("Note: short texts (2.8 distinct words a document) with 200 topics") and "\n" not in note
    assert "bpetopics compare 'my titles.jsonl' --topics 200 --models poissbpe,tomotopy" in note
    assert short_texts_note(100, 100 * 10, "c", 200) is None                    # ten words: not short
    assert short_texts_note(100, 300, "c", SHORT_TEXT_TOPICS - 1) is None      # few topics
    assert short_texts_note(100, 300, "c", SHORT_TEXT_TOPICS) is not None
    assert short_texts_note(0, 0, "c", 200) is None
    titles = tmp_path / "titles"
    titles.mkdir()
    rng = np.random.default_rng(0)
    words = sorted({"".join(rng.choice(list("bcdfgklmnprstvz"), 6)) for _ in range(200)})     # 200 made-up words
    for i in range(600):
        (titles / f"t{i}.txt").write_text(" ".join(rng.choice(words, size=3)))
    result = runner.invoke(main, ["train", str(titles), "--topics", "100", "--epochs", "1", "--min-df", "1",
                                  "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    assert "Note: short texts" in result.stderr
    result = runner.invoke(main, ["train", str(titles), "--topics", "20", "--epochs", "1", "--min-df", "1",
                                  "--out", str(tmp_path / "run20")])
    assert result.exit_code == 0 and "Note: short texts" not in result.stderr


def test_the_long_documents_note_points_at_passages_on_small_corpora_only():
    from bpetopics.cli import long_documents_note

    note = long_documents_note(66, 54_083, None)
    assert note.startswith("Note: the documents average 819 tokens") and "--passages paragraphs" in note
    assert "\n" not in note
    assert long_documents_note(66, 54_083, "paragraphs") is None          # already split
    assert long_documents_note(66, 66 * 499, None) is None                # not long
    assert long_documents_note(1000, 1000 * 800, None) is None            # not few
    assert long_documents_note(0, 0, None) is None
