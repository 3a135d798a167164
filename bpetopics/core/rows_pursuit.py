"""A minibatch's whole pursuit in compiled calls that hold no lock: from its CSR rows and
copies of theta to its codes (PoissBPE's training on CPU with a linear decoder, numba).

The pipelined schedule (:mod:`bpetopics.core.pipelined_steps`) pursues the next
minibatch on a second thread while this thread takes the theta step. The theta step is
many small torch operations, each taking Python's global interpreter lock (GIL) between
the arithmetic; if the pursuit's own preparation were torch operations too (the batch's
vocabulary, beta's rows there, the K + 1 first mixtures, the shared table; about twenty
operations, as :func:`bpetopics.core.table_pursuit.table_pursuit` takes them), the two threads would hand
the lock back and forth and each would run at half speed (measured: the theta step 440
-> 890 us). Here every part is compiled (numba, ``nogil``), so the call takes the lock
once, to start:

    words, local   the minibatch's distinct words (U,) and each non-zero's position there
    beta_u         beta's rows at those words (U, T)
    mix            f(c) = softmax(b + W c) for c = 0, e_1..e_K  (K + 1, T)
    table          ln max(beta_u mix^T, 1e-30)  (U, K + 1), the shared first step
    codes ...      the pursuit of :mod:`bpetopics.core.fused_pursuit` (or its screened
                   form, :mod:`bpetopics.core.screened_pursuit`) from that table

The codes are the greedy pursuit's for the theta copied (the same as
:func:`bpetopics.core.table_pursuit.table_pursuit`'s up to float rounding: the table's
products and logarithms are this package's compiled loops, not torch's). Training in
order takes this path too (:func:`pursue`): on one thread it is also the faster one
(no torch operation per minibatch for the first step).
"""

from __future__ import annotations

import threading

import numpy as np
import scipy.sparse as sp
import torch

from bpetopics.core import fused_pursuit, kernels, screened_pursuit
from bpetopics.core.packed import PackedCounts

numba = kernels.numba


class ThetaCopy:
    """What the pursuit reads of the model, copied (the theta step may change the model
    while the pursuit runs): the decoder's weights and bias, the prior's log-odds, beta.

    Parameters
    ----------
    decoder : CodeDecoder
        Linear (``hidden=()``).
    log_odds : torch.Tensor, shape (K,)
        The prior's log-odds times its weight, for the step the codes are for.
    beta : torch.Tensor, shape (W, T)
        The step's topics (``minibatch_params()``): read, not copied (each step makes a
        new one and nothing changes it in place).
    max_steps : int
    """

    def __init__(self, decoder, log_odds, beta, max_steps):
        self.weight = decoder.first.weight.detach().to(torch.float32, copy=True)      # (T, K)
        self.bias = decoder.first.bias.detach().to(torch.float32, copy=True)          # (T,)
        self.log_odds = log_odds.detach().to(torch.float32, copy=True)               # (K,)
        beta_t = beta.detach().t()                                                    # (T, W)
        self.beta_t = beta_t if beta_t.is_contiguous() else beta_t.contiguous()
        self.max_steps = int(max_steps)

    @classmethod
    def of_model(cls, model, beta, step: int | None = None) -> "ThetaCopy":
        """What the pursuit of training step ``step`` reads of ``model`` (a BPE model with a
        linear decoder), copied now: the prior's log-odds times its weight at that step
        (None: the whole prior, as encoding and the end-of-epoch checks pursue)."""
        n_bits = model.code_length()
        max_steps = n_bits if model.max_bits is None else min(int(model.max_bits), n_bits)
        weight = 1.0 if step is None else model.prior_weight(step)
        return cls(model.decoder_, weight * model.prior_.bit_log_odds(), beta, max_steps)


def pursue(X_batch, theta: ThetaCopy, threads: int = 1):
    """The pursuit of the rows of ``X_batch`` (CSR) under ``theta``, now: (batch, codes,
    score) as :meth:`RowsPursuit.result`. A minibatch with enough work
    (``fused_pursuit.MIN_PARALLEL_WORK`` multiply-adds a later step) is split between
    this thread and a second one when ``threads`` >= 2."""
    work = X_batch.nnz * theta.weight.shape[0] * theta.weight.shape[1]
    shares = 2 if threads > 1 and work >= fused_pursuit.MIN_PARALLEL_WORK else 1
    pursuit = RowsPursuit(X_batch, theta, shares)
    if shares == 1:
        return pursuit.run().result()
    helper = fused_pursuit._thread_pool(1).submit(pursuit.pursue_shares)
    pursuit.prepare()
    pursuit.pursue_shares()
    helper.result()
    return pursuit.result()


class RowsPursuit:
    """The pursuit of the rows of ``X_batch`` (CSR, P x W) with the copied ``theta``, in
    compiled calls that release the GIL: :meth:`prepare` (the packed rows, their
    vocabulary, the shared first-step table), then :meth:`pursue_shares` by one or two
    threads (each takes the next of ``n_shares`` shares of decreasing work,
    :func:`_guided_shares`, until none is left: a document's code is computed alone, so
    the shares change nothing), then :meth:`result`. If preparing fails on one thread,
    the other's :meth:`pursue_shares` returns instead of waiting (the failing thread
    raises).
    """

    def __init__(self, X_batch, theta: ThetaCopy, n_shares: int = 1):
        if not (sp.isspmatrix_csr(X_batch) or isinstance(X_batch, sp.csr_array)):
            X_batch = sp.csr_matrix(X_batch)
        self.X_batch, self.theta, self.n_shares = X_batch, theta, int(n_shares)
        self.prepared = threading.Event()
        self._lock = threading.Lock()
        self._taken = 0

    def prepare(self) -> None:
        """Pack the rows and build the first step's table (one compiled call)."""
        try:
            self._prepare()
        finally:
            self.prepared.set()              # also on failure: no thread waits for ever

    def _prepare(self) -> None:
        theta = self.theta
        n_topics, n_bits = theta.weight.shape
        (indptr, cols, vals, rows, words, local, beta_u, table, bit_w, exp_w_t) = _prepare_rows(
            self.X_batch.indptr, self.X_batch.indices, self.X_batch.data, theta.beta_t.numpy(),
            theta.weight.numpy(), theta.bias.numpy())
        n_docs = indptr.shape[0] - 1
        self.codes = np.zeros((n_docs, n_bits), dtype=np.uint8)
        self.data, self.prior = np.empty(n_docs, dtype=np.float32), np.empty(n_docs, dtype=np.float32)
        self._kernel = (screened_pursuit._screened_pursuit if screened_pursuit.screens(n_bits, n_topics)
                        else fused_pursuit._pursuit)
        self._args = (indptr, local, vals, beta_u, table, bit_w, exp_w_t, theta.bias.numpy(),
                      theta.log_odds.numpy(), self.codes, self.data, self.prior, theta.max_steps)
        self._shares = _guided_shares(np.diff(indptr), self.n_shares)
        self._packed = (indptr, cols, vals, rows, words, local)

    def pursue_shares(self) -> None:
        """Pursue shares until none is left (after :meth:`prepare`; any thread)."""
        self.prepared.wait()
        if not hasattr(self, "_shares"):     # preparing failed (on the other thread)
            return
        while True:
            with self._lock:
                share, self._taken = self._taken, self._taken + 1
            if share >= len(self._shares):
                return
            self._kernel(*self._args, self._shares[share])

    def run(self) -> "RowsPursuit":
        """:meth:`prepare`, then every share; returns self. In one share, all of it is one
        compiled call (the thread takes the GIL once: fewer hand-overs with a busy one)."""
        if self.n_shares > 1:
            self.prepare()
            self.pursue_shares()
            return self
        theta = self.theta
        n_topics, n_bits = theta.weight.shape
        try:
            (indptr, cols, vals, rows, words, local, self.codes, self.data, self.prior) = _pursue_rows(
                self.X_batch.indptr, self.X_batch.indices, self.X_batch.data, theta.beta_t.numpy(),
                theta.weight.numpy(), theta.bias.numpy(), theta.log_odds.numpy(), theta.max_steps,
                screened_pursuit.screens(n_bits, n_topics))
            self._packed, self._shares = (indptr, cols, vals, rows, words, local), ()
        finally:
            self.prepared.set()
        return self

    def result(self):
        """(batch, codes, score) once every share is pursued.

        Returns
        -------
        batch : PackedCounts
            The rows as ``PoissonLikelihood.batch`` gives them (explicit zeros dropped),
            their vocabulary attached.
        codes : torch.BoolTensor, shape (P, K)
        score : torch.Tensor, shape (P,)
            Each code's data term plus its bits' log-odds.
        """
        indptr, cols, vals, rows, words, local = self._packed
        batch = PackedCounts(*(torch.from_numpy(a) for a in (indptr, cols, vals, rows)))
        batch._vocabulary = (torch.from_numpy(words), torch.from_numpy(local))
        return batch, torch.from_numpy(self.codes.view(np.bool_)), torch.from_numpy(self.data + self.prior)


def _guided_shares(lengths: np.ndarray, n_shares: int) -> list:
    """The documents in shares of decreasing work, 1/2, 1/4, ..., the last two equal
    (``n_shares`` of them): the thread that starts takes the first half in one call,
    holding no lock for long while the other thread is busy; the rest is split
    ever finer so that both threads finish together."""
    if n_shares <= 1:
        return [np.arange(lengths.shape[0], dtype=np.int64)]
    slots = 1 << (n_shares - 1)
    order, bounds = fused_pursuit.thread_slots(lengths, slots)   # equal work a slot
    shares, begin = [], 0
    for k in range(1, n_shares):
        end = slots - slots // (1 << k) if k < n_shares - 1 else slots - 1
        shares.append(order[bounds[begin]:bounds[end]])
        begin = end
    shares.append(order[bounds[begin]:bounds[slots]])
    return shares


if numba is not None:
    from numba import njit

    from bpetopics.core.fused_pursuit import _pursuit
    from bpetopics.core.packed import _distinct_in_range, _gather_columns
    from bpetopics.core.pursuit_loops import _log_inplace, _wide_word_rates
    from bpetopics.core.screened_pursuit import _screened_pursuit

    @njit(cache=True, nogil=True)
    def _pursue_rows(indptr_in, indices, counts, beta_t, weight, bias, log_odds, max_steps,
                     screened):  # pragma: no cover - compiled
        """:func:`_prepare_rows`, then the pursuit of every document (screened or not):
        the packed rows and vocabulary, codes (P, K) uint8, data and prior terms (P,)."""
        (indptr, cols, vals, rows, words, local, beta_u, table, bit_w,
         exp_w_t) = _prepare_rows(indptr_in, indices, counts, beta_t, weight, bias)
        n_docs = indptr.shape[0] - 1
        codes = np.zeros((n_docs, weight.shape[1]), dtype=np.uint8)
        data = np.empty(n_docs, dtype=np.float32)
        prior = np.empty(n_docs, dtype=np.float32)
        docs = np.arange(n_docs)
        if screened:
            _screened_pursuit(indptr, local, vals, beta_u, table, bit_w, exp_w_t, bias, log_odds,
                              codes, data, prior, max_steps, docs)
        else:
            _pursuit(indptr, local, vals, beta_u, table, bit_w, exp_w_t, bias, log_odds, codes, data,
                     prior, max_steps, docs)
        return indptr, cols, vals, rows, words, local, codes, data, prior

    @njit(cache=True, nogil=True)
    def _prepare_rows(indptr_in, indices, counts, beta_t, weight, bias):  # pragma: no cover - compiled
        """See :meth:`RowsPursuit.prepare`: CSR rows (indptr (P+1,), indices (nnz,), counts),
        beta^T (T, W), the decoder's weight (T, K) and bias (T,). Returns the packed rows
        (indptr, cols, vals, rows), the vocabulary (words (U,), local (nnz,)), beta_u
        (U, T), the table (U, K + 1), W^T (K, T) and exp(w_jt - max_t w_jt) (T, K)."""
        n_docs = indptr_in.shape[0] - 1
        n_topics, n_words = beta_t.shape
        n_bits = weight.shape[1]
        # the packed rows, explicit zeros dropped (as PackedCounts.from_csr)
        indptr = np.zeros(n_docs + 1, dtype=np.int64)
        for d in range(n_docs):
            kept = 0
            for i in range(indptr_in[d], indptr_in[d + 1]):
                if counts[i] != 0:
                    kept += 1
            indptr[d + 1] = indptr[d] + kept
        nnz = indptr[n_docs]
        cols = np.empty(nnz, dtype=np.int64)
        vals = np.empty(nnz, dtype=np.float32)
        rows = np.empty(nnz, dtype=np.int64)
        k = 0
        for d in range(n_docs):
            for i in range(indptr_in[d], indptr_in[d + 1]):
                if counts[i] != 0:
                    cols[k], vals[k], rows[k] = indices[i], counts[i], d
                    k += 1
        # the vocabulary: distinct words, sorted, and each non-zero's position among them
        words, local = _distinct_in_range(cols, n_words)
        beta_u = _gather_columns(beta_t, words)                                # (U, T)
        n_used = words.shape[0]
        # the first step's mixtures f(c), c = 0, e_1..e_K, as columns (T, K + 1)
        bit_w = np.empty((n_bits, n_topics), dtype=np.float32)                  # W^T
        exp_w_t = np.empty((n_topics, n_bits), dtype=np.float32)                # exp(w_jt - max_t w_jt)
        mix = np.empty((n_topics, n_bits + 1), dtype=np.float32)
        for j in range(n_bits + 1):
            top = np.float32(-np.inf)
            for t in range(n_topics):
                a = bias[t] + (weight[t, j - 1] if j > 0 else np.float32(0.0))
                top = max(top, a)
            total = np.float32(0.0)
            for t in range(n_topics):
                a = bias[t] + (weight[t, j - 1] if j > 0 else np.float32(0.0))
                mix[t, j] = np.exp(a - top)
                total += mix[t, j]
            for t in range(n_topics):
                mix[t, j] /= total
        for j in range(n_bits):
            top = np.float32(-np.inf)
            for t in range(n_topics):
                bit_w[j, t] = weight[t, j]
                top = max(top, weight[t, j])
            for t in range(n_topics):
                exp_w_t[t, j] = np.exp(weight[t, j] - top)
        # the shared table ln max(beta_u mix, 1e-30), (U, K + 1)
        width = n_bits + 1
        table = np.empty(n_used * width, dtype=np.float32)
        scratch = np.empty(n_used * width, dtype=np.float32)
        every = np.arange(n_used)
        _wide_word_rates(0, n_used, every, beta_u, mix, table)
        _log_inplace(table, scratch, n_used * width)
        table = table.reshape((n_used, width))
        return indptr, cols, vals, rows, words, local, beta_u, table, bit_w, exp_w_t
