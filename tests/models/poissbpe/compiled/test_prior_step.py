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
