"""The training loop and plumbing shared by the VAE baselines (torch).

An estimator in the scikit-learn style: ``__init__`` only stores its keyword
arguments (``get_params``/``clone`` come from ``BaseEstimator``); ``fit`` builds the
network, trains it with Adam on minibatches, and leaves fitted state in attributes
ending in ``_`` (``net_``, ``history_``, ``device_``, ``n_features_in_``, ``n_steps_``).

Determinism: with an int ``random_state`` the network's initial weights (drawn on the
CPU inside ``torch.random.fork_rng``, so the global torch RNG is left untouched), the
minibatch order (numpy) and the reparameterisation noise (a private
``torch.Generator``) are all seeded, so two fits on the same data and device agree.

Resuming: ``training_state()`` holds the optimiser, the counters, the history and both
random streams (the numpy order generator's state, the noise generator's state), so a
model rebuilt by ``load_state(state, n_data, n_features, training)`` and finished with
``continue_fit(X)`` equals one trained without a stop (``bpetopics images train --resume``).
"""

from __future__ import annotations

import time

import numpy as np
import torch
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import NotFittedError
from torch import nn
from tqdm.auto import tqdm

from bpetopics.bpe import sizes
from bpetopics.bpe.decoder import ACTIVATIONS
from bpetopics.bpe.device import resolve_device



def mlp(sizes, activation="relu", last_activation=False) -> nn.Sequential:
    """Linear layers ``sizes[0] -> ... -> sizes[-1]`` with ``activation`` between them
    (and after the last one only when ``last_activation``)."""
    act = ACTIVATIONS[activation]
    layers = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(nn.Linear(a, b))
        if i < len(sizes) - 2 or last_activation:
            layers.append(act())
    return nn.Sequential(*layers)


def check_array(X, n_features=None) -> np.ndarray:
    """A C-contiguous float32 2-d numpy array (torch tensors are accepted too)."""
    if isinstance(X, torch.Tensor):
        X = X.detach().cpu().numpy()
    X = np.ascontiguousarray(X, dtype=np.float32)
    if X.ndim != 2:
        raise ValueError(f"expected a 2-d array (n_samples, n_features), got shape {X.shape}")
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(f"X has {X.shape[1]} features, the model was fitted on {n_features}")
    if not np.isfinite(X).all():
        raise ValueError("X contains NaN or infinite values")
    return X


def _seed(random_state) -> int:
    if random_state is None:
        return int(np.random.SeedSequence().generate_state(1)[0])
    return int(random_state)


class BaseVAE(BaseEstimator):
    """Shared fit loop. Subclasses define ``_build(n_features) -> nn.Module``,
    ``_batch_loss(xb, step) -> (loss, {name: per-image tensor})`` and may override
    ``_on_step(step, optimizer)`` (schedules) and ``_end_fit()``."""

    eval_batch_size = 1024

    # ------------------------------------------------------------------ training
    def fit(self, X, y=None):
        """Train on X (n_samples, n_features) for ``epochs`` epochs; returns self."""
        X = check_array(X)
        self.check_sizes(*X.shape)
        self._setup(X.shape[1])
        self._n_data = X.shape[0]
        return self._train(X)

    def continue_fit(self, X):
        """Train the remaining ``epochs - epoch_`` epochs (after :meth:`load_state` with a
        checkpoint's training state): the same model as a fit never interrupted."""
        self._check_fitted()
        return self._train(check_array(X, self.n_features_in_))

    # ------------------------------------------------------------------ sizes
    #: The parameters that size the network, by name (those a memory refusal may name;
    #: ``batch_size`` too).
    _size_names: tuple = ()

    def check_sizes(self, n_data: int, n_features: int) -> None:
        """Refuse, before anything is allocated, sizes whose fit on ``n_data`` images of
        ``n_features`` pixels needs more memory than the device has free: raises
        :class:`~bpetopics.bpe.sizes.SizeError` (a ValueError, one line) naming the size
        parameter whose least value would save most (:meth:`fit_memory` has the estimate)."""
        size = {name: getattr(self, name) for name in (*self._size_names, "batch_size")}
        size = {k: tuple(int(h) for h in v) if isinstance(v, (tuple, list)) else int(v) for k, v in size.items()}
        sizes.check_fit_sizes(lambda values: self.fit_memory(n_data, n_features, values), size,
                              sizes.free_memory_bytes(resolve_device(self.device)))

    def fit_memory(self, n_data: int, n_features: int, size: dict | None = None) -> dict:
        """Bytes a fit needs, by part, and their ``"total"`` (float32, an order of
        magnitude as for the BPE models, :mod:`bpetopics.bpe.sizes`):

            network    4 P: the P weights, their gradients and Adam's two moments
            minibatch  4 B (D + sum of the layers' widths): a step's activations and
                       their gradients (B: the batch size, at most N)
            images     N D: the images copied to a CUDA device (0 on the CPU)

        P is counted on a network built on torch's "meta" device (no memory), with the
        parameters ``size`` (name -> value) in place of the model's own.
        """
        model = clone(self).set_params(**(size or {}))
        with torch.device("meta"):
            net = model._build(int(n_features))
        n_params = sum(p.numel() for p in net.parameters())
        widths = sum(m.out_features for m in net.modules() if isinstance(m, nn.Linear))
        on_cuda = resolve_device(self.device).type == "cuda"
        batch = min(int(model.batch_size), max(1, int(n_data)))       # a batch is at most the data
        parts = {"network": 4 * n_params * sizes.FLOAT_BYTES,
                 "minibatch": 4 * batch * (int(n_features) + widths) * sizes.FLOAT_BYTES,
                 "images": int(n_data) * int(n_features) * sizes.FLOAT_BYTES if on_cuda else 0}
        parts["total"] = sum(parts.values())
        return parts

    def _setup(self, n_features):
        """A fresh network, optimiser, generators and counters (``epoch_`` 0)."""
        seed = _seed(self.random_state)
        self.device_ = resolve_device(self.device)
        self.n_features_in_ = n_features
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            self.net_ = self._build(n_features).to(self.device_)
        self._generator = torch.Generator(device=self.device_).manual_seed(seed)
        self._order_rng = np.random.default_rng(seed)
        self.optimizer_ = torch.optim.Adam(self.net_.parameters(), lr=self.lr)
        self.history_, self.n_steps_, self.epoch_ = [], 0, 0

    def _train(self, X):
        """Epochs ``epoch_ + 1 .. epochs``; ``callback(self, record)`` after each."""
        optimizer = self.optimizer_
        Xt = torch.as_tensor(X, device=self.device_)
        n, bs = X.shape[0], int(self.batch_size)
        steps_per_epoch = -(-n // bs)
        step = self.n_steps_
        bar = tqdm(total=(self.epochs - self.epoch_) * steps_per_epoch, disable=not self.progress,
                   desc=type(self).__name__, unit="batch", leave=False)
        self.net_.train()
        try:
            for epoch in range(self.epoch_, self.epochs):
                t0, sums = time.perf_counter(), {}
                perm = torch.as_tensor(self._order_rng.permutation(n), device=self.device_)
                for start in range(0, n, bs):
                    xb = Xt[perm[start:start + bs]]
                    self._on_step(step, optimizer)
                    loss, stats = self._batch_loss(xb, step)
                    optimizer.zero_grad(set_to_none=True)
                    loss.backward()
                    optimizer.step()
                    for k, v in stats.items():
                        sums[k] = sums.get(k, 0.0) + v.detach().sum()
                    step += 1
                    bar.update(1)
                record = {"epoch": epoch + 1}
                record.update({k: float(v) / n for k, v in sums.items()})
                record.update(self._epoch_extras(step, optimizer))
                record["seconds"] = time.perf_counter() - t0
                self.history_.append(record)
                self.n_steps_, self.epoch_ = step, epoch + 1
                bar.set_postfix(loss=f"{record.get('loss', float('nan')):.2f}")
                if getattr(self, "callback", None) is not None:
                    self.net_.eval()
                    self.callback(self, record)
                    self.net_.train()
        finally:
            bar.close()
            self.net_.eval()
        self._end_fit()
        return self

    # ------------------------------------------------------------------ saving state
    #: Fitted floats besides the network, saved as 0-d tensors ``fitted.<name>``.
    _fitted_scalars: tuple = ()

    @property
    def n_data_(self) -> int:
        """The number of training images (recorded by fit)."""
        return int(getattr(self, "_n_data", 0))

    @property
    def n_features_(self) -> int:
        return int(self.n_features_in_)

    def config_params(self) -> dict:
        """The hyperparameters as a run's config.json records them (JSON-safe, tuples as
        lists), in ``__init__``'s order."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self.get_params(deep=False).items()}

    def state_dict(self) -> dict:
        """Every fitted tensor, flat: ``net.*`` and ``fitted.<scalar>`` (0-d float64)."""
        self._check_fitted()
        state = {f"net.{k}": v.detach().cpu() for k, v in self.net_.state_dict().items()}
        state.update({f"fitted.{name}": torch.tensor(float(getattr(self, name)), dtype=torch.float64)
                      for name in self._fitted_scalars if hasattr(self, name)})
        return state

    def training_state(self) -> dict:
        """What a checkpoint needs beyond ``state_dict``: the optimiser, counters,
        history and both random streams (minibatch order and noise)."""
        return {"optimizer": self.optimizer_.state_dict(), "epoch": self.epoch_, "step": self.n_steps_,
                "history": list(self.history_), "noise": self._generator.get_state(),
                "order": self._order_rng.bit_generator.state}

    def load_state(self, state: dict, n_data: int, n_features: int, training=None):
        """Rebuild the fitted model from ``state_dict()`` output (and a checkpoint's
        ``training_state()``); ValueError when the tensors do not fit the params."""
        self._setup(int(n_features))
        self._n_data = int(n_data)
        net = {k[4:]: v for k, v in state.items() if k.startswith("net.")}
        try:
            self.net_.load_state_dict(net)
        except RuntimeError as err:
            line = (str(err).strip().splitlines() or ["RuntimeError"])[0]
            raise ValueError(f"saved weights do not match the model's parameters: {line}") from None
        for name in self._fitted_scalars:
            if f"fitted.{name}" in state:
                setattr(self, name, float(state[f"fitted.{name}"]))
        training = training or {}
        if "optimizer" in training:
            self.optimizer_.load_state_dict(training["optimizer"])
        if "noise" in training:
            self._generator.set_state(training["noise"])
        if "order" in training:
            self._order_rng.bit_generator.state = training["order"]
        self.epoch_ = int(training.get("epoch", self.epochs))
        self.n_steps_ = int(training.get("step", 0))
        self.history_ = list(training.get("history", []))
        self.net_.eval()
        return self

    def _on_step(self, step, optimizer):
        pass

    def _epoch_extras(self, step, optimizer) -> dict:
        return {}

    def _end_fit(self):
        pass

    # ---------------------------------------------------------------- inference
    def _check_fitted(self):
        if not hasattr(self, "net_"):
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet; call fit")

    def _eval_generator(self) -> torch.Generator:
        """A generator for evaluation noise, seeded from random_state (fresh if None),
        so repeated evaluations with an int seed agree."""
        return torch.Generator(device=self.device_).manual_seed(_seed(self.random_state) + 1)

    @torch.no_grad()
    def _map_batches(self, fn, X) -> np.ndarray:
        """Apply ``fn(tensor batch) -> tensor`` to X in chunks; concatenated numpy."""
        self._check_fitted()
        X = check_array(X, self.n_features_in_)
        out = []
        for start in range(0, X.shape[0], self.eval_batch_size):
            xb = torch.as_tensor(X[start:start + self.eval_batch_size], device=self.device_)
            out.append(fn(xb).detach().cpu().numpy())
        return np.concatenate(out) if out else np.zeros((0,), dtype=np.float32)

    def sparsity(self, X) -> float:
        """Mean Hoyer sparsity of ``encode(X)`` (the paper's code sparsity)."""
        from bpetopics.images.metrics import mean_hoyer

        return mean_hoyer(self.encode(X))
