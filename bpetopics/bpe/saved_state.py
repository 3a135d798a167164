"""What a saved BPE model holds, and how a model is rebuilt from it.

``state_dict()`` is every fitted tensor, flat (``decoder.*``, ``likelihood.*``,
``prior.*``), which runs write as safetensors; ``training_state()`` is what a checkpoint
needs beyond it (Adam's state, the counters, the history); ``load_state`` rebuilds a
fitted model from both. A mixin of :class:`bpetopics.bpe.model.BPEBase`, which provides
``_build``, ``_parameters``, ``prior_hyperparameters`` and the fitted attributes.
"""

from __future__ import annotations

import torch

__all__ = ["SavedState", "non_finite_weight"]


def non_finite_weight(state: dict):
    """The name of the first floating-point tensor of ``state`` holding a NaN or an
    infinity (weights of a training that diverged, or a damaged file), or None."""
    for name, tensor in state.items():
        if torch.is_tensor(tensor) and tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
            return name
    return None


class SavedState:
    """Saving and restoring a BPE model's fitted state (see the module docstring)."""

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
        ``training_state()``); raises ValueError when the tensors do not fit the params
        or hold a NaN or an infinity (such a model would encode every input to NaN)."""
        bad = non_finite_weight(state)
        if bad is not None:
            raise ValueError(f"saved weights are not finite: {bad} holds NaN or infinite values")
        self._build(n_data, n_features)
        try:
            self.decoder_.load_state_dict(_strip(state, "decoder."))
            self.likelihood_.load_state_dict(_strip(state, "likelihood."))
        except RuntimeError as err:
            raise ValueError(f"saved weights do not match the model's parameters: "
                             f"{_load_error_line(err)}") from None
        self.prior_.load_state_dict(_strip(state, "prior."))   # prior_, optimizer_: fresh from _build
        training = training or {}
        if "optimizer" in training:
            self.optimizer_.load_state_dict(training["optimizer"])
        self.epoch_ = int(training.get("epoch", self.total_epochs()))
        self.step_ = int(training.get("step", self.epoch_ * self._steps_per_epoch()))
        self.history_ = list(training.get("history", []))
        return self


def _load_error_line(err: RuntimeError) -> str:
    """The useful line of torch's ``load_state_dict`` error: its first detail (e.g. "size
    mismatch for first.weight: copying a param with shape ... the shape in current model
    is ..."), not the header "Error(s) in loading state_dict for CodeDecoder:"."""
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    details = lines[1:] or lines or [type(err).__name__]
    more = f" (and {len(details) - 1} more)" if len(details) > 1 else ""
    return details[0].replace("torch.Size(", "(").rstrip(".") + more


def _strip(state: dict, prefix: str) -> dict:
    return {k[len(prefix):]: v for k, v in state.items() if k.startswith(prefix)}
