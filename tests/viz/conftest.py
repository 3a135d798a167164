"""Hand-built inputs for the viz tests: a tiny fake decoder whose bits each raise a known
topic, known codes, a toy vocabulary. No trained model is needed."""

from __future__ import annotations

import numpy as np
import pytest


class FakeDecoder:
    """f(z) = softmax(z @ B + b): bit k adds ``strength`` to the logit of ``bit_topic[k]``.

    ``code_topic`` has the contract of ``PoissBPE.code_topic``: uint8 (M x K) -> (M x T).
    """

    def __init__(self, n_topics: int, bit_topic, strength: float = 6.0, bias=None):
        self.bit_topic = np.asarray(bit_topic)
        self.n_bits = len(self.bit_topic)
        self.n_topics = n_topics
        self.B = np.zeros((self.n_bits, n_topics))
        self.B[np.arange(self.n_bits), self.bit_topic] = strength
        self.b = np.zeros(n_topics) if bias is None else np.asarray(bias, dtype=float)

    def code_topic(self, codes: np.ndarray) -> np.ndarray:
        codes = np.asarray(codes)
        assert codes.dtype == np.uint8 and codes.ndim == 2 and codes.shape[1] == self.n_bits
        logits = codes.astype(np.float64) @ self.B + self.b
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)


def make_codes(bit_sets, n_bits: int) -> np.ndarray:
    """One uint8 code per entry of ``bit_sets`` (an iterable of bit-index tuples)."""
    codes = np.zeros((len(bit_sets), n_bits), dtype=np.uint8)
    for i, bits in enumerate(bit_sets):
        codes[i, list(bits)] = 1
    return codes


def block_topics(n_topics: int, words_per_topic: int = 3, n_filler: int = 10):
    """Topic t puts most mass on its own words ``t<t>a, t<t>b, ...`` (in that order)."""
    vocab = [f"t{t}{chr(97 + j)}" for t in range(n_topics) for j in range(words_per_topic)]
    vocab += [f"filler{i}" for i in range(n_filler)]
    tw = np.full((n_topics, len(vocab)), 0.01)
    for t in range(n_topics):
        tw[t, t * words_per_topic:(t + 1) * words_per_topic] = np.arange(words_per_topic, 0, -1) * 10.0
    tw /= tw.sum(axis=1, keepdims=True)
    return tw, vocab


@pytest.fixture
def known():
    """12 topics, 6 bits (bit k raises topic k); topics 6..11 are never raised.

    T = 12 keeps the empty code's uniform mixture (1/12 = 0.083) under the 0.1 threshold.
    """
    dec = FakeDecoder(12, np.arange(6))
    bit_sets = [(0, 1)] * 3 + [(0, 1, 2)] * 2 + [(3,)] * 4 + [(4, 5)] + [()] * 2
    codes = make_codes(bit_sets, 6)
    tw, vocab = block_topics(12)
    return dec, codes, tw, vocab



LDA_T, LDA_W, LDA_N = 5, 40, 60


def ldavis_inputs(seed: int = 0):
    """A small topic model's arrays: 5 block topics, documents with known lengths."""
    rng = np.random.default_rng(seed)
    tw, vocab = block_topics(LDA_T, words_per_topic=5, n_filler=LDA_W - 5 * LDA_T)
    vocab[-1] = "</script><b>tag"  # must not break the page
    dt = rng.dirichlet(np.full(LDA_T, 0.3), size=LDA_N)
    lengths = rng.integers(5, 80, size=LDA_N).astype(float)
    tf = np.rint(lengths @ dt @ tw) + 1
    return tw, dt, lengths, vocab, tf


@pytest.fixture(scope="session")
def ldavis_page(tmp_path_factory):
    """One LDAvis page written by write_ldavis_html (coarse lambda_step keeps it fast)."""
    from bpetopics.viz import write_ldavis_html

    tw, dt, lengths, vocab, tf = ldavis_inputs()
    path = tmp_path_factory.mktemp("ldavis") / "topics.html"
    write_ldavis_html(tw, dt, lengths, vocab, tf, path, seed=0, lambda_step=0.1, title="test topics")
    return path
