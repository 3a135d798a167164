"""Greedy pursuit for the Poisson likelihood by shared log tables over packed non-zeros.

The same greedy pursuit as :func:`bpetopics.bpe.pursuit.greedy_pursuit` (the codes are
the ones it defines, up to float summation order), organised around what documents share.
A document's score for a candidate code c is

    L_n(c) = sum_i x_i ln phi_c(w_i) + sum_k c_k log_odds_k,    phi_c = beta f(c)  (W,)

over its non-zeros i (with the mixtures' entropy prior, plus epsilon L_n H(f(c)): one
number a code, times the document's tokens), and phi_c depends on the code only, not on
the document:

* Step 1: every document starts from the empty code, so the K + 1 codes {0, e_1..e_K}
  are the same for the whole batch: ONE table ln phi_c(w) over the batch's own words
  (U x (K + 1)) serves every document, and the scores are one sparse product
  X_batch (P x U, CSR) @ table.
* Later steps: only the documents that improved go on; documents with the same current
  code z share the candidates z + e_j, so the logarithms are taken once per distinct
  (code, word) pair, ln phi_{z + e_j}(w) for all j, and each document sums the rows of
  its pairs (again a sparse product). Nothing is padded to the longest document.

On CPU with numba and a linear decoder (PoissBPE's default), everything after the table
runs in one compiled call per batch instead (:mod:`bpetopics.models.poissbpe.compiled.fused_pursuit`: each
document's later steps over its own non-zeros, no sharing, no per-step overhead; 1.8x
the step-by-step numba path on 20 Newsgroups). Otherwise (hidden layers, CUDA, no numba)
the steps run as above in torch, with numba loops for the pairs where available; the
Python loop runs over pursuit steps and memory-bounded chunks of pairs, never over
documents, bits or words.
"""

from __future__ import annotations

import torch

from bpetopics.bpe.threads import kernel_threads, torch_on_one_thread
from bpetopics.models.poissbpe.compiled import fused_pursuit, kernels
from bpetopics.bpe.greedy_step import accept_best, distinct_codes
from bpetopics.models.poissbpe.mixture_prior import mixture_entropies
from bpetopics.models.poissbpe.packed import PackedCounts, unique_ints

# Largest number of float elements one candidate pass may hold (pairs x bits x topics).
DEFAULT_BUDGET = 1 << 22

def table_pursuit(decoder, likelihood, batch: PackedCounts, log_odds, max_bits=None,
                  budget=DEFAULT_BUDGET, return_score=False, beta=None, mixture_entropy=0.0):
    """Codes for a packed batch of documents; same arguments and results as
    :func:`bpetopics.bpe.pursuit.greedy_pursuit`.

    On CPU the many small torch operations of a step run on one thread (waking a second
    OpenMP thread for each costs more than it saves, and on a busy machine far more);
    the compiled kernels get the threads torch was given.

    Parameters
    ----------
    beta : torch.Tensor, shape (W, T), optional
        The minibatch's topics when already computed (``likelihood.minibatch_params()``).
    mixture_entropy : float
        epsilon of the mixtures' entropy prior: a code c of document n scores
        epsilon L_n H(f(c)) more (:mod:`bpetopics.models.poissbpe.mixture_prior`); 0: none.

    Returns
    -------
    codes : torch.BoolTensor, shape (P, K)
    score : torch.Tensor, shape (P,)  (only if ``return_score``)
    """
    with torch_on_one_thread(batch.cols.device):
        return _pursuit(decoder, likelihood, batch, log_odds, max_bits, budget, return_score,
                        beta, float(mixture_entropy), kernel_threads())


def _pursuit(decoder, likelihood, batch, log_odds, max_bits, budget, return_score, beta,
             strength, threads):
    """The pursuit itself (see the module); ``threads`` for the compiled kernels."""
    with torch.no_grad():
        beta = likelihood.topic_word() if beta is None else beta.detach()
        bit_cols = decoder.bit_columns                                  # (K, H1)
        n_bits, device = bit_cols.shape[0], bit_cols.device
        log_odds = log_odds.to(device=device, dtype=torch.float32)
        max_steps = n_bits if max_bits is None else min(int(max_bits), n_bits)
        n_docs = len(batch)

        # The batch in its own vocabulary: words (U,), and each non-zero's position in it.
        words, local = batch.vocabulary(beta.shape[0])
        local_batch = PackedCounts(batch.indptr, local, batch.vals, batch.rows)
        beta_u = batch.topic_rows(beta)                                 # (U, T)

        # Step 1, shared: codes 0, e_1..e_K for all; table_wc = ln [beta f(c)]_w.
        pre0 = decoder.first_layer(torch.zeros(1, n_bits, device=device))          # (1, H1)
        mix = likelihood.link(decoder.forward_from_first(torch.cat([pre0, pre0 + bit_cols])))
        table = (beta_u @ mix.t()).clamp_min_(1e-30).log_()            # (U, K + 1)
        first_entropy = mixture_entropies(mix) if strength else None    # H(f(c)), (K + 1,)

        # A linear decoder's steps in one compiled call (CPU, numba); the step-by-step path
        # serves hidden layers, CUDA and the torch backend.
        if fused_pursuit.usable(decoder, device):
            codes, data, prior_score = fused_pursuit.run(decoder, local_batch, beta_u, table,
                                                         log_odds, max_steps, threads, strength,
                                                         first_entropy)
        else:
            codes, data, prior_score = _stepwise(decoder, likelihood, local_batch, beta_u, table,
                                                 log_odds, max_steps, budget, threads, strength,
                                                 first_entropy)
        if return_score:
            return codes, data + prior_score
        return codes


def _stepwise(decoder, likelihood, local_batch, beta_u, table, log_odds, max_steps, budget,
              threads, strength=0.0, first_entropy=None):
    """The steps one torch pass at a time (hidden layers, CUDA, no numba): step 1 scores
    every document by one sparse product with the shared table; later steps group the
    still-improving documents by code. Returns codes (P, K), data terms (P,) (with the
    entropy prior's epsilon L_n H(f(z_n)) when ``strength``) and summed log-odds (P,)."""
    n_docs, n_bits, device = len(local_batch), log_odds.shape[0], table.device
    scores = local_batch.to_sparse(table.shape[0]) @ table         # (P, K + 1)
    tokens = local_batch.totals().float() if strength else None    # L_n
    if strength:
        scores = scores + strength * tokens[:, None] * first_entropy[None, :]
    codes = torch.zeros(n_docs, n_bits, dtype=torch.bool, device=device)
    data = scores[:, 0].contiguous()                                # L of the empty code
    prior_score = torch.zeros(n_docs, device=device)
    cand = scores[:, 1:] + log_odds                                 # (P, K)
    active = torch.arange(n_docs, device=device)
    bit_cols = decoder.bit_columns
    for step in range(max_steps):
        if active.numel() == 0:
            break
        if step > 0:
            cand = _shared_code_scores(decoder, likelihood, local_batch.take(active),
                                       codes[active], beta_u, bit_cols, budget, threads,
                                       strength, None if tokens is None else tokens[active])
            cand = cand + log_odds + prior_score[active, None]
            cand.masked_fill_(codes[active], -torch.inf)
        step_taken = accept_best(cand, active, codes, data, prior_score, log_odds)
        if step_taken is None:
            break
        active = step_taken[0]
    return codes, data, prior_score


def _shared_code_scores(decoder, likelihood, sub: PackedCounts, sub_codes, beta_u, bit_cols,
                        budget, threads=1, strength=0.0, tokens=None):
    """Data term of z_n + e_j for each document n of ``sub`` and each bit j, (A, K), plus
    epsilon L_n H(f(z_n + e_j)) with the entropy prior (``strength`` epsilon, ``tokens``
    L_n (A,)).

    sub: A documents, their non-zeros in the batch's vocabulary (U words);
    sub_codes (A, K) their current codes; beta_u (U, T); bit_cols (K, H1).

    Documents with the same code share ln [beta f(z + e_j)]_w: it is computed once per
    distinct (code, word) pair, then summed per document:
    score_nj = sum_i x_i lnphi[pair(n, w_i), j].
    """
    n_words = beta_u.shape[0]
    n_bits, n_topics = bit_cols.shape[0], beta_u.shape[1]
    uniq, code_of_doc = distinct_codes(sub_codes)                              # (C, K)
    pre = decoder.first_layer(uniq.float())                                     # (C, H1)
    mix = likelihood.link(decoder.forward_from_first(pre[:, None, :] + bit_cols))  # (C, K, T)
    key = code_of_doc[sub.rows] * n_words + sub.cols                            # (nnz,)
    pairs, pair_of_nz = unique_ints(key, uniq.shape[0] * n_words)             # (M,)
    words, codes = pairs % n_words, pairs // n_words
    prior = strength * tokens[:, None] * mixture_entropies(mix)[code_of_doc] if strength else 0.0
    if kernels.available(beta_u.device):        # compiled loops (numba), CPU
        log_phi = kernels.log_mixtures(words, codes, beta_u, mix, threads)
        return kernels.pair_sums(sub, pair_of_nz, log_phi, threads) + prior
    # torch (CUDA, or no numba): phi for every batch word and candidate of a block of codes
    # in one matrix product, G = beta_u (U, T) @ f(z_c + e_j)^T (T, c K), then the rows of
    # the real pairs; pairs are sorted by code, so a block's pairs are contiguous.
    log_phi = torch.empty(pairs.numel(), n_bits, device=beta_u.device)          # (M, K)
    block = max(1, budget // (n_words * n_bits))
    for c0 in range(0, mix.shape[0], block):
        c1 = min(c0 + block, mix.shape[0])
        lo, hi = torch.searchsorted(pairs, torch.tensor([c0, c1], device=pairs.device)
                                    * n_words).tolist()
        if hi > lo:
            grid = (beta_u @ mix[c0:c1].reshape(-1, n_topics).t()).view(n_words, c1 - c0, n_bits)
            log_phi[lo:hi] = grid[words[lo:hi], codes[lo:hi] - c0].clamp_min_(1e-30).log_()
    per_pair = PackedCounts(sub.indptr, pair_of_nz, sub.vals, sub.rows)
    return per_pair.to_sparse(pairs.numel()) @ log_phi + prior                 # (A, K)
