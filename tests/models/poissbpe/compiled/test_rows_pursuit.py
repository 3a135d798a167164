"""A minibatch's pursuit from its CSR rows (compiled/rows_pursuit.py), the pipelined
schedule's part: the codes are the greedy pursuit's for the theta copied; the shares
cover every document and split it alike on one thread or two; a pursuit handed ahead
waits for its log-odds; the threads' claims neither lose a part nor wait for ever."""

import threading
import time

import numpy as np
import pytest
import torch

from bpetopics.bpe.pursuit import reference_pursuit
from bpetopics.models.poissbpe.compiled import kernels
from bpetopics.models.poissbpe.compiled import rows_pursuit
from bpetopics.models.poissbpe.compiled.rows_preparation import guided_bounds
from bpetopics.models.poissbpe.compiled.rows_pursuit import RowsPursuit, ThetaCopy
from bpetopics.models.poissbpe.table_pursuit import table_pursuit
from tests.models.poissbpe.test_table_pursuit import text_case, zipf_corpus

pytestmark = pytest.mark.skipif(not kernels.available("cpu"), reason="numba is not installed")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rows_pursuit_gives_the_reference_codes_and_the_likelihoods_batch(seed):
    decoder, lik = text_case(seed, n_bits=12, n_topics=6, n_words=300)
    X = zipf_corpus(40, 300, seed)
    X.data[::7] = 0                                   # explicit zeros: dropped, as from_csr does
    log_odds = torch.linspace(-3, 0.5, 12)
    beta = lik.minibatch_params()
    batch, codes, score = RowsPursuit(X, ThetaCopy(decoder, log_odds, beta, 12), n_shares=3).finish().result()

    expected = lik.batch(X, "cpu")
    for name in ("indptr", "cols", "vals", "rows"):
        assert torch.equal(getattr(batch, name), getattr(expected, name)), name
    words, local = expected.vocabulary(300)
    assert torch.equal(batch.vocabulary(300)[0], words) and torch.equal(batch.vocabulary(300)[1], local)
    reference = reference_pursuit(decoder, lik, expected, log_odds)
    assert torch.equal(codes, reference)
    fast_codes, fast_score = table_pursuit(decoder, lik, expected, log_odds, return_score=True, beta=beta)
    assert torch.equal(codes, fast_codes)
    np.testing.assert_allclose(score.numpy(), fast_score.numpy(), rtol=1e-5, atol=1e-3)


def test_candidates_whose_factored_softmax_underflows_take_the_direct_one():
    """Weight +80 on topic 0 for half the bits and -80 for the others: once a code holds
    one of the first, the others' factored softmax sums to ~1e-35 (not a normal float),
    and their mixtures are computed directly, stable: still the reference codes."""
    decoder, lik = text_case(3, n_bits=12, n_topics=6, n_words=300)
    with torch.no_grad():
        decoder.first.weight[0, :6] = 80.0
        decoder.first.weight[0, 6:] = -80.0
    X = zipf_corpus(60, 300, 3)
    log_odds = torch.full((12,), 0.5)                     # bits are cheap: codes grow long
    beta = lik.minibatch_params()
    codes = RowsPursuit(X, ThetaCopy(decoder, log_odds, beta, 12)).finish().result()[1]
    assert torch.equal(codes, reference_pursuit(decoder, lik, lik.batch(X, "cpu"), log_odds))
    assert (codes[:, :6].any(1) & codes[:, 6:].any(1)).any()   # both kinds in one code


def test_rows_pursuit_stops_at_max_bits_and_splits_into_shares_alike():
    decoder, lik = text_case(6)
    X = zipf_corpus(50, 300, 6)
    log_odds = torch.full((12,), 0.5)                     # bits are cheap: codes would grow long
    beta = lik.minibatch_params()
    expected = reference_pursuit(decoder, lik, lik.batch(X, "cpu"), log_odds, max_bits=2)
    assert expected.sum(1).max() == 2
    for shares in (1, 2, 4):
        codes = RowsPursuit(X, ThetaCopy(decoder, log_odds, beta, 2), n_shares=shares).finish().result()[1]
        assert torch.equal(codes, expected), shares


@pytest.mark.parametrize("shares", [1, 2, 4])
def test_two_threads_sharing_a_pursuit_give_one_threads_codes(shares):
    """The helper thread and this one claim the preparation and the shares in whatever
    order they arrive (the helper first, both at once, or the helper after everything
    is done): the result is one thread's, bit for bit."""
    decoder, lik = text_case(4)
    X = zipf_corpus(120, 300, 4)
    log_odds = torch.linspace(-2, 0.2, 12)
    theta = ThetaCopy(decoder, log_odds, lik.minibatch_params(), 12)
    alone = RowsPursuit(X, theta).finish().result()
    for _ in range(20):
        shared = RowsPursuit(X, theta, shares)
        rows_pursuit.helper().hand(shared)
        result = shared.finish().result()
        for one, two in zip((alone[0].indptr, alone[0].cols, alone[0].vals, alone[0].rows, alone[1], alone[2]),
                            (result[0].indptr, result[0].cols, result[0].vals, result[0].rows, result[1],
                             result[2])):
            assert torch.equal(one, two)
        assert shared.state[rows_pursuit._DONE_SHARES] == shares
    late = RowsPursuit(X, theta, shares).finish()
    codes = late.codes.copy()
    late.run()                                                # a helper arriving after the end
    assert np.array_equal(late.codes, codes)
    assert late.state[rows_pursuit._NEXT_SHARE] == shares + 1 and late.state[rows_pursuit._DONE_SHARES] == shares


def test_rows_pursuit_reads_copies_of_theta():
    """The pursuit may run while the theta step changes the model: it reads copies."""
    decoder, lik = text_case(3)
    X = zipf_corpus(30, 300, 3)
    log_odds = torch.zeros(12)
    beta = lik.minibatch_params()
    before = RowsPursuit(X, ThetaCopy(decoder, log_odds, beta, 12)).finish().result()[1]
    pursuit = RowsPursuit(X, ThetaCopy(decoder, log_odds, beta, 12))
    with torch.no_grad():                                    # theta moves before the pursuit runs
        for p in decoder.parameters():
            p.mul_(-1)
        log_odds.fill_(-100.0)
    assert torch.equal(pursuit.finish().result()[1], before)


def test_guided_shares_cover_every_document_once_with_halving_work():
    lengths = np.random.default_rng(0).integers(1, 200, 257)
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    for n_shares in (1, 2, 3, 4):
        order, bounds = np.empty(257, dtype=np.int64), np.empty(n_shares + 1, dtype=np.int64)
        guided_bounds(indptr, n_shares, order, bounds)
        assert bounds[0] == 0 and bounds[-1] == 257 and np.all(np.diff(bounds) > 0)
        assert np.array_equal(np.sort(order), np.arange(257))
    work = [lengths[order[bounds[s]:bounds[s + 1]]].sum() for s in range(4)]
    np.testing.assert_allclose(np.array(work) / lengths.sum(), [1 / 2, 1 / 4, 1 / 8, 1 / 8], atol=0.03)


def test_a_preparation_that_fails_on_the_other_thread_raises_instead_of_hanging():
    """A thread waiting (spinning) for the other thread's preparation stops when that
    fails, and the reader of the result gets an error, not a wait for ever."""
    decoder, lik = text_case(2)
    pursuit = RowsPursuit(zipf_corpus(20, 300, 2), ThetaCopy(decoder, torch.zeros(12), lik.minibatch_params(), 12))
    pursuit.state[rows_pursuit._CLAIM_PREPARE] = 1             # the other thread claimed it ...
    outcome = []

    def reader():
        try:
            pursuit.finish()
            outcome.append("finished")
        except RuntimeError as error:
            outcome.append(str(error))

    waiting = threading.Thread(target=reader)
    waiting.start()
    time.sleep(0.05)
    assert waiting.is_alive() and not outcome                   # ... and this one waits for it
    pursuit.state[rows_pursuit._PREPARED] = -1                 # ... which then fails
    waiting.join(timeout=10)
    assert not waiting.is_alive() and "failed" in outcome[0]


def helper_starts_on(pursuit, seconds=30.0):
    """Whether the helper thread starts on ``pursuit`` within ``seconds``."""
    deadline = time.monotonic() + seconds
    while not pursuit.let_in(rows_pursuit.SPINS):
        if time.monotonic() > deadline:
            return False
    return True


def test_a_pursuit_made_before_its_log_odds_waits_for_them_and_uses_them():
    """Handed ahead (``ready=False``), the helper may prepare but pursues nothing until
    ``release`` gives the log-odds; the codes are then those of a pursuit made with them."""
    decoder, lik = text_case(5)
    X = zipf_corpus(80, 300, 5)
    beta = lik.minibatch_params()
    log_odds = torch.linspace(-2.5, 0.3, 12)
    expected = RowsPursuit(X, ThetaCopy(decoder, log_odds, beta, 12)).finish().result()[1]
    ahead = RowsPursuit(X, ThetaCopy(decoder, torch.zeros(12), beta, 12), n_shares=4, ready=False)
    rows_pursuit.helper().hand(ahead)
    assert helper_starts_on(ahead)                                       # the helper started on it ...
    time.sleep(0.05)
    assert ahead.state[rows_pursuit._NEXT_SHARE] == 0 and not ahead.codes.any()   # ... and waits
    ahead.release(log_odds)
    ahead.join()
    assert torch.equal(ahead.finish().result()[1], expected)


def test_release_weighs_the_log_odds_as_the_pursuit_made_with_them():
    """``release(log_odds, weight)`` gives the pursuit weight * log_odds rounded to
    float32, as a pursuit made with that product (torch's float64 product, then ``.to``)."""
    decoder, lik = text_case(7)
    X = zipf_corpus(60, 300, 7)
    beta = lik.minibatch_params()
    log_odds = torch.linspace(-3.1, 0.7, 12, dtype=torch.float64)
    weight = 0.37
    made = ThetaCopy(decoder, weight * log_odds, beta, 12)
    expected = RowsPursuit(X, made).finish().result()[1]
    ahead = RowsPursuit(X, ThetaCopy(decoder, torch.zeros(12), beta, 12), ready=False)
    ahead.release(log_odds, weight)
    np.testing.assert_array_equal(ahead.theta.log_odds, (weight * log_odds).to(torch.float32).numpy())
    assert torch.equal(ahead.finish().result()[1], expected)


def test_an_abandoned_pursuit_lets_the_helper_go():
    """A pursuit handed ahead whose log-odds never come (the training step failed) stops
    the helper's wait; the helper then takes the next pursuit."""
    decoder, lik = text_case(6)
    X = zipf_corpus(30, 300, 6)
    theta = ThetaCopy(decoder, torch.zeros(12), lik.minibatch_params(), 12)
    stuck = RowsPursuit(X, theta, n_shares=2, ready=False)
    rows_pursuit.helper().hand(stuck)
    assert helper_starts_on(stuck)
    stuck.abandon()
    with pytest.raises(RuntimeError, match="abandoned"):
        stuck.finish()
    after = RowsPursuit(X, theta, n_shares=2)
    rows_pursuit.helper().hand(after)
    assert helper_starts_on(after)                                      # the helper is free again
    after.finish()
    assert after.state[rows_pursuit._DONE_SHARES] == 2
