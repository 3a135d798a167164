"""GaussBPE and BernBPE: the image variants of the shared estimator."""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
import torch
import torch.nn.functional as F
from sklearn.base import BaseEstimator, TransformerMixin

from bpetopics.bpe import params as P
from bpetopics.bpe.adam import Adam
from bpetopics.bpe.model import BPEBase
from bpetopics.models.images.likelihoods import BernoulliLikelihood, GaussianLikelihood


class _ImageBPE(BPEBase, TransformerMixin, BaseEstimator):
    """What GaussBPE and BernBPE share: dense float32 images checked against the model's
    range, the prior's default gamma, and a decaying learning rate."""

    _parameter_rules = {**BPEBase._parameter_rules, "lr_decay": P.BOOL, "prototype_init": P.BOOL,
                        "shortlist": P.POSITIVE_INT_OR_NONE, "exact_stop": P.BOOL,
                        "fast_stop_epochs": P.Rule("int", low=0, none=True)}

    #: ``gamma=None``: the prior's mean number of active bits an image, when K allows it.
    DEFAULT_GAMMA = 10.0

    @classmethod
    def default_gamma(cls, n_bits: int) -> float:
        """The gamma ``gamma=None`` gives codes of ``n_bits`` bits: :attr:`DEFAULT_GAMMA`
        (10 active bits an image under the prior), or K / 4 when K is not above it (gamma
        must lie below K; PoissBPE's default mean of 1/4)."""
        return cls.DEFAULT_GAMMA if n_bits > cls.DEFAULT_GAMMA else n_bits / 4

    def prior_hyperparameters(self, n_data=None) -> tuple[float, float]:
        """(alpha, gamma) with the defaults resolved; ``gamma=None`` is :meth:`default_gamma`."""
        alpha, gamma = super().prior_hyperparameters(n_data)
        return alpha, self.default_gamma(self.code_length()) if self.gamma is None else gamma

    def fit_transform(self, X, y=None):
        """``fit(X)``, then the codes of X (the same as ``transform(X)``): (N, K) uint8."""
        return self.fit(X).codes_

    def _check_X(self, X):
        """X as a float32 (N, D) array; ValueError (one line) unless it is a 2-D matrix of
        finite numbers in the model's range (:meth:`_check_range`)."""
        X = np.asarray(X.toarray() if sp.issparse(X) else X)
        if X.ndim != 2:
            raise ValueError(f"X must be a 2-D matrix of images as rows (N, D); got shape {X.shape}")
        if not (np.issubdtype(X.dtype, np.integer) or np.issubdtype(X.dtype, np.floating) or X.dtype == np.bool_):
            raise ValueError(f"X holds {X.dtype} values; images are rows of real pixel values")
        X = X.astype(np.float32, copy=False)
        if X.size and not np.isfinite(X).all():
            raise ValueError("X holds NaN or infinite values (or values beyond float32's range): "
                             "replace or drop those images")
        if X.size:
            self._check_range(X)
        return X

    def _check_range(self, X) -> None:
        """Refuse data outside the range the likelihood models (ValueError naming the fix)."""

    def _pursuit_options(self, training: bool = False) -> dict:
        """``shortlist``: each pursuit step after the first scores exactly only this many
        bits an image, ranked by a first-order estimate of their gain, and ``exact_stop``:
        an image whose shortlist gains nothing scores the next-ranked bits in doubling lists,
        then one exact step, before it stops (:mod:`bpetopics.models.images.shortlist_pursuit`); the
        training epochs before ``fast_stop_epochs`` (None: all) stop it at once (a cheaper warm-up);
        ``shortlist=None`` scores all K bits (the exact greedy pursuit)."""
        if self.shortlist is None:
            return {}
        warm_up = training and (self.fast_stop_epochs is None or self.epoch_ < self.fast_stop_epochs)
        return {"shortlist": self.shortlist, "exact_stop": self.exact_stop and not warm_up}

    def _learning_rate(self):
        """lr / sqrt(1 + e) for epoch e (from 0) when ``lr_decay``, else lr (with a
        constant rate the held-out NLL of BernBPE drifted up after a few epochs while the
        training objective kept falling; docs/defaults.md has the figures)."""
        return self.lr / np.sqrt(1.0 + self.epoch_) if self.lr_decay else self.lr


class GaussBPE(_ImageBPE):
    """Gaussian BPE for real-valued data (images): x_n ~ N(lambda_n f(z_n), sigma^2 I).

    lambda_n ~ N(0, c) is marginalised in the pursuit and has a Gaussian posterior in
    the theta step; the decoder's last layer is a sigmoid.

    Parameters (beyond the shared ones)
    -----------------------------------
    sigma : float
        Noise standard deviation. It sets the price of detail: a bit is switched on when
        it lowers the squared error (at the best scale) by more than about
        2 sigma^2 |psi(a_k) - psi(b_k)|, so a larger sigma gives sparser codes (docs/defaults.md
        has the trade-off measured on MNIST).
    c : float
        Prior variance of the scale lambda_n. With ``sigma`` it sets the data's range:
        ``fit`` and ``transform`` refuse values beyond 5 (sqrt(c) + sigma) in absolute
        value (8-bit pixels: divide them by 255).
    gamma : float or None
        Beta-process mass: the prior's mean number of active bits an image. None (the
        default): 10, or K / 4 for codes of at most 10 bits (it must lie below K;
        :meth:`default_gamma`).
    prototype_init : bool
        Start the decoder from prototypes: the empty code decodes to the mean of
        |x_n| / max|x_n| and bit k alone to one random training image (see
        ``_prototype_init``). On by default; without it the codes do not form.
    lr_decay : bool
        Adam's learning rate in epoch e (from 0) is lr / sqrt(1 + e) (see
        ``_ImageBPE._learning_rate``); False keeps it constant.
    shortlist : int or None
        Each pursuit step after the first scores exactly only this many bits an image,
        ranked by a first-order estimate of their gain (:mod:`bpetopics.models.images.shortlist_pursuit`):
        codes that are no longer exactly the greedy pursuit's. The default, 32 with
        ``exact_stop``, trains faster than scoring every bit (None, the exact greedy
        pursuit) and reached a lower test error on Table 1's small budget (docs/results/images.md,
        has the figures).
    exact_stop : bool
        With a shortlist, an image whose shortlisted bits gain nothing scores the
        next-ranked bits in doubling lists and then the exact step over the bits left
        before it stops (True, the default: it stops where the exact pursuit would); False
        stops it at once (fewer bits, faster, a higher error).
    fast_stop_epochs : int or None
        The first this-many training epochs stop an image at once (as ``exact_stop=False``):
        a cheaper warm-up; the later epochs and encoding follow ``exact_stop``. None: every
        training epoch, the encodings alone take the exact stop (docs/defaults.md has the cost and the error measured).
    """

    _parameter_rules = {**_ImageBPE._parameter_rules, "sigma": P.POSITIVE, "c": P.POSITIVE}

    #: The data's absolute values may reach this many prior standard deviations of the
    #: scale, sqrt(c), plus as many noise deviations, sigma (:meth:`_check_range`).
    RANGE_DEVIATIONS = 5.0

    def __init__(self, n_bits=200, *, hidden=(256, 512), activation="relu", sigma=0.3, c=1.0,
                 alpha=1.0, gamma=None, tau=1.0, kappa=0.7, epochs=20, batch_size=128,
                 lr=1e-3, lr_decay=True, max_bits=None, flat_start=True,
                 prior_ramp_epochs=1.0, prototype_init=True, shortlist=32, exact_stop=True,
                 fast_stop_epochs=0, random_state=0, device="auto", progress=True, callback=None):
        super().__init__(n_bits=n_bits, hidden=hidden, activation=activation, alpha=alpha,
                         gamma=gamma, tau=tau, kappa=kappa, epochs=epochs,
                         batch_size=batch_size, lr=lr, max_bits=max_bits,
                         flat_start=flat_start, prior_ramp_epochs=prior_ramp_epochs,
                         random_state=random_state, device=device, progress=progress,
                         callback=callback)
        self.sigma = sigma
        self.c = c
        self.prototype_init = prototype_init
        self.lr_decay = lr_decay
        self.shortlist = shortlist
        self.exact_stop = exact_stop
        self.fast_stop_epochs = fast_stop_epochs


    def _make_likelihood(self, shape):
        return GaussianLikelihood(self.sigma, self.c)

    def _check_range(self, X) -> None:
        """An image is a scale lambda ~ N(0, c) times a decoded image in [0, 1], plus noise
        sigma: pixels in [0, 1] (or scaled, as scaled MNIST's [-s, s]), never 8-bit values.
        Refuse |x| beyond RANGE_DEVIATIONS (sqrt(c) + sigma), where sigma and c would be
        in the wrong units and the codes meaningless."""
        try:
            limit = self.RANGE_DEVIATIONS * (math.sqrt(float(self.c)) + float(self.sigma))
        except (TypeError, ValueError):
            return                      # the parameters' own check names them
        largest = float(np.abs(X).max())
        if largest > limit:
            raise ValueError(f"X holds values up to {largest:.4g} in absolute value, beyond the {limit:.3g} GaussBPE "
                             f"models with c={self.c} and sigma={self.sigma} (images in [0, 1] times a scale "
                             "lambda ~ N(0, c)): divide 8-bit pixels by 255, or raise c to the data's squared scale")

    def _init_params(self, X, generator):
        if self.prototype_init:
            # lambda_n carries sign and intensity, so f only has to match the shape
            A = np.abs(X)
            _prototype_init(self, A / np.maximum(A.max(1, keepdims=True), 1e-12), generator)

    def scale_posterior(self, X, codes=None):
        """q(lambda_n) = N(mu_n, s_n^2) at the pursued codes: (mu, s2), each (N,)."""
        X = self._check_X(X)
        codes = self.transform(X) if codes is None else codes
        f = torch.as_tensor(self.decode(codes))
        mu, s2 = self.likelihood_.scale_posterior(f, torch.as_tensor(X))
        return mu.numpy(), s2.numpy()

    def reconstruct(self, X):
        """E[lambda_n] f(z_n), shape (N, D)."""
        X = self._check_X(X)
        codes = self.transform(X)
        mu, _ = self.scale_posterior(X, codes)
        return mu[:, None] * self.decode(codes)


class BernBPE(_ImageBPE):
    """Bernoulli BPE for binary data: x_n ~ Bernoulli(f(z_n)), no local scale. Pixels lie in
    [0, 1] (binary, or grey values as probabilities; others are refused); ``gamma=None``
    is 10, or K / 4 for codes of at most 10 bits, as in GaussBPE.

    ``prototype_init`` (on by default) starts the decoder with the empty code decoding to
    the mean image and bit k alone to one random training image, ``lr_decay`` (on by
    default) divides Adam's learning rate by sqrt(1 + epoch), and ``shortlist``,
    ``exact_stop`` and ``fast_stop_epochs`` choose the pursuit, as in GaussBPE.
    """

    def __init__(self, n_bits=200, *, hidden=(256, 512), activation="relu", alpha=1.0,
                 gamma=None, tau=1.0, kappa=0.7, epochs=20, batch_size=128, lr=1e-3,
                 lr_decay=True, max_bits=None, flat_start=True, prior_ramp_epochs=1.0,
                 prototype_init=True, shortlist=32, exact_stop=True, fast_stop_epochs=0,
                 random_state=0, device="auto", progress=True, callback=None):
        super().__init__(n_bits=n_bits, hidden=hidden, activation=activation, alpha=alpha,
                         gamma=gamma, tau=tau, kappa=kappa, epochs=epochs,
                         batch_size=batch_size, lr=lr, max_bits=max_bits,
                         flat_start=flat_start, prior_ramp_epochs=prior_ramp_epochs,
                         random_state=random_state, device=device, progress=progress,
                         callback=callback)
        self.prototype_init = prototype_init
        self.lr_decay = lr_decay
        self.shortlist = shortlist
        self.exact_stop = exact_stop
        self.fast_stop_epochs = fast_stop_epochs

    def _make_likelihood(self, shape):
        return BernoulliLikelihood()

    def _check_range(self, X) -> None:
        """A pixel is the probability of a Bernoulli draw, or the draw: refuse values
        outside [0, 1]."""
        low, high = float(X.min()), float(X.max())
        if low < 0 or high > 1:
            raise ValueError(f"X holds values in [{low:.4g}, {high:.4g}] but BernBPE models pixels in [0, 1] "
                             "(binary, or grey values as probabilities): divide 8-bit pixels by 255, or "
                             "binarise them (bpetopics.images.binarize)")

    def _init_params(self, X, generator):
        if self.prototype_init:
            _prototype_init(self, X, generator)

    def reconstruct(self, X):
        """f(z_n), the Bernoulli means, shape (N, D)."""
        return self.decode(self.transform(self._check_X(X)))


def _prototype_init(model, targets, generator, blend=0.5, steps=300, lr=3e-3) -> None:
    """Fit the decoder so that the empty code decodes to the mean target m and the code
    with only bit k on to its prototype (1 - blend) m + blend t_k, where t_k is the
    target of a random training point.

    The image analogue of PoissBPE's ``topic_init_docs``. From torch's random decoder
    every bit is a small random nudge, and the codes either all share the same few bits
    or collapse to the empty code; starting from prototypes, the first pursuit picks
    different bits for different images. Blending with the mean matters for Bernoulli
    data: a sharp prototype (blend 1) costs ~4 nats per mismatched pixel and loses to the
    empty code, so most codes stay empty.

    targets : np.ndarray (N, D) in [0, 1], what f(z) should approach (sigmoid link).
    """
    n_bits = model.n_bits
    n = targets.shape[0]
    picks = (torch.randperm(n, generator=generator)[:n_bits] if n >= n_bits
             else torch.randint(n, (n_bits,), generator=generator))
    mean = targets.mean(0, keepdims=True)
    rows = np.concatenate([mean, (1 - blend) * mean + blend * targets[picks.numpy()]])
    device = model.device_
    goal = torch.as_tensor(np.clip(rows, 0.02, 0.98), dtype=torch.float32, device=device)
    codes = torch.cat([torch.zeros(1, n_bits), torch.eye(n_bits)]).to(device)
    # torch.optim.Adam's default update bit for bit, without its first use's import of
    # torch._dynamo (about a CPU second and 70 MiB; core/adam.py)
    optimizer = Adam(model.decoder_.parameters(), lr=lr)
    optimizer.fused = False
    model.decoder_.train()
    for _ in range(steps):
        optimizer.zero_grad()
        loss = F.binary_cross_entropy_with_logits(model.decoder_(codes), goal)
        loss.backward()
        optimizer.step()
