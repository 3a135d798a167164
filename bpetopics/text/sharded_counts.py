"""The count matrix of a sharded corpus, memory-mapped, and its minibatches.

:class:`ShardedCounts` is the N x W matrix behind a
:class:`~bpetopics.text.sharded.ShardedCorpus` (a
:class:`~bpetopics.bpe.batches.RowStore`): ``shape``, rows gathered by index (``X[rows]``
-> CSR, the same arrays as ``csr[rows]`` in memory), ``sum(axis)`` streamed shard by
shard, and :meth:`~ShardedCounts.batch_source`, whose minibatches are exactly those of
:class:`~bpetopics.bpe.batches.InMemoryBatches` over the same counts.
"""

from __future__ import annotations

import mmap

import numpy as np
import scipy.sparse as sp

from bpetopics.text.compiled import shard_rows
from bpetopics.text.shard_checks import check_shard_values

#: Rows gathered at once by the batch source (rounded to whole minibatches).
BLOCK_ROWS = 16384
#: Non-zeros read at once by :meth:`ShardedCounts.sum` (its temporaries: about 16 bytes
#: each), so that summing a shard never holds the whole shard.
SUM_NNZ = 1 << 18


def _nnz_blocks(indptr: np.ndarray, nnz_max: int) -> np.ndarray:
    """Row boundaries (B + 1,) cutting a CSR's rows into blocks of at most ``nnz_max``
    non-zeros each (a longer row is a block of its own); ``indptr`` (n + 1,)."""
    indptr = np.asarray(indptr, dtype=np.int64)
    n = len(indptr) - 1
    bounds = [0]
    while bounds[-1] < n:
        begin = bounds[-1]
        end = int(np.searchsorted(indptr, indptr[begin] + nnz_max, side="right")) - 1
        bounds.append(min(n, max(end, begin + 1)))
    return np.asarray(bounds, dtype=np.int64)


class ShardedCounts:
    """The N x W counts of a sharded corpus, memory-mapped (rows never all in memory);
    gathered rows are read from the files by ``pread`` (:mod:`bpetopics.text.compiled.shard_rows`:
    reading random rows through the maps would map most of the corpus into the process).

    Parameters
    ----------
    shards : list of dict
        Per shard: ``indptr`` (n_s + 1,), ``indices`` (nnz_s,), ``data`` (nnz_s,) arrays
        (memory-mapped).
    shape : (int, int)
    fix : str
        What a message about a damaged shard tells the user to do.

    Attributes
    ----------
    values_checked : bool
        Whether :meth:`check_values` has read every value (training checks them once).
    """

    def __init__(self, shards: list[dict], shape, fix: str = "build the corpus again"):
        self.shards = shards
        self.shape = (int(shape[0]), int(shape[1]))
        self.fix = fix
        self.values_checked = False
        self._gathered = 0
        sizes = [len(s["indptr"]) - 1 for s in shards]
        self.row_offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)   # (S + 1,)
        self._column_sums = None
        #: Read gathered rows from the files by pread (:mod:`bpetopics.text.compiled.shard_rows`);
        #: False: through the memory maps.
        self.by_pread = True
        data_types = {np.dtype(shard["data"].dtype) for shard in shards}
        self._data_dtype = data_types.pop() if len(data_types) == 1 else np.dtype(np.int64)

    def release(self) -> None:
        """Drop the shards' pages from this process's resident memory (``madvise``
        DONTNEED on the read-only maps: they stay in the system's file cache, and are
        read back from it when touched again). Called after every block of rows
        gathered and every shard summed, so that reading the whole corpus does not
        leave the process holding it all."""
        if not hasattr(mmap, "MADV_DONTNEED"):
            return
        for shard in self.shards:
            for array in shard.values():
                mapping = getattr(array, "_mmap", None)
                if mapping is not None:
                    mapping.madvise(mmap.MADV_DONTNEED)
        self._gathered = 0

    def check_values(self) -> "ShardedCounts":
        """Read every value once, shard by shard in blocks (never the corpus at once):
        CorpusError (one line naming the file) for row pointers that decrease, a word id
        outside the vocabulary or out of order in its row, or a count below 1. Done once
        (``values_checked``); ``fit`` calls it before training. Returns ``self``."""
        if self.values_checked:
            return self
        for number, shard in enumerate(self.shards):
            names = {part: getattr(array, "filename", None) or f"shard {number}'s {part}"
                     for part, array in shard.items()}
            check_shard_values(shard, self.shape[1], names, self.fix)
            self.release()
        self.values_checked = True
        return self

    @property
    def nnz(self) -> int:
        return int(sum(len(s["data"]) for s in self.shards))

    def getnnz(self, axis=None):
        """Non-zeros per row (``axis=1``, (N,)) or in all; reads only the row pointers."""
        if axis is None:
            return self.nnz
        if axis != 1:
            raise ValueError("ShardedCounts.getnnz supports axis=1 or None")
        return np.concatenate([np.diff(np.asarray(s["indptr"])) for s in self.shards]) if self.shards \
            else np.zeros(0, np.int64)

    def __getitem__(self, rows) -> sp.csr_matrix:
        """Rows ``rows`` (an integer array, a slice) gathered into a CSR (len(rows), W)
        int64: the same arrays as ``csr[rows]`` of the in-memory counts."""
        if isinstance(rows, slice):
            rows = np.arange(*rows.indices(self.shape[0]))
        rows = np.asarray(rows, dtype=np.int64).ravel()
        if rows.size and (rows.min() < -self.shape[0] or rows.max() >= self.shape[0]):
            raise IndexError(f"row index out of range for {self.shape[0]} documents")
        rows = np.where(rows < 0, rows + self.shape[0], rows)
        order = np.argsort(rows, kind="stable")          # read each shard in file order
        ordered = rows[order]
        shard_of = np.searchsorted(self.row_offsets, ordered, side="right") - 1
        runs = np.searchsorted(shard_of, np.arange(len(self.shards) + 1))       # shard s: runs[s]:runs[s+1]
        parts = []                # (shard, its rows, their first values, their places in the block)
        lengths = np.zeros(len(rows), dtype=np.int64)
        for s in np.flatnonzero(np.diff(runs)):
            local = ordered[runs[s]:runs[s + 1]] - self.row_offsets[s]
            row_ptr = np.asarray(self.shards[s]["indptr"])
            places = order[runs[s]:runs[s + 1]]
            lengths[places] = row_ptr[local + 1] - row_ptr[local]
            parts.append((s, local, row_ptr[local], places))
        indptr = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        indices = np.empty(indptr[-1], dtype=np.int32)
        data = np.empty(indptr[-1], dtype=self._data_dtype)   # the files' own (pread copies bytes)
        for s, local, starts, places in parts:
            shard_rows.copy_rows(self.shards[s], local, starts, lengths[places], indptr[places], indices, data,
                                 by_pread=self.by_pread)
        data = data.astype(np.int64, copy=False)          # as csr[rows] of the counts in memory
        gathered = sp.csr_matrix((data, indices, indptr), shape=(len(rows), self.shape[1]))
        self._gathered += len(rows)
        if self._gathered >= BLOCK_ROWS:    # copies made above: the maps can be let go
            self.release()
        return gathered

    def sum(self, axis=None):
        """Column sums ``axis=0`` ((1, W) int64, computed once), row sums ``axis=1``
        ((N, 1) int64) or the total, streamed by blocks of rows of about
        :data:`SUM_NNZ` non-zeros (memory: one block's temporaries, never a shard)."""
        if axis == 0:
            if self._column_sums is None:
                total = np.zeros(self.shape[1], dtype=np.int64)
                for _, indices, data in self._blocks():
                    # float64 weights are exact: a block's sums stay far below 2^53
                    total += np.bincount(indices, weights=data, minlength=self.shape[1]).astype(np.int64)
                self._column_sums = total
            return self._column_sums[None, :].copy()
        if axis == 1:
            out = []
            for indptr, _, data in self._blocks():    # row n's sum: cumsum at its end minus at its start
                cum = np.concatenate([[0], np.cumsum(data, dtype=np.int64)])
                out.append(cum[indptr[1:]] - cum[indptr[:-1]])
            sums = np.concatenate(out) if out else np.zeros(0, np.int64)
            return sums[:, None]
        if axis is None:
            return int(sum(int(data.sum(dtype=np.int64)) for _, _, data in self._blocks()))
        raise ValueError(f"axis={axis!r}: give 0, 1 or None")

    def _blocks(self):
        """Every shard's rows in order, by blocks of about :data:`SUM_NNZ` non-zeros
        (:func:`_nnz_blocks`): (the block's row pointers from 0 (b + 1,), its indices,
        its values), the maps released after each."""
        for shard in self.shards:
            indptr = np.asarray(shard["indptr"], dtype=np.int64)
            bounds = _nnz_blocks(indptr, SUM_NNZ).tolist()
            for begin, end in zip(bounds[:-1], bounds[1:]):
                first, last = indptr[begin], indptr[end]
                yield (indptr[begin:end + 1] - first, np.asarray(shard["indices"][first:last]),
                       np.asarray(shard["data"][first:last]))
                self.release()

    def batch_source(self, batch_size: int, seed: int, epoch: int) -> "ShardedBatches":
        """The minibatches of epoch ``epoch`` (:class:`ShardedBatches`)."""
        return ShardedBatches(self, batch_size, seed, epoch)


class ShardedBatches:
    """The minibatches of one epoch over a :class:`ShardedCounts`: the permutation
    :func:`~bpetopics.bpe.batches.epoch_order` cut into blocks of whole minibatches
    (about :data:`BLOCK_ROWS` rows), each block gathered from the shards, then sliced.
    The same minibatches, in the same order, as ``InMemoryBatches`` over the counts in
    memory; memory holds one block and the permutation ((N,) int64)."""

    def __init__(self, X: ShardedCounts, batch_size: int, seed: int, epoch: int, block_rows: int | None = None):
        self.X, self.batch_size, self.seed, self.epoch = X, int(batch_size), int(seed), int(epoch)
        self.n_samples = X.shape[0]
        block_rows = BLOCK_ROWS if block_rows is None else block_rows
        self.block = max(1, block_rows // self.batch_size) * self.batch_size

    def __len__(self) -> int:
        return -(-self.n_samples // self.batch_size)

    def __iter__(self):
        from bpetopics.bpe.batches import epoch_order

        order = epoch_order(self.n_samples, self.seed, self.epoch)
        for block_begin in range(0, self.n_samples, self.block):
            rows = self.X[order[block_begin:block_begin + self.block]]
            for begin in range(0, rows.shape[0], self.batch_size):
                yield rows[begin:begin + self.batch_size]
