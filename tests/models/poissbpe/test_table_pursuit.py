"""The Poisson fast path (shared log tables, packed non-zeros, numba or torch) returns
exactly the codes of the per-document reference pursuit, and their scores."""

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from bpetopics.models.poissbpe.compiled import kernels
from bpetopics.bpe.decoder import CodeDecoder
from bpetopics.models.poissbpe.packed import PackedCounts, PaddedCounts, unique_ints
from bpetopics.models.poissbpe.poisson import PoissonLikelihood
from bpetopics.bpe.pursuit import greedy_pursuit, reference_pursuit
from bpetopics.models.poissbpe import table_pursuit as table_pursuit_module
from bpetopics.models.poissbpe.table_pursuit import table_pursuit


def zipf_corpus(n_docs, n_words, seed):
    """Sparse documents with Zipfian word frequencies and lengths 1..~150 tokens."""
    rng = np.random.default_rng(seed)
    freq = 1.0 / np.arange(1, n_words + 1)
    freq /= freq.sum()
    lengths = np.minimum(rng.geometric(0.03, n_docs), 150)
    rows = np.repeat(np.arange(n_docs), lengths)
    cols = rng.choice(n_words, size=lengths.sum(), p=freq)
    X = sp.csr_matrix((np.ones(len(cols)), (rows, cols)), shape=(n_docs, n_words))
    X.sum_duplicates()
    return X


def text_case(seed, n_bits=12, n_topics=6, n_words=300, hidden=()):
    torch.manual_seed(seed)
    decoder = CodeDecoder(n_bits, n_topics, hidden)
    lik = PoissonLikelihood(n_words, n_topics)
    with torch.no_grad():
        lik.topic_logits.normal_(0, 2)
        for p in decoder.parameters():
            p.mul_(4)
    decoder.eval()
    return decoder, lik


@pytest.fixture(params=["fused", "kernel", "torch"])
def path(request, monkeypatch):
    """Run the later steps through the one fused numba loop (linear decoders; scoring
    only the bits whose bound can improve), the step-by-step numba kernels, or the torch
    fallback."""
    if request.param != "torch" and not kernels.available("cpu"):
        pytest.skip("numba is not installed")
    from bpetopics.models.poissbpe.compiled import fused_pursuit

    if request.param != "fused":
        monkeypatch.setattr(fused_pursuit, "usable", lambda decoder, device: False)
    if request.param == "torch":
        monkeypatch.setattr(kernels, "available", lambda device: False)
    return request.param


@pytest.mark.parametrize("hidden,max_bits", [((), None), ((16,), None), ((), 2)])
def test_table_pursuit_equals_reference_on_sparse_documents(path, hidden, max_bits):
    decoder, lik = text_case(7, hidden=hidden)
    X = zipf_corpus(40, 300, seed=7)
    batch = lik.batch(X, "cpu")
    log_odds = -torch.rand(12, generator=torch.Generator().manual_seed(7))
    codes, score = table_pursuit(decoder, lik, batch, log_odds, max_bits, return_score=True)
    assert torch.equal(codes, reference_pursuit(decoder, lik, batch, log_odds, max_bits))
    assert codes.sum(1).float().mean() > 1.0            # several steps were taken
    with torch.no_grad():
        true = lik.data_term(decoder(codes.float()), batch) + codes.float() @ log_odds
    torch.testing.assert_close(score, true, rtol=1e-5, atol=1e-3)
    # the padded generic pursuit agrees too (the path before the tables)
    padded = PaddedCounts.from_csr(X, "cpu")
    assert torch.equal(codes, greedy_pursuit(decoder, lik, padded, log_odds, max_bits))


def test_training_batches_and_encoding_batches_agree(path):
    """A document's code does not depend on the batch it is pursued in (the shared table
    covers only the batch's own words)."""
    decoder, lik = text_case(3)
    X = zipf_corpus(120, 300, seed=3)
    log_odds = -0.5 * torch.rand(12, generator=torch.Generator().manual_seed(3))
    whole = table_pursuit(decoder, lik, lik.batch(X, "cpu"), log_odds)
    parts = torch.cat([table_pursuit(decoder, lik, lik.batch(X[i:i + 16], "cpu"), log_odds)
                       for i in range(0, 120, 16)])
    assert torch.equal(whole, parts)
    one = lik.batch(X, "cpu").take(torch.arange(0, 120, 7))
    assert torch.equal(table_pursuit(decoder, lik, one, log_odds), whole[::7])


def test_ties_go_to_the_lowest_bit_like_the_reference(path):
    """Bits 0, 3 and 5 are copies of each other: their candidates tie exactly, and both
    pursuits switch on the lowest of them. The decoder's weights are multiples of 1/16, so
    that a code's first layer is exact in float32 whatever order the BLAS sums its
    columns in (another CPU's order would otherwise break the tie by rounding)."""
    decoder, lik = text_case(11, n_bits=8)
    with torch.no_grad():
        for p in (decoder.first.weight, decoder.first.bias):
            p.copy_(torch.round(p * 16) / 16)
        decoder.first.weight[:, 3] = decoder.first.weight[:, 0]
        decoder.first.weight[:, 5] = decoder.first.weight[:, 0]
    X = zipf_corpus(30, 300, seed=11)
    batch = lik.batch(X, "cpu")
    log_odds = torch.zeros(8)
    codes = table_pursuit(decoder, lik, batch, log_odds)
    assert torch.equal(codes, reference_pursuit(decoder, lik, batch, log_odds))
    tied = codes[:, [0, 3, 5]]
    assert tied[:, 0].any() and not (tied[:, 1] & ~tied[:, 0]).any()


def test_packed_rows_round_trip():
    X = sp.csr_matrix(np.array([[0, 2, 0, 1], [0, 0, 0, 0], [5, 0, 0, 0], [1, 1, 1, 0]]))
    batch = PackedCounts.from_csr(X, "cpu")
    assert batch.lengths.tolist() == [2, 0, 1, 3]
    assert batch.totals().tolist() == [3, 0, 5, 3]
    sub = batch.take(torch.tensor([3, 1, 0]))
    dense = torch.zeros(3, 4).index_put_((sub.rows, sub.cols), sub.vals)
    assert dense.tolist() == X[[3, 1, 0]].toarray().tolist()
    assert sub.to_sparse(4).to_dense().tolist() == X[[3, 1, 0]].toarray().tolist()


@pytest.mark.parametrize("compiled", [True, False])
@pytest.mark.parametrize("n_keys, n_range", [(300, 50_000), (3_000, 2_000), (6_000, 15_609),
                                            (2_000, 1_000_000)])
def test_unique_ints_equals_torch_unique(n_keys, n_range, compiled, monkeypatch):
    """Each branch (sort; presence mask compiled or by torch ops) gives torch.unique's
    distinct keys and inverse."""
    if compiled and kernels.numba is None:
        pytest.skip("numba is not installed")
    from bpetopics.models.poissbpe import packed
    monkeypatch.setattr(packed.kernels, "available", lambda device: compiled)
    keys = torch.from_numpy(np.random.default_rng(n_keys).integers(0, n_range, n_keys))
    words, position = unique_ints(keys, n_range)
    expected_words, expected_position = torch.unique(keys, return_inverse=True)
    assert torch.equal(words, expected_words) and torch.equal(position, expected_position)


@pytest.mark.parametrize("n_bits", [64, 70])
def test_documents_are_grouped_exactly_by_code(n_bits):
    """Codes as int64 keys (bit 63 included) or rows: same groups as torch.unique."""
    from bpetopics.bpe.greedy_step import distinct_codes

    gen = torch.Generator().manual_seed(n_bits)
    base = torch.rand(6, n_bits, generator=gen) < 0.1
    base[0, -1] = base[1, 63] = True                        # the sign bit of the key
    codes = base[torch.randint(6, (50,), generator=gen)]
    uniq, inverse = distinct_codes(codes)
    assert torch.equal(uniq[inverse], codes)
    assert len(uniq) == len(torch.unique(codes, dim=0))


def test_numpy_blas_runs_on_one_thread_inside_the_topic_moves_block(monkeypatch):
    """PoissBPE's end-of-epoch topic moves run inside numpy_blas_on_one_thread:
    every BLAS library threadpoolctl sees is limited to one thread there, and restored
    after."""
    from threadpoolctl import threadpool_info, threadpool_limits

    from bpetopics import PoissBPE

    def blas_threads():
        return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]

    with threadpool_limits(limits=2, user_api="blas"):
        before = blas_threads()
        seen = []
        monkeypatch.setattr(PoissBPE, "_restart_topics",
                            lambda self, X: seen.append(blas_threads()) or {"restarted_topics": 0})
        X = sp.random(40, 30, density=0.3, format="csr", random_state=0) * 10
        PoissBPE(n_topics=3, epochs=2, device="cpu", progress=False).fit(X.ceil())
        assert seen and all(threads == [1] * len(before) for threads in seen)
        assert blas_threads() == before


def test_kernels_run_serially_below_the_parallel_threshold(monkeypatch):
    """Two threads use the parallel build only for calls of MIN_PARALLEL_WORK multiply-adds
    or more (measured slower below it), and both builds give the same numbers."""
    import numpy as np
    import torch

    from bpetopics.models.poissbpe.compiled import kernels

    if kernels.numba is None:
        pytest.skip("numba is not installed")
    picked = []
    real = kernels._pick
    monkeypatch.setattr(kernels, "_pick", lambda pair, threads, work=None: picked.append(
        real(pair, threads, work)) or picked[-1])
    rng = np.random.default_rng(0)
    words = torch.from_numpy(rng.integers(0, 30, 500)).long()
    codes = torch.from_numpy(rng.integers(0, 4, 500)).long()
    beta = torch.from_numpy(rng.dirichlet(np.ones(5), 30)).float()
    mix = torch.from_numpy(rng.dirichlet(np.ones(5), (4, 8))).float()
    small = kernels.log_mixtures(words, codes, beta, mix, threads=2)
    assert picked[-1] is kernels._products[0]                  # serial: 500 x 8 x 5 is small
    monkeypatch.setattr(kernels, "MIN_PARALLEL_WORK", 0)
    parallel = kernels.log_mixtures(words, codes, beta, mix, threads=2)
    assert picked[-1] is kernels._products[1]
    torch.testing.assert_close(small, parallel)


def test_fused_pursuit_on_two_threads_equals_the_reference(monkeypatch):
    """With two threads the fused loop hands a share of the documents, dealt by length, to
    a second thread: each document is pursued whole by one thread, so the codes are the
    reference's."""
    from bpetopics.models.poissbpe.compiled import fused_pursuit

    if kernels.numba is None:
        pytest.skip("numba is not installed")
    monkeypatch.setattr(fused_pursuit, "MIN_PARALLEL_WORK", 0)
    pools = []
    real = fused_pursuit.thread_pool
    monkeypatch.setattr(fused_pursuit, "thread_pool", lambda size: pools.append(size) or real(size))
    monkeypatch.setattr(table_pursuit_module, "kernel_threads", lambda: 2)
    decoder, lik = text_case(5)
    batch = lik.batch(zipf_corpus(50, 300, seed=5), "cpu")
    log_odds = -torch.rand(12, generator=torch.Generator().manual_seed(5))
    codes = table_pursuit(decoder, lik, batch, log_odds)
    assert pools == [1]                                         # one other thread took a share
    assert torch.equal(codes, reference_pursuit(decoder, lik, batch, log_odds))


@pytest.mark.parametrize("n_slots", [1, 2, 3])
def test_thread_slots_deal_every_document_once_with_even_work(n_slots):
    from bpetopics.models.poissbpe.compiled.fused_pursuit import thread_slots

    lengths = np.random.default_rng(n_slots).geometric(0.03, 64)
    order, bounds = thread_slots(lengths, n_slots)
    assert sorted(order.tolist()) == list(range(64)) and bounds[0] == 0 and bounds[-1] == 64
    work = [lengths[order[bounds[s]:bounds[s + 1]]].sum() for s in range(n_slots)]
    assert max(work) - min(work) <= lengths.max()             # within one document's work


def test_a_forked_child_gets_its_own_pursuit_threads(monkeypatch):
    """A pool made before a fork has no threads in the child: the child makes its own."""
    import os
    from bpetopics.models.poissbpe.compiled import fused_pursuit

    if kernels.numba is None or not hasattr(os, "fork"):
        pytest.skip("numba is not installed or no fork")
    parent = fused_pursuit.thread_pool(1)
    monkeypatch.setattr(fused_pursuit, "_workers", (os.getpid() + 1,) + fused_pursuit._workers[1:])
    assert fused_pursuit.thread_pool(1) is not parent          # as a child (another pid) sees it
    assert fused_pursuit.thread_pool(1) is fused_pursuit.thread_pool(1)


def test_pursuit_threads_each_get_a_share_worth_the_hand_over(monkeypatch):
    """Sixteen threads asked for, work for about three: three slots, not sixteen."""
    from bpetopics.models.poissbpe.compiled import fused_pursuit

    if kernels.numba is None:
        pytest.skip("numba is not installed")
    decoder, lik = text_case(5)
    batch = lik.batch(zipf_corpus(50, 300, seed=5), "cpu")
    work = batch.cols.shape[0] * 12 * 6                           # non-zeros x K x T
    monkeypatch.setattr(fused_pursuit, "MIN_PARALLEL_WORK", 2 * (work // 3))
    pools = []
    real = fused_pursuit.thread_pool
    monkeypatch.setattr(fused_pursuit, "thread_pool", lambda size: pools.append(size) or real(size))
    monkeypatch.setattr(table_pursuit_module, "kernel_threads", lambda: 16)
    log_odds = -torch.rand(12, generator=torch.Generator().manual_seed(5))
    codes = table_pursuit(decoder, lik, batch, log_odds)
    assert pools == [2, 2]                                     # two other threads, one share each
    assert torch.equal(codes, reference_pursuit(decoder, lik, batch, log_odds))


def test_candidate_bounds_are_upper_bounds_on_the_exact_scores():
    """The later steps' screening bound (Jensen over the words) is never below a
    candidate's exact data term + log-odds, on random topics, codes and documents."""
    if kernels.numba is None:
        pytest.skip("numba is not installed")
    from bpetopics.models.poissbpe.compiled import screened_pursuit

    rng = np.random.default_rng(0)
    n_bits, n_words = 10, 40
    tight = 0
    for trial in range(20):
        n_topics = (7, 19)[trial % 2]             # under and over a block of 8 topics
        beta = rng.dirichlet(np.full(n_words, 0.3), n_topics).T.astype(np.float32)   # (U, T)
        bit_w = rng.normal(0, 2, (n_bits, n_topics)).astype(np.float32)
        pre = rng.normal(0, 2, n_topics).astype(np.float32)
        log_odds = rng.normal(-1, 1, n_bits).astype(np.float32)
        code = (rng.random(n_bits) < 0.2).astype(np.uint8)
        n = int(rng.integers(1, 30))
        cols = rng.choice(n_words, n, replace=False).astype(np.int64)
        vals = rng.integers(1, 5, n).astype(np.float32)
        p = np.exp(pre - pre.max())
        p /= p.sum()
        log_phi0 = np.log(beta[cols] @ p).astype(np.float32)
        data = np.float32((vals * log_phi0).sum())
        exp_w = np.exp(bit_w - bit_w.max(1, keepdims=True)).astype(np.float32)
        bound, r_sum = np.empty(n_bits), np.empty(n_bits, np.float32)
        exp_pre = np.exp(pre - pre.max()).astype(np.float32)
        screened_pursuit._candidate_bounds(
            0, n, cols, vals, beta, exp_pre, np.ascontiguousarray(exp_w.T), log_odds, code,
            log_phi0, data, bound, np.empty(n_topics, np.float32), r_sum,
            np.empty(n_bits, np.float32), np.empty(n_bits, np.float32))
        np.testing.assert_allclose(r_sum, exp_w @ exp_pre, rtol=1e-5)   # softmax denominators
        for j in range(n_bits):
            if code[j]:
                assert bound[j] == -np.inf
                continue
            mix = np.exp(pre + bit_w[j] - (pre + bit_w[j]).max())
            mix /= mix.sum()
            exact = (vals * np.log(np.maximum(beta[cols] @ mix, 1e-30))).sum() + log_odds[j]
            assert bound[j] >= exact - 1e-3 * (1 + abs(exact)), (trial, j, bound[j], exact)
            tight += bound[j] < exact + 0.5 * abs(exact)          # a bound, not +inf
    assert tight > 100                                             # and an informative one


@pytest.mark.skipif(kernels.numba is None, reason="numba kernels")
def test_wide_word_rates_are_the_word_rates_bit_for_bit():
    """pursuit_loops.wide_word_rates (4 words a pass, for the first step's table) sums
    each rate in _word_rates' order: the same float32 values, for every
    remainder of words (n % 4) and of topics (T % 8, T % 4), at any start."""
    from numba import njit

    from bpetopics.models.poissbpe.compiled import pursuit_loops

    narrow, wide = pursuit_loops._word_rates, pursuit_loops.wide_word_rates

    @njit
    def both(start, n, cols, beta, mix, out_narrow, out_wide):
        narrow(start, n, cols, beta, mix, out_narrow)
        wide(start, n, cols, beta, mix, out_wide)

    rng = np.random.default_rng(0)
    for n_topics in (1, 3, 4, 7, 8, 12, 13, 20, 50):
        for n in range(10):
            width = int(rng.integers(1, 70))
            beta = (rng.random((50, n_topics)) ** 3).astype(np.float32)
            mix = rng.random((n_topics, width)).astype(np.float32)
            cols, start = rng.integers(0, 50, n + 3), int(rng.integers(0, 4))
            got_narrow, got_wide = np.empty(n * width, np.float32), np.empty(n * width, np.float32)
            both(start, n, cols, beta, mix, got_narrow, got_wide)
            np.testing.assert_array_equal(got_wide, got_narrow)
            want = np.maximum(beta[cols[start:start + n]].astype(np.float64) @ mix, 1e-30).ravel()
            np.testing.assert_allclose(got_wide, want, rtol=1e-5)
