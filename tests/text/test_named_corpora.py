"""Named corpora beyond 20 Newsgroups: abc news (stories and sentences), State of the Union, Lee."""

from __future__ import annotations

import nltk
import numpy as np
import pytest

from bpetopics.text import prepare_corpus
from bpetopics.text.errors import CorpusError
from bpetopics.text.loaders import load_20newsgroups
from bpetopics.text.named_corpora import load_named_corpus, subject_line
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


def test_abc_sentences_split_the_stories_and_keep_their_labels(nltk_data):
    """Every sentence of three words or more, in story order, labelled as its story."""
    stories = load_named_corpus("abc")["train"]
    docs = load_named_corpus("abc-sentences")["train"]
    assert len(docs) == 28137 and docs.label_names == ["rural", "science"]
    assert np.bincount(docs.labels).tolist() == [12746, 15391]
    assert docs.texts[1] == ("Letters from John Howard and Deputy Prime Minister Mark Vaile to AWB have been "
                             "released by the Cole inquiry into the oil for food program.")
    assert docs.ids[1] == "rural/0/1" and min(len(t.split()) for t in docs.texts) >= 3
    first = [t for t, i in zip(docs.texts, docs.ids) if i.startswith("rural/0/")]
    assert " ".join(first) == " ".join(stories.texts[0].split())     # nothing lost but fragments
    assert len(set(docs.ids)) == len(docs)


def test_state_union_sentences_split_the_paragraphs_and_keep_their_presidents(nltk_data):
    """Every sentence of three words or more of each paragraph, in order, labelled by
    its president; the paragraph's words are all kept but for fragments."""
    paragraphs = load_named_corpus("state_union")["train"]
    docs = load_named_corpus("state_union-sentences")["train"]
    assert len(docs) == 15503 and docs.label_names == paragraphs.label_names
    assert docs.texts[1] == "At a time like this, words are inadequate." and docs.ids[1] == "1945-Truman.txt/6/1"
    assert min(len(t.split()) for t in docs.texts) >= 3 and len(set(docs.ids)) == len(docs)
    first = [(t, label) for t, i, label in zip(docs.texts, docs.ids, docs.labels) if i.startswith(paragraphs.ids[0] + "/")]
    assert " ".join(t for t, _ in first) == " ".join(paragraphs.texts[0].split())
    assert {label for _, label in first} == {paragraphs.labels[0]}
    assert np.bincount(docs.labels).sum() == len(docs) and np.bincount(docs.labels).min() > 400


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


# ------------------------------------------------------------- 20 Newsgroups subjects
def test_subject_line_takes_the_header_field_without_reply_prefixes():
    post = ("From: someone@example.org\nSubject: Re: RE[2]: Fwd: Clipper chip\n  and key escrow\n"
            "Lines: 3\n\nSubject: a quoted line in the body is not the subject\n")
    assert subject_line(post) == "Clipper chip and key escrow"
    assert subject_line("From: a@b.c\nLines: 2\n\nSubject: only in the body\n") == ""
    assert subject_line("SUBJECT: re:space shuttle\r\n\r\nbody") == "space shuttle"


def test_subjects_are_one_short_text_per_post_labelled_by_group(shared_data):
    home = shared_data / "sklearn"
    subjects = load_named_corpus("20newsgroups-subjects", data_home=home, download_if_missing=False)
    posts = load_20newsgroups(home, download_if_missing=False)
    assert sorted(subjects) == ["test", "train"]
    for split in ("train", "test"):
        assert subjects[split].ids == posts[split].ids
        assert np.array_equal(subjects[split].labels, posts[split].labels)
        assert subjects[split].label_names == posts[split].label_names
    texts = subjects["train"].texts
    assert len(texts) == 11314 and len(subjects["test"]) == 7532
    assert np.median([len(t.split()) for t in texts]) <= 8
    assert sum(t == "" for t in texts) < 0.01 * len(texts)
    assert not any(t.lower().startswith("re:") for t in texts)
    assert all(t in posts["train"].texts[i] for i, t in enumerate(texts[:200]))


def test_prepare_corpus_reads_the_subjects_by_name_with_categories(shared_data):
    splits = prepare_corpus("20newsgroups-subjects", data_home=shared_data / "sklearn", download_if_missing=False,
                            categories=["sci.space", "rec.autos"], vocab_size=300, min_df=2,
                            stopwords=shared_data / "stopwords" / "nltk_english.txt")
    train, test = splits["train"], splits["test"]
    assert train.label_names == ["rec.autos", "sci.space"] and test.n_docs > 0
    assert train.source == "20newsgroups-subjects" and source_kind("20newsgroups-subjects") == NAMED
    assert train.n_docs + sum(len(ids) for ids in train.dropped.values()) == 594 + 593
    assert "space" in train.vocabulary and "car" in train.vocabulary
