"""The shortlist's first-order gains through a ReLU layer in one compiled pass (numba,
CPU): :func:`bpetopics.models.images.shortlist_pursuit.first_order_gain`'s torch steps are
the reference."""

from __future__ import annotations

import numpy as np
import torch

try:
    import numba
except ImportError:                                   # pragma: no cover - numba optional
    numba = None

#: Whether numba imports: the compiled kernel exists.
AVAILABLE = numba is not None


def available(device) -> bool:
    """Whether the compiled kernel serves tensors on ``device``."""
    return AVAILABLE and torch.device(device).type == "cpu"


if numba is not None:
    from bpetopics.compiled.kernel_cache import cached_njit

    @cached_njit(nogil=True, fastmath=True)
    def relu_moves(pre, g, bit_cols, out):  # pragma: no cover - compiled
        """out[a, j] = sum_h g[a, h] max(pre[a, h] + bit_cols[j, h], 0): pre, g (A, H1),
        bit_cols (K, H1), out (A, K) float32 (the (A, K, H1) products without the
        (A, K, H1) tensors torch would write and read five times)."""
        zero = np.float32(0.0)
        for a in range(pre.shape[0]):
            for j in range(bit_cols.shape[0]):
                acc = zero
                for h in range(pre.shape[1]):
                    acc += g[a, h] * max(pre[a, h] + bit_cols[j, h], zero)
                out[a, j] = acc
