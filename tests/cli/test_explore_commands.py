"""``bpetopics evaluate``, ``graph`` and ``ldavis`` through click's runner.

They run on ``trained_run`` (tests/cli/conftest.py: 300 training documents of a saved
corpus, 5 topics, 8 bits, 2 epochs) and on a copy of it whose recorded corpus also has a
test split (the same 300 training documents plus 300 test documents).
"""

from __future__ import annotations

import csv
import html
import json
import shutil

import networkx as nx
import numpy as np
import pytest

from bpetopics.cli import main
from bpetopics.runs import load_run
from tests.cli.conftest import TINY, one_line_error

COMMANDS = ("evaluate", "graph", "ldavis")


def _with_source(run_dir, dst, source, settings=None):
    """Copy a run folder and make its config record another corpus source."""
    shutil.copytree(run_dir, dst)
    config = json.loads((dst / "config.json").read_text())
    config["corpus"]["source"] = str(source)
    if settings is not None:
        config["corpus"]["settings"] = settings
    (dst / "config.json").write_text(json.dumps(config))
    return dst


@pytest.fixture(scope="module")
def run_with_test(trained_run, corpus_with_test, tmp_path_factory):
    """``trained_run`` recording ``corpus_with_test`` as its corpus (same training documents)."""
    return _with_source(trained_run[0], tmp_path_factory.mktemp("runs") / "ng-test", corpus_with_test)


@pytest.mark.parametrize("command", COMMANDS)
def test_help_has_examples(runner, command):
    result = runner.invoke(main, [command, "--help"])
    assert result.exit_code == 0, result.output
    assert "Examples:" in result.output and f"bpetopics {command} " in result.output


# ------------------------------------------------------------------------- evaluate
def test_evaluate_a_run_with_a_test_split(runner, run_with_test, corpus_with_test, tmp_path, monkeypatch):
    from bpetopics.evaluation import evaluate_topic_model
    from bpetopics.runs import Run
    from bpetopics.text import load_splits

    read = []
    real_counts = Run.counts
    monkeypatch.setattr(Run, "counts", lambda self: read.append(self.path) or real_counts(self))
    out = tmp_path / "metrics.json"
    result = runner.invoke(main, ["evaluate", str(run_with_test), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert read == [run_with_test]  # the saved training counts; only the test split is needed from the corpus
    assert "npmi" in result.output and "perplexity" in result.output
    res = json.loads(out.read_text())
    assert res["heldout"] == "test" and res["reference"] == "test"
    assert res["n_train"] == 300 and res["n_heldout"] == 300 and res["n_topics"] == 5
    assert "Note: the test split has 300 documents, a small coherence reference" in result.output
    assert -1 <= res["npmi_corpus"] <= 1 and res["npmi_corpus"] != res["npmi"]
    assert res["npmi"] == pytest.approx(res["gensim_c_npmi"], abs=1e-6)
    assert res["npmi_nonfinite"] == res["gensim_c_npmi_nonfinite"]
    assert -1 <= res["gensim_c_v"] <= 1 and res["gensim_u_mass"] <= 0 and np.isfinite(res["gensim_c_uci"])
    assert 0 < res["accuracy"] <= 1 and 0 < res["diversity"] <= 1 and res["perplexity"] > 1
    assert res["code_mean_active"] >= 0 and res["fit_seconds"] > 0 and len(res["top_words"]) == 5

    # the same numbers as the library on the same documents
    run, splits = load_run(run_with_test), load_splits(corpus_with_test)
    lib = evaluate_topic_model(run.model, splits["train"].counts, splits["test"].counts, splits["test"].texts,
                               run.vocabulary, splits["train"].labels, splits["test"].labels,
                               codes=run.model.transform(splits["test"].counts), gensim_measures=())
    for key in ("npmi", "diversity", "perplexity", "accuracy", "code_mean_active"):
        assert res[key] == pytest.approx(lib[key]), key
    whole = evaluate_topic_model(run.model, splits["train"].counts, splits["test"].counts,
                                 splits["train"].texts + splits["test"].texts, run.vocabulary, gensim_measures=())
    assert res["npmi_corpus"] == pytest.approx(whole["npmi"])

    train_ref = runner.invoke(main, ["evaluate", str(run_with_test), "--reference", "train", "--no-gensim"])
    assert train_ref.exit_code == 0, train_ref.output
    assert "gensim_c_npmi" not in train_ref.output


def test_evaluate_without_a_test_split(runner, trained_run, tmp_path):
    run_dir = trained_run[0]
    one_line_error(runner.invoke(main, ["evaluate", str(run_dir)]), "no test split", "--reference train")
    out = tmp_path / "m.json"
    result = runner.invoke(main, ["evaluate", str(run_dir), "--reference", "train", "--no-gensim", "--out", str(out)])
    assert result.exit_code == 0, result.output
    res = json.loads(out.read_text())
    assert res["heldout"] == "train" and res["accuracy"] is None and res["n_heldout"] == 300


def test_evaluate_a_run_trained_on_a_named_corpus(runner, tmp_path):
    """A named corpus (here gensim's lee) is recorded by name, not as a path, and is
    rebuilt by name: evaluate does not take it for a folder that went missing."""
    out = tmp_path / "lee"
    trained = runner.invoke(main, ["train", "lee", "--out", str(out), "--quiet", "--vocab-size", "300",
                                   "--min-df", "2", "--stopwords", "sklearn", *TINY])
    assert trained.exit_code == 0, trained.output
    assert json.loads((out / "config.json").read_text())["corpus"]["source"] == "lee"
    result = runner.invoke(main, ["evaluate", str(out), "--reference", "train", "--no-gensim",
                                  "--out", str(tmp_path / "m.json")])
    assert result.exit_code == 0, result.output
    res = json.loads((tmp_path / "m.json").read_text())
    assert res["heldout"] == "train" and res["n_heldout"] == 300 and res["n_words"] == 300


def test_a_run_trained_with_test_size_is_evaluated_on_its_held_out_documents(runner, tmp_path):
    """--test-size holds out documents of a corpus without a test split; evaluate rebuilds
    the same split from the run's record and measures on it by default."""
    out = tmp_path / "lee"
    trained = runner.invoke(main, ["train", "lee", "--out", str(out), "--quiet", "--vocab-size", "300",
                                   "--min-df", "2", "--stopwords", "sklearn", "--test-size", "0.2", *TINY])
    assert trained.exit_code == 0, trained.output
    config = json.loads((out / "config.json").read_text())
    assert config["corpus"]["settings"]["test_size"] == 0.2 and config["n_data"] == 240
    result = runner.invoke(main, ["evaluate", str(out), "--no-gensim", "--out", str(tmp_path / "m.json")])
    assert result.exit_code == 0, result.output
    res = json.loads((tmp_path / "m.json").read_text())
    assert res["heldout"] == "test" and res["reference"] == "test"
    assert (res["n_train"], res["n_heldout"]) == (240, 60) and res["perplexity"] > 1


def test_evaluate_bad_input(runner, trained_run, corpus_with_test, tmp_path):
    run_dir = trained_run[0]
    one_line_error(runner.invoke(main, ["evaluate", str(tmp_path / "nope")]), "does not exist")
    one_line_error(runner.invoke(main, ["evaluate", str(run_dir), "--out", str(tmp_path)]), "is a folder")
    one_line_error(runner.invoke(main, ["evaluate", str(run_dir), "--reference", "dev"]), "--reference")
    # the recorded corpus no longer holds the training documents
    from bpetopics.text import Corpus, load_splits, save_splits

    c = load_splits(corpus_with_test)["train"]
    other = save_splits({"train": Corpus(counts=c.counts[:200], vocabulary=c.vocabulary, texts=c.texts[:200],
                                         ids=c.ids[:200], pipeline=c.pipeline)}, tmp_path / "other")
    moved = _with_source(run_dir, tmp_path / "moved", other)
    one_line_error(runner.invoke(main, ["evaluate", str(moved), "--reference", "train"]), "changed since training")
    renamed = ["zzzword"] + list(c.vocabulary[1:])                   # as many words, one of them another
    other = save_splits({"train": Corpus(counts=c.counts, vocabulary=renamed, texts=c.texts, ids=c.ids,
                                         pipeline=c.pipeline)}, tmp_path / "renamed")
    moved = _with_source(run_dir, tmp_path / "moved-renamed", other)
    one_line_error(runner.invoke(main, ["evaluate", str(moved), "--reference", "train"]),
                   f"(1 of the run's {len(renamed)} words missing)")
    gone = _with_source(run_dir, tmp_path / "gone", tmp_path / "no-such-folder", settings={})
    one_line_error(runner.invoke(main, ["evaluate", str(gone), "--reference", "train"]), "not there any more")


def test_train_on_20newsgroups_then_evaluate(runner, shared_data, tmp_path, monkeypatch):
    """The usual path: the run records 20 Newsgroups and its settings; evaluate rebuilds the test split."""
    monkeypatch.setenv("SCIKIT_LEARN_DATA", str(shared_data / "sklearn"))
    run_dir = tmp_path / "run"
    train = runner.invoke(main, [
        "train", "20newsgroups", "--categories", "sci.space,rec.sport.hockey", "--max-docs", "150",
        "--vocab-size", "300", "--stopwords", str(shared_data / "stopwords" / "nltk_english.txt"),
        "--quiet", "--out", str(run_dir), *TINY])
    assert train.exit_code == 0, train.output
    out = tmp_path / "m.json"
    result = runner.invoke(main, ["evaluate", str(run_dir), "--no-gensim", "--out", str(out)])
    assert result.exit_code == 0, result.output
    res = json.loads(out.read_text())
    splits = load_run(run_dir).config["corpus"]["splits"]
    assert res["heldout"] == "test"
    assert (res["n_train"], res["n_heldout"]) == (splits["train"]["documents"], splits["test"]["documents"])
    assert res["accuracy"] is not None


# ------------------------------------------------------------- graph and ldavis: no rebuild
def _no_rebuild(monkeypatch):
    import bpetopics.runs.corpus as evaluate_module

    def refuse(run):
        raise AssertionError("the corpus was rebuilt")

    monkeypatch.setattr(evaluate_module, "run_splits", refuse)


def _old_run(run_dir, dst):
    """A copy of a run as older bpetopics wrote it: without counts.npz."""
    shutil.copytree(run_dir, dst)
    (dst / "counts.npz").unlink()
    return dst


def test_graph_and_ldavis_use_the_saved_counts(runner, trained_run, saved_corpus, tmp_path, monkeypatch):
    from bpetopics.runs.explore import run_graph
    from bpetopics.runs.explore import run_ldavis_inputs
    from bpetopics.text import load_splits

    run_dir = trained_run[0]
    counts = load_splits(saved_corpus)["train"].counts
    _no_rebuild(monkeypatch)
    # the source is gone: rebuilding would fail, the saved counts do not need it
    moved = _with_source(run_dir, tmp_path / "moved", tmp_path / "no-such-folder", settings={})
    run = load_run(moved)
    assert (run.counts() != counts).nnz == 0
    data = run_ldavis_inputs(run)
    np.testing.assert_array_equal(data["doc_lengths"], np.asarray(counts.sum(axis=1)).ravel())
    np.testing.assert_array_equal(data["term_frequency"], np.asarray(counts.sum(axis=0)).ravel())
    G = run_graph(run)
    lengths = np.asarray(counts.sum(axis=1)).ravel()
    share = lengths @ run.model.code_topic(run.model.codes_) / lengths.sum()
    np.testing.assert_allclose([G.nodes[t]["probability"] for t in range(5)], share, rtol=1e-6)
    np.testing.assert_allclose(share, run.summary["topic_share"], rtol=1e-4)

    result = runner.invoke(main, ["ldavis", str(moved), "--out", str(tmp_path / "t.html")])
    assert result.exit_code == 0, result.output
    result = runner.invoke(main, ["graph", str(moved), "--out", str(tmp_path / "g.png")])
    assert result.exit_code == 0, result.output

    # a run without counts.npz: graph still needs no corpus (shares from summary.json) ...
    old = _old_run(moved, tmp_path / "old")
    result = runner.invoke(main, ["graph", str(old), "--out", str(tmp_path / "old.png")])
    assert result.exit_code == 0, result.output
    # ... and ldavis rebuilds it (here it is gone, so that is a one-line error)
    monkeypatch.undo()
    one_line_error(runner.invoke(main, ["ldavis", str(old), "--out", str(tmp_path / "old.html")]),
                   "not there any more")


def test_ldavis_rebuilds_the_counts_of_an_old_run(trained_run, saved_corpus, tmp_path):
    from bpetopics.runs.explore import run_ldavis_inputs
    from bpetopics.text import load_splits

    counts = load_splits(saved_corpus)["train"].counts
    data = run_ldavis_inputs(load_run(_old_run(trained_run[0], tmp_path / "old")))
    np.testing.assert_array_equal(data["term_frequency"], np.asarray(counts.sum(axis=0)).ravel())


# ---------------------------------------------------------------------------- graph
def test_graph_writes_png_graphml_gexf_and_bits(runner, trained_run, tmp_path):
    from bpetopics.viz import coactivation_graph

    run_dir = trained_run[0]
    png = tmp_path / "fig" / "graph.png"
    result = runner.invoke(main, ["graph", str(run_dir), "--out", str(png), "--threshold", "0.15"])
    assert result.exit_code == 0, result.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "fig" / "graph.gexf").is_file()

    run = load_run(run_dir)
    codes = run.model.codes_
    expected = coactivation_graph(run.model.code_topic(codes), run.model.topic_word_, run.vocabulary,
                                  codes=codes, threshold=0.15)
    G = nx.read_graphml(tmp_path / "fig" / "graph.graphml", node_type=int)
    assert sorted(G.nodes) == sorted(expected.nodes) == list(range(5))
    assert {frozenset(e) for e in G.edges} == {frozenset(e) for e in expected.edges}
    for u, v, w in expected.edges(data="weight"):
        assert G.edges[u, v]["weight"] == w
    assert sum(G.nodes[t]["probability"] for t in G) == pytest.approx(1, abs=1e-6)
    assert sum(G.nodes[t]["n_docs"] for t in G) >= 1

    with open(tmp_path / "fig" / "graph.bits.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["bit"]) for r in rows] == list(range(8))
    used = (np.asarray(codes) != 0).sum(0)
    assert [int(r["n_docs"]) for r in rows] == used.tolist()
    assert {"topic_1", "raise_1", "label_1"} <= set(rows[0])


def test_graph_names_each_cut_by_its_own_unit(runner, trained_run, tmp_path, monkeypatch):
    """The title's cut is a mixture weight (when a topic is on); the footer's and the
    summary's a number of documents (which edges are drawn): never the same words."""
    from matplotlib.figure import Figure

    drawn, save = [], Figure.savefig

    def keep(fig, *args, **kwargs):
        drawn.append(fig)
        return save(fig, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", keep)
    result = runner.invoke(main, ["graph", str(trained_run[0]), "--out", str(tmp_path / "g.png"),
                                  "--threshold", "0.15", "--min-weight", "4"])
    assert result.exit_code == 0, result.output
    texts = [t.get_text() for t in drawn[0].texts]
    title = next(t for t in texts if "switched on together" in t)
    footer = next(t for t in texts if "hidden" in t)
    assert "a topic is on at mixture weight >= 0.15" in title and "documents" not in title
    assert "edges of fewer than 4 documents hidden" in footer and "weight" not in footer.split("·")[-1]
    assert "a topic is on at mixture weight >= 0.15" in result.output
    assert "drawn: those shared by 4 documents or more" in result.output


def test_graph_bad_input(runner, trained_run, tmp_path):
    run_dir = trained_run[0]
    one_line_error(runner.invoke(main, ["graph", str(run_dir), "--out", str(tmp_path / "g.svg")]), ".png")
    one_line_error(runner.invoke(main, ["graph", str(tmp_path / "nope"), "--out", str(tmp_path / "g.png")]),
                   "does not exist")
    one_line_error(runner.invoke(main, ["graph", str(run_dir), "--out", str(tmp_path / "g.png"), "--rule", "x"]),
                   "--rule")
    assert not list(tmp_path.iterdir())


# --------------------------------------------------------------------------- ldavis
def test_ldavis_writes_html_with_the_data(runner, trained_run, tmp_path):
    run_dir = trained_run[0]
    page = tmp_path / "topics.html"
    result = runner.invoke(main, ["ldavis", str(run_dir), "--out", str(page), "--top-n", "15"])
    assert result.exit_code == 0, result.output
    text = page.read_text(encoding="utf-8")
    assert "new LDAvis(" in text and "mdsDat" in text and "tinfo" in text
    run = load_run(run_dir)
    data = json.loads(text.split("_data = ", 1)[1].split(";\nnew LDAvis", 1)[0])
    assert sorted(data["mdsDat"]["topics"]) == [1, 2, 3, 4, 5]
    top = run.vocabulary[int(np.argmax(run.model.topic_word_[0]))]
    assert top in data["tinfo"]["Term"]
    # term frequencies are the training counts: the "Default" rows hold the corpus totals
    tokens = run.config["corpus"]["summary"]["tokens"]
    default = [f for f, c in zip(data["tinfo"]["Freq"], data["tinfo"]["Category"]) if c == "Default"]
    assert 0 < max(default) < tokens
    assert not [p for p in tmp_path.iterdir() if p.name != "topics.html"]  # no temp file left


def test_ldavis_bad_input(runner, trained_run, tmp_path):
    one_line_error(runner.invoke(main, ["ldavis", str(trained_run[0]), "--out", str(tmp_path / "t.txt")]), ".html")
    one_line_error(runner.invoke(main, ["ldavis", str(tmp_path), "--out", str(tmp_path / "t.html")]),
                   "not a complete run")


def test_the_ldavis_page_lists_the_topics_labels(runner, trained_run, tmp_path):
    """Under the plot, a table gives each topic's label (LDAvis itself numbers the topics):
    the labels `topics` prints, one set by hand included, HTML-escaped."""
    from bpetopics.runs.labels import topic_labels

    run = tmp_path / "run"
    shutil.copytree(trained_run[0], run)
    result = runner.invoke(main, ["topics", str(run), "--set-label", "2=<b>rockets & moons</b>"])
    assert result.exit_code == 0, result.output
    out = tmp_path / "topics.html"
    result = runner.invoke(main, ["ldavis", str(run), "--out", str(out)])
    assert result.exit_code == 0, result.output
    page = out.read_text(encoding="utf-8")
    labels = topic_labels(load_run(run))
    assert labels[2] == "<b>rockets & moons</b>"
    table = page[page.index('<table id="topic-labels"'):page.index("</table>")]
    assert "<td>3</td><td>&lt;b&gt;rockets &amp; moons&lt;/b&gt;</td>" in table
    for t, label in enumerate(labels, 1):
        assert f"<td>{t}</td>" in table and html.escape(label) in table


def test_a_run_trained_on_passages_is_rebuilt_with_them(runner, tmp_path):
    """--passages is recorded with the run; evaluate rebuilds the same passages (held out
    as whole documents by --test-size) and measures on them."""
    out = tmp_path / "lee"
    trained = runner.invoke(main, ["train", "lee", "--out", str(out), "--quiet", "--vocab-size", "300",
                                   "--min-df", "2", "--stopwords", "sklearn", "--test-size", "0.2",
                                   "--passages", "sentences", *TINY])
    assert trained.exit_code == 0, trained.output
    config = json.loads((out / "config.json").read_text())
    assert config["corpus"]["settings"]["passages"] == "sentences" and config["n_data"] > 240
    ids, _ = load_run(out).doc_topics()
    assert all("#" in i for i in ids) and len({i.split("#")[0] for i in ids}) == 240
    result = runner.invoke(main, ["evaluate", str(out), "--no-gensim", "--out", str(tmp_path / "m.json")])
    assert result.exit_code == 0, result.output
    res = json.loads((tmp_path / "m.json").read_text())
    assert res["heldout"] == "test" and res["n_train"] == config["n_data"] and res["n_heldout"] > 60
