"""Split moves for PoissBPE's topics: which topic holds two themes, and its two halves.

A local optimum that restarts from random documents cannot leave: two planted themes
merged into one topic while another topic dies (or duplicates a third). Every document
of either theme then shares the merged topic, so their codes are the same and no
gradient can pull the two apart. A *split* move seeds the freed topic and the merged
one from the two halves of the merged topic's documents.

What topic t explains of document n is its share of each word count (the E-step of the
multinomial mixture):

    R^t_nw = x_nw beta_wt f_t(z_n) / sum_s beta_ws f_s(z_n)

Its documents' rows R^t_n are split in two by spherical 2-means, and the split's value
is the log-likelihood it gains when each half gets its own word distribution (maximum
likelihood, sum_w C_w ln(C_w / C) for summed counts C):

    gain_t = ll(C^t_1) + ll(C^t_2) - ll(C^t_1 + C^t_2)    (nats, >= 0)

A topic that merges two themes gains about ln 2 per token it explains; one theme's
topic gains only what sampling noise gives. The topic to give up for a split is the one
whose loss costs least (:func:`deletion_losses`); :func:`plan_moves` decides.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from bpetopics.models.poissbpe.compiled import kernels
from bpetopics.models.poissbpe.compiled import topic_split as compiled_split
from bpetopics.models.poissbpe.two_means import POWER_TOLERANCE, two_means

__all__ = ["explained_counts", "split_gain", "split_gains", "deletion_losses", "plan_moves"]

def explained_counts(X: sp.csr_matrix, beta: np.ndarray, mix: np.ndarray) -> np.ndarray:
    """R^t_nw at each non-zero of X: what each topic explains of each word count.

    Parameters
    ----------
    X : scipy.sparse.csr_matrix, shape (N, W)
    beta : np.ndarray, shape (W, T)
        Topics as columns.
    mix : np.ndarray, shape (N, T)
        Each document's mixture f(z_n).

    Returns
    -------
    np.ndarray, shape (nnz, T)
        Row i is x_i's count shared among the topics (rows sum to the counts), in the
        order of X's non-zeros.
    """
    X = sp.csr_matrix(X)
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    share = beta[X.indices] * mix[rows]                                 # (nnz, T)
    share /= np.maximum(share.sum(1, keepdims=True), 1e-300)
    return share * X.data[:, None]


def _loglik(counts: np.ndarray) -> float:
    """sum_w C_w ln(C_w / C): the multinomial log-likelihood at its maximum, (W,)."""
    counts = counts[counts > 0]
    return float((counts * np.log(counts / counts.sum())).sum()) if counts.size else 0.0


def split_gain(first: np.ndarray, second: np.ndarray) -> float:
    """gain = ll(C_1) + ll(C_2) - ll(C_1 + C_2) in nats: what giving each half's summed
    counts (W,) its own word distribution gains over one for both."""
    return _loglik(first) + _loglik(second) - _loglik(first + second)


def split_gains(X: sp.csr_matrix, beta: np.ndarray, mix: np.ndarray, min_tokens: float = 1.0):
    """The value of splitting each topic in two, and the halves' summed counts.

    Parameters
    ----------
    X : scipy.sparse.csr_matrix, shape (N, W)
        A sample of documents.
    beta : np.ndarray, shape (W, T)
    mix : np.ndarray, shape (N, T)
        The documents' mixtures under their current codes.
    min_tokens : float
        Documents of which topic t explains fewer tokens are left out of its split.

    Returns
    -------
    gains : np.ndarray, shape (T,)
        gain_t in nats (0 for a topic with fewer than two documents).
    halves : np.ndarray, shape (T, 2, W)
        C^t_1 and C^t_2, the explained counts summed over each half.
    """
    X = sp.csr_matrix(X)
    n_topics = beta.shape[1]
    gains = np.zeros(n_topics)
    if kernels.available("cpu"):                   # the loop over topics compiled
        halves, split = compiled_split.split_halves(X.indptr, X.indices, X.data.astype(np.float64),
                                                    np.ascontiguousarray(beta, dtype=np.float64),
                                                    np.ascontiguousarray(mix, dtype=np.float64),
                                                    X.shape[1], float(min_tokens), POWER_TOLERANCE)
        for t in np.flatnonzero(split):
            gains[t] = split_gain(halves[t, 0], halves[t, 1])
        return gains, halves
    explained = explained_counts(X, beta, mix)                          # (nnz, T)
    halves = np.zeros((n_topics, 2, X.shape[1]))
    for t in range(n_topics):                       # a loop over topics, not documents
        R = sp.csr_matrix((explained[:, t], X.indices, X.indptr), shape=X.shape)
        keep = np.flatnonzero(np.asarray(R.sum(1)).ravel() >= min_tokens)
        if keep.size < 2:
            continue
        R = R[keep]
        second = two_means(R)
        halves[t, 0] = np.asarray(R[~second].sum(0)).ravel()
        halves[t, 1] = np.asarray(R[second].sum(0)).ravel()
        gains[t] = split_gain(halves[t, 0], halves[t, 1])
    return gains, halves


def deletion_losses(X: sp.csr_matrix, beta: np.ndarray, mix: np.ndarray) -> np.ndarray:
    """What the documents lose (nats) when topic t is taken away, for every t.

    Without t a document's mixture is renormalised over the other topics, or (when it
    held little else) spread evenly over them, whichever explains the word better:

        phi^-t_nw = max( (phi_nw - beta_wt f_t) / (1 - f_t),  sum_{s != t} beta_ws / (T - 1) )
        loss_t    = sum_n sum_w x_nw max(ln phi_nw - ln phi^-t_nw, 0)

(a word that the current mixture explains worse than the fallback loses nothing, and
gains nothing either: taking a topic away never helps).

    Parameters
    ----------
    X : scipy.sparse.csr_matrix, shape (N, W)
    beta : np.ndarray, shape (W, T)
    mix : np.ndarray, shape (N, T)

    Returns
    -------
    np.ndarray, shape (T,)

    With numba the sums run in one compiled pass over the non-zeros (:func:`bpetopics.models.poissbpe.compiled.topic_split.deletion_losses`,
    the same terms in another summing order, and faster: numpy's steps make ten
    (nnz, T) temporaries, the largest part of a split check).
    """
    X = sp.csr_matrix(X)
    n_topics = beta.shape[1]
    if kernels.available("cpu"):
        return compiled_split.deletion_losses(X.indptr, X.indices, X.data.astype(np.float64),
                                np.ascontiguousarray(beta, dtype=np.float64),
                                np.ascontiguousarray(mix, dtype=np.float64))
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    beta_nz = beta[X.indices]                                           # (nnz, T)
    share = beta_nz * mix[rows]
    phi = np.maximum(share.sum(1, keepdims=True), 1e-300)
    renormalised = np.maximum(phi - share, 0) / np.maximum(1 - mix[rows], 1e-12)
    even = (beta_nz.sum(1, keepdims=True) - beta_nz) / max(n_topics - 1, 1)
    rest = np.maximum(np.maximum(renormalised, even), 1e-300)
    return X.data @ np.maximum(np.log(phi) - np.log(rest), 0)


def plan_moves(X: sp.csr_matrix, beta: np.ndarray, mix: np.ndarray, restart, min_gain: float,
               similarity: float):
    """The split moves worth making on a sample of documents, in order.

    1. *Forced*: each topic of ``restart`` (dead, duplicated or no document's top topic)
       takes the second half of the topic whose split gains most, whatever that gain
       (a topic that serves no document is worth less than any split; with only gains
       above the noise correction, a dead topic stayed dead after the first half of
       training).
    2. *Replace*: while the best split gains more than the least needed topic's loss
       (:func:`deletion_losses`), that topic takes its second half.
    3. *Hand over*: a topic one of whose halves has cosine above ``similarity`` with
       another topic gives that half's documents to it.

    Moves 2 and 3 only split topics that gain at least ``min_gain`` nats per token they
    explain; no topic takes part in two moves.

    Parameters
    ----------
    X, beta, mix :
        As for :func:`split_gains`.
    restart : array of int
        Topics to restart.
    min_gain : float
    similarity : float

    Returns
    -------
    moves : list of (split, half, taker, replace)
        Topic ``split`` keeps half ``1 - half``; topic ``taker`` takes the documents of
        half ``half``, with its words (``replace``) or keeping its own.
    halves : np.ndarray, shape (T, 2, W)
    """
    gains, halves = split_gains(X, beta, mix)
    # the maximum-likelihood gain is biased up by about half a nat per word the topic
    # uses (a chi-square with W - 1 degrees of freedom)
    gains -= 0.5 * ((halves.sum(1) > 0).sum(1) - 1)
    per_token = gains / np.maximum(halves.sum((1, 2)), 1)
    busy = {int(t) for t in restart}
    moves = []

    def best_split(exclude):
        for g in np.argsort(-gains, kind="stable"):
            if int(g) not in busy and int(g) != exclude:
                return int(g)
        return None

    for t in restart:
        g = best_split(-1)
        splittable = halves[g].sum(1).min() > 0 if g is not None else False
        if g is not None and (gains[g] > 0 or splittable):
            busy.add(g)
            moves.append((g, 1, int(t), True))
    gains[per_token < min_gain] = -np.inf           # noise, not two themes
    losses = deletion_losses(X, beta, mix)
    for t in np.argsort(losses, kind="stable"):
        t = int(t)
        if t in busy:
            continue
        g = best_split(t)
        if g is None or not gains[g] > max(losses[t], 0):
            break
        busy.update((t, g))
        moves.append((g, 1, t, True))
    unit_halves = halves / np.maximum(np.linalg.norm(halves, axis=2, keepdims=True), 1e-300)
    like = unit_halves @ (beta / np.linalg.norm(beta, axis=0, keepdims=True))   # (T, 2, T)
    like[np.arange(len(gains)), :, np.arange(len(gains))] = 0
    for t in np.argsort(-gains, kind="stable"):
        t = int(t)
        if not gains[t] > 0 or t in busy:
            continue
        half, taker = np.unravel_index(np.argmax(like[t]), like[t].shape)
        if like[t, half, taker] > similarity and int(taker) not in busy:
            busy.update((t, int(taker)))
            moves.append((t, int(half), int(taker), False))
    return moves, halves
