"""Stop-word lists: each choice, a file, and NLTK's list without NLTK's data."""

import pytest

from bpetopics.text import CorpusError, load_stopwords


@pytest.fixture
def nltk_from_shared(shared_data, monkeypatch):
    import nltk

    monkeypatch.setattr(nltk.data, "path", [str(shared_data / "nltk_data"), *nltk.data.path])


def test_nltk_list_is_nltks_own(nltk_from_shared, shared_data):
    """The copy that ships with the package is the list NLTK's data holds."""
    from nltk.corpus import stopwords

    words = load_stopwords("nltk")
    assert len(words) == 179
    assert {"the", "and", "don", "wouldn"} <= words
    assert words == frozenset(stopwords.words("english"))
    plain = (shared_data / "stopwords" / "nltk_english.txt").read_text().split()
    assert words == frozenset(plain)


def test_builtin_lists_and_none():
    sklearn_words = load_stopwords("sklearn")
    gensim_words = load_stopwords("gensim")
    assert len(sklearn_words) == 318 and "the" in sklearn_words
    assert len(gensim_words) == 337 and "the" in gensim_words
    assert load_stopwords("none") == frozenset()
    assert load_stopwords(None) == frozenset()
    assert load_stopwords(["The", "Foo"]) == {"the", "foo"}


def test_file_with_comments_and_latin1(tmp_path):
    path = tmp_path / "stop.txt"
    path.write_bytes("# my list\nfoo bar\n  Baz  # trailing comment\n\ncaf\xe9\n".encode("latin-1"))
    assert load_stopwords(path) == {"foo", "bar", "baz", "café"}
    assert load_stopwords(str(path)) == {"foo", "bar", "baz", "café"}


def test_unknown_name_says_what_to_choose():
    with pytest.raises(CorpusError, match=r"unknown stop-word list 'spacy'.*nltk, sklearn, gensim, none"):
        load_stopwords("spacy")


def test_nltk_list_needs_no_nltk_data(tmp_path, monkeypatch):
    import nltk
    from nltk.corpus.reader import WordListCorpusReader
    from nltk.corpus.util import LazyCorpusLoader

    # A fresh lazy loader (the module-level one replaces itself once loaded) on an
    # empty search path: exactly what a machine without NLTK's data sees.
    monkeypatch.setattr(nltk.data, "path", [str(tmp_path)])
    monkeypatch.setattr(
        nltk.corpus, "stopwords", LazyCorpusLoader("stopwords", WordListCorpusReader, r"(?!README|\.).*")
    )
    with pytest.raises(LookupError):
        nltk.corpus.stopwords.words("english")
    words = load_stopwords("nltk")
    assert len(words) == 179 and {"the", "wouldn"} <= words
