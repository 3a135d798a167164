"""``bpetopics topics``, ``encode`` and ``info`` on a run trained through the CLI."""

from __future__ import annotations

import csv
import io
import json
import shutil

import numpy as np
import pytest
import scipy.sparse as sp

from bpetopics.cli import main
from bpetopics.runs import load_run, topic_labels
from tests.cli.conftest import one_line_error


def test_topics_table_csv_json(runner, trained_run):
    out, _ = trained_run
    run = load_run(out)
    table = runner.invoke(main, ["topics", str(out), "--top-n", "4"])
    assert table.exit_code == 0, table.output
    lines = table.output.splitlines()
    assert lines[0].split()[:3] == ["topic", "share", "label"] and len(lines) == 6
    label = topic_labels(run)[0]
    assert label in lines[1]
    first = lines[1].replace(label, "", 1).split()
    top = np.argsort(-run.model.topic_word_[0])[:4]
    assert first[0] == "0" and first[1].endswith("%") and first[2::2] == [run.vocabulary[j] for j in top]

    rows = list(csv.DictReader(io.StringIO(runner.invoke(main, ["topics", str(out), "-n", "3", "--format", "csv"]).output)))
    assert len(rows) == 5 * 3 and set(rows[0]) == {"topic", "share", "rank", "word", "weight", "label"}
    assert abs(sum(float(r["share"]) for r in rows if r["rank"] == "0") - 1) < 1e-3

    data = json.loads(runner.invoke(main, ["topics", str(out), "--format", "json"]).output)
    assert len(data) == 5 and len(data[2]["words"]) == 10
    assert data[2]["weights"] == sorted(data[2]["weights"], reverse=True)
    one_line_error(runner.invoke(main, ["topics", str(out), "--top-n", "0"]), "invalid --top-n", "0")


def test_topics_documents_are_those_the_topic_weighs_most(runner, trained_run):
    """--documents N: each topic's N training documents of largest weight (from the
    run's mixtures), the longer first among weights equal to two decimals, with their
    first words; shown in the table and json, refused for csv."""
    from bpetopics.runs.corpus import run_splits

    out, _ = trained_run
    run = load_run(out)
    ids, mixtures = run.doc_topics()
    lengths = {i: len(t) for i, t in zip(ids, run_splits(run)["train"].texts)}
    data = json.loads(runner.invoke(main, ["topics", str(out), "--documents", "4", "--format", "json"]).output)
    for row in data:
        docs = row["documents"]
        assert len(docs) == 4 and all(doc["text"] for doc in docs)
        weights = [mixtures[ids.index(doc["id"]), row["topic"]] for doc in docs]
        assert [doc["weight"] for doc in docs] == pytest.approx(weights, abs=1e-4)
        keys = [(round(float(w), 2), lengths[doc["id"]]) for w, doc in zip(weights, docs)]
        assert keys == sorted(keys, reverse=True)
        assert round(float(np.delete(mixtures[:, row["topic"]], [ids.index(d["id"]) for d in docs]).max()), 2) <= keys[-1][0]
    table = runner.invoke(main, ["topics", str(out), "--documents", "2", "-n", "3"])
    assert table.exit_code == 0 and len(table.output.splitlines()) == 1 + 5 * 3
    assert data[0]["documents"][0]["id"] in table.output.splitlines()[2]
    one_line_error(runner.invoke(main, ["topics", str(out), "--documents", "2", "--format", "csv"]),
                   "--documents", "json")


def test_encode_passages_cuts_each_document_after_cleaning(runner, trained_run, tmp_path):
    """--passages encodes each document's sentences, the headers stripped first; each
    passage's counts are those of its own words."""
    out, _ = trained_run
    doc = tmp_path / "two.txt"
    doc.write_text("From: a@b.c\nSubject: mixed\n\nThe shuttle launch into orbit around the moon. "
                   "The hockey team won the game and the players cheered.\n")
    target = tmp_path / "p.json"
    result = runner.invoke(main, ["encode", str(out), str(doc), "--passages", "sentences", "--out", str(target)])
    assert result.exit_code == 0, result.output
    assert "Encoded 2 passage(s) of 1 document(s)" in result.output
    rows = json.loads(target.read_text())["documents"]
    assert [r["id"] for r in rows] == ["two.txt#1", "two.txt#2"]
    whole = tmp_path / "w.json"
    assert runner.invoke(main, ["encode", str(out), str(doc), "--out", str(whole)]).exit_code == 0
    assert sum(r["n_words"] for r in rows) == json.loads(whole.read_text())["documents"][0]["n_words"]


@pytest.mark.parametrize("ext", [".csv", ".npz", ".json"])
def test_encode_a_folder(runner, trained_run, raw_folder, tmp_path, ext):
    out, _ = trained_run
    target = tmp_path / f"codes{ext}"
    result = runner.invoke(main, ["encode", str(out), str(raw_folder), "--out", str(target)])
    assert result.exit_code == 0, result.output
    assert "Encoded 3 document(s)" in result.output and "1 had no word of the run's vocabulary" in result.output

    # What the library gives for the same texts, with the run's own pipeline.
    run = load_run(out)
    ids = ["hockey.txt", "nothing.txt", "space.txt"]
    counts = run.pipeline.transform([(raw_folder / i).read_text() for i in ids])
    codes = run.model.transform(counts)
    mixtures = run.model.doc_topic(counts)                # each document's own mixture, by default
    assert counts[2].sum() > 0 and counts[1].sum() == 0

    if ext == ".csv":
        rows = list(csv.DictReader(target.open()))
        assert [r["doc_id"] for r in rows] == ids
        assert [r["active_bits"] for r in rows] == [" ".join(map(str, np.flatnonzero(c))) for c in codes]
        got = np.array([[float(r[f"topic_{t}"]) for t in range(5)] for r in rows])
        np.testing.assert_allclose(got, mixtures, rtol=1e-5, atol=1e-7)
        assert len(rows[0]["top_topics"].split()) == 3
    elif ext == ".npz":
        np.testing.assert_array_equal(sp.load_npz(target).toarray(), codes)
        with np.load(target, allow_pickle=False) as f:
            assert list(f["ids"]) == ids and f["doc_topic"].shape == (3, 5)
            np.testing.assert_allclose(f["doc_topic"], mixtures, rtol=1e-6)
            assert list(f["n_words"]) == list(counts.sum(1).A1)
    else:
        data = json.loads(target.read_text())
        assert [d["id"] for d in data["documents"]] == ids and data["n_bits"] == 8
        assert [d["active_bits"] for d in data["documents"]] == [np.flatnonzero(c).tolist() for c in codes]

    one_line_error(runner.invoke(main, ["encode", str(out), str(raw_folder), "--out", str(target)]),
                   "already exists", "--overwrite")
    assert runner.invoke(main, ["encode", str(out), str(raw_folder), "--out", str(target), "--overwrite"]).exit_code == 0


def test_encode_without_out_prints_each_documents_top_topics(runner, trained_run, raw_folder, tmp_path):
    out, _ = trained_run
    result = runner.invoke(main, ["encode", str(out), str(raw_folder), "--top-topics", "2"])
    assert result.exit_code == 0, result.output
    run = load_run(out)
    ids = ["hockey.txt", "nothing.txt", "space.txt"]
    counts = run.pipeline.transform([(raw_folder / i).read_text() for i in ids])
    codes, mixtures = run.model.transform(counts), run.model.doc_topic(counts)
    labels = topic_labels(run)
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["document", "words", "bits", "top", "topics"] and len(lines) == 4
    for line, doc_id, n, code, mix in zip(lines[1:], ids, counts.sum(1).A1, codes, mixtures):
        assert line.split()[:3] == [doc_id, str(n), str(code.sum())]
        if n == 0:
            assert line.endswith("(no word of the vocabulary)")
            continue
        first, second = np.argsort(-mix, kind="stable")[:2]
        assert line.split(None, 3)[3] == (f"{first} {labels[first]} ({mix[first]:.2f}); "
                                          f"{second} {labels[second]} ({mix[second]:.2f})")
    assert "Encoded 3 document(s)" in result.stderr and [p.name for p in tmp_path.iterdir()] == [raw_folder.name]


def test_encode_mixture_code_writes_f_of_the_code(runner, trained_run, raw_folder, tmp_path):
    out, _ = trained_run
    target = tmp_path / "codes.npz"
    result = runner.invoke(main, ["encode", str(out), str(raw_folder), "--out", str(target), "--mixture", "code"])
    assert result.exit_code == 0, result.output
    run = load_run(out)
    counts = run.pipeline.transform([(raw_folder / i).read_text() for i in ["hockey.txt", "nothing.txt", "space.txt"]])
    with np.load(target, allow_pickle=False) as f:
        np.testing.assert_allclose(f["doc_topic"], run.model.code_topic(run.model.transform(counts)), rtol=1e-6)
        assert not np.allclose(f["doc_topic"], run.model.doc_topic(counts), atol=1e-4)


def test_encode_writes_each_documents_own_mixture_by_default(runner, trained_run, raw_folder, tmp_path):
    """The default mixture is doc_topic's (the posterior one refined by the words);
    --mixture posterior writes the posterior mean itself."""
    out, _ = trained_run
    run = load_run(out)
    counts = run.pipeline.transform([(raw_folder / i).read_text() for i in ["hockey.txt", "nothing.txt", "space.txt"]])
    written = {}
    for mixture in ("document", "posterior"):
        target = tmp_path / f"{mixture}.npz"
        args = ["encode", str(out), str(raw_folder), "--out", str(target)]
        result = runner.invoke(main, args + (["--mixture", mixture] if mixture != "document" else []))
        assert result.exit_code == 0, result.output
        with np.load(target, allow_pickle=False) as f:
            written[mixture] = f["doc_topic"]
    np.testing.assert_allclose(written["document"], run.model.doc_topic(counts), rtol=1e-5, atol=1e-6)
    codes = run.model.transform(counts)
    np.testing.assert_allclose(written["posterior"], run.model.posterior_topic(counts, codes), rtol=1e-5, atol=1e-6)
    assert np.abs(written["document"] - written["posterior"]).max() > 1e-3


def test_encode_one_file_and_bad_input(runner, trained_run, raw_folder, tmp_path):
    out, _ = trained_run
    target = tmp_path / "one.json"
    result = runner.invoke(main, ["encode", str(out), str(raw_folder / "space.txt"), "--out", str(target)])
    assert result.exit_code == 0, result.output
    assert [d["id"] for d in json.loads(target.read_text())["documents"]] == ["space.txt"]
    one_line_error(runner.invoke(main, ["encode", str(out), str(raw_folder), "--out", str(tmp_path / "x.txt")]),
                   "must end in .csv, .npz or .json")
    one_line_error(runner.invoke(main, ["encode", str(out), str(tmp_path / "nope"), "--out", str(tmp_path / "x.csv")]),
                   "does not exist")
    one_line_error(runner.invoke(main, ["encode", str(tmp_path / "norun"), str(raw_folder), "--out",
                                        str(tmp_path / "x.csv")]), "does not exist")
    assert not (tmp_path / "x.csv").exists()


def test_info(runner, trained_run):
    out, _ = trained_run
    result = runner.invoke(main, ["info", str(out)])
    assert result.exit_code == 0, result.output
    text = result.output
    for fragment in ("PoissBPE", "n_topics           5", "n_bits             8", "train  300 documents, 500 words",
                     "Training history:", "Library versions (saved / now):", "torch"):
        assert fragment in text, fragment
    history = text.split("Training history:")[1].split("Library")[0].strip().splitlines()
    assert [row.split()[0] for row in history[1:]] == ["1", "2"]
    assert "topic overlap" in history[0] and all(len(row.split()) == 5 for row in history[1:])
    data = json.loads(runner.invoke(main, ["info", str(out), "--format", "json"]).output)
    assert data["config"]["n_data"] == 300 and data["summary"]["n_topics"] == 5
    assert f"Backend: {data['config']['training']['backend']}" in text.splitlines()



def _shown_params(text: str) -> dict:
    block = text.split("Parameters:\n")[1].split("\n\n")[0]
    return {line.split()[0]: line.split(None, 1)[1] for line in block.splitlines()}


def test_info_shows_the_defaults_computed_for_the_run(runner, trained_run):
    out, _ = trained_run      # trained with alpha, gamma, topic_smoothing left to their defaults (None)
    run = load_run(out)
    shown = _shown_params(runner.invoke(main, ["info", str(out)]).output)
    # None where it is a value (no cap on the bits, no seed words), never an unresolved default
    assert not any(value.startswith("None") for name, value in shown.items()
                   if name not in ("max_bits", "seed_words")), shown
    alpha, gamma = run.model.prior_hyperparameters()
    assert float(shown["alpha"].split()[0]) == pytest.approx(alpha) and alpha == 300
    assert float(shown["gamma"].split()[0]) == pytest.approx(gamma) and gamma == 8 / 4
    assert float(shown["topic_smoothing"].split()[0]) == pytest.approx(run.summary["topic_smoothing"], rel=1e-3)
    assert shown["alpha"].endswith("(default, computed for this run)") and "(default" not in shown["tau"]
    data = json.loads(runner.invoke(main, ["info", str(out), "--format", "json"]).output)
    assert data["resolved_params"]["alpha"] == pytest.approx(300) and data["config"]["params"]["alpha"] is None


def test_info_computes_the_defaults_of_a_run_that_recorded_none(runner, trained_run, tmp_path):
    """An older run: epochs None in config.json, no topic_smoothing in summary.json."""
    run = tmp_path / "old"
    shutil.copytree(trained_run[0], run)
    config = json.loads((run / "config.json").read_text())
    config["params"]["epochs"] = None
    (run / "config.json").write_text(json.dumps(config))
    summary = json.loads((run / "summary.json").read_text())
    eta = summary.pop("topic_smoothing")
    (run / "summary.json").write_text(json.dumps(summary))
    shown = _shown_params(runner.invoke(main, ["info", str(run)]).output)
    # the 2 epochs it trained, not the default rule's count for 300 documents today (30)
    assert shown["epochs"].split()[0] == "2"
    assert float(shown["topic_smoothing"].split()[0]) == pytest.approx(eta, rel=1e-3)


@pytest.mark.parametrize("damage, fragment", [
    (lambda p: (p / "config.json").unlink(), "config.json is missing"),
    (lambda p: (p / "model.safetensors").write_bytes((p / "model.safetensors").read_bytes()[:500]),
     "corrupted or truncated"),
    (lambda p: (p / "config.json").write_text((p / "config.json").read_text().replace(
        '"format_version": 1', '"format_version": 7')), "format version 7"),
])
def test_commands_on_a_damaged_run(runner, trained_run, raw_folder, tmp_path, damage, fragment):
    run = tmp_path / "run"
    shutil.copytree(trained_run[0], run)
    damage(run)
    encode = ["encode", str(run), str(raw_folder), "--out", str(tmp_path / "e.csv")]
    for command in (["topics", str(run)], ["info", str(run)], encode):
        one_line_error(runner.invoke(main, command), fragment)
