"""PoissBPE's theta gradients with a linear decoder in compiled passes (numba, CPU,
float32): what :meth:`PoissBPE._theta_step` otherwise takes in about thirty small torch
operations and two T x T x W matrix products (docs/results/speed.md). :func:`set_gradients` writes the gradients out
(:func:`share_gradients`: those of one process's share of a shared step;
:func:`add_prior_gradients`: the topics' priors, added once to the step's sums);
:func:`take_step`, what training runs, also takes the Adam step and ends pass 3 inside
the topic logits' Adam step and the next topics' softmax
(:mod:`bpetopics.models.poissbpe.compiled.topic_step`), so the topic gradient is never written out.

With codes z (P, K), decoder weights W (T, K) and bias b (T,), topics beta (T, W) =
softmax of the topic logits l, the loss of the theta step is the data term per token
(:mod:`bpetopics.models.poissbpe.compiled.fused_gradient`) plus the topics' priors (:mod:`bpetopics.models.poissbpe.topic_prior`):

    pass 1   out_n = b + W z_n,  f_n = softmax(out_n),  the data gradient g_i over the
             non-zeros, d_out_n = f_n * (d_f_n - <f_n, d_f_n>),
             dW = d_out^T z,  db = sum_n d_out_n,  u = mean_n f_n  (the topics' use)
    pass 2   the diversity prior's gradient R = (A + A^T) beta (``topic_overlap_grad``)
             in O(T W), without the Gram matrix: off the diagonal A_ts = q_t q_s / U with
             q_t = u_t / |beta_t| and U = sum_{t != s} u_t u_s, so with v = sum_s q_s beta_s
             (one weighted sum of the topics) and p_t = <beta_t, v>,
                 A_tt = -q_t (p_t - |beta_t|^2 q_t) / (U |beta_t|^2)
                 R_t  = lambda [(2 q_t / U) v + (2 A_tt - 2 q_t^2 / U) beta_t]
                 <beta_t, R_t> = lambda [(2 q_t / U) p_t + (2 A_tt - 2 q_t^2 / U) |beta_t|^2]
             (lambda the penalty's weight): three passes over T x W instead of two
             T x T x W products
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

from bpetopics.models.poissbpe.compiled import kernels, topic_step

numba = kernels.numba


def usable(decoder, beta: torch.Tensor) -> bool:
    """Whether the compiled passes serve this step: numba, CPU, float32, linear decoder."""
    return (kernels.available(beta.device) and beta.dtype == torch.float32 and decoder.is_linear
            and decoder.first.weight.dtype == torch.float32)


def set_gradients(decoder, likelihood, batch, codes: torch.Tensor, beta: torch.Tensor,
                  repulsion: float, smoothing: float, entropy: float = 0.0) -> np.ndarray:
    """Set the ``.grad`` of the decoder's weight and bias and of the topic logits to the
    theta step's (module docstring); return the minibatch's mean mixture (T,), what the
    diversity prior read.

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
    entropy : float
        epsilon, the mixtures' entropy prior's weight (``mixture_entropy``; 0: none).
    """
    beta_t, words, beta_u, d_beta_u, usage = _decoder_gradients(decoder, batch, codes, beta, entropy)
    logits_grad = np.empty(beta_t.shape, dtype=np.float32)
    _topic_logits_grad(beta_t, usage, np.float32(repulsion), np.float32(smoothing), words,
                       beta_u, d_beta_u, logits_grad)
    likelihood.topic_logits.grad = torch.from_numpy(logits_grad)
    return usage


def share_gradients(decoder, likelihood, batch, codes: torch.Tensor, beta: torch.Tensor,
                    entropy: float = 0.0) -> torch.Tensor:
    """The gradients of one share's *summed* loss, sum_{n in S_p} l_n, when processes
    share a step (:func:`bpetopics.bpe.step_group.sum_shares` sums them): pass 1 and the
    data term of pass 3, without the topics' priors (added once, to the sums). The
    passes give the gradients of the loss per token, so each is multiplied by the
    share's tokens N_p. Arguments as :func:`set_gradients`.

    Returns
    -------
    torch.Tensor, shape (T,)
        sum_{n in S_p} f_n, the share's summed mixtures (what the diversity prior reads).
    """
    usage = set_gradients(decoder, likelihood, batch, codes, beta, 0.0, 0.0, entropy)
    tokens = float(batch.vals.sum())                      # N_p: grad sum_n l_n = N_p grad (per token)
    for grad in (decoder.first.weight.grad, decoder.first.bias.grad, likelihood.topic_logits.grad):
        grad.mul_(tokens)
    return torch.from_numpy(usage).mul_(codes.shape[0])    # u = mean_n f_n, times |S_p|


def add_prior_gradients(likelihood, beta: torch.Tensor, usage, repulsion: float, smoothing: float) -> None:
    """Add the topics' priors' gradient (passes 2 and 3 without the data term: the
    diversity prior at the mean mixture ``usage`` (T,) and the Dirichlet prior's s) to
    the topic logits' ``.grad``: what processes sharing a step add once, to their summed
    gradients. ``usage`` None: zeros (no diversity prior reads it)."""
    beta_t = np.ascontiguousarray(beta.detach().numpy().T)                      # (T, W)
    n_topics = beta_t.shape[0]
    use = np.zeros(n_topics, np.float32) if usage is None else usage.detach().numpy().astype(np.float32)
    grad = np.empty(beta_t.shape, dtype=np.float32)
    none = np.zeros((0, n_topics), dtype=np.float32)                             # no batch words
    _topic_logits_grad(beta_t, use, np.float32(repulsion), np.float32(smoothing), np.zeros(0, np.int64),
                       none, none, grad)
    logits = likelihood.topic_logits
    logits.grad = torch.from_numpy(grad) if logits.grad is None else logits.grad.add_(torch.from_numpy(grad))


def take_step(decoder, likelihood, optimizer, batch, codes: torch.Tensor, beta: torch.Tensor,
              repulsion: float, smoothing: float, shift: np.ndarray, floor: float = float("inf"),
              entropy: float = 0.0) -> torch.Tensor:
    """The whole theta step: in one compiled call the decoder's gradients (pass 1), the
    topic logits' gradient terms (pass 2) and, topic by topic, their last pass, Adam and
    the next topics (:func:`bpetopics.models.poissbpe.compiled.topic_step.adam_and_topics`),
    then the decoder's Adam step (the topics' step does not read the decoder); no
    gradient is written out (``.grad`` stays None). Arguments as :func:`set_gradients`;
    ``optimizer`` the model's Adam, ``shift`` (T,) the softmax's (read and updated),
    ``floor`` the logits' (:func:`~bpetopics.models.poissbpe.compiled.topic_step.adam_and_topics`).

    Returns
    -------
    torch.Tensor, shape (W, T)
        The next minibatch's topics, softmax(topic logits) after the step.
    """
    logits = likelihood.topic_logits
    state, options = topic_step.adam_options(optimizer, logits, smoothing, floor)
    out = torch.empty((beta.shape[1], beta.shape[0]), dtype=torch.float32)     # the next topics (T, W)
    grad_w, grad_b = _theta_passes(*_pass_one_arguments(decoder, batch, codes, beta, entropy), np.float32(repulsion), logits.detach().numpy(),
                                   state["exp_avg"].numpy(), state["exp_avg_sq"].numpy(), options, shift,
                                   out.numpy())
    first = decoder.first
    optimizer.step_with([first.weight, first.bias], [torch.from_numpy(grad_w), torch.from_numpy(grad_b)])
    return out.t()


def _pass_one_arguments(decoder, batch, codes, beta, entropy=0.0) -> tuple:
    """The arguments of pass 1 (:func:`_decoder_and_data`), numpy views: the codes as
    uint8, the decoder's weight and bias, the non-zeros' documents, positions in the
    batch's vocabulary and counts (float32), beta^T (T, W), the batch's words (U,) and
    epsilon."""
    beta_t = np.ascontiguousarray(beta.detach().numpy().T)                      # (T, W)
    words, local = batch.vocabulary(beta_t.shape[1])
    vals = batch.vals if batch.vals.dtype == torch.float32 else batch.vals.float()
    first = decoder.first
    return (codes.numpy().view(np.uint8), first.weight.detach().numpy(), first.bias.detach().numpy(),
            batch.rows.numpy(), local.numpy(), vals.numpy(), beta_t, words.numpy(), np.float32(entropy))


def _decoder_gradients(decoder, batch, codes, beta, entropy=0.0):
    """Pass 1, with the decoder's gradients set: (beta^T (T, W), the batch's words (U,),
    beta_u (U, T), dL/dbeta_u (U, T), the mean mixture u (T,)), numpy float32. One
    compiled call gathers beta_u, counts the tokens and takes the pass (each torch call
    a step makes instead costs several times its own work in a cache the pursuit has
    just filled)."""
    pass_one = _pass_one_arguments(decoder, batch, codes, beta, entropy)
    grad_w, grad_b, beta_u, d_beta_u, usage = _decoder_and_data(*pass_one)
    decoder.first.weight.grad = torch.from_numpy(grad_w)
    decoder.first.bias.grad = torch.from_numpy(grad_b)
    beta_t, words = pass_one[6], pass_one[7]
    return beta_t, words, beta_u, d_beta_u, usage


if numba is not None:
    from numba import njit

    from bpetopics.compiled.kernel_cache import cached_njit
    from bpetopics.models.poissbpe.compiled.fused_gradient import data_gradient_kernel
    from bpetopics.models.poissbpe.compiled.topic_step import adam_and_topics_kernel

    @cached_njit(nogil=True)
    def _theta_passes(codes, weight, bias, rows, local, vals, beta_t, words, entropy, scale, logits,
                      exp_avg, exp_avg_sq, options, shift, out):  # pragma: no cover - compiled
        """:func:`take_step`'s compiled part: pass 1 (:func:`_decoder_and_data`), pass 2
        (:func:`_topic_terms`, ``scale`` the diversity prior's weight, s = ``options[6]``)
        and the topics' last pass, Adam and softmax into ``out`` (T, W)
        (``topic_step.adam_and_topics_kernel``). Returns the decoder's gradients (dW, db)."""
        grad_w, grad_b, beta_u, d_beta_u, usage = _decoder_and_data(codes, weight, bias, rows, local, vals,
                                                                    beta_t, words, entropy)
        v = np.empty(beta_t.shape[1], dtype=np.float32)
        data = np.empty((beta_t.shape[0], words.shape[0]), dtype=np.float32)
        alpha, gamma, offset = _topic_terms(beta_t, usage, scale, options[6], words, beta_u, d_beta_u, v, data)
        adam_and_topics_kernel(logits, exp_avg, exp_avg_sq, beta_t, v, alpha, gamma, offset, words, data,
                               options, shift, out)
        return grad_w, grad_b

    @cached_njit(nogil=True)
    def _decoder_and_data(codes, weight, bias, rows, local, vals, beta_t, words,
                          entropy):  # pragma: no cover - compiled
        """Pass 1: dW (T, K), db (T,), beta_u = beta[words] (U, T), d_beta_u (U, T) and the
        mean mixture u (T,), the data term per token (N = sum of ``vals``, at least 1); with
        ``entropy`` epsilon > 0, d_out_n gains the mixtures' entropy prior's
        epsilon (L_n / tokens) f_n (ln f_n + H_n) (:mod:`~bpetopics.models.poissbpe.mixture_prior`)."""
        n_docs, n_bits = codes.shape
        n_topics = weight.shape[0]
        beta_u = np.empty((words.shape[0], n_topics), dtype=np.float32)
        for u in range(words.shape[0]):
            for t in range(n_topics):
                beta_u[u, t] = beta_t[t, words[u]]
        tokens = np.float32(0.0)                      # (exact for counts below 2^24)
        for i in range(vals.shape[0]):
            tokens += vals[i]
        inv_tokens = np.float32(1.0 / max(np.float64(tokens), 1.0))
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
        data_gradient_kernel(rows, local, vals, beta_u, mix, inv_tokens, d_mix, d_beta_u)
        grad_w = np.zeros((n_topics, n_bits), dtype=np.float32)
        grad_b = np.zeros(n_topics, dtype=np.float32)
        usage = np.zeros(n_topics, dtype=np.float32)
        d_out = np.empty(n_topics, dtype=np.float32)
        lengths = np.zeros(n_docs, dtype=np.float32)            # L_n, tokens a document
        log_mix = np.empty(n_topics, dtype=np.float32)
        if entropy > 0:
            for i in range(rows.shape[0]):
                lengths[rows[i]] += vals[i]
        for n in range(n_docs):
            dot = np.float32(0.0)
            for t in range(n_topics):
                dot += mix[n, t] * d_mix[n, t]
            for t in range(n_topics):
                d_out[t] = mix[n, t] * (d_mix[n, t] - dot)
            if entropy > 0:                                       # + eps w_n f (ln f + H)
                neg_entropy = np.float32(0.0)
                for t in range(n_topics):                         # f ln f (0 where f = 0)
                    log_mix[t] = np.log(mix[n, t]) if mix[n, t] > 0 else np.float32(0.0)
                    neg_entropy += mix[n, t] * log_mix[t]
                share = entropy * lengths[n] * inv_tokens
                for t in range(n_topics):
                    d_out[t] += share * mix[n, t] * (log_mix[t] - neg_entropy)
            for t in range(n_topics):
                grad_b[t] += d_out[t]
                usage[t] += mix[n, t]
            for k in range(n_bits):
                if codes[n, k]:
                    for t in range(n_topics):
                        grad_w[t, k] += d_out[t]
        for t in range(n_topics):
            usage[t] /= max(n_docs, 1)
        return grad_w, grad_b, beta_u, d_beta_u, usage

    @njit(nogil=True, fastmath={"reassoc"})
    def _dot(x, y):  # pragma: no cover - compiled
        """sum_w x_w y_w over two rows, vectorised: the sum may be reassociated (fastmath
        ``reassoc`` alone), so LLVM keeps vector-wide partial sums. Without it the loop is
        scalar (eight running sums in scalars are not vectorised either), several times
        slower per T x W pass, and the two dot products of each topic were then a third
        of the step's topic gradient. The summing order is the machine's vector width's,
        as in torch's softmax, which this step already depends on."""
        total = np.float32(0.0)
        for w in range(x.shape[0]):
            total += x[w] * y[w]
        return total

    @cached_njit(nogil=True)
    def _topic_terms(beta_t, usage, scale, strength, words, beta_u, d_beta_u, v,
                     data):  # pragma: no cover - compiled
        """Pass 2: v (W,) and data (T, U) in place and (alpha, gamma, offset) (T,) of the
        module's pass 3, dl_tw = beta_tw (alpha_t v_w + gamma_t beta_tw + offset_t) - s
        + [w = words_u] data_tu: the diversity prior's gradient R_t = alpha_t v + gamma_t
        beta_t in O(T W) (the module docstring's identity; ``scale`` 0: no diversity
        prior), offset_t = s W - <beta_t, R_t> - <beta_t, d_beta_t> and the data term
        data_tu = beta_ut d_beta_ut, topic by topic."""
        n_topics, n_words = beta_t.shape
        alpha = np.zeros(n_topics, dtype=np.float32)
        gamma = np.zeros(n_topics, dtype=np.float32)
        inner = np.zeros(n_topics, dtype=np.float32)     # <beta_t, R_t>
        v[:] = 0.0
        if scale > 0 and n_topics > 1:
            squares = np.empty(n_topics, dtype=np.float32)
            q = np.empty(n_topics, dtype=np.float32)
            total_use, use_squares = np.float32(0.0), np.float32(0.0)
            for t in range(n_topics):
                squares[t] = _dot(beta_t[t], beta_t[t])                   # G_tt = |beta_t|^2
                q[t] = usage[t] / max(np.sqrt(squares[t]), np.float32(1e-30))
                total_use += usage[t]
                use_squares += usage[t] * usage[t]
            total = max(total_use * total_use - use_squares, np.float32(1e-30))   # sum_{t != s} u_t u_s
            for t in range(n_topics):                                      # v = sum_s q_s beta_s
                row, weight = beta_t[t], q[t]
                for w in range(n_words):
                    v[w] += weight * row[w]
            for t in range(n_topics):
                norm = max(np.sqrt(squares[t]), np.float32(1e-30))
                p = _dot(beta_t[t], v)                                     # <beta_t, v>
                diagonal = -q[t] * (p - squares[t] * q[t]) / (total * norm * norm)   # A_tt
                alpha[t] = scale * 2 * q[t] / total
                gamma[t] = scale * (2 * diagonal - 2 * q[t] * q[t] / total)
                inner[t] = alpha[t] * p + gamma[t] * squares[t]
        data_inner = np.zeros(n_topics, dtype=np.float32)   # <beta_t, d_beta_t>, batch words only
        for u in range(words.shape[0]):
            for t in range(n_topics):
                data[t, u] = beta_u[u, t] * d_beta_u[u, t]
                data_inner[t] += data[t, u]
        offset = np.empty(n_topics, dtype=np.float32)
        for t in range(n_topics):
            offset[t] = strength * n_words - inner[t] - data_inner[t]
        return alpha, gamma, offset

    @cached_njit(nogil=True)
    def _topic_logits_grad(beta_t, usage, scale, strength, words, beta_u, d_beta_u,
                           out):  # pragma: no cover - compiled
        """Passes 2 and 3 into out (T, W): the module's dl."""
        n_topics, n_words = beta_t.shape
        v = np.empty(n_words, dtype=np.float32)
        data = np.empty((n_topics, words.shape[0]), dtype=np.float32)
        alpha, gamma, offset = _topic_terms(beta_t, usage, scale, strength, words, beta_u, d_beta_u, v, data)
        for t in range(n_topics):
            row, grad_row, a, g, o = beta_t[t], out[t], alpha[t], gamma[t], offset[t]
            for w in range(n_words):
                grad_row[w] = row[w] * (a * v[w] + g * row[w] + o) - strength
        for u in range(words.shape[0]):                 # the data term at the batch's words
            w = words[u]
            for t in range(n_topics):
                out[t, w] += data[t, u]
