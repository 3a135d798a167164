"""The prior's compiled step against its torch reference (:mod:`bpetopics.bpe.prior`)."""

import numpy as np
import pytest
import torch

from bpetopics.bpe.prior import BetaProcessPrior
from bpetopics.models.poissbpe.compiled import kernels
from bpetopics.models.poissbpe.compiled import prior as compiled_prior


def test_the_compiled_step_is_applys_bit_for_bit():
    """Boolean codes on the CPU take one compiled pass: the same float64 values as
    apply(statistics(codes))."""
    if not kernels.available("cpu"):
        pytest.skip("numba is not installed")
    rng = np.random.default_rng(0)
    fast, reference = (BetaProcessPrior(40, 5000, 5000.0, 10.0, flat_start=False) for _ in range(2))
    for _ in range(30):
        codes = torch.from_numpy(rng.random((int(rng.integers(1, 70)), 40)) < 0.1)
        compiled_prior.natural_step(fast, codes)
        reference.apply(reference.statistics(codes))
    assert torch.equal(fast.a, reference.a) and torch.equal(fast.b, reference.b) and fast.t == reference.t


def test_the_compiled_log_odds_are_torchs_digamma_difference():
    """psi(a) - psi(b) over the prior's range (a and b from 1e-3 to 1e7, the recurrence's
    x < 10, x = 10 exactly and the asymptotic series) against torch's digamma: the same
    steps, so equal but for the last bits of ln x from another maths library."""
    if not kernels.available("cpu"):
        pytest.skip("numba is not installed")
    rng = np.random.default_rng(1)
    prior = BetaProcessPrior(4000, 5000, 5000.0, 10.0, flat_start=False)
    a = np.concatenate([np.exp(rng.uniform(np.log(1e-3), np.log(1e7), 3990)), np.arange(1.0, 11.0)])
    prior.a, prior.b = torch.from_numpy(a), torch.from_numpy(rng.permutation(a))
    ours = compiled_prior.bit_log_odds(prior)
    assert ours.dtype == np.float64 and ours.shape == (4000,)
    np.testing.assert_allclose(ours, prior.bit_log_odds().numpy(), rtol=1e-14, atol=1e-12)
