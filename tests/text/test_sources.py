"""One function decides what a corpus argument names."""

from bpetopics.text import Corpus, save_splits
from bpetopics.text.sources import FOLDER, NEWSGROUPS, SAVED, corpus_record, recorded_source, source_kind

import numpy as np
import scipy.sparse as sp


def _tiny_corpus():
    return Corpus(counts=sp.csr_matrix(np.ones((2, 3), dtype=np.int64)), vocabulary=["a", "b", "c"],
                  texts=[["a", "b", "c"]] * 2, ids=["x", "y"], split="train")


def test_source_kind(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert source_kind("20newsgroups") == NEWSGROUPS and source_kind("20ng") == NEWSGROUPS
    saved = save_splits({"train": _tiny_corpus()}, tmp_path / "saved")
    assert source_kind(str(saved)) == SAVED and source_kind(saved) == SAVED
    (tmp_path / "texts").mkdir()
    assert source_kind(str(tmp_path / "texts")) == FOLDER
    assert source_kind(str(tmp_path / "missing")) == FOLDER  # the loader reports it missing
    (tmp_path / "20newsgroups").mkdir()                       # an existing path wins over the name
    assert source_kind("20newsgroups") == FOLDER


def test_corpus_record(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    saved = save_splits({"train": _tiny_corpus()}, tmp_path / "saved")
    record = corpus_record("saved", {"vocab_size": 5, "data_home": None}, {"train": _tiny_corpus()})
    assert record["source"] == str(saved) and record["settings"] == {"saved_corpus": str(saved)}
    assert record["splits"]["train"]["documents"] == 2
    assert recorded_source("20newsgroups") == "20newsgroups"
    record = corpus_record("20newsgroups", {"data_home": "sk"}, {})
    assert record["settings"]["data_home"] == str(tmp_path / "sk")
