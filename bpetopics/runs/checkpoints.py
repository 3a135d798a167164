"""Checkpoints of a training run: one safetensors file, never pickle.

The tensors (``state_dict()`` and the optimiser's) go into the file; everything else
(``training_state()``'s counters and history, the parameters, the caller's ``extra``)
into its metadata as JSON, with tensors replaced by references. Loading rebuilds the
model through the same path as :func:`bpetopics.runs.load_run`, so nothing is executed.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import save as safetensors_bytes

from bpetopics.files import canonical_safetensors, write_bytes_atomic
from bpetopics.runs.run import RunError, damage_is_run_error, first_line
from bpetopics.runs.saved_model import build_model, load_tensors

CHECKPOINT_FORMAT = "bpetopics.checkpoint"
CHECKPOINT_VERSION = 3      # 2: Adam's state of PoissBPE's topic logits is (T, W); 3: diversity prior capped above T = 20


def _flatten(obj, tensors: dict):
    """A JSON-safe tree with tensors replaced by {"__tensor__": key} (stored in ``tensors``)."""
    if isinstance(obj, torch.Tensor):
        key = f"t{len(tensors)}"
        tensors[key] = obj.detach().cpu().contiguous().clone()
        return {"__tensor__": key}
    if isinstance(obj, dict):
        if all(isinstance(k, str) and not k.startswith("__") for k in obj):
            return {k: _flatten(v, tensors) for k, v in obj.items()}
        return {"__items__": [[_flatten(k, tensors), _flatten(v, tensors)] for k, v in obj.items()]}
    if isinstance(obj, tuple):
        return {"__tuple__": [_flatten(v, tensors) for v in obj]}
    if isinstance(obj, list):
        return [_flatten(v, tensors) for v in obj]
    if obj is None or isinstance(obj, (bool, int, float, str, np.generic)):
        return obj.item() if isinstance(obj, np.generic) else obj
    raise TypeError(f"cannot store a {type(obj).__name__} in a checkpoint")


def _unflatten(obj, tensors: dict):
    if isinstance(obj, list):
        return [_unflatten(v, tensors) for v in obj]
    if isinstance(obj, dict):
        if set(obj) == {"__tensor__"}:
            return tensors[obj["__tensor__"]]
        if set(obj) == {"__tuple__"}:
            return tuple(_unflatten(v, tensors) for v in obj["__tuple__"])
        if set(obj) == {"__items__"}:
            return {_unflatten(k, tensors): _unflatten(v, tensors) for k, v in obj["__items__"]}
        return {k: _unflatten(v, tensors) for k, v in obj.items()}
    return obj


def save_checkpoint(path, model, extra: dict | None = None) -> Path:
    """Write ``model``'s full training state to one safetensors file, atomically.

    Tensors (``state_dict()`` and the optimiser's) go into the file; the rest of
    ``training_state()``, the parameters and ``extra`` (JSON-safe) into its metadata.
    The metadata also records ``torch_threads``, torch's thread count: results on CPU
    are reproducible for the same thread count only.
    """
    path = Path(path)
    tensors: dict = {}
    tree = _flatten({"model": model.state_dict(), "training": model.training_state()}, tensors)
    meta = {"format": CHECKPOINT_FORMAT, "format_version": str(CHECKPOINT_VERSION),
            "model": type(model).__name__, "epoch": str(model.epoch_),
            "config": json.dumps({"params": model.config_params(), "n_data": int(model.n_data_),
                                  "n_features": int(model.n_features_), "state": tree,
                                  "torch_threads": torch.get_num_threads(), "extra": extra or {}})}
    write_bytes_atomic(path, canonical_safetensors(safetensors_bytes(tensors, metadata=meta)))
    return path


@damage_is_run_error
def load_checkpoint(path, device: str | None = None):
    """Rebuild a model from :func:`save_checkpoint`, ready for ``continue_fit(X)``.

    Returns ``(model, extra)``; ``device`` overrides the saved ``device`` parameter.
    """
    path = Path(path)
    tensors, meta = load_tensors(path, f"checkpoint {path}")
    if (meta.get("format"), meta.get("format_version")) != (CHECKPOINT_FORMAT, str(CHECKPOINT_VERSION)):
        raise RunError(f"{path} is not a checkpoint this bpetopics reads (format {meta.get('format')!r} "
                       f"version {meta.get('format_version')!r}): start the training again")
    try:
        config = json.loads(meta["config"])
        tree = _unflatten(config["state"], tensors)
        params, n_data, n_features = config["params"], config["n_data"], config["n_features"]
    except (KeyError, TypeError, ValueError) as exc:
        raise RunError(f"{path} is corrupted (unreadable metadata: {first_line(exc)})") from None
    model = build_model(meta.get("model"), params, tree["model"], n_data, n_features,
                         tree["training"], device, f"checkpoint {path}")
    return model, config.get("extra", {})
