"""Gumbel-Softmax VAE baseline (Jang, Gu & Poole 2017) for BernBPE's Table 1 row.

Model, per binary image x in {0,1}^D, with N categorical latents of K classes each
(N = 30, K = 10 by default: a 300-dimensional one-hot-per-block code y):

    p(y) = prod_i Uniform(K),   p(x | y) = Bernoulli(sigmoid(f(y))),
    q(y_i | x) = Categorical(softmax(logits_i(x)))

- Encoder: MLP D-512-256 (ReLU), then a linear layer to the N x K logits.
- Decoder f: the mirror N*K-256-512-D (ReLU), linear output = Bernoulli logits.
- Training loss (the relaxed negative ELBO, as in Jang et al.'s code):
  -ln p(x | y~) + KL(q(y|x) || Uniform), where y~ = softmax((logits + g) / tau),
  g ~ Gumbel(0, 1), and KL = sum_i sum_k q_ik ln(q_ik K).
  ``hard=True`` uses the straight-through one-hot sample instead.
- Temperature: tau = max(min_tau, tau0 * exp(-anneal_rate * t)), recomputed every
  ``anneal_every`` steps t, and the learning rate multiplied by ``lr_factor`` at the same
  moments. Defaults follow Jang et al.'s released notebook (tau0 = 1, rate 3e-5, every
  1000 steps, floor 0.5, lr x 0.9); their paper lists r in {1e-5, 1e-4}, N in {500, 1000}.

Two different numbers are reported, never to be mixed up:
- ``reconstruction_nll(X)``: Table 1's NLL, mean over images of -ln p(x | z) at a single
  code z (the posterior argmax one-hot code by default; ``code='mean'`` decodes the
  posterior probabilities). Comparable to BernBPE's -ln p(x | z_n).
- ``negative_elbo(X)``: -[E_q ln p(x | y) - KL(q || p)] with *discrete* samples y ~ q
  (not the relaxed ones), an upper bound on -ln p(x). Always larger than an NLL at a code.

Sparsity is the Hoyer measure of the posterior means: the 300-dim concatenated softmax
probabilities (``encode``).
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from bpetopics.baselines.vae_base import BaseVAE, mlp

__all__ = ["GumbelSoftmaxVAE", "categorical_kl_uniform", "bernoulli_log_likelihood",
           "gumbel_softmax_sample", "gumbel_temperature"]


def categorical_kl_uniform(logits):
    """KL(Categorical(softmax(logits)) || Uniform(K)) summed over the N variables.

    logits: (..., N, K). KL = sum_i sum_k q_ik (ln q_ik + ln K), computed with
    log_softmax (exact where q_ik underflows, unlike ln(q + 1e-20))."""
    log_q = F.log_softmax(logits, dim=-1)
    return (log_q.exp() * (log_q + math.log(logits.shape[-1]))).sum((-2, -1))


def bernoulli_log_likelihood(x, logits):
    """ln Bernoulli(x | sigmoid(logits)) summed over the last axis (stable):
    sum_d x_d l_d - softplus(l_d)."""
    return -F.binary_cross_entropy_with_logits(logits, x, reduction="none").sum(-1)


def gumbel_softmax_sample(logits, tau, noise=None, *, hard=False, generator=None):
    """softmax((logits + g) / tau) over the last axis, g ~ Gumbel(0, 1) (or ``noise``).

    ``hard``: the one-hot argmax in the forward pass with the relaxed sample's gradient
    (straight-through)."""
    if noise is None:
        u = torch.rand(logits.shape, device=logits.device, generator=generator)
        noise = -torch.log(-torch.log(u.clamp_min(1e-20)))
    y = F.softmax((logits + noise) / tau, dim=-1)
    if hard:
        y_hard = F.one_hot(y.argmax(-1), logits.shape[-1]).to(y.dtype)
        y = y_hard - y.detach() + y
    return y


def gumbel_temperature(step, tau0=1.0, anneal_rate=3e-5, anneal_every=1000, min_tau=0.5):
    """Temperature at training step ``step`` (0-based), piecewise constant: updated to
    max(min_tau, tau0 exp(-anneal_rate t)) at t = anneal_every, 2 anneal_every, ..."""
    t = (int(step) // int(anneal_every)) * int(anneal_every)
    return max(float(min_tau), float(tau0) * math.exp(-float(anneal_rate) * t))


class GumbelSoftmaxVAENet(nn.Module):
    def __init__(self, n_features, n_variables, n_categories, encoder_hidden,
                 decoder_hidden, activation):
        super().__init__()
        self.n_variables, self.n_categories = n_variables, n_categories
        code = n_variables * n_categories
        self.encoder = mlp([n_features, *encoder_hidden, code], activation)
        self.decoder = mlp([code, *decoder_hidden, n_features], activation)

    def logits(self, x):
        """Posterior logits, shape (B, N, K)."""
        return self.encoder(x).view(-1, self.n_variables, self.n_categories)

    def decode(self, y):
        """Bernoulli logits of p(x | y) for codes y (B, N*K) or (B, N, K)."""
        return self.decoder(y.reshape(y.shape[0], -1))

    def elbo_terms(self, x, tau, noise=None, *, hard=False, generator=None):
        """Per-row (ln p(x | y~), KL(q || Uniform)) at a Gumbel-softmax sample y~."""
        logits = self.logits(x)
        y = gumbel_softmax_sample(logits, tau, noise, hard=hard, generator=generator)
        return bernoulli_log_likelihood(x, self.decode(y)), categorical_kl_uniform(logits)


class GumbelSoftmaxVAE(BaseVAE):
    """Gumbel-Softmax VAE, scikit-learn style (fit it on binarised images).

    Parameters
    ----------
    n_variables, n_categories : N categorical latents of K classes (30, 10).
    encoder_hidden, decoder_hidden, activation : MLPs ((512, 256), (256, 512), 'relu').
    tau0, anneal_rate, anneal_every, min_tau : temperature schedule (module docstring).
    lr_factor : learning-rate factor applied every ``anneal_every`` steps (0.9; 1 = off).
    hard : straight-through Gumbel-softmax during training (False, as in the paper's VAE).
    epochs, batch_size, lr : Adam training (lr 1e-3, batches of 100).
    random_state, device ('auto' | 'cpu' | 'cuda'), progress : as in GaussianVAE.

    Fitted attributes: ``net_``, ``tau_`` (final temperature), ``history_`` (per epoch:
    loss = relaxed negative ELBO per image, reconstruction = -ln p(x | y~), kl, tau, lr,
    seconds), ``device_``, ``n_features_in_``, ``n_steps_``, ``epoch_``, ``optimizer_``.
    A ``callback`` attribute, when set, is called as ``callback(model, record)`` after every
    epoch; ``state_dict``/``training_state``/``load_state``/``continue_fit`` (in
    :class:`~bpetopics.baselines.vae_base.BaseVAE`) save, resume and load it as an image run.
    """

    def __init__(self, n_variables=30, n_categories=10, *, encoder_hidden=(512, 256),
                 decoder_hidden=(256, 512), activation="relu", tau0=1.0, anneal_rate=3e-5,
                 anneal_every=1000, min_tau=0.5, lr_factor=0.9, hard=False, epochs=10,
                 batch_size=100, lr=1e-3, random_state=None, device="auto",
                 progress=True):
        self.n_variables = n_variables
        self.n_categories = n_categories
        self.encoder_hidden = encoder_hidden
        self.decoder_hidden = decoder_hidden
        self.activation = activation
        self.tau0 = tau0
        self.anneal_rate = anneal_rate
        self.anneal_every = anneal_every
        self.min_tau = min_tau
        self.lr_factor = lr_factor
        self.hard = hard
        self.epochs = epochs
        self.batch_size = batch_size
        self.lr = lr
        self.random_state = random_state
        self.device = device
        self.progress = progress

    _fitted_scalars = ("tau_",)

    _size_names = ("n_variables", "n_categories", "encoder_hidden", "decoder_hidden")

    # ------------------------------------------------------------------ fitting
    def _build(self, n_features):
        self.tau_ = float(self.tau0)
        return GumbelSoftmaxVAENet(n_features, self.n_variables, self.n_categories,
                                   tuple(self.encoder_hidden), tuple(self.decoder_hidden),
                                   self.activation)

    def temperature(self, step) -> float:
        """tau at training step ``step`` under this model's schedule."""
        return gumbel_temperature(step, self.tau0, self.anneal_rate, self.anneal_every,
                                  self.min_tau)

    def _on_step(self, step, optimizer):
        self.tau_ = self.temperature(step)
        if step > 0 and step % int(self.anneal_every) == 0:
            for group in optimizer.param_groups:
                group["lr"] *= self.lr_factor

    def _batch_loss(self, xb, step):
        loglik, kl = self.net_.elbo_terms(xb, self.tau_, hard=self.hard,
                                          generator=self._generator)
        return (kl - loglik).mean(), {"loss": kl - loglik, "reconstruction": -loglik,
                                      "kl": kl}

    def _epoch_extras(self, step, optimizer):
        return {"tau": self.tau_, "lr": optimizer.param_groups[0]["lr"]}

    # ---------------------------------------------------------------- inference
    def _code(self, xb, code):
        logits = self.net_.logits(xb)
        if code == "mean":
            return F.softmax(logits, dim=-1).flatten(1)
        if code == "argmax":
            return F.one_hot(logits.argmax(-1), self.n_categories).to(xb.dtype).flatten(1)
        raise ValueError(f"code must be 'mean' or 'argmax', got {code!r}")

    def encode(self, X, code="mean") -> np.ndarray:
        """Codes (n, N*K): posterior probabilities ('mean', the default, used for the
        paper's sparsity) or the one-hot posterior argmax ('argmax')."""
        return self._map_batches(lambda xb: self._code(xb, code), X)

    def reconstruct(self, X, code="argmax") -> np.ndarray:
        """Bernoulli means sigmoid(f(z)) at the posterior argmax code (or 'mean')."""
        return self._map_batches(lambda xb: torch.sigmoid(self.net_.decode(self._code(xb, code))),
                                 X)

    def reconstruction_nll(self, X, code="argmax") -> float:
        """Table 1's NLL: mean over images of -ln p(x | z) at one code per image
        (posterior argmax by default, or 'mean'). Not an ELBO."""
        per = self._map_batches(
            lambda xb: -bernoulli_log_likelihood(xb, self.net_.decode(self._code(xb, code))), X)
        return float(np.mean(per))

    def negative_elbo(self, X, n_samples=1) -> float:
        """Mean over images of -ELBO with discrete samples y ~ q(y | x) (seeded):
        -(1/S) sum_s ln p(x | y_s) + KL(q || Uniform)."""
        gen = self._eval_generator()

        def per_image(xb):
            logits = self.net_.logits(xb)  # (B, N, K)
            total = categorical_kl_uniform(logits)
            probs = F.softmax(logits, dim=-1).reshape(-1, self.n_categories)
            chunk = max(1, 16384 // xb.shape[0])  # samples decoded together
            for s0 in range(0, n_samples, chunk):
                c = min(chunk, n_samples - s0)
                idx = torch.multinomial(probs, c, replacement=True, generator=gen)
                idx = idx.T.reshape(c * xb.shape[0], self.n_variables)  # sample-major
                y = F.one_hot(idx, self.n_categories).to(xb.dtype)
                loglik = bernoulli_log_likelihood(xb.repeat(c, 1), self.net_.decode(y))
                total = total - loglik.view(c, -1).sum(0) / n_samples
            return total

        return float(np.mean(self._map_batches(per_image, X)))
