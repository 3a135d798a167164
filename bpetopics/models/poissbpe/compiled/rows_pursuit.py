"""A minibatch's whole pursuit from its CSR rows, in compiled calls that hold no lock and
that two threads share (PoissBPE on CPU with a linear decoder, numba).

The pipelined schedule (:mod:`bpetopics.models.poissbpe.pipelined_steps`) hands the next
minibatch's pursuit to a second thread while this one takes the theta step, and joins it
after. Every moment a thread spends in Python it holds the global interpreter lock (GIL),
and the other thread's theta step, a chain of short calls, waits for it at each call
(a few tens of microseconds more of the helper's Python a minibatch made a measurable
share of the theta steps' time). So each thread takes part in one compiled
call, and the parts are claimed with atomic counters (:mod:`bpetopics.models.poissbpe.compiled.atomics`),
not a Python lock:

    claim 0 of "prepare"   the first thread to arrive packs the rows (explicit zeros
                           dropped), finds their vocabulary (words (U,), each
                           non-zero's position there), beta's rows there (U, T) and the
                           first step's shared table ln max(beta_u f(c)^T, 1e-30) over
                           c = 0, e_1..e_K (U, K + 1) and, with the mixtures' entropy
                           prior, H(f(c)) (:mod:`~bpetopics.models.poissbpe.compiled.
                           rows_preparation`), then publishes them
    the other thread       waits (spinning, no lock) until they are published
    both                   claim shares of the documents (of decreasing work,
                           ``rows_preparation.guided_bounds``) and pursue them
                           (:mod:`bpetopics.models.poissbpe.compiled.screened_pursuit`'s loop)
                           until none is left

Whichever thread arrives first does whatever is left, so one thread alone (the steps in
order, or a helper that starts late) runs it all, and nothing waits on the helper's
Python (:class:`~bpetopics.models.poissbpe.compiled.pursuit_helper.PursuitHelper`). A document's code is computed alone, so the split
changes no code: the codes are the greedy pursuit's for the theta copied
(:class:`ThetaCopy`; the same as :func:`bpetopics.models.poissbpe.table_pursuit.table_pursuit`'s up
to float rounding: the table's products and logarithms are this package's compiled
loops, not torch's). The buffers the threads share are allocated before the calls, at
their largest sizes (the rows' non-zeros; a vocabulary of at most min(non-zeros, W)
words).
"""

from __future__ import annotations

import os
import time

import numpy as np
import scipy.sparse as sp
import torch

from bpetopics.models.poissbpe.compiled import fused_pursuit, kernels
from bpetopics.models.poissbpe.packed import PackedCounts
from bpetopics.models.poissbpe.compiled.pursuit_helper import helper

numba = kernels.numba

# the slots of a RowsPursuit's ``state`` (int64)
_CLAIM_PREPARE, _PREPARED, _NEXT_SHARE, _DONE_SHARES, _FAILED, _N_USED, _NNZ, _GO = range(8)

#: A thread waiting for the other spins this many times (about 50 us here) in a compiled
#: call, then gives its processor away once (``os.sched_yield``) and spins again: waits are
#: ~5-30 us when both threads run, and a machine with more busy threads than processors
#: must not leave the other thread waiting for the spinner's time slice. Two trainings
#: on two threads each, at once on the 2 cores here (T = 20, 8 epochs, wall s each):
#: 1.81-1.82 with 2,048 spins, 2.06-2.11 with 512, 2.38-2.54 with 16,384, 1.70-2.19 with
#: a lock-based hand-off; alone 0.84-0.87 with any of them, 1.29 with the lock.
SPINS = 1 << 11

_give_way = getattr(os, "sched_yield", lambda: time.sleep(0))
_WAITING = -2                   # _claim_and_pursue's "still waiting: call again"


class ThetaCopy:
    """What the pursuit reads of the model, copied (the theta step may change the model
    while the pursuit runs): the decoder's weights and bias, the prior's log-odds, beta;
    numpy float32 arrays (the compiled calls read them; copies in numpy cost a fraction
    of torch's per call).

    Parameters
    ----------
    decoder : CodeDecoder
        Linear (``hidden=()``).
    log_odds : torch.Tensor or np.ndarray, shape (K,)
        The prior's log-odds times its weight, for the step the codes are for.
    beta : torch.Tensor, shape (W, T)
        The step's topics (``minibatch_params()``): read, not copied (each step makes a
        new one and nothing changes it in place).
    max_steps : int
    mixture_entropy : float
        epsilon of the mixtures' entropy prior (0: none).
    """

    def __init__(self, decoder, log_odds, beta, max_steps, mixture_entropy=0.0):
        first = decoder.first
        self.weight = _float32_copy(first.weight)                                     # (T, K)
        self.bias = _float32_copy(first.bias)                                         # (T,)
        self.log_odds = _float32_copy(log_odds)                                       # (K,)
        self.beta_t = np.ascontiguousarray(beta.detach().numpy().T)                   # (T, W)
        self.max_steps = int(max_steps)
        self.strength = float(mixture_entropy)

    @classmethod
    def of_model(cls, model, beta, step: int | None = None, prior: bool = True) -> "ThetaCopy":
        """What the pursuit of training step ``step`` reads of ``model`` (a BPE model with a
        linear decoder), copied now: the prior's log-odds times its weight at that step
        (None: the whole prior, as encoding and the end-of-epoch checks pursue). With
        ``prior=False`` the log-odds are zeros, for :meth:`RowsPursuit.release` to give.
        The mixtures' entropy prior is the model's (``mixture_entropy_in_use``) either way."""
        n_bits = model.code_length()
        max_steps = n_bits if model.max_bits is None else min(int(model.max_bits), n_bits)
        strength = model.mixture_entropy_in_use()
        if not prior:
            return cls(model.decoder_, np.zeros(n_bits, dtype=np.float32), beta, max_steps, strength)
        weight = 1.0 if step is None else model.prior_weight(step)
        return cls(model.decoder_, weight * model.prior_.bit_log_odds(), beta, max_steps, strength)


def _float32_copy(values) -> np.ndarray:
    """A float32 numpy copy of a CPU tensor or array (rounded as torch's ``.to``)."""
    if torch.is_tensor(values):
        values = values.detach().numpy()
    return np.array(values, dtype=np.float32, copy=True)


def _own_cache_line() -> np.ndarray:
    """Eight int64 zeros (a pursuit's ``state``) on a 64-byte cache line of their own,
    with a line of padding either side, so that a thread spinning on the state shares no
    line with the buffers the other thread writes (a precaution: the two-thread epochs'
    spread on this host, fast or slow by about 20% for seconds at a time, stayed)."""
    line = np.zeros(32, dtype=np.int64)
    start = (-line.ctypes.data % 64) // 8 + 8
    return line[start:start + 8]


def pursue(X_batch, theta: ThetaCopy, threads: int = 1):
    """The pursuit of the rows of ``X_batch`` (CSR) under ``theta``, now: (batch, codes,
    score) as :meth:`RowsPursuit.result`. A minibatch with enough work
    (``fused_pursuit.MIN_PARALLEL_WORK`` multiply-adds a later step) is shared with the
    helper thread when ``threads`` >= 2."""
    work = X_batch.nnz * theta.weight.shape[0] * theta.weight.shape[1]
    shared = threads > 1 and work >= fused_pursuit.MIN_PARALLEL_WORK
    pursuit = RowsPursuit(X_batch, theta, 2 if shared else 1)
    if shared:
        helper().hand(pursuit)
    return pursuit.finish().result()


class RowsPursuit:
    """The pursuit of the rows of ``X_batch`` (CSR, P x W) under the copied ``theta``
    (:class:`ThetaCopy`) in ``n_shares`` shares, which the threads calling :meth:`run`
    or :meth:`finish` claim in turn; :meth:`result` after :meth:`finish`.

    Parameters
    ----------
    X_batch : scipy.sparse.csr_matrix, shape (P, W)
    theta : ThetaCopy
    n_shares : int
        1: the first call does everything; more: shares of 1/2, 1/4, ... of the work,
        the last two equal.
    ready : bool
        False: ``theta``'s log-odds are not known yet (the prior's step that sets them
        has not been taken): a thread may prepare, but no share is pursued until
        :meth:`release` gives them.
    """

    def __init__(self, X_batch, theta, n_shares: int = 1, ready: bool = True):
        if not (sp.isspmatrix_csr(X_batch) or isinstance(X_batch, sp.csr_array)):
            X_batch = sp.csr_matrix(X_batch)
        n_topics, n_bits = theta.weight.shape
        n_docs, n_words = X_batch.shape
        nnz = int(X_batch.indptr[-1])
        most = max(1, min(nnz, n_words))                  # the vocabulary's largest size
        self.X_batch, self.theta = X_batch, theta
        self.n_shares = max(1, int(n_shares))
        self._pursued_here = 0                # shares pursued by the thread that finishes
        self.state = _own_cache_line()
        self.state[_GO] = 1 if ready else 0
        self.indptr = np.empty(n_docs + 1, dtype=np.int64)
        self.cols, self.rows, self.local = np.empty((3, nnz), dtype=np.int64)
        self.vals = np.empty(nnz, dtype=np.float32)
        self.words = np.empty(most, dtype=np.int64)
        self.beta_u = np.empty((most, n_topics), dtype=np.float32)
        self.table = np.empty(most * (n_bits + 1), dtype=np.float32)
        bit_w = np.empty((n_bits, n_topics), dtype=np.float32)       # W^T
        exp_w_t = np.empty((n_topics, n_bits), dtype=np.float32)     # exp(w_jt - max_t w_jt)
        self.codes = np.zeros((n_docs, n_bits), dtype=np.uint8)
        self.data, self.prior, self.mixture = np.empty((3, n_docs), dtype=np.float32)
        first_entropy = np.zeros(n_bits + 1, dtype=np.float32)     # H(f(c)), with the prior
        order_and_bounds = np.empty(n_docs + self.n_shares + 1, dtype=np.int64)
        # one dtype each whatever the corpus's (int or float counts, 32- or 64-bit ids), so
        # that the kernel compiles once: the counts as float64 hold any integer count exactly
        self._args = (X_batch.indptr.astype(np.int64, copy=False), X_batch.indices.astype(np.int32, copy=False),
                      X_batch.data.astype(np.float64, copy=False),
                      theta.beta_t, theta.weight, theta.bias, theta.log_odds, np.float32(theta.strength),
                      first_entropy, theta.max_steps, self.n_shares, self.indptr, self.cols, self.vals,
                      self.rows, self.words, self.local, self.beta_u, self.table, bit_w, exp_w_t,
                      self.codes, self.data, self.prior, self.mixture,
                      order_and_bounds[:n_docs], order_and_bounds[n_docs:], self.state)

    def release(self, log_odds, weight: float = 1.0) -> None:
        """Give the log-odds a pursuit made with ``ready=False`` waits for, ``weight``
        times ``log_odds`` (K,: a CPU tensor or an array) rounded to float32; its shares may
        be pursued from now on."""
        given = log_odds.detach().numpy() if torch.is_tensor(log_odds) else np.asarray(log_odds)
        _publish(self.theta.log_odds, given, float(weight), self.state)

    def let_in(self, spins: int) -> bool:
        """Wait (spinning, holding no lock) up to ``spins`` times for a thread to start on
        this pursuit: whether one has. A thread that holds no lock while another thread's
        Python runs leaves it the GIL (Python hands the GIL to a waiting thread only if the
        holder lets go for long enough)."""
        return _await_flag(self.state, _CLAIM_PREPARE, spins) != 0

    def abandon(self) -> None:
        """Never :meth:`release` it: a thread waiting to pursue its shares stops."""
        self.state[_GO] = -1

    def run(self) -> "RowsPursuit":
        """Take part: prepare if no thread has, then pursue shares until none is left to
        claim (a compiled call that holds no lock; any thread). Returns self."""
        self._run()
        return self

    def join(self) -> None:
        """:meth:`run` by the thread that will :meth:`finish`: the shares it pursues are
        counted, so :meth:`finish` need not wait for them."""
        self._pursued_here += max(self._run(), 0)

    def _run(self) -> int:
        """:meth:`run`; the shares this call pursued (-1 if preparing failed)."""
        while (done := _claim_and_pursue(*self._args, SPINS)) == _WAITING:
            _give_way()
        return done

    def finish(self) -> "RowsPursuit":
        """:meth:`run`, then wait (spinning, holding no lock) until every share is done,
        whichever thread took it: after it :meth:`result` may be read. Returns self.
        Raises RuntimeError if a part failed on either thread."""
        n_shares = self.n_shares
        if self._pursued_here < n_shares:
            self._pursued_here += max(self._run(), 0)
        if self._pursued_here < n_shares:              # the other thread took some
            while not _all_done(self.state, n_shares, SPINS):
                _give_way()
        if self.state[_PREPARED] < 0 or self.state[_FAILED]:
            raise RuntimeError("the pursuit failed on one of its threads (out of memory?)")
        if self.state[_GO] < 0:
            raise RuntimeError("the pursuit was abandoned before its log-odds were given")
        return self

    def result(self):
        """(batch, codes, score), after :meth:`finish`.

        Returns
        -------
        batch : PackedCounts
            The rows as ``PoissonLikelihood.batch`` gives them (explicit zeros dropped),
            their vocabulary attached.
        codes : torch.BoolTensor, shape (P, K)
        score : torch.Tensor, shape (P,)
            Each code's data term plus its bits' log-odds (and the entropy prior's term).
        """
        nnz, used = int(self.state[_NNZ]), int(self.state[_N_USED])
        batch = PackedCounts(*(torch.from_numpy(a) for a in (
            self.indptr, self.cols[:nnz], self.vals[:nnz], self.rows[:nnz])))
        batch._vocabulary = (torch.from_numpy(self.words[:used]), torch.from_numpy(self.local[:nnz]))
        return batch, torch.from_numpy(self.codes.view(np.bool_)), torch.from_numpy(self.data + self.prior + self.mixture)


if numba is not None:
    from bpetopics.compiled.kernel_cache import cached_njit
    from bpetopics.models.poissbpe.compiled.atomics import cpu_relax, fetch_add, load_acquire, store_release
    from bpetopics.models.poissbpe.compiled.rows_preparation import guided_bounds, prepare_into
    from bpetopics.models.poissbpe.compiled.screened_pursuit import screened_kernel

    @cached_njit(nogil=True)
    def _claim_and_pursue(indptr_in, indices, counts, beta_t, weight, bias, log_odds, strength,
                          first_entropy, max_steps, n_shares, indptr, cols, vals, rows,
                          words, local, beta_u, table, bit_w, exp_w_t, codes, data, prior, mixture,
                          order, bounds, state, spins):  # pragma: no cover - compiled
        """:meth:`RowsPursuit.run`'s call (the module docstring): the number of shares
        this call pursued once none is left to claim, -1 if preparing failed,
        :data:`_WAITING` if the other thread's preparation or the log-odds
        (:meth:`RowsPursuit.release`) took longer than ``spins`` waits (call again)."""
        n_bits = weight.shape[1]
        if fetch_add(state, _CLAIM_PREPARE, 1) == 0:
            ok = False
            try:
                used, nnz = prepare_into(indptr_in, indices, counts, beta_t, weight, bias, indptr,
                                         cols, vals, rows, words, local, beta_u, table, bit_w, exp_w_t,
                                         strength, first_entropy)
                guided_bounds(indptr, n_shares, order, bounds)
                state[_N_USED], state[_NNZ] = used, nnz
                ok = True
            except Exception:  # noqa: BLE001 - published, so the other thread stops waiting
                pass
            store_release(state, _PREPARED, 1 if ok else -1)
            if not ok:
                return -1
        else:
            prepared = _await_flag(state, _PREPARED, spins)
            if prepared == 0:
                return _WAITING
            if prepared < 0:
                return -1
        go = _await_flag(state, _GO, spins)        # the log-odds (RowsPursuit.release)
        if go == 0:
            return _WAITING
        if go < 0:
            return 0
        if load_acquire(state, _NEXT_SHARE) >= n_shares:
            return 0                               # nothing left to claim
        used, nnz = state[_N_USED], state[_NNZ]
        grid = table[:used * (n_bits + 1)].reshape((used, n_bits + 1))
        pursued = 0
        while True:
            share = fetch_add(state, _NEXT_SHARE, 1)
            if share >= n_shares:
                return pursued
            docs = order[bounds[share]:bounds[share + 1]]
            try:
                screened_kernel(indptr, local[:nnz], vals[:nnz], beta_u[:used], grid, bit_w, exp_w_t,
                                bias, log_odds, strength, first_entropy, codes, data, prior, mixture,
                                max_steps, docs)
            except Exception:  # noqa: BLE001 - counted as done, so no thread waits for ever
                store_release(state, _FAILED, 1)
            fetch_add(state, _DONE_SHARES, 1)
            pursued += 1

    @cached_njit(nogil=True)
    def _await_flag(state, slot, spins):  # pragma: no cover - compiled
        """``state[slot]`` once it is not 0, waiting up to ``spins`` (0 if it stays 0)."""
        for _ in range(spins):
            value = load_acquire(state, slot)
            if value != 0:
                return value
            cpu_relax()
        return load_acquire(state, slot)

    @cached_njit(nogil=True)
    def _publish(log_odds, given, weight, state):  # pragma: no cover - compiled
        """log_odds[:] = weight * given (in given's precision, then rounded to float32, as
        torch's product and ``.to``), then the go-ahead (a release store: a thread that
        sees it sees the values)."""
        for k in range(log_odds.shape[0]):
            log_odds[k] = weight * given[k]
        store_release(state, _GO, 1)

    @cached_njit(nogil=True)
    def _all_done(state, n_shares, spins):  # pragma: no cover - compiled
        """Whether every share is done (or preparing failed, or the pursuit was
        abandoned), waiting up to ``spins``."""
        for _ in range(spins):
            if (load_acquire(state, _DONE_SHARES) >= n_shares or load_acquire(state, _PREPARED) < 0
                    or load_acquire(state, _GO) < 0):
                return True
            cpu_relax()
        return False
