"""Named corpora beyond 20 Newsgroups: abc news, State of the Union, Lee."""

from __future__ import annotations

import nltk
import numpy as np
import pytest

from bpetopics.text import prepare_corpus
from bpetopics.text.errors import CorpusError
from bpetopics.text.named_corpora import load_named_corpus
from bpetopics.text.sources import NAMED, recorded_source, source_kind


@pytest.fixture
def nltk_data(shared_data, monkeypatch):
    """NLTK reads the offline abc and state_union zips from shared/data/nltk_data."""
    monkeypatch.setattr(nltk.data, "path", [str(shared_data / "nltk_data")])


def test_abc_is_one_story_per_paragraph_with_two_labels(nltk_data):
    docs = load_named_corpus("abc")["train"]
    assert len(docs) == 3189 and docs.label_names == ["rural", "science"]
    assert np.bincount(docs.labels).tolist() == [2425, 764]
    assert docs.texts[0].startswith("PM denies knowledge of AWB kickbacks")
    assert len(set(docs.ids)) == len(docs)


def test_state_union_paragraphs_are_labelled_by_president(nltk_data):
    docs = load_named_corpus("STATE_UNION")["train"]
    assert len(docs) == 4683 and len(docs.label_names) == 11
    assert "Truman" in docs.label_names and "GWBush" in docs.label_names
    assert min(len(t.split()) for t in docs.texts) >= 30


def test_lee_ships_with_gensim():
    docs = load_named_corpus("lee")["train"]
    assert len(docs) == 300 and docs.labels is None


def test_names_are_sources_unless_a_path_of_that_name_exists(tmp_path, monkeypatch):
    assert source_kind("lee") == NAMED and recorded_source("lee") == "lee"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "lee").mkdir()
    (tmp_path / "lee" / "a.txt").write_text("a folder that happens to be called lee")
    assert source_kind("lee") == "folder"


def test_a_named_corpus_keeps_the_categories_asked_for(nltk_data):
    splits = prepare_corpus("abc", categories=["science"], vocab_size=300, min_df=2, stopwords="sklearn")
    assert splits["train"].n_docs == 764 and splits["train"].label_names == ["science"]
    with pytest.raises(CorpusError, match="choose among rural, science"):
        prepare_corpus("abc", categories=["sport"], vocab_size=300, stopwords="sklearn")


def test_prepare_corpus_reads_a_named_corpus():
    splits = prepare_corpus("lee", vocab_size=300, min_df=2, stopwords="sklearn")
    assert list(splits) == ["train"] and splits["train"].counts.shape == (300, 300)


def test_missing_nltk_data_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setattr(nltk.data, "path", [str(tmp_path)])
    with pytest.raises(CorpusError, match="nltk.downloader abc"):
        load_named_corpus("abc")
