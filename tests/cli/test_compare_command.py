"""``bpetopics compare`` through click's runner: one T and several, on the saved corpus
with a test split (tests/cli/conftest.py), and a folder whose documents cleaning empties."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from bpetopics.cli import main
from tests.cli.conftest import one_line_error


def test_help_has_examples(runner):
    result = runner.invoke(main, ["compare", "--help"])
    assert result.exit_code == 0, result.output
    assert "Examples:" in result.output and "bpetopics compare " in result.output


def test_compare_writes_three_files_with_both_models(runner, corpus_with_test, tmp_path):
    out = tmp_path / "cmp"
    args = ["compare", str(corpus_with_test), "--topics", "5", "--bits", "8", "--epochs", "2", "--lda-passes", "2",
            "--seeds", "1", "--device", "cpu", "--out", str(out)]
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["comparison.csv", "comparison.md", "comparison.png"]
    with open(out / "comparison.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["model"], r["seed"]) for r in rows] == [("PoissBPE", "0"), ("LDA", "0")]
    for r in rows:
        assert r["n_train"] == r["n_test"] == "300"
        assert float(r["npmi"]) == pytest.approx(float(r["gensim_c_npmi"]), abs=1e-6)
        assert -1 <= float(r["gensim_c_v"]) <= 1 and float(r["gensim_u_mass"]) <= 0
        assert float(r["fit_seconds"]) > 0 and float(r["infer_seconds"]) > 0 and r["accuracy"]
    assert rows[0]["code_mean_active"] and not rows[1]["code_mean_active"]
    md = (out / "comparison.md").read_text()
    assert "| metric | PoissBPE | LDA |" in md and "LDABaseline(passes=2" in md
    assert "| C_V (gensim) ↑ |" in md and "| UMass (gensim) ↑ |" in md and "| UCI (gensim) ↑ |" in md
    assert (out / "comparison.png").read_bytes()[:4] == b"\x89PNG"

    one_line_error(runner.invoke(main, args), "already holds a comparison", "--overwrite")
    one_line_error(runner.invoke(main, [*args[:3], "0", *args[4:]]), "--topics")
    one_line_error(runner.invoke(main, [*args, "--overwrite", "--models", "PoissBPE,NoSuch"]),
                   "unknown --models 'PoissBPE,NoSuch'", "PoissBPE, LDA, Tomotopy, NMF, ProdLDA")
    # PoissBPE's steps in order (the comparison tables of docs/results/text-comparison.md), said in the setting
    result = runner.invoke(main, [*args, "--overwrite", "--models", "PoissBPE", "--no-gensim", "--no-pipeline"])
    assert result.exit_code == 0, result.output
    assert "pipeline=False" in (out / "comparison.md").read_text()
    # PoissBPE's prior for spread mixtures: given to the model, said in the setting, refused below 0
    result = runner.invoke(main, [*args, "--overwrite", "--models", "PoissBPE", "--no-gensim", "--mixture-entropy",
                                  "0.1"])
    assert result.exit_code == 0, result.output
    assert "mixture_entropy=0.1" in (out / "comparison.md").read_text()
    one_line_error(runner.invoke(main, [*args, "--overwrite", "--mixture-entropy", "-1"]), "--mixture-entropy")


def test_compare_over_several_numbers_of_topics(runner, corpus_with_test, tmp_path):
    """--topics 3,5: a comparison a T in its folder, and the measures over T side by side,
    each T's row the mean of that T's comparison."""
    out = tmp_path / "sweep"
    args = ["compare", str(corpus_with_test), "--topics", "3,5", "--bits", "8", "--epochs", "2", "--lda-passes", "2",
            "--seeds", "2", "--no-gensim", "--models", "PoissBPE,NMF", "--device", "cpu", "--out", str(out)]
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["T3", "T5", "by-topics.csv", "by-topics.md"]
    assert sorted(p.name for p in (out / "T5").iterdir()) == ["comparison.csv", "comparison.md", "comparison.png"]
    with open(out / "by-topics.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["n_topics"], r["model"], r["seeds"]) for r in rows] == [
        ("3", "PoissBPE", "2"), ("3", "NMF", "2"), ("5", "PoissBPE", "2"), ("5", "NMF", "2")]
    with open(out / "T5" / "comparison.csv", newline="") as f:
        per_seed = [r for r in csv.DictReader(f) if r["model"] == "NMF"]
    assert float(rows[3]["perplexity_mean"]) == pytest.approx(np.mean([float(r["perplexity"]) for r in per_seed]))
    md = (out / "by-topics.md").read_text()
    assert md.startswith(f"# {corpus_with_test}: the models over the number of topics T")
    # 300 held-out documents are too few a reference: NPMI is the whole corpus's, shown once
    assert "| T | model | NPMI (whole corpus) |" in md and "NPMI (test split)" not in md
    assert "| 5 | NMF |" in md and "300 held-out documents" in md
    assert "| T | model |" in result.output
    one_line_error(runner.invoke(main, args), "already holds a comparison")
    for bad in ("5,5", "0,5", "x"):
        one_line_error(runner.invoke(main, [*args[:3], bad, *args[4:], "--overwrite"]), "--topics")


def test_compare_says_which_documents_it_left_out(runner, tmp_path):
    """Issue #14: never drop a document silently; a folder with an empty document and
    one that cleaning empties (a message that is all header) reports both."""
    root = tmp_path / "docs"
    root.mkdir()
    words = ["space shuttle orbit launch moon nasa", "hockey team game players league goal",
             "engine car wheel road speed driver", "bible church faith god prayer jesus"]
    for i in range(40):
        (root / f"d{i:02d}.txt").write_text(" ".join([words[i % 4]] * 3) + "\n")
    (root / "blank.txt").write_text("\n")
    (root / "header.txt").write_text("From: a@b.c\nSubject: nothing\nLines: 0\n")
    result = runner.invoke(main, ["compare", str(root), "--topics", "2", "--seeds", "1", "--epochs", "1",
                                  "--bits", "4", "--lda-passes", "1", "--no-gensim", "--min-df", "1",
                                  "--device", "cpu", "--out", str(tmp_path / "cmp")])
    assert result.exit_code == 0, result.output
    note = [line for line in result.output.splitlines() if "left out" in line and line.startswith("Note:")]
    assert note == ["Note: train: 2 document(s) left out (2 empty after cleaning)"], result.output
    # and comparison.md records them
    assert ("- documents left out: train: 2 document(s) left out (2 empty after cleaning)"
            in (tmp_path / "cmp" / "comparison.md").read_text())


@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="needs a machine without CUDA")
def test_compare_refuses_cuda_without_it_before_preparing_the_corpus(runner, tmp_path):
    out = tmp_path / "cmp"
    result = runner.invoke(main, ["compare", str(tmp_path / "no such corpus"), "--topics", "5", "--out", str(out),
                                  "--device", "cuda"])
    one_line_error(result, "CUDA is not available", "--device cpu")
    assert not out.exists()


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_compare_passes_each_models_params_and_refuses_bad_ones(runner, corpus_with_test, tmp_path):
    """--params MODEL=JSON reaches that model (said in comparison.md and changing its fit);
    every mistake is one line before any corpus is read or model fitted."""
    out = tmp_path / "params"
    args = ["compare", str(corpus_with_test), "--topics", "5", "--bits", "8", "--epochs", "2", "--seeds", "1",
            "--no-gensim", "--models", "PoissBPE,NMF", "--device", "cpu", "--out", str(out)]
    result = runner.invoke(main, [*args, "--params", 'nmf={"max_iter": 3}', "--params",
                                  'PoissBPE={"topic_repulsion": 0.002}', "--params", 'poissbpe={"batch_size": 32}'])
    assert result.exit_code == 0, result.output
    md = (out / "comparison.md").read_text()
    assert "with max_iter=3" in md and "topic_repulsion=0.002" in md and "batch_size=32" in md
    with open(out / "comparison.csv", newline="") as f:
        three = {r["model"]: float(r["perplexity"]) for r in csv.DictReader(f)}
    result = runner.invoke(main, [*args, "--overwrite", "--models", "NMF"])
    assert result.exit_code == 0, result.output
    with open(out / "comparison.csv", newline="") as f:
        default = float(next(csv.DictReader(f))["perplexity"])
    assert three["NMF"] != pytest.approx(default, rel=1e-6)      # 3 iterations against NMF's 200

    missing = tmp_path / "never-read"
    bad = ["compare", str(missing), *args[2:-1], str(tmp_path / "bad")]
    one_line_error(runner.invoke(main, [*bad, "--params", "nmf"]), "MODEL=JSON")
    one_line_error(runner.invoke(main, [*bad, "--params", 'lda={"passes": 2}']), "'lda' is not among", "--models")
    one_line_error(runner.invoke(main, [*bad, "--params", "nmf={max_iter: 3}"]), "NMF is not valid JSON")
    one_line_error(runner.invoke(main, [*bad, "--params", "nmf=[3]"]), "JSON object")
    one_line_error(runner.invoke(main, [*bad, "--params", 'nmf={"iterations": 3}']),
                   "NMF has no parameter 'iterations'", "max_iter")
    one_line_error(runner.invoke(main, [*bad, "--params", 'nmf={"n_topics": 3}']), "n_topics", "--topics")
    one_line_error(runner.invoke(main, [*bad, "--params", 'nmf={"max_iter": 3}', "--params", 'NMF={"max_iter": 4}']),
                   "max_iter twice")
    one_line_error(runner.invoke(main, [*bad, "--params", 'poissbpe={"epochs": 3}']), "epochs", "--epochs")
    one_line_error(runner.invoke(main, [*bad, "--params", 'poissbpe={"device": "cpu"}']), "--device")
    one_line_error(runner.invoke(main, [*bad, "--params", 'poissbpe={"topic_repulsion": -1}']),
                   "PoissBPE's topic_repulsion")
    assert not missing.exists() and not (tmp_path / "bad").exists()
