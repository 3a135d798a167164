"""Rows of one shard's CSR arrays copied into a gathered block (``ShardedCounts[rows]``).

A block of training rows is 16,384 random documents, a few from every part of every
shard. Read through the memory maps, each row's first touch of a page maps the pages
around it as well (the kernel's fault-around), so one block maps almost the whole corpus
into the process until the maps are let go, and letting them go makes the next block
fault them back. Read by ``pread`` instead, one call a row and array from a compiled loop
(the C library's ``pread``, called by numba), a row costs two system calls
and maps nothing: about as fast, and the process's memory stays that of the rows it
holds (docs/results/scale.md has the figures). The maps stay for what
reads whole shards (sums) and for arrays that are not files (:func:`copy_rows` falls back
to them, and without numba).
"""

from __future__ import annotations

import ctypes
import os
import sys

import numpy as np

from bpetopics.text.errors import CorpusError

try:
    import numba
except ImportError:                                   # pragma: no cover - numba optional
    numba = None
else:
    from bpetopics.compiled.kernel_cache import cached_njit


def _copy_rows_py(indices, data, starts, lengths, out_begin, out_indices, out_data):
    """Values ``starts[i]:starts[i] + lengths[i]`` of one shard's ``indices`` and ``data``
    to the outputs from ``out_begin[i]``, for each row i (rows in file order: the maps are
    read forward)."""
    for i in range(starts.shape[0]):
        begin, out = starts[i], out_begin[i]
        for j in range(lengths[i]):
            out_indices[out + j] = indices[begin + j]
            out_data[out + j] = data[begin + j]


def _copy_rows_numpy(indices, data, starts, lengths, out_begin, out_indices, out_data):
    """:func:`_copy_rows_py` with numpy's gathers (no numba)."""
    shift = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)   # 0..n_i-1 in each row
    out_indices[np.repeat(out_begin, lengths) + shift] = indices[np.repeat(starts, lengths) + shift]
    out_data[np.repeat(out_begin, lengths) + shift] = data[np.repeat(starts, lengths) + shift]


_copy_from_maps = cached_njit(nogil=True)(_copy_rows_py) if numba is not None else _copy_rows_numpy


#: Whether rows are read by the C library's ``pread`` (64-bit Linux and macOS, with numba).
PREAD = (numba is not None and hasattr(os, "pread") and sys.platform.startswith(("linux", "darwin"))
         and ctypes.sizeof(ctypes.c_void_p) == 8)

if PREAD:
    # pread(fd, buffer, count, offset), the buffer's address passed as an integer (the same
    # register on these platforms); bound by name, so the compiled loop can be cached
    _pread = numba.types.ExternalFunction(
        "pread", numba.types.intp(numba.types.int32, numba.types.uintp, numba.types.uintp, numba.types.int64))

    @cached_njit(nogil=True)
    def _read_rows(fd, base, starts, lengths, out, out_begin):  # pragma: no cover - compiled
        """Elements ``starts[i]:starts[i] + lengths[i]`` of the array stored from byte
        ``base`` of file ``fd`` into ``out[out_begin[i]:...]``, for each i. Returns -1,
        or the first i whose bytes could not all be read."""
        size = out.itemsize
        address = out.ctypes.data
        for i in range(starts.shape[0]):
            done, wanted = 0, lengths[i] * size
            while done < wanted:
                got = _pread(fd, address + out_begin[i] * size + done, wanted - done,
                             base + starts[i] * size + done)
                if got <= 0:
                    return i
                done += got
        return -1


def _file_backed(array, out) -> bool:
    """Whether ``array`` is a whole .npy file's memory map that ``pread`` can fill ``out``
    from (same dtype, C order)."""
    return (PREAD and isinstance(array, np.memmap) and getattr(array, "filename", None) is not None
            and array.dtype == out.dtype and array.flags.c_contiguous)


def copy_rows(shard: dict, rows: np.ndarray, starts: np.ndarray, lengths: np.ndarray, out_begin: np.ndarray,
              out_indices: np.ndarray, out_data: np.ndarray, by_pread: bool = True) -> None:
    """Rows of one shard into a gathered block.

    Parameters
    ----------
    shard : dict
        ``indices`` and ``data`` (nnz_s,): the shard's arrays (memory maps of its .npy
        files, or arrays).
    rows : np.ndarray of int64, shape (R,)
        The rows' numbers in the shard (to name one that cannot be read).
    starts, lengths : np.ndarray of int64, shape (R,)
        Each row's first value and number of values in the shard (its row pointers),
        rows in file order (the files are read forward).
    out_begin : np.ndarray of int64, shape (R,)
        Where each row's non-zeros go in the outputs.
    out_indices, out_data : np.ndarray, shape (nnz,)
        The block's arrays, filled at ``out_begin[i]:out_begin[i] + lengths[i]``.
    by_pread : bool
        Read the files by ``pread`` where they allow it (else through the maps).
    """
    indices, data = shard["indices"], shard["data"]
    if not (by_pread and _file_backed(indices, out_indices) and _file_backed(data, out_data)):
        _copy_from_maps(np.asarray(indices), np.asarray(data), starts, lengths, out_begin, out_indices, out_data)
        return
    for array, out in ((indices, out_indices), (data, out_data)):
        fd = os.open(array.filename, os.O_RDONLY)
        try:
            failed = _read_rows(fd, array.offset, starts, lengths, out, out_begin)
        finally:
            os.close(fd)
        if failed >= 0:
            raise CorpusError(f"{array.filename} ends before row {int(rows[failed])}'s values: the shard "
                              "changed after the corpus was opened; build the corpus again")
