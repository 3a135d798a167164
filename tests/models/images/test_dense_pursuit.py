"""The dense (image) pursuit: the same codes as the per-point reference, by shared tables
and, for Bernoulli, by screening candidates with an exact linear upper bound."""

import numpy as np
import pytest
import torch

from bpetopics.models.images import dense_pursuit as dp
from bpetopics.bpe.likelihoods import DenseBatch
from bpetopics.bpe.pursuit import greedy_pursuit, reference_pursuit
from bpetopics.models.images.likelihoods import BernoulliLikelihood

from tests.bpe.conftest import make_case


class WithoutScreening:
    """The same likelihood without its linear bound: every candidate scored exactly."""

    def __init__(self, likelihood):
        self._likelihood = likelihood

    def __getattr__(self, name):
        if name == "linear_bound":
            raise AttributeError(name)
        return getattr(self._likelihood, name)


@pytest.fixture(scope="module")
def mnist_small(shared_data):
    """200 MNIST training images (pixels in [0, 1]), class-balanced, seed 0."""
    from bpetopics.images import load_mnist

    return load_mnist("train", shared_data, limit=200, random_state=0)[0]


@pytest.fixture(params=["gauss", "bernoulli"])
def image_kind(request):
    return request.param


@pytest.mark.parametrize("hidden", [(), (16,), (16, 24)])
def test_fast_codes_equal_the_reference(image_kind, hidden):
    decoder, lik, batch = make_case(image_kind, n_points=30, n_bits=10, seed=7, hidden=hidden)
    log_odds = -torch.rand(10, generator=torch.Generator().manual_seed(7)) * 0.5
    fast, score = dp.dense_pursuit(decoder, lik, batch, log_odds, return_score=True)
    slow = reference_pursuit(decoder, lik, batch, log_odds)
    assert torch.equal(fast, slow)
    assert (fast.sum(1) >= 2).float().mean() > 0.2          # later steps were taken
    # greedy_pursuit sends dense batches here
    assert torch.equal(greedy_pursuit(decoder, lik, batch, log_odds), fast)
    with torch.no_grad():
        true = lik.data_term(decoder(fast.float()), batch) + fast.float() @ log_odds
    torch.testing.assert_close(score, true, rtol=1e-5, atol=1e-3)


def test_blocks_of_codes_and_max_bits_change_nothing(image_kind):
    decoder, lik, batch = make_case(image_kind, n_points=25, n_bits=9, seed=8, hidden=(16, 16))
    log_odds = torch.full((9,), -0.2)
    whole = dp.dense_pursuit(decoder, lik, batch, log_odds)
    assert torch.equal(dp.dense_pursuit(decoder, lik, batch, log_odds, budget=1), whole)
    capped = dp.dense_pursuit(decoder, lik, batch, log_odds, max_bits=2)
    assert capped.sum(1).max() <= 2
    assert torch.equal(capped, reference_pursuit(decoder, lik, batch, log_odds, max_bits=2))


def test_ties_go_to_the_lowest_bit_as_in_the_reference(image_kind):
    """Bits 1 and 4 (and 2 and 6) draw the same thing alone: at a step where both
    could be taken the reference takes the first."""
    decoder, lik, batch = make_case(image_kind, n_points=20, n_bits=8, seed=9, hidden=(16,))
    with torch.no_grad():
        decoder.first.weight[:, 4] = decoder.first.weight[:, 1]
        decoder.first.weight[:, 6] = decoder.first.weight[:, 2]
    log_odds = torch.full((8,), -0.3)
    fast = dp.dense_pursuit(decoder, lik, batch, log_odds)
    assert torch.equal(fast, reference_pursuit(decoder, lik, batch, log_odds))
    # the twin is taken only after the first (then it is a different code: twice w)
    assert fast[:, [1, 2]].any()
    assert not (fast[:, 4] & ~fast[:, 1]).any() and not (fast[:, 6] & ~fast[:, 2]).any()


def test_linear_bound_lies_above_the_data_term():
    gen = torch.Generator().manual_seed(0)
    x = (torch.rand(50, 30, generator=gen) < 0.3).float()
    current = 3 * torch.randn(50, 30, generator=gen)
    slope, const = BernoulliLikelihood.linear_bound(x, current)
    for _ in range(5):
        out = current + 4 * torch.randn(50, 30, generator=gen)
        data = BernoulliLikelihood().data_term(out, DenseBatch(x))
        assert ((slope * out).sum(1) + const >= data - 1e-4).all()
    torch.testing.assert_close((slope * current).sum(1) + const,
                               BernoulliLikelihood().data_term(current, DenseBatch(x)))


def test_screening_skips_candidates_and_keeps_the_codes(monkeypatch):
    """Bernoulli data drawn from single-bit codes: most candidates are ruled out by the
    bound, and the codes equal those of scoring every candidate (and the reference)."""
    decoder, lik, _ = make_case("bernoulli", n_bits=16, seed=3, hidden=(32,), n_out=120, gain=6.0)
    with torch.no_grad():
        probs = lik.link(decoder(torch.eye(16)[torch.arange(40) % 16]))
    x = torch.bernoulli(probs, generator=torch.Generator().manual_seed(3))
    batch = lik.batch(x.numpy(), "cpu")
    log_odds = torch.full((16,), -2.0)
    evaluated = []
    paired = lik.paired_term
    monkeypatch.setattr(lik, "paired_term", lambda out, xs: evaluated.append(len(out)) or paired(out, xs))
    screened = dp.dense_pursuit(decoder, lik, batch, log_odds)
    every = dp.dense_pursuit(decoder, WithoutScreening(lik), batch, log_odds)
    assert torch.equal(screened, every)
    assert torch.equal(screened, reference_pursuit(decoder, lik, batch, log_odds))
    later = (screened.sum(1).clamp_min(1)).sum().item() * 16      # candidates of later steps
    assert 0 < sum(evaluated) < 0.5 * later


def test_fast_path_on_a_trained_model_equals_scoring_every_candidate_slowly(mnist_small):
    """A GaussBPE and a BernBPE trained one epoch on real MNIST: the fast pursuit gives
    the generic batched pursuit's codes (which the reference tests pin down)."""
    from bpetopics.models import BernBPE, GaussBPE

    from bpetopics.bpe import pursuit

    X = mnist_small
    for model in (GaussBPE(n_bits=24, hidden=(32, 48), epochs=1, batch_size=32, random_state=0,
                           device="cpu", progress=False),
                  BernBPE(n_bits=24, hidden=(32, 48), epochs=1, batch_size=32, random_state=0,
                          device="cpu", progress=False)):
        data = X if isinstance(model, GaussBPE) else (X > 0.5).astype(np.float32)
        model.fit(data)
        lik, log_odds = model.likelihood_, model.prior_.bit_log_odds()
        batch = lik.batch(data, "cpu")
        fast = dp.dense_pursuit(model.decoder_, lik, batch, log_odds)
        generic = pursuit.greedy_pursuit(model.decoder_, _NoTables(lik), batch, log_odds)
        assert torch.equal(fast, generic)
        assert fast.sum(1).float().mean() > 1.0


class _NoTables(WithoutScreening):
    def __getattr__(self, name):
        if name == "shared_term":
            raise AttributeError(name)
        return super().__getattr__(name)


def test_dense_tables_are_used_on_the_cpu_only():
    """On a GPU the tables' host synchronisations cost more than they save (docs/design.md,
    which pursuit runs when): dense batches there take the one-pass-per-step path, whose codes the test
    above pins to the tables'."""
    from bpetopics.models.images.dense_pursuit import uses_dense_tables

    decoder, lik, batch = make_case("gauss", n_points=4, n_bits=5, seed=1, hidden=())
    assert uses_dense_tables(batch, lik, "cpu")
    assert not uses_dense_tables(batch, lik, "cuda")
    assert not uses_dense_tables(batch, _NoTables(lik), "cpu")
