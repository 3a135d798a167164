"""The model inside a run folder or checkpoint: its tensors read back, the model rebuilt
from its class name, parameters and tensors (never by unpickling), and the library
versions and torch thread count recorded beside it.

Text runs (:mod:`bpetopics.runs.folder`), image runs (:mod:`bpetopics.runs.image_folder`)
and checkpoints (:mod:`bpetopics.runs.checkpoints`) all load their model through
:func:`build_model`.
"""

from __future__ import annotations

import platform
from importlib import metadata
from pathlib import Path

from safetensors import safe_open

from bpetopics.bpe.saved_state import non_finite_weight
from bpetopics.runs.run import RunError, first_line


def library_versions() -> dict:
    """Versions of Python and the libraries a run depends on."""
    out = {"python": platform.python_version()}
    for name in ("bpetopics", "torch", "numpy", "scipy", "safetensors", "scikit-learn", "numba"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def torch_threads() -> int:
    """torch's intra-op thread count: CPU results are reproducible for the same count only."""
    import torch

    return int(torch.get_num_threads())


#: Parameters added after runs were first saved, with the value that a run saved before
#: each existed trained with: in order (before the pipelined schedule), the exact pursuit
#: (before the shortlist), no prior on the mixtures (before ``mixture_entropy``).
ADDED_LATER = {"pipeline": False, "shortlist": None, "mixture_entropy": 0.0}


def build_model(name, params, state, n_data, n_features, training, device, where):
    """A fitted model of class ``name`` from its parameters and tensors (RunError if they disagree)."""
    from bpetopics.bpe.device import resolve_device
    from bpetopics.models.registry import MODELS

    if name not in MODELS:
        raise RunError(f"{where} holds an unknown model class {name!r} (expected one of {', '.join(MODELS)})")
    cls = MODELS[name]
    params = dict(params, progress=False)
    known = cls._get_param_names()
    params.update({param: before for param, before in ADDED_LATER.items()
                   if param in known and param not in params})
    if params.get("n_bits", 0) is None and "prior.a" in state:
        params["n_bits"] = int(state["prior.a"].shape[0])   # K as trained, whatever today's default
    if device is not None:
        params["device"] = device
    try:
        resolve_device(params.get("device", "auto"))
    except ValueError as exc:
        raise RunError(f"cannot load {where}: {exc}") from None
    try:
        model = cls(**params)
    except TypeError as exc:
        raise RunError(f"{where} has parameters this bpetopics does not know ({exc})") from None
    bad = non_finite_weight(state)
    if bad is not None:
        raise RunError(f"the weights in {where} are not finite ({bad} holds NaN or infinite values: the training "
                       "diverged or the file is damaged): train the run again, e.g. with a lower learning rate")
    n_bits = model.code_length() if hasattr(model, "code_length") else params.get("n_bits")
    for key, shape in (("prior.a", (n_bits,)), ("prior.b", (n_bits,)), ("prior.t", ())) if n_bits else ():
        found = tuple(state[key].shape) if key in state else "missing"
        if found != shape:
            raise RunError(f"weights in {where} do not match its config: {key} is {found}, "
                           f"expected shape {shape} for n_bits={n_bits}")
    try:
        model.load_state(state, int(n_data), int(n_features), training=training)
    except (ValueError, KeyError, RuntimeError, TypeError) as exc:
        raise RunError(f"weights in {where} do not match its config: {first_line(exc)}") from None
    return model


def load_tensors(path: Path, where: str) -> tuple[dict, dict]:
    """Tensors and metadata of a safetensors file (RunError when missing or unreadable)."""
    if not path.is_file():
        raise RunError(f"{where} is not complete ({path.name} is missing)")
    try:
        with safe_open(str(path), framework="pt") as f:
            meta = f.metadata() or {}
            return {k: f.get_tensor(k) for k in f.keys()}, meta
    except Exception as exc:  # safetensors raises its own error types for damaged files
        raise RunError(f"{path} is corrupted or truncated ({first_line(exc)})") from None
