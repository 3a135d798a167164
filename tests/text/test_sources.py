"""One function decides what a corpus argument names."""

from bpetopics.text import Corpus, save_splits
from bpetopics.text.errors import CorpusError
from bpetopics.text.named_corpora import NAMED_CORPORA
from bpetopics.text.sources import (FOLDER, NEWSGROUPS, SAVED, corpus_record, load_source, recorded_source,
                                    source_kind)

import numpy as np
import pytest
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


def test_corpus_settings_keep_the_recorded_format_and_read_it_back():
    """The command line's options as one record: config.json's corpus.settings keep their
    keys (record fields only when changed), and a run's settings read back the same."""
    from bpetopics.text.settings import CorpusSettings

    settings = CorpusSettings.from_options(vocab_size=0, min_df=2, max_df=0.9, stopwords="none", data_home=None,
                                           categories="sci.space, rec.autos,", max_docs=50, seed=3,
                                           label_field="group")
    assert settings.vocab_size is None and settings.categories == ("sci.space", "rec.autos")
    assert settings.keywords() == {"vocab_size": None, "min_df": 2, "max_df": 0.9, "stopwords": "none",
                                   "data_home": None, "max_docs": 50, "random_state": 3,
                                   "categories": ["sci.space", "rec.autos"], "label_field": "group"}
    assert CorpusSettings.from_record(settings.keywords()) == settings
    # an older run's record: what it lacks takes the default, other keys are left out
    old = CorpusSettings.from_record({"max_docs": 300, "saved_corpus": "/x"})
    assert old.max_docs == 300 and old.random_state == 0 and old.record_fields()["text_field"] == "text"
    with pytest.raises(TypeError, match="unknown corpus settings: txt_field"):
        CorpusSettings.from_options(vocab_size=1, min_df=1, max_df=1.0, stopwords="none", data_home=None,
                                    categories=None, max_docs=None, seed=0, txt_field="body")


def test_a_missing_source_names_every_corpus_a_source_may_name(tmp_path):
    with pytest.raises(CorpusError) as caught:
        load_source(tmp_path / "nope")
    message = str(caught.value)
    assert "'" + str(tmp_path / "nope") + "' does not exist" in message
    for name in ["20newsgroups", *NAMED_CORPORA]:
        assert name in message
    assert "a folder of text files, a .jsonl or .csv file or a saved corpus folder" in message


def test_a_path_named_like_a_named_corpus_is_read_and_said_so(tmp_path, monkeypatch):
    """An existing path wins over the named corpus of the same name, with a warning that
    names both; a path spelled otherwise (./lee) is read without one."""
    import warnings

    from bpetopics.text import CorpusWarning, load_source

    monkeypatch.chdir(tmp_path)
    (tmp_path / "lee").mkdir()
    (tmp_path / "lee" / "one.txt").write_text("rocket orbit launch\n")
    with pytest.warns(CorpusWarning, match="lee is a path here as well as a named corpus: reading the path"):
        docs = load_source("lee")["train"]
    assert docs.ids == ["one.txt"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert load_source("./lee")["train"].ids == ["one.txt"]


def test_a_test_split_is_drawn_only_for_sources_without_one(tmp_path, monkeypatch):
    """20 Newsgroups and its subject lines have their own test split, a saved or sharded
    corpus takes no corpus options: only the others get a drawn one (--test-size, and
    compare's hold-out of passages), and the first are refused before loading."""
    from bpetopics.text import prepare_corpus
    from bpetopics.text.sources import drawn_test_split

    monkeypatch.chdir(tmp_path)
    saved = save_splits({"train": _tiny_corpus()}, tmp_path / "saved")
    assert [drawn_test_split(s) for s in ("lee", "abc-sentences", "state_union-sentences", str(tmp_path), "x.jsonl")] == [True] * 5
    assert [drawn_test_split(s) for s in ("20newsgroups", "20newsgroups-subjects", str(saved))] == [False] * 3
    with pytest.raises(CorpusError, match="has its own test split"):
        prepare_corpus("20newsgroups-subjects", test_size=0.2, data_home=tmp_path / "nothing-here")
