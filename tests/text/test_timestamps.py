"""Timestamps of JSONL and CSV records (--time-field): parsed as dates or numbers,
kept through cleaning and saving, and a record without one is a malformed line."""

import gzip

import numpy as np
import pytest

from bpetopics.text import CorpusError, load_splits, prepare_corpus, save_splits
from bpetopics.text.record_loader import load_records
from bpetopics.text.timestamps import parse_time, time_array, times_from_json, times_to_json


def test_parse_time_reads_numbers_and_iso_dates():
    assert parse_time(1995) == 1995.0 and parse_time(" 3.5 ") == 3.5 and parse_time("-2e3") == -2000.0
    assert parse_time("2021-03-04") == np.datetime64("2021-03-04T00:00:00")
    assert parse_time("2021-03-04T10:20:00Z") == np.datetime64("2021-03-04T10:20:00")
    assert parse_time("2021-03-04T10:20:00+02:00") == np.datetime64("2021-03-04T08:20:00")    # to UTC
    for bad in (None, "", "soon", True, float("nan"), [2020], "2021-13-01"):
        assert parse_time(bad) is None, bad


def test_a_corpus_holds_one_kind_of_timestamp():
    assert time_array([1.0, 2.0], "x").dtype == np.float64
    dates = time_array([parse_time("2020-01-01"), parse_time("2020-01-02")], "x")
    assert dates.dtype == np.dtype("datetime64[s]")
    assert np.array_equal(times_from_json(times_to_json(dates)), dates)
    with pytest.raises(CorpusError, match="mix dates"):
        time_array([parse_time("2020-01-01"), 3.0], "x")


def _jsonl(tmp_path, lines, name="docs.jsonl"):
    path = tmp_path / name
    data = "".join(line + "\n" for line in lines).encode("utf-8")
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    return path


def test_jsonl_and_csv_time_fields(tmp_path):
    path = _jsonl(tmp_path, ['{"text": "alpha beta", "when": "2020-05-01"}',
                             '{"text": "gamma", "when": "2020-06-01T12:00:00"}'], "docs.jsonl.gz")
    docs = load_records(path, time_field="when")
    assert docs.times.tolist() == [np.datetime64("2020-05-01T00:00:00"), np.datetime64("2020-06-01T12:00:00")]
    csv = tmp_path / "docs.csv"
    csv.write_text("body,year\nalpha beta,1999\ngamma,2001.5\n", encoding="utf-8")
    assert load_records(csv, text_field="body", time_field="year").times.tolist() == [1999.0, 2001.5]
    with pytest.raises(CorpusError, match=r"no column 'when'.*--time-field"):
        load_records(csv, text_field="body", time_field="when")
    assert load_records(csv, text_field="body").times is None


def test_a_record_without_a_time_is_malformed(tmp_path):
    path = _jsonl(tmp_path, ['{"text": "alpha", "t": 1}', '{"text": "beta"}', '{"text": "gamma", "t": "later"}'])
    with pytest.raises(CorpusError, match=r"docs.jsonl:2: no time field 't'.*--skip-bad-lines"):
        load_records(path, time_field="t")
    docs = load_records(path, time_field="t", skip_bad_lines=True)
    assert docs.texts == ["alpha"] and docs.times.tolist() == [1.0]
    assert len(docs.skipped["malformed line"]) == 2        # counted, not dropped silently
    csv = tmp_path / "docs.csv"
    csv.write_text("text,t\nalpha,1\nbeta,\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"docs.csv:3: column 't' holds ''"):
        load_records(csv, time_field="t")


def test_times_follow_the_documents_through_cleaning_and_saving(tmp_path):
    lines = [f'{{"text": "word{i % 3} common{i % 2} filler", "t": {i}}}' for i in range(12)]
    lines[4] = '{"text": "the and of", "t": 4}'        # only stop words: dropped, with its timestamp
    path = _jsonl(tmp_path, lines)
    splits = prepare_corpus(path, min_df=1, max_df=1.0, time_field="t", max_docs=10, random_state=1)
    train = splits["train"]
    assert len(train.times) == train.n_docs
    for doc_id, stamp in zip(train.ids, train.times):
        assert float(doc_id.split(":")[1]) - 1 == stamp      # line n holds t = n - 1
    assert 4.0 not in train.times.tolist()
    back = load_splits(save_splits(splits, tmp_path / "saved"))["train"]
    assert np.array_equal(back.times, train.times) and back.fingerprint() == train.fingerprint()
    plain = prepare_corpus(path, min_df=1, max_df=1.0, max_docs=10, random_state=1)["train"]
    assert plain.times is None and plain.fingerprint() != train.fingerprint()


def test_time_field_needs_records(tmp_path):
    folder = tmp_path / "texts"
    folder.mkdir()
    (folder / "a.txt").write_text("alpha beta", encoding="utf-8")
    with pytest.raises(CorpusError, match="--time-field applies to a .jsonl or .csv source"):
        prepare_corpus(folder, min_df=1, time_field="date")
