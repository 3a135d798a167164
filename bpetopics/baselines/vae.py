"""Gaussian VAE baseline (Kingma & Welling 2014) for GaussBPE's Table 1 rows.

Model, per image x in R^D, latent z in R^L:

    p(z) = N(0, I),   p(x | z) = N(f(z), sigma^2 I),   q(z | x) = N(mu(x), diag exp(logvar(x)))

- Recognition network: K&W's MLP, one hidden layer of 500 tanh units by default
  (``encoder_hidden``, ``encoder_activation``), then a linear layer to (mu, logvar).
- Decoder f: the Gumbel-Softmax VAE paper's MLP mirror L-256-512-D with ReLU and a
  *linear* last layer (the paper: "the last layer is linear for Gaussian VAE").
- Loss: the negative ELBO per image, -E_q[ln p(x|z)] + KL(q(z|x) || N(0, I)), with
  one reparameterised sample z = mu + exp(logvar/2) * eps, eps ~ N(0, I).
- Observation variance sigma^2 (``obs_var``): a float keeps it fixed. ``'learned'``
  (default) uses one variance shared by all pixels, set on every minibatch to its
  maximum-likelihood value given the current reconstructions, sigma^2 = mean squared
  error per pixel (the "optimal sigma" of Rybkin et al. 2021). It is the closed-form
  maximiser of the ELBO in sigma^2, so it is learned as well as a gradient would learn
  it, but without lagging behind while the decoder improves. ``obs_var_`` keeps the
  average over the last epoch; ``negative_elbo`` on new data uses that fixed value.
  The choice matters for Table 1: on full MNIST a fixed variance of 1 gave a several
  times larger test MSE and much sparser means than 'learned' (a fixed large variance
  down-weights the reconstruction, so more latents collapse to the prior). The paper's
  VAE figures look like a fixed-variance VAE's; report which one a comparison used.

Reported metrics (docs/model.md, "How results are measured"): MSE with E[lambda] = 1 and the *decoded posterior mean*
f(mu(x)) (``reconstruct``), and Hoyer sparsity of the posterior means mu(x) (``encode``).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from bpetopics.baselines.vae_base import BaseVAE, mlp

__all__ = ["GaussianVAE", "gaussian_kl_standard", "gaussian_log_likelihood"]

_MIN_VAR = 1e-6


def gaussian_kl_standard(mu, logvar):
    """KL(N(mu, diag exp(logvar)) || N(0, I)) per row:
    1/2 sum_j (mu_j^2 + exp(logvar_j) - 1 - logvar_j)."""
    return 0.5 * (mu.pow(2) + logvar.exp() - 1.0 - logvar).sum(-1)


def gaussian_log_likelihood(x, mean, var):
    """ln N(x | mean, var I) per row, var a scalar (float or 0-d tensor):
    -1/2 [ ||x - mean||^2 / var + D ln(2 pi var) ]."""
    var = torch.as_tensor(var, dtype=x.dtype, device=x.device)
    d = x.shape[-1]
    return -0.5 * ((x - mean).pow(2).sum(-1) / var + d * torch.log(2 * math.pi * var))


class GaussianVAENet(nn.Module):
    """Encoder MLP -> (mu, logvar); decoder MLP with a linear last layer."""

    def __init__(self, n_features, n_latent, encoder_hidden, decoder_hidden,
                 encoder_activation, decoder_activation):
        super().__init__()
        self.encoder = mlp([n_features, *encoder_hidden], encoder_activation,
                           last_activation=True)
        width = encoder_hidden[-1] if encoder_hidden else n_features
        self.to_posterior = nn.Linear(width, 2 * n_latent)
        self.decoder = mlp([n_latent, *decoder_hidden, n_features], decoder_activation)

    def posterior(self, x):
        """(mu, logvar) of q(z | x)."""
        mu, logvar = self.to_posterior(self.encoder(x)).chunk(2, dim=-1)
        return mu, logvar

    def decode(self, z):
        return self.decoder(z)

    def elbo_terms(self, x, eps, obs_var):
        """Per-row (ln p(x | z), KL(q || p), squared error) at z = mu + sigma * eps.

        ``obs_var`` is a float / 0-d tensor, or 'mle' for the minibatch's
        maximum-likelihood variance (detached)."""
        mu, logvar = self.posterior(x)
        z = mu + torch.exp(0.5 * logvar) * eps
        mean = self.decode(z)
        sq_err = (x - mean).pow(2).sum(-1)
        if isinstance(obs_var, str):
            obs_var = (sq_err.detach().mean() / x.shape[-1]).clamp_min(_MIN_VAR)
        var = torch.as_tensor(obs_var, dtype=x.dtype, device=x.device)
        loglik = gaussian_log_likelihood(x, mean, var)
        return loglik, gaussian_kl_standard(mu, logvar), sq_err, var


class GaussianVAE(BaseVAE):
    """Gaussian VAE, scikit-learn style.

    Parameters
    ----------
    n_latent : latent dimension L (50; the paper does not state it).
    encoder_hidden, encoder_activation : recognition MLP (K&W: (500,), 'tanh').
    decoder_hidden, decoder_activation : decoder MLP before the linear output layer
        (GS-VAE mirror: (256, 512), 'relu').
    obs_var : 'learned' (minibatch maximum likelihood, see the module docstring) or a
        positive float (fixed sigma^2).
    epochs, batch_size, lr : Adam training (lr 1e-3, batches of 100).
    random_state : int seed, or None.
    device : 'auto' (CUDA if available), 'cpu' or 'cuda'.
    progress : show a tqdm bar while fitting.

    Fitted attributes: ``net_``, ``obs_var_``, ``history_`` (one dict per epoch: loss =
    negative ELBO per image, reconstruction = -E_q ln p(x|z), kl, sq_error, obs_var,
    seconds), ``device_``, ``n_features_in_``, ``n_steps_``, ``epoch_``, ``optimizer_``.
    A ``callback`` attribute, when set, is called as ``callback(model, record)`` after every
    epoch; ``state_dict``/``training_state``/``load_state``/``continue_fit`` (in
    :class:`~bpetopics.baselines.vae_base.BaseVAE`) save, resume and load it as an image run.
    """

    def __init__(self, n_latent=50, *, encoder_hidden=(500,), decoder_hidden=(256, 512),
                 encoder_activation="tanh", decoder_activation="relu", obs_var="learned",
                 epochs=10, batch_size=100, lr=1e-3, random_state=None,
                 device="auto", progress=True):
        self.n_latent = n_latent
        self.encoder_hidden = encoder_hidden
        self.decoder_hidden = decoder_hidden
        self.encoder_activation = encoder_activation
        self.decoder_activation = decoder_activation
        self.obs_var = obs_var
        self.epochs = epochs
        self.batch_size = batch_size
        self.lr = lr
        self.random_state = random_state
        self.device = device
        self.progress = progress

    _fitted_scalars = ("obs_var_",)

    _size_names = ("n_latent", "encoder_hidden", "decoder_hidden")

    # ------------------------------------------------------------------ fitting
    def _obs_var_mode(self):
        if isinstance(self.obs_var, str):
            if self.obs_var != "learned":
                raise ValueError("obs_var must be 'learned' or a positive float")
            return "mle"
        if not self.obs_var > 0:
            raise ValueError("obs_var must be 'learned' or a positive float")
        return float(self.obs_var)

    def _build(self, n_features):
        self._obs_var_mode()  # validate before training
        self._var_sum, self._var_count = 0.0, 0
        return GaussianVAENet(n_features, self.n_latent, tuple(self.encoder_hidden),
                              tuple(self.decoder_hidden), self.encoder_activation,
                              self.decoder_activation)

    def _batch_loss(self, xb, step):
        eps = torch.randn(xb.shape[0], self.n_latent, device=xb.device,
                          generator=self._generator)
        loglik, kl, sq_err, var = self.net_.elbo_terms(xb, eps, self._obs_var_mode())
        loss = (kl - loglik).mean()
        self._var_sum += var.detach()
        self._var_count += 1
        return loss, {"loss": kl - loglik, "reconstruction": -loglik, "kl": kl,
                      "sq_error": sq_err}

    def _epoch_extras(self, step, optimizer):
        var = float(self._var_sum) / max(self._var_count, 1)
        self._var_sum, self._var_count = 0.0, 0
        self.obs_var_ = var
        return {"obs_var": var}

    def _end_fit(self):
        if not hasattr(self, "obs_var_"):  # epochs == 0
            mode = self._obs_var_mode()
            self.obs_var_ = 1.0 if mode == "mle" else mode

    # ---------------------------------------------------------------- inference
    def encode(self, X) -> np.ndarray:
        """Posterior means E_q[z | x] = mu(x), shape (n, n_latent)."""
        return self._map_batches(lambda xb: self.net_.posterior(xb)[0], X)

    def reconstruct(self, X) -> np.ndarray:
        """Decoded posterior mean f(mu(x)) (the paper's VAE reconstruction, E[lambda]=1)."""
        return self._map_batches(lambda xb: self.net_.decode(self.net_.posterior(xb)[0]), X)

    def decode(self, Z) -> np.ndarray:
        """f(z) for latent vectors Z (n, n_latent)."""
        self._check_fitted()
        Z = torch.as_tensor(np.asarray(Z, dtype=np.float32), device=self.device_)
        with torch.no_grad():
            return self.net_.decode(Z).cpu().numpy()

    def mse(self, X) -> float:
        """Table 1's MSE: mean over images of ||x - f(mu(x))||^2 (sum over pixels)."""
        from bpetopics.images.metrics import reconstruction_mse

        return reconstruction_mse(X, self.reconstruct(X))

    def negative_elbo(self, X, n_samples=1) -> float:
        """Mean over images of -ELBO at the fitted ``obs_var_``, averaging the
        reconstruction term over ``n_samples`` draws (seeded from random_state)."""
        gen = self._eval_generator()

        def per_image(xb):
            mu, logvar = self.net_.posterior(xb)
            total = gaussian_kl_standard(mu, logvar)
            chunk = max(1, 16384 // xb.shape[0])  # samples decoded together
            for s0 in range(0, n_samples, chunk):
                c = min(chunk, n_samples - s0)
                eps = torch.randn((c, *mu.shape), device=xb.device, generator=gen)
                mean = self.net_.decode(mu + torch.exp(0.5 * logvar) * eps)
                loglik = gaussian_log_likelihood(xb, mean, self.obs_var_)  # (c, B)
                total = total - loglik.sum(0) / n_samples
            return total

        return float(np.mean(self._map_batches(per_image, X)))
