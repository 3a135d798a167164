"""The machine a run is trained on, as far as its arithmetic goes.

Training is bit-for-bit reproducible on one kind of machine: the same seed, data,
settings, thread count and library versions give the same model on the same CPU model.
Another CPU can round differently: torch's BLAS (MKL on x86-64) and vector kernels pick
their code by the processor (AVX-512, AVX2, NEON...), and a different rounding can
break an exact tie between two bits differently. Runs on other CPUs are then the same
model within stated tolerances (docs/reproducibility.md), not bit for bit. A run records
:func:`describe_machine` so that one can tell which promise applies.
"""

from __future__ import annotations

import os
import platform
from functools import lru_cache


@lru_cache(maxsize=1)
def cpu_model() -> str:
    """The processor's model name in words (``/proc/cpuinfo`` on Linux, else platform's)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model", "Hardware", "cpu model"):
                    return " ".join(value.split())
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def describe_machine() -> dict:
    """What decides a run's arithmetic on CPU: the processor, the instruction set torch
    dispatches to, and the cores.

    Returns
    -------
    dict
        ``cpu`` (model name), ``architecture`` (e.g. ``x86_64``), ``vector_unit`` (torch's
        CPU capability, e.g. ``AVX512``), ``cores`` (``os.cpu_count()``).
    """
    import torch

    try:
        vector_unit = torch.backends.cpu.get_cpu_capability()
    except AttributeError:                                  # pragma: no cover - old torch
        vector_unit = "unknown"
    return {"cpu": cpu_model(), "architecture": platform.machine(), "vector_unit": vector_unit,
            "cores": os.cpu_count()}
