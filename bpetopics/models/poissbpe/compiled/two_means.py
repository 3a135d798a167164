"""Spherical 2-means of sparse rows in one compiled call (numba, CPU): the steps of
:func:`bpetopics.models.poissbpe.two_means.two_means`, the reference."""

from __future__ import annotations

import numpy as np

from bpetopics.models.poissbpe.compiled import kernels

numba = kernels.numba

if numba is not None:
    from bpetopics.compiled.kernel_cache import cached_njit

    @cached_njit(nogil=True)
    def row_dots(indptr, indices, data, vector):  # pragma: no cover - compiled
        """(N,) dot products of the CSR rows with a dense vector."""
        out = np.zeros(indptr.shape[0] - 1)
        for i in range(indptr.shape[0] - 1):
            total = 0.0
            for j in range(indptr[i], indptr[i + 1]):
                total += data[j] * vector[indices[j]]
            out[i] = total
        return out

    @cached_njit(nogil=True)
    def two_means(indptr, indices_in, data, n_words, n_iter, tolerance):  # pragma: no cover - compiled
        """:func:`two_means` of the CSR rows (indptr, indices, data float64), compiled.

        The dense vectors (mean, direction, centres) are kept on the columns the rows
        use, in column order: the others stay zero throughout, so the sums are the same
        (zeros left out) and each of the ~40 rounds costs the rows' non-zeros, not W."""
        n_rows = indptr.shape[0] - 1
        used = np.zeros(n_words, dtype=np.int64)               # the used columns, in order
        for j in range(indices_in.shape[0]):
            used[indices_in[j]] = 1
        n_cols = 0
        for w in range(n_words):
            if used[w]:
                used[w] = n_cols
                n_cols += 1
        indices = np.empty_like(indices_in)
        for j in range(indices_in.shape[0]):
            indices[j] = used[indices_in[j]]
        unit = data.copy()
        for i in range(n_rows):                                # rows to unit length
            total = 0.0
            for j in range(indptr[i], indptr[i + 1]):
                total += data[j] * data[j]
            scale = 1.0 / max(np.sqrt(total), 1e-300)
            for j in range(indptr[i], indptr[i + 1]):
                unit[j] = data[j] * scale
        mean = np.zeros(n_cols)
        for j in range(unit.shape[0]):
            mean[indices[j]] += unit[j]
        mean /= n_rows
        start = int(np.argmin(row_dots(indptr, indices, unit, mean)))
        direction = -mean.copy()
        for j in range(indptr[start], indptr[start + 1]):
            direction[indices[j]] += unit[j]
        direction /= max(np.sqrt(np.sum(direction * direction)), 1e-300)
        for _ in range(30):                                    # until it moves < tolerance
            offset = np.sum(mean * direction)
            projection = row_dots(indptr, indices, unit, direction) - offset
            previous = direction
            direction = -mean * np.sum(projection)
            for i in range(n_rows):
                for j in range(indptr[i], indptr[i + 1]):
                    direction[indices[j]] += unit[j] * projection[i]
            direction /= max(np.sqrt(np.sum(direction * direction)), 1e-300)
            moved = previous - direction
            if np.sqrt(np.sum(moved * moved)) < tolerance:
                break
        second = (row_dots(indptr, indices, unit, direction) - np.sum(mean * direction)) > 0
        centres = np.zeros((2, n_cols))
        for _ in range(n_iter):
            if second.all() or not second.any():
                break
            centres[:] = 0.0
            for i in range(n_rows):                            # the halves' summed rows
                half = 1 if second[i] else 0
                for j in range(indptr[i], indptr[i + 1]):
                    centres[half, indices[j]] += data[j]
            for half in range(2):
                centres[half] /= max(np.sqrt(np.sum(centres[half] * centres[half])), 1e-300)
            first_sim = row_dots(indptr, indices, unit, centres[0])
            second_sim = row_dots(indptr, indices, unit, centres[1])
            new = second_sim > first_sim
            if (new == second).all():
                break
            second = new
        return second
