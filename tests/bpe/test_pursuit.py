"""Greedy pursuit: exhaustive search on small K, and the slow per-point reference."""

import itertools

import numpy as np
import torch

from bpetopics.bpe.pursuit import (CUDA_BUDGET, DEFAULT_BUDGET, default_budget, greedy_pursuit,
                                    reference_pursuit)

from .conftest import make_case


def exhaustive(decoder, lik, batch, log_odds):
    """Score of every one of the 2^K codes for every point: (P, 2^K), and the codes."""
    n_bits = log_odds.numel()
    codes = torch.tensor(list(itertools.product([0, 1], repeat=n_bits)), dtype=torch.float32)
    with torch.no_grad():
        out = decoder(codes)                                      # (2^K, D)
        out = out.unsqueeze(0).expand(len(batch), -1, -1)         # (P, 2^K, D)
        scores = lik.data_term(out, batch) + codes @ log_odds     # (P, 2^K)
    return scores, codes.bool()


def code_score(decoder, lik, batch, log_odds, codes):
    with torch.no_grad():
        return lik.data_term(decoder(codes.float()), batch) + codes.float() @ log_odds


def test_greedy_never_beats_exhaustive_and_reports_its_true_score(kind):
    decoder, lik, batch = make_case(kind, n_points=20, n_bits=8, seed=1)
    log_odds = -torch.rand(8) * 2
    codes, score = greedy_pursuit(decoder, lik, batch, log_odds, return_score=True)
    best, _ = exhaustive(decoder, lik, batch, log_odds)
    true_score = code_score(decoder, lik, batch, log_odds, codes)
    torch.testing.assert_close(score, true_score, rtol=1e-5, atol=1e-3)
    assert (true_score <= best.max(1).values + 1e-3).all()
    # greedy starts from the empty code and only ever improves on it
    empty = code_score(decoder, lik, batch, log_odds, torch.zeros_like(codes))
    assert (true_score >= empty - 1e-4).all()


def test_greedy_equals_optimum_on_data_from_single_bit_codes():
    """Bernoulli data drawn from f(e_k): the exhaustive optimum is (almost always) a
    single-bit code, and wherever it is, greedy finds exactly that optimum."""
    torch.manual_seed(3)
    decoder, lik, _ = make_case("bernoulli", n_bits=10, seed=3, hidden=(), n_out=100, gain=12.0)
    with torch.no_grad():
        probs = lik.link(decoder(torch.eye(10)))
    gen = torch.Generator().manual_seed(3)
    which = torch.randint(10, (40,), generator=gen)
    x = torch.bernoulli(probs[which], generator=gen)
    batch = lik.batch(x.numpy(), "cpu")
    log_odds = torch.full((10,), -3.0)
    codes = greedy_pursuit(decoder, lik, batch, log_odds)
    scores, all_codes = exhaustive(decoder, lik, batch, log_odds)
    opt = all_codes[scores.argmax(1)]
    single = opt.sum(1) == 1
    assert single.float().mean() >= 0.8
    assert torch.equal(codes[single], opt[single])
    greedy_score = code_score(decoder, lik, batch, log_odds, codes)
    torch.testing.assert_close(greedy_score[single], scores.max(1).values[single])


def test_batched_pursuit_matches_reference(kind):
    decoder, lik, batch = make_case(kind, n_points=15, n_bits=9, seed=2)
    log_odds = -torch.rand(9) * 1.5
    fast = greedy_pursuit(decoder, lik, batch, log_odds)
    slow = reference_pursuit(decoder, lik, batch, log_odds)
    assert torch.equal(fast, slow)
    assert fast.sum(1).float().mean() > 0.5            # not the trivial empty answer


def test_cap_on_active_bits_and_tiny_memory_budget(kind):
    decoder, lik, batch = make_case(kind, n_points=15, n_bits=9, seed=4)
    log_odds = torch.zeros(9)
    capped = greedy_pursuit(decoder, lik, batch, log_odds, max_bits=2)
    assert capped.sum(1).max() <= 2
    assert torch.equal(capped, reference_pursuit(decoder, lik, batch, log_odds, max_bits=2))
    # chunking by points (one point per pass, or all in one as on a GPU) changes nothing
    assert torch.equal(greedy_pursuit(decoder, lik, batch, log_odds, budget=1),
                       greedy_pursuit(decoder, lik, batch, log_odds))
    assert torch.equal(greedy_pursuit(decoder, lik, batch, log_odds, budget=CUDA_BUDGET),
                       greedy_pursuit(decoder, lik, batch, log_odds))


def test_a_gpu_gets_a_larger_candidate_pass_than_a_cpu():
    assert default_budget("cpu") == DEFAULT_BUDGET
    assert default_budget(torch.device("cuda:0")) == CUDA_BUDGET >= 16 * DEFAULT_BUDGET


def test_a_hopeless_penalty_gives_the_empty_code(kind):
    decoder, lik, batch = make_case(kind, n_points=10, n_bits=6, seed=5)
    codes = greedy_pursuit(decoder, lik, batch, torch.full((6,), -1e6))
    assert not codes.any()


def test_upper_bound_holds_for_every_code(kind):
    """The pruning bound must exceed the data term of every code, or pruning is wrong."""
    decoder, lik, batch = make_case(kind, n_points=10, n_bits=8, seed=6)
    scores, _ = exhaustive(decoder, lik, batch, torch.zeros(8))
    assert (lik.data_upper_bound(batch)[:, None] >= scores - 1e-4).all()
    assert np.isfinite(scores.numpy()).all()
