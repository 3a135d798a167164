"""20 Newsgroups end to end: the small shared fixture, and the full train split."""

import re

import numpy as np
import pytest
import scipy.sparse as sp

from bpetopics.text import TextPipeline, load_20newsgroups, load_stopwords, tokenize

HEADER_LINE = re.compile(r"(?m)^(?:From|Subject|Organization|Lines):")
QUOTED_LINE = re.compile(r"(?m)^\s*>")


def test_newsgroups_small_fixture(newsgroups_small, shared_data):
    train, test = newsgroups_small["train"], newsgroups_small["test"]
    assert train.n_words == 500 and test.vocabulary == train.vocabulary
    assert test.pipeline is train.pipeline
    assert train.label_names == ["comp.graphics", "rec.sport.hockey", "sci.space", "talk.politics.mideast"]
    assert set(np.unique(train.labels)) == {0, 1, 2, 3}
    for c in (train, test):
        kept = c.n_docs + sum(len(v) for v in c.dropped.values())
        assert kept == 800  # drawn documents = kept + dropped, none lost silently
        assert sp.isspmatrix_csr(c.counts) and (c.counts.sum(axis=1) > 0).all()
        assert c.doc_lengths.tolist() == [len(t) for t in c.texts]
    stop = load_stopwords(shared_data / "stopwords" / "nltk_english.txt")
    assert not stop & set(train.vocabulary)
    # the groups are recognisable in their most frequent words
    top = {}
    for k, name in enumerate(train.label_names):
        totals = np.asarray(train.counts[train.labels == k].sum(axis=0)).ravel()
        top[name] = {train.vocabulary[j] for j in np.argsort(-totals)[:25]}
    assert "hockey" in top["rec.sport.hockey"] or "game" in top["rec.sport.hockey"]
    assert "space" in top["sci.space"]
    assert "israel" in top["talk.politics.mideast"]
    assert "graphics" in top["comp.graphics"] or "image" in top["comp.graphics"]


@pytest.mark.slow
def test_full_train_split_is_clean_and_counted(shared_data):
    raw = load_20newsgroups(shared_data / "sklearn", subsets=["train"], download_if_missing=False)["train"]
    assert len(raw) == 11314
    pipeline = TextPipeline(stopwords=shared_data / "stopwords" / "nltk_english.txt")
    cleaned = [pipeline.clean(t) for t in raw.texts]
    assert not [i for i, t in zip(raw.ids, cleaned) if HEADER_LINE.search(t)]
    assert not [i for i, t in zip(raw.ids, cleaned) if QUOTED_LINE.search(t)]
    tokens = [tokenize(t, pipeline.stop_words) for t in cleaned]
    counts, texts = pipeline.fit_tokens(tokens).transform_tokens(tokens)
    assert counts.shape == (11314, 2000) and sp.isspmatrix_csr(counts)
    assert counts.nnz < 0.05 * counts.shape[0] * counts.shape[1]
    assert len(pipeline.vocabulary_) == 2000 and not pipeline.stop_words & set(pipeline.vocabulary_)
    assert all(len(w) >= 3 and w.isalpha() for w in pipeline.vocabulary_)
    # binary attachments left no gibberish tokens in the vocabulary
    assert not {"giz", "bhj", "chz", "qax", "ahf"} & set(pipeline.vocabulary_)
    n_empty = sum(1 for t in tokens if not t)
    n_no_vocab = sum(1 for t, k in zip(tokens, texts) if t and not k)
    assert 0 < n_empty < 100 and n_no_vocab < 100
    assert int((np.diff(counts.indptr) == 0).sum()) == n_empty + n_no_vocab
