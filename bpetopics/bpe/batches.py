"""Batch sources: where training reads its minibatches from.

Training (:meth:`bpetopics.bpe.model.BPEBase._run_epoch`) iterates over a batch source:
an iterable of minibatches (rows of the data: a CSR matrix for text, a dense array for
images) in a defined order, with ``n_samples``, the number of rows it yields per pass.
The in-memory matrix is one implementation, :class:`InMemoryBatches`; a :class:`RowStore`
(rows kept on disk, e.g. ``text/sharded_counts.py``'s memory-mapped shards) brings its
own, yielding the same minibatches; one rank's part of each global minibatch in a
distributed run (``runs/distributed.py``'s ``RankBatches``, through the model's
``step_group``: :mod:`bpetopics.bpe.step_group`) is another.
"""

from __future__ import annotations

import sys
from typing import Iterator, Protocol, runtime_checkable

import scipy.sparse as sp
import torch
from tqdm.auto import tqdm


@runtime_checkable
class BatchSource(Protocol):
    """An iterable of minibatches (rows of the data), in a defined order."""

    n_samples: int

    def __iter__(self) -> Iterator: ...


@runtime_checkable
class RowStore(Protocol):
    """A data matrix kept outside memory (e.g. ``text/sharded.py``'s memory-mapped
    shards) that training reads as it goes: ``shape`` (N, D), rows gathered by index
    (``X[rows]`` -> the rows in memory, as ``csr[rows]``), ``sum(axis)`` and
    ``getnnz(axis=1)`` as scipy's, and its own batch source for an epoch, which must
    yield what :class:`InMemoryBatches` yields over the same rows. ``fit(X)`` accepts
    one in place of a matrix."""

    shape: tuple

    def __getitem__(self, rows): ...

    def sum(self, axis=None): ...

    def getnnz(self, axis=None): ...

    def batch_source(self, batch_size: int, seed: int, epoch: int) -> BatchSource: ...


def epoch_order(n_samples: int, seed: int, epoch: int):
    """The permutation of ``range(n_samples)`` used in epoch ``epoch`` (from 0).

    It depends only on the seed and the epoch number, so a run resumed from a
    checkpoint takes the same minibatches as an uninterrupted one.
    """
    gen = torch.Generator().manual_seed(int(seed) * 1_000_003 + int(epoch))
    return torch.randperm(n_samples, generator=gen).numpy()


class InMemoryBatches:
    """The rows of an in-memory matrix ``X`` (N, D), shuffled by :func:`epoch_order`,
    in minibatches of ``batch_size`` (the last one may be smaller).

    Parameters
    ----------
    X : scipy.sparse.csr_matrix or np.ndarray, shape (N, D)
    batch_size : int
    seed, epoch : int
        The permutation's seed and epoch number.
    """

    def __init__(self, X, batch_size: int, seed: int, epoch: int):
        self.X = X
        self.batch_size = int(batch_size)
        self.seed = int(seed)
        self.epoch = int(epoch)
        self.n_samples = int(X.shape[0])

    def __len__(self) -> int:
        return -(-self.n_samples // self.batch_size)

    def __iter__(self):
        order = epoch_order(self.n_samples, self.seed, self.epoch)
        shuffled = self.X[order]            # one gather per epoch; minibatches are slices
        if sp.issparse(shuffled) and shuffled.format == "csr":
            yield from csr_row_slices(shuffled, self.batch_size)
            return
        for begin in range(0, self.n_samples, self.batch_size):
            yield shuffled[begin:begin + self.batch_size]


def csr_row_slices(X, batch_size: int):
    """The rows of the CSR matrix ``X`` in slices of ``batch_size`` (the last may be
    smaller), each a CSR matrix of X's class made from its three arrays' slices (scipy's
    row slicing runs about twice the Python per minibatch for the same matrix)."""
    indptr, n_rows = X.indptr, X.shape[0]
    for begin in range(0, n_rows, batch_size):
        end = min(n_rows, begin + batch_size)
        first, last = indptr[begin], indptr[end]
        yield type(X)((X.data[first:last], X.indices[first:last], indptr[begin:end + 1] - first),
                      shape=(end - begin, X.shape[1]))


class CountedBatches:
    """A batch source that moves a progress bar (``tqdm``) by one at each minibatch it
    yields; everything else is the wrapped source's (``n_samples``, ``len``)."""

    def __init__(self, batches, bar):
        self._batches, self._bar = batches, bar
        self.n_samples = batches.n_samples

    def __len__(self) -> int:
        return len(self._batches)

    def __getattr__(self, name):
        return getattr(self._batches, name)

    def __iter__(self):
        for X_batch in self._batches:
            yield X_batch
            self._bar.update(1)


class MinibatchBar:
    """One progress bar over the minibatches of ``n_epochs`` epochs (none when not
    ``enabled``): :meth:`wrap` each epoch's batch source, :meth:`epoch_done` after it,
    :meth:`close` at the end. Its total is known at the first epoch's source."""

    def __init__(self, name: str, n_epochs: int, enabled: bool):
        self.name, self.n_epochs, self.enabled, self.bar = name, int(n_epochs), bool(enabled), None

    def wrap(self, batches, epoch: int):
        """``batches`` counted on the bar as epoch ``epoch`` (from 1)."""
        if not self.enabled:
            return batches
        desc = f"{self.name} epoch {epoch}"
        if self.bar is None:
            self.bar = tqdm(total=self.n_epochs * len(batches), desc=desc, unit="batch", leave=False)
        self.bar.set_description(desc, refresh=False)
        return CountedBatches(batches, self.bar)

    def note(self, message: str) -> None:
        """Print ``message`` on its own line above the bar (standard error)."""
        tqdm.write(message, file=sys.stderr)

    def epoch_done(self, **shown) -> None:
        if self.bar is not None:
            self.bar.set_postfix(**shown)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
