"""`bpetopics over-time` and `bpetopics explore` on a planted corpus whose topic shifts
over the year (tests/cli/planted.py), trained through `bpetopics train --time-field`."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from bpetopics.cli import main

from .conftest import one_line_error
from .planted import SPACE, planted_records, write_jsonl


@pytest.fixture(scope="session")
def planted_run(tmp_path_factory):
    """(run folder, records) of a run trained on the planted corpus, with dates and groups."""
    folder = tmp_path_factory.mktemp("planted")
    records = planted_records()
    write_jsonl(folder / "posts.jsonl", records)
    out = folder / "run"
    result = CliRunner().invoke(main, ["train", str(folder / "posts.jsonl"), "--time-field", "date", "--label-field",
                                       "group", "--id-field", "id", "--min-df", "1", "--max-df", "1.0", "--topics", "4",
                                       "--bits", "8", "--epochs", "5", "--device", "cpu", "--quiet", "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out, records


def _space_share(frame: pd.DataFrame, key: str) -> pd.Series:
    """The share of the topics whose top words are mostly space words, per bin or class."""
    space = frame["label"].map(lambda label: sum(w in SPACE for w in label.split()) >= 1)
    return frame[space].groupby(key)["share"].sum()


def test_over_time_finds_the_planted_shift(planted_run, runner, tmp_path):
    run, records = planted_run
    out = tmp_path / "shares.csv"
    result = runner.invoke(main, ["over-time", str(run), "--freq", "M", "--out", str(out)])
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(out)
    assert frame["bin"].nunique() == 12
    months = frame.drop_duplicates("bin")
    expected = pd.Series([r["date"][:7] for r in records]).value_counts().sort_index().tolist()
    assert months["documents"].tolist() == expected       # every document, in its month
    space = _space_share(frame, "bin")
    planted = [sum(r["group"] == "space" for r in records if r["date"][5:7] == f"{m:02d}") /
               sum(r["date"][5:7] == f"{m:02d}" for r in records) for m in (1, 12)]
    assert planted[0] < 0.3 and planted[1] > 0.7
    assert space.iloc[-1] - space.iloc[0] > 0.4              # the model sees the shift
    assert f"Wrote {out} (4 topics x 12 bins)" in result.output


def test_over_time_by_label_and_plots(planted_run, runner, tmp_path):
    run, records = planted_run
    out = tmp_path / "groups.csv"
    assert runner.invoke(main, ["over-time", str(run), "--by-label", "--interval", "bootstrap", "--n-boot", "200",
                                "--out", str(out)]).exit_code == 0
    frame = pd.read_csv(out)
    assert sorted(frame["class"].unique()) == ["hockey", "space"]
    counts = frame.drop_duplicates("class").set_index("class")["documents"]
    assert counts["space"] == sum(r["group"] == "space" for r in records)
    space = _space_share(frame, "class")
    assert space["space"] > 0.6 > 0.3 > space["hockey"]
    for args in (["--bins", "4"], ["--by-label"]):
        png = tmp_path / f"plot{len(args)}.png"
        result = runner.invoke(main, ["over-time", str(run), *args, "--out", str(png), "--topics", "0,1"])
        assert result.exit_code == 0, result.output
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_over_time_refusals(planted_run, trained_run, runner, tmp_path):
    run, _ = planted_run
    existing = tmp_path / "x.csv"
    existing.write_text("keep")
    for args, fragment in ((["--out", str(tmp_path / "x.txt")], "must be a .csv table or a .png plot"),
                           (["--out", str(existing)], "already exists"),
                           (["--by-label", "--bins", "3", "--out", str(tmp_path / "a.csv")], "leave them out"),
                           (["--bins", "3", "--freq", "M", "--out", str(tmp_path / "a.csv")], "not both"),
                           (["--freq", "fortnight", "--out", str(tmp_path / "a.csv")], "not a pandas period"),
                           (["--topics", "9", "--out", str(tmp_path / "a.png")], "--topics must lie in 0..3"),
                           (["--interval", "wide", "--out", str(tmp_path / "a.csv")], "invalid --interval")):
        one_line_error(runner.invoke(main, ["over-time", str(run), *args]), fragment)
    assert existing.read_text() == "keep"
    no_times, _ = trained_run
    one_line_error(runner.invoke(main, ["over-time", str(no_times), "--out", str(tmp_path / "b.csv")]),
                   "has no timestamps", "--time-field")
    assert not (tmp_path / "b.csv").exists()


def test_time_field_refusals(runner, tmp_path):
    folder = tmp_path / "texts"
    folder.mkdir()
    (folder / "a.txt").write_text("alpha beta")
    one_line_error(runner.invoke(main, ["corpus", str(folder), "--time-field", "date", "--out", str(tmp_path / "c")]),
                   "--time-field applies to a .jsonl or .csv source")
    posts = tmp_path / "posts.jsonl"
    write_jsonl(posts, planted_records(20))
    one_line_error(runner.invoke(main, ["corpus", str(posts), "--time-field", "date", "--format", "sharded",
                                        "--out", str(tmp_path / "s")]), "--time-field applies to an in-memory corpus")


def _page_data(page) -> dict:
    text = page.read_text(encoding="utf-8")
    return json.loads(re.search(r'<script type="application/json" id="explorer-data">(.*?)</script>', text,
                                re.S).group(1))


def test_explore_writes_one_page_with_the_run(planted_run, runner, tmp_path):
    run, records = planted_run
    page = tmp_path / "explore.html"
    result = runner.invoke(main, ["explore", str(run), "--out", str(page), "--max-docs", "50"])
    assert result.exit_code == 0, result.output
    data = _page_data(page)
    assert len(data["topics"]) == 4 and data["n_documents"] == len(records) and len(data["documents"]) == 50
    assert "first 50 of 240 documents" in " ".join(data["notes"])
    first = data["documents"][0]
    assert first["id"] == records[0]["id"] and first["time"] == records[0]["date"]
    assert first["label"] == records[0]["group"]
    assert set(first["text"].split()) <= set(records[0]["text"].split())
    assert all(0 <= j < 50 and j != 0 for j, _ in first["near"])
    assert len(first["similar"]) == 5 and all(0 <= j < 50 and j != 0 for j, _ in first["similar"])
    assert [v for _, v in first["similar"]] == sorted((v for _, v in first["similar"]), reverse=True)
    shown = data["documents"]                            # the similar documents share the planted group
    same = [shown[j]["label"] == d["label"] for d in shown for j, _ in d["similar"]]
    assert np.mean(same) > 0.97, np.mean(same)          # by chance: about 0.75 among these 50
    assert sum(data["over_time"]["documents"]) == len(records)      # every document, not only those shown
    assert all(len(row) == len(data["over_time"]["starts"]) for row in data["over_time"]["share"])
    for t, docs in enumerate(data["topic_documents"]):    # heaviest first, to two decimals (as shown)
        shares = [round(dict(data["documents"][i]["topics"]).get(t, 0.0), 2) for i in docs]
        assert shares[:3] == sorted(shares[:3], reverse=True)


def test_explore_page_holds_each_documents_words_beyond_its_snippet(planted_run, runner, tmp_path, monkeypatch):
    """The page's search finds a document by any word the model counted in it: each
    document carries its vocabulary words that its snippet does not show."""
    import bpetopics.runs.explorer as explorer

    monkeypatch.setattr(explorer, "SNIPPET_WORDS", 5)     # the planted texts are shorter than 40 words
    run, records = planted_run
    page = tmp_path / "explore.html"
    assert runner.invoke(main, ["explore", str(run), "--out", str(page), "--max-docs", "30"]).exit_code == 0
    vocabulary = set((run / "vocabulary.txt").read_text(encoding="utf-8").split())
    documents = _page_data(page)["documents"]
    for doc, record in zip(documents, records):
        snippet, others = doc["text"].split(), doc["words"].split()
        assert len(snippet) == 5 and len(others) == len(set(others))        # each word once
        assert set(others) == (set(record["text"].split()) & vocabulary) - set(snippet)
    assert sum(len(d["words"].split()) for d in documents) > 30


def test_explore_refusals(planted_run, runner, tmp_path):
    run, _ = planted_run
    one_line_error(runner.invoke(main, ["explore", str(run), "--out", str(tmp_path / "x.png")]), "must be an .html")
    one_line_error(runner.invoke(main, ["explore", str(run), "--out", str(tmp_path)]), "is a folder")
    one_line_error(runner.invoke(main, ["explore", str(tmp_path / "missing"), "--out", str(tmp_path / "e.html")]),
                   "does not exist")
    one_line_error(runner.invoke(main, ["explore", str(run), "--max-docs", "0", "--out", str(tmp_path / "e.html")]),
                   "--max-docs")
    assert not (tmp_path / "e.html").exists()
