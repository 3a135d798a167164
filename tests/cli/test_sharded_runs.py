"""A run trained on a sharded corpus (issue #15): its codes are written shard by shard
(``codes/``, no dense N x K array), equal ``transform`` of the same counts in memory, and
``evaluate``, ``graph``, ``ldavis``, ``info``, ``topics`` and ``encode`` work on it
(graph and pyLDAvis from the distinct codes, exactly; evaluate on a seeded sample, said
in its output)."""

from __future__ import annotations

import json
import shutil

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner

import bpetopics.runs as run_io
from bpetopics.cli import main
from bpetopics.text.sharded import open_sharded
from tests.cli.conftest import TINY, one_line_error
from tests.cli.test_sharded_commands import in_memory_copy, jsonl, sharded  # noqa: F401 (fixtures)


@pytest.fixture(scope="module")
def runs(sharded, tmp_path_factory):  # noqa: F811
    """The same training on the sharded corpus and on its counts in memory (2 epochs);
    the sharded run's codes are encoded 16 rows at a time (several blocks a shard), their
    distinct codes merged every 40 rows."""
    from bpetopics.runs import sharded_codes

    root = tmp_path_factory.mktemp("runs")
    memory = in_memory_copy(sharded, root / "memory")
    runner = CliRunner()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sharded_codes, "ENCODE_ROWS", 16)
        patch.setattr(sharded_codes, "MERGE_ROWS", 40)           # the distinct codes merged often
        for corpus, out in ((sharded, root / "disk"), (memory, root / "mem")):
            result = runner.invoke(main, ["train", str(corpus), "--out", str(out), "--quiet", "--batch-size", "16",
                                          *TINY])
            assert result.exit_code == 0, result.output
    return root / "disk", root / "mem"


def test_the_codes_are_written_sparse_per_shard_and_equal_transform(runs, sharded):  # noqa: F811
    disk, mem = runs
    names = sorted(p.name for p in (disk / "codes").iterdir())
    assert names == ["distinct.npz"] + [f"shard-{s:05d}.npz" for s in range(4)]
    assert not (disk / "doc_codes.npz").exists() and not (disk / "doc_topics.npz").exists()
    config = json.loads((disk / "config.json").read_text())
    assert [e["documents"] for e in config["codes"]["shards"]] == [50, 50, 50, 10]
    run = run_io.load_run(disk)
    assert not hasattr(run.model, "codes_")                        # nothing dense is loaded
    with pytest.raises(run_io.RunError, match="trained on a sharded corpus and keeps no doc_topics.npz"):
        run.doc_topics()
    counts = open_sharded(sharded).counts
    expected = run.model.transform(counts[np.arange(counts.shape[0])])   # the counts in memory
    shards = [sp.load_npz(disk / "codes" / f"shard-{s:05d}.npz") for s in range(4)]
    assert all(c.dtype == np.uint8 and sp.isspmatrix_csr(c) for c in shards)
    assert np.array_equal(sp.vstack(shards).toarray(), expected)
    assert np.array_equal(run.doc_codes().toarray(), expected)
    assert (run.doc_codes() != run_io.load_run(mem).doc_codes()).nnz == 0
    # the summary (token shares, bits) is the in-memory run's
    ours, theirs = (json.loads((r / "summary.json").read_text()) for r in runs)
    assert ours["documents"] == theirs["documents"] == 160
    assert ours["bits_used"] == theirs["bits_used"]
    assert ours["mean_active_bits"] == pytest.approx(theirs["mean_active_bits"])
    assert np.allclose(ours["topic_share"], theirs["topic_share"], atol=1e-6)


def test_graph_and_ldavis_of_a_sharded_run_equal_the_in_memory_ones(runs, tmp_path):
    from bpetopics.runs.explore import run_bit_table, run_graph, run_ldavis_inputs

    disk, mem = (run_io.load_run(r) for r in runs)
    G, H = run_graph(disk), run_graph(mem)
    assert G.graph["n_documents"] == H.graph["n_documents"] == 160
    assert sorted(G.edges(data="weight")) == sorted(H.edges(data="weight"))
    for t in H.nodes:
        assert G.nodes[t]["n_docs"] == H.nodes[t]["n_docs"]
        assert G.nodes[t]["probability"] == pytest.approx(H.nodes[t]["probability"], abs=1e-6)
    assert run_bit_table(disk).equals(run_bit_table(mem))
    ours, theirs = run_ldavis_inputs(disk), run_ldavis_inputs(mem)
    assert len(ours["doc_lengths"]) < 160                       # one row per distinct code
    assert ours["doc_lengths"].sum() == theirs["doc_lengths"].sum()
    assert np.array_equal(ours["term_frequency"], theirs["term_frequency"])
    # pyLDAvis's topic sizes: sum_n L_n f(z_n), the same from distinct codes
    assert np.allclose(ours["doc_lengths"] @ ours["doc_topic"], theirs["doc_lengths"] @ theirs["doc_topic"])
    runner = CliRunner()
    result = runner.invoke(main, ["graph", str(runs[0]), "--out", str(tmp_path / "g.png")])
    assert result.exit_code == 0, result.output
    written = nx.read_graphml(tmp_path / "g.graphml", node_type=int)
    assert sorted((s, d, int(w)) for s, d, w in written.edges(data="weight")) == sorted(H.edges(data="weight"))
    assert (tmp_path / "g.png").is_file() and (tmp_path / "g.bits.csv").is_file()
    result = runner.invoke(main, ["ldavis", str(runs[0]), "--out", str(tmp_path / "t.html")])
    assert result.exit_code == 0, result.output
    assert "all 160 documents, summed by their" in result.output and (tmp_path / "t.html").is_file()


def test_evaluate_a_sharded_run_on_a_seeded_sample(runs, tmp_path):
    runner = CliRunner()
    result = runner.invoke(main, ["evaluate", str(runs[0]), "--max-docs", "60", "--seed", "3",
                                  "--out", str(tmp_path / "m.json")])
    assert result.exit_code == 0, result.output
    assert "Evaluated on a sample of 60 of 160 training documents (seed 3)" in result.output
    metrics = json.loads((tmp_path / "m.json").read_text())
    assert metrics["n_heldout"] == 60 and metrics["n_train"] == 160
    assert metrics["sample"] == {"documents": 60, "of": 160, "seed": 3, "note": metrics["sample"]["note"]}
    assert np.isfinite(metrics["perplexity"]) and metrics["perplexity"] > 1
    assert -1 <= metrics["npmi"] <= 1 and metrics["purity"] is not None     # the corpus has labels
    again = runner.invoke(main, ["evaluate", str(runs[0]), "--max-docs", "60", "--seed", "3",
                                 "--out", str(tmp_path / "n.json")])
    assert again.exit_code == 0, again.output
    assert json.loads((tmp_path / "n.json").read_text())["perplexity"] == metrics["perplexity"]
    other = runner.invoke(main, ["evaluate", str(runs[0]), "--max-docs", "60", "--seed", "4",
                                 "--out", str(tmp_path / "o.json")])
    assert other.exit_code == 0, other.output
    assert json.loads((tmp_path / "o.json").read_text())["perplexity"] != metrics["perplexity"]
    whole = runner.invoke(main, ["evaluate", str(runs[0])])      # default sample > N: every document
    assert whole.exit_code == 0, whole.output
    assert "Evaluated on all 160 training documents" in whole.output


def test_npmi_on_the_sample_counts_documents_as_windows(runs):
    """The sharded evaluation's NPMI equals NPMI over the documents' word sets, computed
    independently here."""
    from bpetopics.evaluation.coherence import top_word_ids
    from bpetopics.runs.explore import evaluate_run

    run = run_io.load_run(runs[0])
    res = evaluate_run(run, sample=1000, top_n=5)
    X = open_sharded(json.loads((runs[0] / "config.json").read_text())["corpus"]["source"]).counts
    B = (X[np.arange(160)].toarray() > 0).astype(float)           # 160 x W: word in document
    n = B.shape[0]
    per_topic = []
    for top in top_word_ids(run.model.topic_word_, 5):
        p = B[:, top].mean(0)
        joint = (B[:, top].T @ B[:, top]) / n
        vals = [np.log((joint[i, j] + 1e-12) / (p[i] * p[j])) / -np.log(joint[i, j] + 1e-12)
                for i in range(5) for j in range(5) if i != j]
        per_topic.append(np.mean(vals))
    assert np.allclose(res["npmi_per_topic"], per_topic, atol=1e-6)


def test_info_topics_and_encode_read_a_sharded_run(runs, jsonl, tmp_path):  # noqa: F811
    runner = CliRunner()
    for args in (["info", str(runs[0])], ["topics", str(runs[0])]):
        result = runner.invoke(main, args)
        assert result.exit_code == 0, result.output
    texts = tmp_path / "new"
    texts.mkdir()
    lines = jsonl.read_text().splitlines()[:3]
    for i, line in enumerate(lines):
        (texts / f"d{i}.txt").write_text(json.loads(line)["text"])
    result = runner.invoke(main, ["encode", str(runs[0]), str(texts), "--out", str(tmp_path / "c.npz")])
    assert result.exit_code == 0, result.output
    assert sp.load_npz(tmp_path / "c.npz").shape == (3, 8)


def test_relabel_of_a_sharded_run_is_one_line(runs, tmp_path):
    run = tmp_path / "disk"
    shutil.copytree(runs[0], run)
    before = (run / "labels.json").read_bytes() if (run / "labels.json").exists() else None
    one_line_error(CliRunner().invoke(main, ["topics", str(run), "--relabel"]), "set labels by hand")
    assert ((run / "labels.json").read_bytes() if (run / "labels.json").exists() else None) == before


def test_a_damaged_code_shard_is_one_line(runs, tmp_path):
    import shutil

    copy = tmp_path / "run"
    shutil.copytree(runs[0], copy)
    (copy / "codes" / "distinct.npz").write_bytes(b"not a zip")
    result = CliRunner().invoke(main, ["graph", str(copy), "--out", str(tmp_path / "g.png")])
    one_line_error(result, "distinct.npz is missing or damaged", "train the run again")


def test_graph_needs_no_corpus_and_evaluate_names_a_missing_one(runs, tmp_path):
    """graph and ldavis read only the run (codes/distinct.npz); evaluate reads the shards,
    and a corpus moved away is one line."""
    import shutil

    copy = tmp_path / "run"
    shutil.copytree(runs[0], copy)
    config = json.loads((copy / "config.json").read_text())
    config["corpus"]["source"] = str(tmp_path / "moved")
    (copy / "config.json").write_text(json.dumps(config))
    runner = CliRunner()
    result = runner.invoke(main, ["graph", str(copy), "--out", str(tmp_path / "g.png")])
    assert result.exit_code == 0, result.output
    result = runner.invoke(main, ["ldavis", str(copy), "--out", str(tmp_path / "t.html")])
    assert result.exit_code == 0, result.output
    one_line_error(runner.invoke(main, ["evaluate", str(copy)]), "cannot read the corpus of", "moved")
