"""The one device resolver of the package (models, baselines, CLI)."""

from __future__ import annotations

import torch


def resolve_device(device) -> torch.device:
    """'auto' (or None) -> CUDA when present, else CPU; 'cpu', 'cuda', 'cuda:N' as given.

    Raises ValueError (one line) for 'cuda' without CUDA and for an unknown device.
    """
    device = "auto" if device is None else str(device)
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError("device 'cuda' was asked for but CUDA is not available; use --device cpu")
    if device != "cpu" and not device.startswith("cuda"):
        raise ValueError(f"unknown device {device!r}; use 'cpu', 'cuda' or 'auto'")
    return torch.device(device)


def allow_tf32(enabled: bool = True) -> None:
    """Let CUDA matrix products and convolutions run in TF32 (10-bit mantissas) instead of
    float32. PyTorch's default is float32; TF32 makes GaussBPE's GPU epochs faster, but
    the pursuit's scores are
    then rounded more coarsely, so a near tie between two bits may fall the other way
    and the codes are not exactly float32's. No effect on the CPU."""
    torch.backends.cuda.matmul.allow_tf32 = bool(enabled)
    torch.backends.cudnn.allow_tf32 = bool(enabled)
