"""PoissBPE's code length K (the sqrt(T) rule, the short-text rule and an explicit n_bits)
and the rule of the topic check's stride for texts of a few words."""

import numpy as np
import scipy.sparse as sp

from bpetopics import PoissBPE
from tests.models.poissbpe.test_model import planted_corpus


def documents_of(n_words: int, seed: int = 0) -> sp.csr_matrix:
    """400 documents of ``n_words`` distinct words each (counts of 1) out of 200."""
    rng = np.random.default_rng(seed)
    rows = np.repeat(np.arange(400), n_words)
    cols = np.concatenate([rng.choice(200, n_words, replace=False) for _ in range(400)])
    return sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(400, 200))


def test_the_default_code_length_grows_with_the_topics():
    """K = 64, or sqrt(20 T) rounded up to a multiple of 8 when more; an explicit n_bits wins."""
    assert [PoissBPE(n_topics=t).code_length() for t in (5, 20, 50, 200, 204, 205, 500, 1000)] == \
        [64, 64, 64, 64, 64, 72, 104, 144]
    assert PoissBPE(n_topics=50, n_bits=12).code_length() == 12


def test_short_texts_get_a_bit_a_topic():
    """Documents of three distinct words (under SHORT_TEXT_WORDS) train with K = T rounded
    up to a multiple of 8, above and below the 64 bits of long documents; long documents
    keep the sqrt rule; an explicit n_bits wins over both."""
    short = documents_of(3)
    fast = dict(epochs=1, device="cpu", progress=False)
    model = PoissBPE(n_topics=75, **fast).fit(short)
    assert model.words_per_document_ == 3.0
    assert model.code_length() == 80 and model.codes_.shape == (400, 80)      # 75 rounded up to 8s
    assert PoissBPE(n_topics=20, **fast).fit(short).codes_.shape == (400, 24)
    assert PoissBPE(n_topics=75, n_bits=16, **fast).fit(short).codes_.shape == (400, 16)
    long, _, _ = planted_corpus(n_docs=400, n_words=120)
    for n_topics in (20, 75):
        model = PoissBPE(n_topics=n_topics, **fast).fit(long)
        assert model.words_per_document_ >= PoissBPE.SHORT_TEXT_WORDS and model.code_length() == 64


def test_texts_of_a_few_words_are_checked_every_epoch(monkeypatch):
    """With split moves, a corpus of three-word documents (under EVERY_EPOCH_WORDS) gets a
    topic check at every epoch until 90% of training (epochs 1-3 of 4); seven-word
    documents (short texts for the code length, not for the check) and long documents
    every fourth epoch (epoch 1 only)."""
    long, _, _ = planted_corpus(n_docs=400, n_words=120)
    checked = []
    original = PoissBPE._check_codes

    def counting(self, X_sample, beta):
        checked.append(self.epoch_)
        return original(self, X_sample, beta)

    monkeypatch.setattr(PoissBPE, "_check_codes", counting)
    expected = [(documents_of(3), True, 1, [1, 2, 3]), (documents_of(7), True, 4, [1]), (long, False, 4, [1])]
    for X, short, stride, epochs in expected:
        checked.clear()
        model = PoissBPE(n_topics=10, epochs=4, device="cpu", progress=False).fit(X)
        assert (model.short_texts(), model.check_stride(), checked) == (short, stride, epochs)


def test_a_run_has_about_four_topic_checks():
    """With split moves the check's stride is max(4, ceil(epochs / 4)): checks at epochs
    1, 5, 9, 13 of 15 and 1, 9, 17, 25 of 30 (moves stop after 90% of the epochs)."""
    for epochs, stride in [(4, 4), (15, 4), (16, 4), (17, 5), (30, 8), (100, 25)]:
        assert PoissBPE(n_topics=10, epochs=epochs).check_stride() == stride
    assert PoissBPE(n_topics=10, epochs=30, split_moves=False).check_stride() == 1
