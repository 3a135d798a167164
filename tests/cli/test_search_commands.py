"""`bpetopics topics` labels (and --set-label), `bpetopics search` and `bpetopics similar`
on the session's tiny run; bad input is one line."""

from __future__ import annotations

import json
import shutil

from bpetopics.cli import main
from bpetopics.runs import load_run
from bpetopics.runs.corpus import run_splits
from bpetopics.search import WORD_WEIGHT
from tests.cli.conftest import one_line_error


def test_topics_shows_labels_and_sets_one_by_hand(runner, trained_run, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(trained_run[0], run)
    assert (run / "labels.json").is_file()          # written by train
    result = runner.invoke(main, ["topics", str(run), "--top-n", "3"])
    assert result.exit_code == 0 and result.output.splitlines()[0].split()[:3] == ["topic", "share", "label"]
    result = runner.invoke(main, ["topics", str(run), "--set-label", '2="my label"', "--format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)[2]["label"] == "my label"
    record = json.loads((run / "labels.json").read_text())
    assert record["manual"] == {"2": "my label"} and len(record["automatic"]) == 5
    one_line_error(runner.invoke(main, ["topics", str(run), "--set-label", "9=x"]), "not one of the run's topics")
    one_line_error(runner.invoke(main, ["topics", str(run), "--set-label", "x"]), "TOPIC=LABEL")


def test_relabel_computes_the_automatic_labels_again_and_keeps_those_set_by_hand(runner, trained_run, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(trained_run[0], run)
    fresh = json.loads((run / "labels.json").read_text())["automatic"]
    record = json.loads((run / "labels.json").read_text())
    record["automatic"] = ["stale"] * len(fresh)
    record["manual"] = {"1": "mine"}
    (run / "labels.json").write_text(json.dumps(record))
    result = runner.invoke(main, ["topics", str(run), "--relabel", "--format", "json"])
    assert result.exit_code == 0, result.output
    shown = [row["label"] for row in json.loads(result.output)]
    assert shown == [fresh[0], "mine", *fresh[2:]]
    saved = json.loads((run / "labels.json").read_text())
    assert saved["automatic"] == fresh and saved["manual"] == {"1": "mine"}


def test_search_lists_the_topics_of_a_query(runner, trained_run):
    run = str(trained_run[0])
    result = runner.invoke(main, ["search", run, "space shuttle launch orbit", "--format", "json", "--top-topics", "2"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)["topics"]
    assert len(rows) == 2 and rows[0]["weight"] >= rows[1]["weight"] and rows[0]["label"]
    one_line_error(runner.invoke(main, ["search", run, "zzzz qqqq"]), "no word of the query")
    one_line_error(runner.invoke(main, ["search", run, "  "]), "the query is empty")


def test_similar_by_index_id_and_text(runner, trained_run):
    run = str(trained_run[0])
    by_index = runner.invoke(main, ["similar", run, "0", "-k", "4", "--format", "json"])
    assert by_index.exit_code == 0, by_index.output
    docs = json.loads(by_index.output)["documents"]
    assert len(docs) == 4 and all(d["index"] != 0 for d in docs)
    assert all(a["similarity"] >= b["similarity"] for a, b in zip(docs, docs[1:]))
    first_id = json.loads(runner.invoke(main, ["similar", run, "1", "-k", "1", "--format", "json"]).output)
    doc_id = docs[0]["id"]
    by_id = runner.invoke(main, ["similar", run, doc_id, "-k", "2", "--pool", "0"])
    assert by_id.exit_code == 0 and "hamming" in by_id.output, by_id.output
    assert first_id["documents"]
    by_text = runner.invoke(main, ["similar", run, "--text", "hockey game players", "-k", "3"])
    assert by_text.exit_code == 0 and len(by_text.output.splitlines()) == 4
    deprecated = runner.invoke(main, ["similar", run, "0", "-k", "4", "--pool", "50", "--format", "json"])
    assert deprecated.exit_code == 0 and "--pool N is deprecated" in deprecated.stderr
    assert len(json.loads(deprecated.stdout)["documents"]) == 4
    assert f"[default: {WORD_WEIGHT}]" in runner.invoke(main, ["similar", "--help"]).output   # the help's default
    topics_alone = runner.invoke(main, ["similar", run, "0", "-k", "4", "--word-weight", "0", "--format", "json"])
    assert topics_alone.exit_code == 0, topics_alone.output
    assert len(json.loads(topics_alone.output)["documents"]) == 4
    with_text = runner.invoke(main, ["similar", run, "0", "-k", "3", "--show-text", "--format", "json"])
    assert with_text.exit_code == 0, with_text.output
    shown = json.loads(with_text.stdout)["documents"]
    assert [d["id"] for d in shown] == [d["id"] for d in docs[:3]]      # the same search, words added
    texts = run_splits(load_run(run))["train"].texts
    assert all(d["text"] == " ".join(texts[d["index"]][:16]) for d in shown)      # each its own first words
    table = runner.invoke(main, ["similar", run, "0", "-k", "3", "--show-text"])
    assert table.exit_code == 0 and shown[0]["text"] in table.output
    one_line_error(runner.invoke(main, ["similar", run, "0", "--pool", "0", "--word-weight", "0.5"]),
                   "--word-weight blends words into the default search only")
    assert runner.invoke(main, ["similar", run, "0", "--word-weight", "1.5"]).exit_code == 2
    one_line_error(runner.invoke(main, ["similar", run, "99999"]), "out of range")
    one_line_error(runner.invoke(main, ["similar", run, "no/such-id"]), "no training document has the id",
                   "or a new text with --text")
    one_line_error(runner.invoke(main, ["similar", run]), "give a DOC")
    one_line_error(runner.invoke(main, ["similar", run, "0", "--text", "x"]), "not both")
    one_line_error(runner.invoke(main, ["similar", run, "--text", "zzzz qqqq"]), "no word of the query")


def test_similar_show_text_without_the_corpus_says_why(runner, trained_run, monkeypatch):
    import bpetopics.runs.corpus as run_corpus
    from bpetopics.runs import RunError

    def gone(run):
        raise RunError("the run's corpus /x is not there any more")

    monkeypatch.setattr(run_corpus, "run_splits", gone)
    result = runner.invoke(main, ["similar", str(trained_run[0]), "0", "-k", "2", "--show-text"])
    assert result.exit_code == 0, result.output
    assert "Note: no document text: the run's corpus /x is not there any more" in result.stderr
    assert len(result.stdout.splitlines()) == 3                       # the header and two documents, no text
