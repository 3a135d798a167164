"""The VAE baselines' size check: the memory estimate counts the network that fit builds,
and a size that cannot fit is refused (one line, naming the parameter) before anything
is allocated."""

import numpy as np
import pytest
import torch

from bpetopics.baselines import GaussianVAE, GumbelSoftmaxVAE
from bpetopics.bpe.sizes import SizeError

X = np.random.default_rng(0).random((60, 49), dtype=np.float32)
SMALL = {GaussianVAE: {"n_latent": 3, "encoder_hidden": (16,), "decoder_hidden": (8, 12)},
         GumbelSoftmaxVAE: {"n_variables": 4, "n_categories": 3, "encoder_hidden": (16,), "decoder_hidden": (8,)}}


@pytest.mark.parametrize("cls", [GaussianVAE, GumbelSoftmaxVAE])
def test_the_estimate_counts_the_network_that_fit_builds(cls):
    model = cls(**SMALL[cls], epochs=1, batch_size=25, random_state=0, device="cpu", progress=False).fit(X)
    n_params = sum(p.numel() for p in model.net_.parameters())
    widths = sum(m.out_features for m in model.net_.modules() if isinstance(m, torch.nn.Linear))
    parts = model.fit_memory(*X.shape)
    assert parts["network"] == 4 * 4 * n_params                     # weights, gradients, Adam's moments
    assert parts["minibatch"] == 4 * 4 * 25 * (X.shape[1] + widths)
    assert parts["images"] == 0 and parts["total"] == sum(v for k, v in parts.items() if k != "total")
    # a batch is at most the data
    assert model.fit_memory(10, X.shape[1], {"batch_size": 1000})["minibatch"] == 4 * 4 * 10 * (X.shape[1] + widths)


@pytest.mark.parametrize("cls, param, value", [
    (GaussianVAE, "n_latent", 10**9), (GaussianVAE, "decoder_hidden", (10**6, 10**6)),
    (GumbelSoftmaxVAE, "n_variables", 10**8), (GumbelSoftmaxVAE, "encoder_hidden", (10**6, 10**6))])
def test_a_size_that_cannot_fit_is_refused_before_anything_is_allocated(cls, param, value):
    model = cls(**{**SMALL[cls], param: value}, epochs=1, device="cpu", progress=False)
    with pytest.raises(SizeError, match=rf"^{param}=.* needs about .* GB of memory to train, more than the "
                                        rf".* free; lower {param}$"):
        model.fit(X)
    assert not hasattr(model, "net_")
