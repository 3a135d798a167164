"""The compiled passes of packed batches (:mod:`bpetopics.models.poissbpe.packed`): a
minibatch's distinct words and the topics' rows at them (numba, CPU)."""

from __future__ import annotations

import numpy as np

from bpetopics.models.poissbpe.compiled import kernels

numba = kernels.numba

if numba is not None:
    from bpetopics.compiled.kernel_cache import cached_njit

    @cached_njit(nogil=True)
    def distinct_in_range(keys, n_keys):  # pragma: no cover - compiled
        """(distinct keys, sorted; each key's position among them) for int64 keys in
        [0, n_keys): a presence mark per key, then one pass over the range."""
        rank = np.zeros(n_keys, dtype=np.int64)
        for k in keys:
            rank[k] = 1
        count = 0
        for w in range(n_keys):
            if rank[w]:
                rank[w] = count
                count += 1
        words = np.empty(count, dtype=np.int64)
        position = np.empty(keys.shape[0], dtype=np.int64)
        for i in range(keys.shape[0]):
            position[i] = rank[keys[i]]
            words[position[i]] = keys[i]
        return words, position

    @cached_njit(nogil=True)
    def gather_columns(matrix, columns):  # pragma: no cover - compiled
        """matrix[:, columns] transposed: (R, C) and (U,) -> (U, R), C-contiguous."""
        out = np.empty((columns.shape[0], matrix.shape[0]), dtype=matrix.dtype)
        for u in range(columns.shape[0]):
            c = columns[u]
            for r in range(matrix.shape[0]):
                out[u, r] = matrix[r, c]
        return out
