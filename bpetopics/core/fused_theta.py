"""PoissBPE's theta gradients with a linear decoder in three compiled passes and two BLAS
products (numba, CPU, float32): what :meth:`PoissBPE._theta_step` otherwise takes in about
thirty small torch operations (README, "Speed and memory").

With codes z (P, K), decoder weights W (T, K) and bias b (T,), topics beta (T, W) =
softmax of the topic logits l, the loss of the theta step is the data term per token
(:mod:`bpetopics.core.fused_gradient`) plus the topics' priors (:mod:`bpetopics.core.topic_prior`):

    pass 1   out_n = b + W z_n,  f_n = softmax(out_n),  the data gradient g_i over the
             non-zeros, d_out_n = f_n * (d_f_n - <f_n, d_f_n>),
             dW = d_out^T z,  db = sum_n d_out_n,  u = mean_n f_n  (the topics' use)
    BLAS     G = beta beta^T  (T, T)
    pass 2   the diversity prior's T x T matrix A (``topic_overlap_grad``: weights u_t u_s
             off the diagonal, the norms' terms on it, A + A^T times the penalty's
             weight) and its inner products <beta_t, (A beta)_t> = sum_s A_ts G_ts
    BLAS     R = A beta  (T, W), the prior's gradient with respect to beta
    pass 3   dl_tw = beta_tw (R_tw - <beta_t, R_t> + s W - <beta_t, d_beta_t>) - s
             + [w in the batch] beta_tw d_beta_tw

the last line chaining, through the softmax, the diversity prior's gradient R, the
Dirichlet prior's s (W beta - 1) (s = eta / N_tok) and the data term's gradient d_beta,
non-zero at the batch's words only. The values are those of the torch path up to float
rounding (another summing order: training drifts like another seed; tests check every
gradient against it).
"""

from __future__ import annotations

import numpy as np
import torch

from bpetopics.core import kernels

numba = kernels.numba


def usable(decoder, beta: torch.Tensor) -> bool:
    """Whether the compiled passes serve this step: numba, CPU, float32, linear decoder."""
    return (kernels.available(beta.device) and beta.dtype == torch.float32 and decoder.is_linear
            and decoder.first.weight.dtype == torch.float32)


def set_gradients(decoder, likelihood, batch, codes: torch.Tensor, beta: torch.Tensor,
                  repulsion: float, smoothing: float) -> None:
    """Set the ``.grad`` of the decoder's weight and bias and of the topic logits to the
    theta step's (module docstring).

    Parameters
    ----------
    decoder : CodeDecoder
        Linear.
    likelihood : PoissonLikelihood
    batch : PackedCounts
        The minibatch (its vocabulary is computed or reused).
    codes : torch.BoolTensor, shape (P, K)
    beta : torch.Tensor, shape (W, T)
        This step's topics (``minibatch_params()``, a transposed view of (T, W)).
    repulsion : float
        The diversity prior's weight (``PoissBPE._penalty_weight()``; 0: none).
    smoothing : float
        s, the Dirichlet prior's weight per token (0: none).
    """
    beta_t = beta.detach().t()
    beta_t = beta_t if beta_t.is_contiguous() else beta_t.contiguous()          # (T, W)
    words, local = batch.vocabulary(beta_t.shape[1])
    beta_u = batch.topic_rows(beta.detach())                                    # (U, T)
    weight, bias = decoder.first.weight.detach(), decoder.first.bias.detach()
    tokens = max(float(batch.vals.sum()), 1.0)
    grad_w, grad_b, d_beta_u, usage = _decoder_and_data(
        codes.numpy().view(np.uint8), weight.numpy(), bias.numpy(), batch.rows.numpy(),
        local.numpy(), batch.vals.float().numpy(), beta_u.numpy(), np.float32(1.0 / tokens))
    n_topics = beta_t.shape[0]
    if repulsion and n_topics > 1:
        gram = (beta_t @ beta_t.t()).numpy()                                    # (T, T)
        d_gram, inner = _overlap_matrix(gram, usage, np.float32(repulsion))
        prior_grad = torch.from_numpy(d_gram) @ beta_t                         # (T, W)
    else:
        prior_grad, inner = torch.zeros(n_topics, 0), np.zeros(n_topics, dtype=np.float32)
    logits_grad = np.empty(beta_t.shape, dtype=np.float32)
    _topic_logits_grad(beta_t.numpy(), prior_grad.numpy(), inner, np.float32(smoothing), words.numpy(),
                       beta_u.numpy(), d_beta_u, logits_grad)
    decoder.first.weight.grad = torch.from_numpy(grad_w)
    decoder.first.bias.grad = torch.from_numpy(grad_b)
    likelihood.topic_logits.grad = torch.from_numpy(logits_grad)


if numba is not None:
    from numba import njit

    from bpetopics.core.fused_gradient import _data_gradient

    @njit(cache=True, nogil=True)
    def _decoder_and_data(codes, weight, bias, rows, local, vals, beta_u,
                          inv_tokens):  # pragma: no cover - compiled
        """Pass 1: dW (T, K), db (T,), d_beta_u (U, T) and the mean mixture u (T,)."""
        n_docs, n_bits = codes.shape
        n_topics = weight.shape[0]
        mix = np.empty((n_docs, n_topics), dtype=np.float32)
        for n in range(n_docs):                       # f_n = softmax(b + W z_n)
            for t in range(n_topics):
                mix[n, t] = bias[t]
            for k in range(n_bits):
                if codes[n, k]:
                    for t in range(n_topics):
                        mix[n, t] += weight[t, k]
            top = mix[n, 0]
            for t in range(1, n_topics):
                top = max(top, mix[n, t])
            total = np.float32(0.0)
            for t in range(n_topics):
                mix[n, t] = np.exp(mix[n, t] - top)
                total += mix[n, t]
            for t in range(n_topics):
                mix[n, t] /= total
        d_mix = np.zeros((n_docs, n_topics), dtype=np.float32)
        d_beta_u = np.zeros(beta_u.shape, dtype=np.float32)
        _data_gradient(rows, local, vals, beta_u, mix, inv_tokens, d_mix, d_beta_u)
        grad_w = np.zeros((n_topics, n_bits), dtype=np.float32)
        grad_b = np.zeros(n_topics, dtype=np.float32)
        usage = np.zeros(n_topics, dtype=np.float32)
        d_out = np.empty(n_topics, dtype=np.float32)
        for n in range(n_docs):
            dot = np.float32(0.0)
            for t in range(n_topics):
                dot += mix[n, t] * d_mix[n, t]
            for t in range(n_topics):
                d_out[t] = mix[n, t] * (d_mix[n, t] - dot)
                grad_b[t] += d_out[t]
                usage[t] += mix[n, t]
            for k in range(n_bits):
                if codes[n, k]:
                    for t in range(n_topics):
                        grad_w[t, k] += d_out[t]
        for t in range(n_topics):
            usage[t] /= max(n_docs, 1)
        return grad_w, grad_b, d_beta_u, usage

    @njit(cache=True, nogil=True)
    def _overlap_matrix(gram, usage, scale):  # pragma: no cover - compiled
        """Pass 2: the diversity prior's (A + A^T) scale (T, T) from the Gram matrix and the
        topics' use, and its inner products with beta, sum_s (A + A^T)_ts G_ts scale (T,)
        (``topic_prior.topic_overlap_grad``)."""
        n_topics = gram.shape[0]
        norms = np.empty(n_topics, dtype=np.float32)
        for t in range(n_topics):
            norms[t] = max(np.sqrt(gram[t, t]), np.float32(1e-30))
        total = np.float32(0.0)
        for t in range(n_topics):
            for s in range(n_topics):
                if s != t:
                    total += usage[t] * usage[s]
        total = max(total, np.float32(1e-30))
        a = np.zeros((n_topics, n_topics), dtype=np.float32)
        d_norms = np.zeros(n_topics, dtype=np.float32)
        for t in range(n_topics):
            for s in range(n_topics):
                if s != t:
                    a[t, s] = usage[t] * usage[s] / (total * norms[t] * norms[s])
                    weighted_cos = gram[t, s] * a[t, s]
                    d_norms[t] -= weighted_cos
                    d_norms[s] -= weighted_cos
        for t in range(n_topics):
            a[t, t] = d_norms[t] / norms[t] / (2 * norms[t])
        sym = np.empty((n_topics, n_topics), dtype=np.float32)
        inner = np.zeros(n_topics, dtype=np.float32)
        for t in range(n_topics):
            for s in range(n_topics):
                sym[t, s] = (a[t, s] + a[s, t]) * scale
                inner[t] += sym[t, s] * gram[t, s]
        return sym, inner

    @njit(cache=True, nogil=True)
    def _topic_logits_grad(beta_t, prior_grad, inner, strength, words, beta_u, d_beta_u,
                           out):  # pragma: no cover - compiled
        """Pass 3 into out (T, W): the module's dl. prior_grad (T, W), or (T, 0) for no
        diversity prior (inner then 0)."""
        n_topics, n_words = beta_t.shape
        dense = prior_grad.shape[1] > 0
        for t in range(n_topics):
            data_inner = np.float32(0.0)                  # <beta_t, d_beta_t>, batch words only
            for u in range(words.shape[0]):
                data_inner += beta_u[u, t] * d_beta_u[u, t]
            offset = strength * n_words - inner[t] - data_inner
            row, grad_row = beta_t[t], out[t]
            if dense:
                prior_row = prior_grad[t]
                for w in range(n_words):
                    grad_row[w] = row[w] * (prior_row[w] + offset) - strength
            else:
                for w in range(n_words):
                    grad_row[w] = row[w] * offset - strength
            for u in range(words.shape[0]):
                grad_row[words[u]] += beta_u[u, t] * d_beta_u[u, t]
