"""The posterior over a pursued code and its one-bit neighbours (core/code_posterior.py):
the weights are exp L normalised over those codes, the pursued code outweighs every code
one more bit would give (greedy pursuit stopped there), and the mean is taken alike in
groups of any size."""

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from bpetopics.models.poissbpe.compiled import fused_posterior, kernels
from bpetopics.models.poissbpe.code_posterior import local_mean, local_posterior, neighbour_codes
from bpetopics.models.poissbpe.packed import PaddedCounts
from bpetopics.bpe.pursuit import greedy_pursuit

from tests.bpe.conftest import make_case


def _case(kind, seed=3, hidden=(16,)):
    decoder, lik, batch = make_case(kind, n_points=15, n_bits=7, seed=seed, hidden=hidden)
    log_odds = -torch.rand(7, generator=torch.Generator().manual_seed(seed))
    codes = greedy_pursuit(decoder, lik, batch, log_odds)
    return decoder, lik, batch, log_odds, codes


def test_neighbours_are_the_code_and_each_bit_flipped():
    codes = torch.tensor([[1, 0, 0], [0, 1, 1]], dtype=torch.bool)
    near = neighbour_codes(codes)
    assert near.shape == (2, 4, 3)
    assert torch.equal(near[:, 0], codes)
    assert torch.equal((near[:, 1:] ^ codes[:, None]).long(), torch.eye(3, dtype=torch.long).expand(2, 3, 3))


def test_weights_are_exp_scores_normalised_and_the_code_beats_every_added_bit(kind):
    decoder, lik, batch, log_odds, codes = _case(kind)
    weights, outputs = local_posterior(decoder, lik, batch, codes, log_odds)
    assert codes.sum() > 0 and weights.shape == (15, 8)
    near = neighbour_codes(codes).float()
    with torch.no_grad():                      # score each neighbour alone, one at a time
        scores = torch.stack([lik.data_term(decoder(near[:, c]), batch) + near[:, c] @ log_odds
                              for c in range(8)], dim=1)
    torch.testing.assert_close(weights, torch.softmax(scores.double(), 1).float(), rtol=1e-4, atol=1e-6)
    added = ~codes                              # z + e_j: the pursuit found none better than z
    assert (weights[:, 1:][added] <= weights[:, :1].expand(-1, 7)[added] * (1 + 1e-4)).all()
    assert (weights[:, 0] < 1 - 1e-6).any()     # and the neighbours do hold some mass


def test_max_bits_gives_longer_codes_no_mass():
    decoder, lik, batch, log_odds, _ = _case("poisson")
    codes = greedy_pursuit(decoder, lik, batch, log_odds, max_bits=1)
    weights, _ = local_posterior(decoder, lik, batch, codes, log_odds, max_bits=1)
    too_long = neighbour_codes(codes).sum(-1) > 1
    assert too_long.any() and (weights[too_long] == 0).all()


def _padded(batch):
    """The same documents as padded rows (the torch path of local_mean)."""
    X = sp.csr_matrix((batch.vals.numpy(), batch.cols.numpy(), batch.indptr.numpy()))
    return PaddedCounts.from_csr(X, "cpu")


@pytest.mark.parametrize("max_bits", [None, 1, 2])
def test_the_compiled_mean_is_the_torch_one(max_bits):
    """PoissBPE's packed batches with a linear decoder take the compiled path
    (core/fused_posterior.py): the same mixtures as the torch path on padded rows."""
    if kernels.numba is None:
        pytest.skip("numba is not installed")
    decoder, lik, batch, log_odds, _ = _case("poisson", seed=5, hidden=())
    log_odds = log_odds * 0.2                                  # codes of several bits
    codes = greedy_pursuit(decoder, lik, batch, log_odds, max_bits=max_bits)
    assert fused_posterior.usable(decoder, lik, batch) and not fused_posterior.usable(decoder, lik, _padded(batch))
    assert codes.sum(1).max() >= min(2, max_bits or 2)
    for n_flips in (0, 3, 8):                                  # no pairs, some, all of them
        fast = local_mean(decoder, lik, batch, codes, log_odds, max_bits, n_flips=n_flips)
        slow = local_mean(decoder, lik, _padded(batch), codes, log_odds, max_bits, n_flips=n_flips)
        torch.testing.assert_close(fast, slow, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(fast.sum(1), torch.ones(len(batch)))
    assert (fast - torch.softmax(decoder(codes.float()), 1)).abs().max() > 1e-3   # not f(z) alone


def test_the_mean_is_the_same_in_groups_of_any_size():
    decoder, lik, packed, log_odds, codes = _case("poisson", hidden=())
    batch = _padded(packed)                                    # the torch path, in groups
    whole = local_mean(decoder, lik, batch, codes, log_odds)
    one_at_a_time = local_mean(decoder, lik, batch, codes, log_odds, budget=1)
    torch.testing.assert_close(whole, one_at_a_time)
    torch.testing.assert_close(whole.sum(1), torch.ones(15))
    none = torch.arange(0)
    assert local_mean(decoder, lik, batch.take(none), codes[none], log_odds).shape == (0, 5)
    # without the pairs of best flips, the mean is local_posterior's weights times f
    weights, outputs = local_posterior(decoder, lik, batch, codes, log_odds)
    np.testing.assert_allclose(local_mean(decoder, lik, batch, codes, log_odds, n_flips=0).numpy(),
                               (weights[..., None] * torch.softmax(outputs, -1)).sum(1).numpy(),
                               rtol=1e-5, atol=1e-6)


def test_pairs_of_the_best_flips_are_scored_like_any_code():
    """With the pairs, the mean is the exp-L-weighted mean of f over the code, its one-bit
    neighbours and the codes flipping two of its best flips, each scored directly."""
    decoder, lik, packed, log_odds, codes = _case("poisson", hidden=())
    batch = _padded(packed)
    n_flips = 3
    mean = local_mean(decoder, lik, batch, codes, log_odds, n_flips=n_flips)
    near = neighbour_codes(codes).float()                      # (P, K + 1, K)
    with torch.no_grad():
        def score(c):                                          # L of codes c (P, K)
            return lik.data_term(decoder(c), batch) + c @ log_odds
        single = torch.stack([score(near[:, c]) for c in range(near.shape[1])], 1)
        best = torch.sort(single[:, 1:], dim=1, descending=True, stable=True).indices[:, :n_flips]
        pairs = []
        for a in range(n_flips):
            for b in range(a + 1, n_flips):
                c = codes.float().clone()
                rows = torch.arange(len(c))
                c[rows, best[:, a]] = 1 - c[rows, best[:, a]]
                c[rows, best[:, b]] = 1 - c[rows, best[:, b]]
                pairs.append(c)
        every = torch.cat([near, torch.stack(pairs, 1)], 1)     # (P, K + 1 + 3, K)
        scores = torch.stack([score(every[:, c]) for c in range(every.shape[1])], 1)
        mixes = torch.stack([torch.softmax(decoder(every[:, c]), -1) for c in range(every.shape[1])], 1)
        expected = (torch.softmax(scores.double(), 1)[..., None] * mixes.double()).sum(1).float()
    torch.testing.assert_close(mean, expected, rtol=1e-4, atol=1e-6)
    assert (mean - local_mean(decoder, lik, batch, codes, log_odds, n_flips=0)).abs().max() > 1e-4


def test_soft_codes_are_the_most_probable_neighbours_renormalised():
    from bpetopics.models.poissbpe.code_posterior import soft_codes

    decoder, lik, batch, log_odds, codes = _case("poisson")
    weights, _ = local_posterior(decoder, lik, batch, codes, log_odds)
    near, w = soft_codes(decoder, lik, batch, codes, log_odds, 3)
    assert near.shape == (15, 3, 7) and w.shape == (15, 3)
    torch.testing.assert_close(w.sum(1), torch.ones(15))
    best = weights.argmax(1)
    assert torch.equal(near[:, 0], neighbour_codes(codes)[torch.arange(15), best])
    top3 = weights.topk(3, dim=1).values
    torch.testing.assert_close(w, top3 / top3.sum(1, keepdim=True))
