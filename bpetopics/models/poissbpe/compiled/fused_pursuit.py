"""The Poisson pursuit of a batch in one compiled call (numba, CPU, linear decoder).

Step 1 reads the batch's shared table ln [beta f(c)]_w of the codes 0, e_1..e_K
(:mod:`bpetopics.models.poissbpe.table_pursuit` computes it: one matrix product and one vectorised
logarithm); each document that improved then goes on alone. With a linear decoder
(``hidden=()``) its candidate mixtures are

    f(z + e_j) = softmax(a + w_j),    a = b + sum_{k in z} w_k   (T,),  w_j = W[:, j]

and a candidate's data term is ``sum_i x_i ln sum_t beta[w_i, t] f(z + e_j)_t`` over the
document's real non-zeros i. One compiled call runs every step of every document of the
minibatch: no Python and no torch operation per step, which is what the
step-by-step path spends most of its time on (a later step is ~25 small torch
operations for a few thousand multiply-adds). Documents are independent: with several
threads and enough work, each thread pursues its own share of them (:func:`thread_slots`)
by the same compiled call, which releases the GIL (``nogil``). Plain Python threads, not
numba's ``prange``: its pool left the calling thread idle during the loop and every torch
operation after it ran slower, so a training epoch on two threads took longer than on one.

The loop is :mod:`bpetopics.models.poissbpe.compiled.screened_pursuit`'s: a later step
first bounds every candidate and scores only those that can still win (the codes are
those of scoring every bit). The softmax is factored, ``exp(a_t + w_jt) = exp(a_t - max a)
exp(w_jt - max_t w_jt) * const_j``: T + K T exponentials per minibatch-step become T per
document-step, and a candidate whose factored sum under- or overflows is recomputed
directly. The codes are those of :func:`bpetopics.bpe.pursuit.reference_pursuit` up to
float rounding (the logarithm is Cephes' logf,
:func:`bpetopics.models.poissbpe.compiled.pursuit_loops.log_inplace`, and the exponential
LLVM's: each within one unit in the last place of torch's).
"""

from __future__ import annotations

import os

import numpy as np
import torch

from bpetopics.models.poissbpe.compiled import kernels, screened_pursuit

#: Multiply-adds of one later step over the batch (non-zeros x bits x topics) under which
#: one thread pursues the whole batch whatever the thread count (handing half to another
#: thread costs ~0.1 ms; a T = 20 minibatch of 64 documents, ~3 M, gains nothing).
MIN_PARALLEL_WORK = 5_000_000

_workers = None                 # (pid, size, pool): the threads that pursue the other slots


def usable(decoder, device) -> bool:
    """Whether the fused loop serves this decoder on this device: numba, CPU, and a linear
    decoder (no hidden layer: the candidates' mixtures are a softmax of a + w_j)."""
    return kernels.available(device) and len(decoder.head) == 0


def run(decoder, batch, beta_u, table, log_odds, max_steps, threads=1, strength=0.0,
        first_entropy=None):
    """The greedy pursuit of a packed batch in one compiled call (see the module).

    Parameters
    ----------
    decoder : CodeDecoder
        Linear (``usable``): its bit columns W^T (K, T) and bias b (T,).
    batch : PackedCounts
        The P documents, columns in the batch's own vocabulary of U words.
    beta_u : torch.Tensor, shape (U, T)
    table : torch.Tensor, shape (U, K + 1)
        ln [beta f(c)]_w for the codes c = 0, e_1..e_K of the first step.
    log_odds : torch.Tensor, shape (K,)
    max_steps : int
        Largest number of bits a code may have.
    threads : int
    strength : float
        epsilon of the mixtures' entropy prior (``mixture_entropy``; 0: none).
    first_entropy : torch.Tensor, shape (K + 1,), optional
        H(f(c)) of the codes c = 0, e_1..e_K (needed with a prior).

    Returns
    -------
    codes : torch.BoolTensor, shape (P, K)
    data, prior_score : torch.Tensor, shape (P,)
        Each code's data term, and its summed log-odds plus the entropy prior's term
        epsilon L_n H(f(z_n)).
    """
    n_docs = len(batch)
    bit_w = decoder.bit_columns.detach().float().contiguous()                # (K, T)
    exp_w = torch.exp(bit_w - bit_w.max(dim=1, keepdim=True).values)
    bias = decoder.first.bias.detach().float().contiguous()
    codes = torch.zeros(n_docs, bit_w.shape[0], dtype=torch.bool)
    data, prior_score, mixture = torch.empty(n_docs), torch.empty(n_docs), torch.empty(n_docs)
    if first_entropy is None:
        first_entropy = torch.zeros(bit_w.shape[0] + 1)
    work = batch.cols.shape[0] * bit_w.shape[0] * bit_w.shape[1]
    # Each thread's share is at least half the threshold (a hand-over must pay for itself
    # on machines with many cores too).
    threads = 1 if work < MIN_PARALLEL_WORK else max(1, min(int(threads), n_docs,
                                                            work // max(1, MIN_PARALLEL_WORK // 2)))
    args = (batch.indptr.numpy(), batch.cols.numpy(), batch.vals.float().numpy(),
            beta_u.float().contiguous().numpy(), table.float().contiguous().numpy(),
            bit_w.numpy(), exp_w.t().contiguous().numpy(), bias.numpy(),
            log_odds.float().contiguous().numpy(), np.float32(strength),
            first_entropy.float().contiguous().numpy(), codes.numpy().view(np.uint8), data.numpy(),
            prior_score.numpy(), mixture.numpy(), int(max_steps))
    kernel = screened_pursuit.screened_kernel
    order, bounds = thread_slots(np.diff(args[0]), threads)
    slots = [order[bounds[s]:bounds[s + 1]] for s in range(threads)]
    others = [thread_pool(threads - 1).submit(kernel, *args, docs) for docs in slots[1:]]
    kernel(*args, slots[0])                                        # this thread's own share
    for other in others:
        other.result()
    return codes, data, prior_score + mixture


def thread_pool(size: int):
    """A pool of at least ``size`` threads for :func:`run`'s other slots, kept for later
    calls; made again when more threads are asked for, or in a forked child (a pool's
    threads do not survive a fork: the child would wait on them for ever)."""
    global _workers
    pid = os.getpid()
    if _workers is None or _workers[0] != pid or _workers[1] < size:
        from concurrent.futures import ThreadPoolExecutor

        pool = ThreadPoolExecutor(max_workers=size, thread_name_prefix="bpetopics-pursuit")
        _workers = (pid, size, pool)
    return _workers[2]


def thread_slots(lengths: np.ndarray, n_slots: int) -> tuple[np.ndarray, np.ndarray]:
    """Documents dealt to ``n_slots`` threads with about equal work each.

    A document's pursuit costs about its number of non-zeros times its steps, and one long
    document can outweigh dozens of short ones, so an even split by count leaves one
    thread waiting. The documents,
    longest first, are dealt in a snake: 0, 1, .., S-1, S-1, .., 1, 0, 0, 1, ...

    Parameters
    ----------
    lengths : np.ndarray, shape (P,)
        Non-zeros of each document.
    n_slots : int
        S, the threads.

    Returns
    -------
    order : np.ndarray of int64, shape (P,)
        Document indices, slot by slot.
    slot_bounds : np.ndarray of int64, shape (S + 1,)
        Slot s has ``order[slot_bounds[s]:slot_bounds[s + 1]]``.
    """
    n_docs = lengths.shape[0]
    if n_slots <= 1:
        return np.arange(n_docs, dtype=np.int64), np.array([0, n_docs], dtype=np.int64)
    by_length = np.argsort(-lengths, kind="stable")
    position = np.arange(n_docs)
    within, round_ = position % n_slots, position // n_slots
    slot = np.where(round_ % 2 == 0, within, n_slots - 1 - within)
    order = by_length[np.argsort(slot, kind="stable")].astype(np.int64)
    slot_bounds = np.concatenate([[0], np.cumsum(np.bincount(slot, minlength=n_slots))])
    return order, slot_bounds.astype(np.int64)
