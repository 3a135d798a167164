"""The shared estimator: MAP-EM training of a BPE model by minibatches.

One training step on a minibatch S (MODEL.md, "One training step")::

    1. z_S  <- greedy pursuit with the current theta and q(pi)
    2. q(pi) <- natural-gradient step from z_S
    3. q(lambda) for S (inside the likelihood's theta loss; Poisson's is fixed)
    4. one Adam step on theta (decoder, and beta for text) at the codes z_S

The variants (PoissBPE, GaussBPE, BernBPE in :mod:`bpetopics.models`) only choose a
likelihood, its defaults and how parameters start.
"""

from __future__ import annotations

import time

import numpy as np
import torch
from tqdm.auto import tqdm

from bpetopics.core.decoder import CodeDecoder
from bpetopics.core.prior import BetaProcessPrior
from bpetopics.core.pursuit import greedy_pursuit


def resolve_device(device) -> torch.device:
    """'auto' -> CUDA when present, else CPU; 'cuda' without CUDA is an error."""
    device = "auto" if device is None else str(device)
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError("device 'cuda' was asked for but CUDA is not available; use --device cpu")
    if device != "cpu" and not device.startswith("cuda"):
        raise ValueError(f"unknown device {device!r}; use 'cpu', 'cuda' or 'auto'")
    return torch.device(device)


class BPEBase:
    """Beta-Bernoulli-process sparse coding with a deep decoder (shared machinery).

    Hyperparameters are stored unchanged by ``__init__`` (scikit-learn's contract);
    fitted state ends in ``_``. Subclasses implement ``_make_likelihood(shape)`` and may
    override ``_n_out(shape)`` and ``_init_params(X, generator)``.
    """

    def __init__(self, n_bits=64, hidden=(128,), activation="relu", alpha=1.0, gamma=2.0,
                 tau=1.0, kappa=0.7, epochs=20, batch_size=256, lr=1e-2, max_bits=None,
                 flat_start=True, prior_ramp_epochs=1.0, random_state=0, device="auto",
                 progress=True, callback=None):
        self.n_bits = n_bits
        self.hidden = hidden
        self.activation = activation
        self.alpha = alpha
        self.gamma = gamma
        self.tau = tau
        self.kappa = kappa
        self.epochs = epochs
        self.batch_size = batch_size
        self.lr = lr
        self.max_bits = max_bits
        self.flat_start = flat_start
        self.prior_ramp_epochs = prior_ramp_epochs
        self.random_state = random_state
        self.device = device
        self.progress = progress
        self.callback = callback

    # ------------------------------------------------------------------ subclass hooks
    def _make_likelihood(self, shape):
        """The likelihood module for data of ``shape`` (N, D)."""
        raise NotImplementedError

    def _n_out(self, shape) -> int:
        return shape[1]

    def _init_params(self, X, generator: torch.Generator) -> None:
        """Called once after the modules exist; default keeps torch's initialisation."""

    def _check_X(self, X):
        return X

    def _theta_penalty(self, out, params=None):
        """Negative log prior of theta added to the theta step's per-token loss (MAP),
        given the minibatch's decoder outputs ``out`` (P, n_out); the default, 0, is
        maximum likelihood."""
        return 0.0

    def _end_of_epoch(self, X) -> dict:
        """Called after each epoch's steps (state must depend only on the model and X, so
        that resumed runs stay identical); returns extra entries for ``history_``."""
        return {}

    # ---------------------------------------------------------------------- set-up
    def _validate_params(self):
        for name in ("n_bits", "epochs", "batch_size"):
            value = getattr(self, name)
            if not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{name} must be a positive integer; got {value!r}")
        if self.alpha is not None and self.alpha <= 0:
            raise ValueError(f"alpha must be positive (or None for N); got {self.alpha}")
        if self.lr <= 0:
            raise ValueError(f"lr must be positive; got {self.lr}")
        if self.max_bits is not None and self.max_bits < 1:
            raise ValueError(f"max_bits must be None or >= 1; got {self.max_bits}")

    def _setup(self, X):
        """Build decoder, likelihood, prior and optimiser (seeded) and initialise them."""
        self._build(X.shape[0], X.shape[1])
        generator = torch.Generator().manual_seed(int(self.random_state))
        self._init_params(X, generator)

    def _build(self, n_data, n_features):
        """Build the modules for data of this size, with torch's seeded initialisation."""
        self._validate_params()
        self.device_ = resolve_device(self.device)
        self.n_data_, self.n_features_ = int(n_data), int(n_features)
        shape = (0, self.n_features_)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(self.random_state))
            self.decoder_ = CodeDecoder(self.n_bits, self._n_out(shape), tuple(self.hidden),
                                        self.activation)
            self.likelihood_ = self._make_likelihood(shape)
        self.decoder_.to(self.device_)
        self.likelihood_.to(self.device_)
        self.prior_ = BetaProcessPrior(self.n_bits, self.n_data_, *self.prior_hyperparameters(),
                                       self.tau, self.kappa, self.flat_start, self.device_)
        self.optimizer_ = torch.optim.Adam(self._parameters(), lr=self.lr)
        self.history_ = []
        self.epoch_ = 0
        self.step_ = 0

    def prior_hyperparameters(self) -> tuple[float, float]:
        """(alpha, gamma) with the defaults resolved: ``alpha=None`` is N, the number of
        training points (the prior weighs as much as the data), ``gamma=None`` is K / 4
        (prior mean E[pi_k] = gamma / K = 1/4)."""
        alpha = float(self.n_data_) if self.alpha is None else float(self.alpha)
        gamma = self.n_bits / 4 if self.gamma is None else float(self.gamma)
        return alpha, gamma

    def _parameters(self):
        return list(self.decoder_.parameters()) + list(self.likelihood_.parameters())

    def _steps_per_epoch(self) -> int:
        return max(1, -(-self.n_data_ // self.batch_size))

    def prior_weight(self) -> float:
        """Weight of the prior's log-odds in the pursuit: ramps 0 -> 1 over the first
        ``prior_ramp_epochs`` epochs (1 throughout when it is 0)."""
        ramp = self.prior_ramp_epochs * self._steps_per_epoch()
        return 1.0 if ramp <= 0 else min(1.0, self.step_ / ramp)

    # ---------------------------------------------------------------------- training
    def fit(self, X, y=None):
        """Train from scratch for ``epochs`` epochs.

        Parameters
        ----------
        X : array-like, shape (N, D)
            Data (a CSR count matrix for text).

        Returns
        -------
        self
        """
        X = self._check_X(X)
        self._setup(X)
        self._train(X, self.epochs)
        self.codes_ = self.transform(X)
        return self

    def continue_fit(self, X):
        """Train the remaining ``epochs - epoch_`` epochs (after loading a checkpoint).

        The epoch order depends only on the seed and the epoch number, so a run resumed
        from the state saved after epoch e ends with the same model as one never stopped.
        """
        X = self._check_X(X)
        self._check_fitted()
        self._train(X, max(0, self.epochs - self.epoch_))
        self.codes_ = self.transform(X)
        return self

    def partial_fit(self, X, y=None):
        """One pass (one epoch) over X, building the model on the first call."""
        X = self._check_X(X)
        if not hasattr(self, "decoder_"):
            self._setup(X)
        self._train(X, 1)
        return self

    def _train(self, X, n_epochs):
        bar = tqdm(range(n_epochs), desc="epochs", unit="epoch", disable=not self.progress,
                   leave=False)
        for _ in bar:
            info = self._run_epoch(X)
            bar.set_postfix(objective=f"{info['objective']:.1f}",
                            bits=f"{info['active_bits']:.2f}")
            if self.callback is not None:
                self.callback(self, info)

    def _learning_rate(self) -> float:
        """Adam's learning rate for the epoch about to run (``epoch_`` done so far);
        constant ``lr`` unless a subclass decays it. A function of ``epoch_`` alone, so a
        resumed run continues the same schedule."""
        return self.lr

    def _run_epoch(self, X):
        """One shuffled pass of minibatch steps; appends to ``history_``."""
        start = time.perf_counter()
        for group in self.optimizer_.param_groups:
            group["lr"] = self._learning_rate()
        # The epoch's order depends only on the seed and the epoch number, so a run
        # resumed from a checkpoint takes the same minibatches as an uninterrupted one.
        gen = torch.Generator().manual_seed(int(self.random_state) * 1_000_003 + self.epoch_)
        order = torch.randperm(X.shape[0], generator=gen).numpy()
        shuffled = X[order]                 # one gather per epoch; minibatches are slices
        total_score, total_bits = 0.0, 0.0
        for begin in range(0, X.shape[0], self.batch_size):
            score, bits = self._train_step(shuffled[begin:begin + self.batch_size])
            total_score += score
            total_bits += bits
        self.epoch_ += 1
        info = {"epoch": self.epoch_, "objective": total_score / X.shape[0],
                "active_bits": total_bits / X.shape[0]}
        info.update(self._end_of_epoch(X))
        info["seconds"] = time.perf_counter() - start
        self.history_.append(info)
        return info

    def _train_step(self, X_batch):
        """Pursuit, q(pi) step, one Adam step. Returns (summed score, summed bits)."""
        batch = self.likelihood_.batch(X_batch, self.device_)
        weight = self.prior_weight()
        self.optimizer_.zero_grad()
        # What the pursuit and the theta step share (PoissBPE: beta, one softmax per
        # minibatch), computed once with autograd; the pursuit reads it detached.
        params = self.likelihood_.minibatch_params()
        self.decoder_.eval()
        codes, score = greedy_pursuit(self.decoder_, self.likelihood_, batch,
                                      weight * self.prior_.bit_log_odds(), self.max_bits,
                                      return_score=True, params=params)
        self.prior_.step(codes)
        self.decoder_.train()
        out = self.decoder_(codes.float())
        loss = (self.likelihood_.theta_loss(out, batch, params)
                + self._theta_penalty(out, params))
        loss.backward()
        self.optimizer_.step()
        self.step_ += 1
        return float(score.sum()), float(codes.sum())

    # ------------------------------------------------------------------ saving state
    def get_params(self) -> dict:
        """Hyperparameters as given to ``__init__`` (JSON-safe; callback left out)."""
        import inspect

        names = [p for p in inspect.signature(type(self).__init__).parameters
                 if p not in ("self", "callback")]
        params = {name: getattr(self, name) for name in names}
        params["hidden"] = list(params["hidden"])
        return params

    def state_dict(self) -> dict:
        """Every fitted tensor, flat: ``decoder.*``, ``likelihood.*``, ``prior.*``."""
        self._check_fitted()
        state = {f"decoder.{k}": v.detach().cpu() for k, v in self.decoder_.state_dict().items()}
        state.update({f"likelihood.{k}": v.detach().cpu()
                      for k, v in self.likelihood_.state_dict().items()})
        state.update({f"prior.{k}": v for k, v in self.prior_.state_dict().items()})
        return state

    def training_state(self) -> dict:
        """What a checkpoint needs beyond ``state_dict``: optimiser, counters, history."""
        return {"optimizer": self.optimizer_.state_dict(), "epoch": self.epoch_,
                "step": self.step_, "history": list(self.history_)}

    def load_state(self, state: dict, n_data: int, n_features: int, training=None):
        """Rebuild the fitted model from ``state_dict()`` output (and a checkpoint's
        ``training_state()``); raises ValueError when the tensors do not fit the params."""
        self._build(n_data, n_features)
        try:
            self.decoder_.load_state_dict(_strip(state, "decoder."))
            self.likelihood_.load_state_dict(_strip(state, "likelihood."))
        except RuntimeError as err:
            raise ValueError(f"saved weights do not match the model's parameters: "
                             f"{str(err).splitlines()[0]}") from None
        self.prior_ = BetaProcessPrior(self.n_bits, self.n_data_, *self.prior_hyperparameters(),
                                       self.tau, self.kappa, self.flat_start, self.device_)
        self.prior_.load_state_dict(_strip(state, "prior."))
        self.optimizer_ = torch.optim.Adam(self._parameters(), lr=self.lr)
        training = training or {}
        if "optimizer" in training:
            self.optimizer_.load_state_dict(training["optimizer"])
        self.epoch_ = int(training.get("epoch", self.epochs))
        self.step_ = int(training.get("step", self.epoch_ * self._steps_per_epoch()))
        self.history_ = list(training.get("history", []))
        return self

    # --------------------------------------------------------------------- inference
    def _check_fitted(self):
        if not hasattr(self, "decoder_"):
            raise RuntimeError(f"this {type(self).__name__} is not fitted yet; call fit(X) first")

    def transform(self, X, batch_size=1024):
        """Codes for new data with everything global frozen.

        Parameters
        ----------
        X : array-like, shape (N, D)

        Returns
        -------
        np.ndarray of uint8, shape (N, K)
        """
        codes, _ = self._encode(self._check_X(X), batch_size)
        return codes

    def score(self, X, y=None, batch_size=1024):
        """Mean per-point objective L(z) of the pursued codes (data term + prior term,
        up to the prior's code-independent constant)."""
        _, scores = self._encode(self._check_X(X), batch_size)
        return float(scores.mean())

    def _encode(self, X, batch_size):
        self._check_fitted()
        self.decoder_.eval()
        order = self.likelihood_.batch_order(X)
        codes = np.zeros((X.shape[0], self.n_bits), dtype=np.uint8)
        scores = np.zeros(X.shape[0])
        log_odds = self.prior_.bit_log_odds()
        for begin in range(0, X.shape[0], batch_size):
            rows = order[begin:begin + batch_size]
            batch = self.likelihood_.batch(X[rows], self.device_)
            z, s = greedy_pursuit(self.decoder_, self.likelihood_, batch, log_odds,
                                  self.max_bits, return_score=True)
            codes[rows] = z.cpu().numpy()
            scores[rows] = s.cpu().numpy()
        return codes, scores

    def decode(self, codes) -> np.ndarray:
        """Likelihood parameters f(z) for codes (N, K) -> (N, D_out)."""
        self._check_fitted()
        with torch.no_grad():
            z = torch.as_tensor(np.asarray(codes), dtype=torch.float32, device=self.device_)
            return self.likelihood_.link(self.decoder_(z)).cpu().numpy()


def _strip(state: dict, prefix: str) -> dict:
    return {k[len(prefix):]: v for k, v in state.items() if k.startswith(prefix)}
