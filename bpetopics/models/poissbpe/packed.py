"""Count batches: the non-zeros of a batch of documents, packed (flat CSR) or padded.

Padding every document of a minibatch to its longest one wastes most of the work (a
random minibatch of 20 Newsgroups has a median of 24 non-zeros and a longest of 811).
``PackedCounts`` keeps only the real non-zeros, one flat array each, with the document of
every non-zero, so that per-document sums are segment sums (``index_add``) and
per-document products are sparse matrix products. Works alike on CPU and CUDA tensors.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import warnings

import numpy as np
import scipy.sparse as sp
import torch

from bpetopics.models.poissbpe.compiled import kernels
from bpetopics.models.poissbpe.compiled import packed as compiled_packed


@dataclass
class PackedCounts:
    """Rows of a sparse count matrix, flat.

    Attributes
    ----------
    indptr : torch.LongTensor, shape (P + 1,)
        Row n's non-zeros are ``indptr[n]:indptr[n + 1]`` (CSR).
    cols : torch.LongTensor, shape (nnz,)
        Word index of each non-zero.
    vals : torch.Tensor, shape (nnz,)
        Its count.
    rows : torch.LongTensor, shape (nnz,)
        The document (0..P-1) each non-zero belongs to.
    """

    indptr: torch.Tensor
    cols: torch.Tensor
    vals: torch.Tensor
    rows: torch.Tensor
    _vocabulary: tuple | None = field(default=None, init=False, repr=False, compare=False)
    _topic_rows: tuple | None = field(default=None, init=False, repr=False, compare=False)

    def __len__(self):
        return self.indptr.shape[0] - 1

    @property
    def lengths(self) -> torch.Tensor:
        """Non-zeros per row, shape (P,)."""
        return self.indptr[1:] - self.indptr[:-1]

    def totals(self) -> torch.Tensor:
        """Tokens per row, sum_w x_nw, shape (P,)."""
        return torch.zeros(len(self), dtype=self.vals.dtype,
                           device=self.vals.device).index_add_(0, self.rows, self.vals)

    def row_sum(self, per_nonzero: torch.Tensor) -> torch.Tensor:
        """Segment sums over each row's non-zeros: (nnz, ...) -> (P, ...); differentiable."""
        out = per_nonzero.new_zeros((len(self),) + tuple(per_nonzero.shape[1:]))
        return out.index_add(0, self.rows, per_nonzero)

    def vocabulary(self, n_words: int) -> tuple[torch.Tensor, torch.Tensor]:
        """The batch's own vocabulary: its distinct words (U,), sorted, and each
        non-zero's position among them (nnz,). Computed once per batch (the pursuit and
        the theta step both read it)."""
        if self._vocabulary is None:
            self._vocabulary = unique_ints(self.cols, n_words)
        return self._vocabulary

    def topic_rows(self, beta: torch.Tensor) -> torch.Tensor:
        """beta[words] at the batch's vocabulary (:meth:`vocabulary`), (U, T), contiguous,
        from beta (W, T); computed once per beta (the pursuit and the theta step of a
        minibatch share it; beta is recognised by its storage, shape and version, so an
        in-place change is seen). Gathered along the contiguous rows of beta^T when beta
        is the transposed view ``PoissonLikelihood.topic_word`` gives (faster than
        indexing the view)."""
        key = (beta.data_ptr(), tuple(beta.shape), beta.stride(), beta._version, beta.device)
        if self._topic_rows is None or self._topic_rows[0] != key:
            words, _ = self.vocabulary(beta.shape[0])
            beta_t = beta.t()
            if beta_t.is_contiguous() and kernels.available(beta.device) and beta.dtype == torch.float32:
                rows = compiled_packed.gather_columns(beta_t.numpy(), words.numpy())     # one compiled pass
                rows = torch.from_numpy(rows)
            elif beta_t.is_contiguous():
                rows = beta_t.index_select(1, words).t().contiguous()
            else:
                rows = beta.index_select(0, words)
            self._topic_rows = (key, rows)
        return self._topic_rows[1]

    def take(self, idx: torch.Tensor) -> "PackedCounts":
        """Rows idx (in that order), without a Python loop over rows."""
        idx = torch.as_tensor(idx, device=self.indptr.device)
        starts, lengths = self.indptr[idx], self.lengths[idx]
        indptr = torch.zeros(idx.numel() + 1, dtype=torch.long, device=idx.device)
        torch.cumsum(lengths, 0, out=indptr[1:])
        rows = torch.repeat_interleave(torch.arange(idx.numel(), device=idx.device), lengths)
        src = starts[rows] + torch.arange(rows.numel(), device=idx.device) - indptr[rows]
        return PackedCounts(indptr, self.cols[src], self.vals[src], rows)

    def to_sparse(self, n_cols: int, col_index=None) -> torch.Tensor:
        """The rows as a torch sparse CSR matrix (P, n_cols), columns ``col_index`` (nnz,)
        instead of ``cols`` when given (e.g. positions in the batch's own vocabulary)."""
        col_index = self.cols if col_index is None else col_index
        with warnings.catch_warnings():             # "sparse CSR support is in beta"
            warnings.simplefilter("ignore", UserWarning)
            return torch.sparse_csr_tensor(self.indptr, col_index, self.vals,
                                           (len(self), n_cols), check_invariants=False)

    @staticmethod
    def from_csr(X, device, dtype=torch.float32) -> "PackedCounts":
        """From a CSR matrix (P x W); explicit zeros are dropped."""
        X = X if sp.issparse(X) and X.format == "csr" else sp.csr_matrix(X)
        if not np.all(X.data):                      # copy only to drop explicit zeros
            X = sp.csr_matrix(X, copy=True)
            X.eliminate_zeros()
        lengths = np.diff(X.indptr)
        rows = np.repeat(np.arange(X.shape[0], dtype=np.int64), lengths)
        return PackedCounts(torch.from_numpy(X.indptr.astype(np.int64)).to(device),
                            torch.from_numpy(X.indices.astype(np.int64)).to(device),
                            torch.from_numpy(X.data.astype(np.float32)).to(device=device,
                                                                          dtype=dtype),
                            torch.from_numpy(rows).to(device))


def unique_ints(keys: torch.Tensor, n_keys: int) -> tuple[torch.Tensor, torch.Tensor]:
    """torch.unique(keys, return_inverse=True) for integer keys in [0, n_keys): sorted
    distinct keys and each key's position among them.

    When the range is not much larger than the number of keys, a presence mask over the
    range and its running count replace the sort: on CPU in one compiled pass (several
    times faster than the torch ops for a minibatch's vocabulary), else by torch ops.
    torch's one-thread CPU sort of int64 keys costs several times more per key past 4,096
    keys than below, so past that size the mask is used on a wider range (docs/results/speed.md)."""
    n = keys.numel()
    if n_keys <= 16 * n + 4096 and n_keys <= 1 << 24 and kernels.available(keys.device):
        words, position = compiled_packed.distinct_in_range(keys.numpy(), int(n_keys))
        return torch.from_numpy(words), torch.from_numpy(position)
    sort_is_cheap = n <= 4096 and n_keys > 2 * n + 4096
    if sort_is_cheap or n_keys > 16 * n + 4096:
        return torch.unique(keys, return_inverse=True)
    present = torch.zeros(n_keys, dtype=torch.bool, device=keys.device)
    present[keys] = True
    position = torch.cumsum(present, 0) - 1                       # (n_keys,)
    return present.nonzero()[:, 0], position[keys]


@dataclass
class PaddedCounts:
    """Sparse count rows padded to a common length: the non-zeros of each document.

    Attributes
    ----------
    cols : torch.LongTensor, shape (P, L)
        Word index of each non-zero (0 in padding).
    vals : torch.Tensor, shape (P, L)
        Its count (0 in padding, so padding contributes nothing).
    lengths : torch.LongTensor, shape (P,)
        Non-zeros per row.
    """

    cols: torch.Tensor
    vals: torch.Tensor
    lengths: torch.Tensor

    def __len__(self):
        return self.cols.shape[0]

    @property
    def width(self) -> int:
        return self.cols.shape[1]

    def take(self, idx: torch.Tensor) -> "PaddedCounts":
        """Rows idx, trimmed to their longest row (rows are left-aligned)."""
        lengths = self.lengths[idx]
        width = max(int(lengths.max()), 1) if lengths.numel() else 1
        return PaddedCounts(self.cols[idx, :width], self.vals[idx, :width], lengths)

    @staticmethod
    def from_csr(X: sp.csr_matrix, device, dtype=torch.float32) -> "PaddedCounts":
        """Pad the rows of a CSR matrix (P x W) without a Python loop over rows."""
        X = sp.csr_matrix(X)
        lengths = np.diff(X.indptr)
        width = max(int(lengths.max(initial=0)), 1)
        rows = np.repeat(np.arange(X.shape[0]), lengths)
        slot = np.arange(X.nnz) - np.repeat(X.indptr[:-1], lengths)
        cols = np.zeros((X.shape[0], width), dtype=np.int64)
        vals = np.zeros((X.shape[0], width), dtype=np.float32)
        cols[rows, slot] = X.indices
        vals[rows, slot] = X.data
        return PaddedCounts(torch.from_numpy(cols).to(device),
                            torch.from_numpy(vals).to(device=device, dtype=dtype),
                            torch.from_numpy(lengths.astype(np.int64)).to(device))
