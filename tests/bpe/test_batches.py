"""Batch sources: the in-memory one keeps the minibatch order training always had, and
partial_fit scales the prior by the corpus size (total_samples), not the chunk's."""

import numpy as np
import scipy.sparse as sp
import torch

from bpetopics import PoissBPE
from bpetopics.bpe.batches import BatchSource, InMemoryBatches, csr_row_slices


def _planted(n_docs=120, n_words=30, seed=0):
    rng = np.random.default_rng(seed)
    topics = rng.dirichlet(np.full(n_words, 0.1), size=3)
    docs = np.stack([rng.multinomial(40, topics[rng.integers(3)]) for _ in range(n_docs)])
    return sp.csr_matrix(docs)


def test_in_memory_batches_keep_the_seeded_epoch_order():
    X = sp.csr_matrix(np.arange(23 * 2).reshape(23, 2))
    source = InMemoryBatches(X, batch_size=5, seed=4, epoch=2)
    assert isinstance(source, BatchSource) and source.n_samples == 23 and len(source) == 5
    # the order training used before batch sources existed, written out
    gen = torch.Generator().manual_seed(4 * 1_000_003 + 2)
    order = torch.randperm(23, generator=gen).numpy()
    rows = [b.toarray()[:, 0] // 2 for b in source]
    assert [len(r) for r in rows] == [5, 5, 5, 5, 3]
    np.testing.assert_array_equal(np.concatenate(rows), order)
    again = np.concatenate([b.toarray()[:, 0] // 2 for b in InMemoryBatches(X, 5, seed=4, epoch=2)])
    other = np.concatenate([b.toarray()[:, 0] // 2 for b in InMemoryBatches(X, 5, seed=4, epoch=3)])
    np.testing.assert_array_equal(again, order)
    assert sorted(other) == list(range(23)) and not np.array_equal(other, order)


def test_csr_row_slices_are_scipys_row_slices():
    """The minibatches of a CSR matrix hold what scipy's row slicing gives, of the same
    class, the last one short; empty rows included."""
    X = _planted(n_docs=23)
    X[[3, 4, 17]] = 0
    X.eliminate_zeros()
    for matrix in (X, sp.csr_array(X)):
        slices = list(csr_row_slices(matrix, 5))
        assert [s.shape for s in slices] == [(5, 30)] * 4 + [(3, 30)]
        for begin, part in zip(range(0, 23, 5), slices):
            expected = matrix[begin:begin + 5]
            assert type(part) is type(matrix)
            np.testing.assert_array_equal(part.indptr, expected.indptr)
            np.testing.assert_array_equal(part.indices, expected.indices)
            np.testing.assert_array_equal(part.data, expected.data)


def test_partial_fit_scales_the_prior_by_total_samples():
    X = _planted()
    params = dict(n_topics=3, n_bits=6, batch_size=30, device="cpu", progress=False, alpha=2.0)
    streamed = PoissBPE(**params)
    steps = []
    streamed.partial_fit(X[:60], total_samples=120)
    real_step = streamed._prior_step

    def spy(codes):  # the natural-gradient step's scale N / |S| of each minibatch
        steps.append(streamed.prior_.n_data / codes.shape[0])
        real_step(codes)

    streamed._prior_step = spy
    streamed.partial_fit(X[60:], total_samples=120)
    assert streamed.n_data_ == 120 and streamed.prior_.n_data == 120
    assert steps == [120 / 30, 120 / 30]
    # one pass over the whole corpus uses the same N
    whole = PoissBPE(**params).partial_fit(X)
    assert whole.n_data_ == streamed.n_data_ == 120
    # without total_samples, N is the first chunk's size (the old behaviour)
    assert PoissBPE(**params).partial_fit(X[:60]).n_data_ == 60
