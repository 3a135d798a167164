"""Shared builders for the core tests: random decoders and data for each likelihood."""

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from bpetopics.bpe.decoder import CodeDecoder
from bpetopics.models.images.likelihoods import BernoulliLikelihood, GaussianLikelihood
from bpetopics.models.poissbpe.poisson import PoissonLikelihood


def make_case(kind, n_points=12, n_bits=8, seed=0, hidden=(16,), n_out=12, gain=3.0):
    """A random decoder, likelihood and batch of data for one likelihood kind."""
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    if kind == "poisson":
        n_topics, n_words = 5, 40
        decoder = CodeDecoder(n_bits, n_topics, hidden)
        lik = PoissonLikelihood(n_words, n_topics)
        with torch.no_grad():
            lik.topic_logits.copy_(2 * torch.randn(n_words, n_topics, generator=gen).t())
        X = sp.csr_matrix(rng.poisson(0.6, size=(n_points, n_words)))
        batch = lik.batch(X, "cpu")
    elif kind == "gauss":
        decoder = CodeDecoder(n_bits, 10, hidden)
        lik = GaussianLikelihood(sigma=0.5, c=2.0)
        batch = lik.batch(rng.normal(size=(n_points, 10)), "cpu")
    else:
        decoder = CodeDecoder(n_bits, n_out, hidden)
        lik = BernoulliLikelihood()
        batch = lik.batch((rng.random((n_points, n_out)) < 0.4).astype(np.float32), "cpu")
    with torch.no_grad():               # torch's default init decodes every code alike
        for p in decoder.parameters():
            p.mul_(gain)
    decoder.eval()
    return decoder, lik, batch


@pytest.fixture(params=["poisson", "gauss", "bernoulli"])
def kind(request):
    return request.param
