"""The topic logits' Adam step and the next minibatch's topics in one compiled pass per
topic (numba, CPU, float32).

A theta step ends with three passes over the T x W topic logits l, each as long as the
vocabulary: the last pass of their gradient (:mod:`bpetopics.models.poissbpe.compiled.fused_theta`), Adam,
and the next minibatch's softmax beta_t = exp(l_t) / sum_w exp(l_tw). Here they run topic
by topic, so one topic's row of the gradient, the logits, Adam's moments and the new
topic stay in the core's cache between them, and the exponentials are vectorised
(:func:`bpetopics.models.poissbpe.compiled.vector_math.expf`; numba's ``np.exp`` is a call per value):

    g_tw = beta_tw (alpha_t v_w + gamma_t beta_tw + o_t) - s + [w in the batch] beta_tw d_tw
    m <- m + (1 - beta1)(g - m),   u <- beta2 u + (1 - beta2) g^2                 (Adam)
    l <- l - lr / (1 - beta1^k) * m / (sqrt(u) / sqrt(1 - beta2^k) + eps)
    l <- max(l, c_t - floor)                     (a sparse Dirichlet prior only, below)
    beta'_tw = exp(l_tw - c_t) / sum_w' exp(l_tw' - c_t)

(:mod:`~bpetopics.models.poissbpe.compiled.fused_theta` defines alpha, gamma, o, v and d; k is Adam's step).
The softmax's shift c_t is any constant of the row: here the log-normaliser of the row
before this step (the row max at the first step of an epoch), so no pass looks for the
row's maximum: an Adam step moves a logit by about ``lr``, so the row's exponentials sum
to about 1 (a row whose sum leaves [1e-10, 1e10], which no Adam step comes near, is
taken again shifted by its maximum). With a sparse Dirichlet prior (s < 0) the logits
of the words a topic lacks fall by about ``lr`` a step without end, and their topics
would reach float32's subnormal numbers, whose arithmetic is many times slower (an epoch
35 times slower after 90 epochs); ``floor`` keeps each logit within that many nats of
its row's shift (``topic_priors.LOGIT_FLOOR``; infinite otherwise, a no-op). The values
are those of the three passes up to float rounding (training drifts like another seed;
tests check the step against torch's softmax and ``torch.optim.Adam``).
"""

from __future__ import annotations

import numpy as np
import torch

from bpetopics.models.poissbpe.compiled import kernels

numba = kernels.numba


def adam_and_topics(logits: torch.nn.Parameter, optimizer, beta_t: np.ndarray, terms, strength: float,
                    words: np.ndarray, data: np.ndarray, shift: np.ndarray,
                    floor: float = float("inf")) -> torch.Tensor:
    """One Adam step of the topic logits at the gradient the module docstring writes,
    with the optimiser's state and options; returns the next topics.

    Parameters
    ----------
    logits : torch.nn.Parameter, shape (T, W)
        Updated in place (float32, CPU).
    optimizer : bpetopics.bpe.adam.Adam
        Holds ``logits``; its moments and step count advance as its ``step`` would.
    beta_t : np.ndarray, shape (T, W)
        This step's topics, softmax(logits) before the step.
    terms : (v (W,), alpha (T,), gamma (T,), offset (T,))
        The gradient's dense terms (pass 2 of :func:`bpetopics.models.poissbpe.compiled.fused_theta.take_step`).
    strength : float
        s, the Dirichlet prior's weight per token.
    words : np.ndarray, shape (U,)
        The batch's words, sorted.
    data : np.ndarray, shape (T, U)
        The data term of the gradient there, beta_tw d_tw.
    shift : np.ndarray, shape (T,)
        Each row's softmax shift (module docstring): read, then set for the next step.
    floor : float
        Logits stay at least this many nats above their row's shift (inf: no floor).

    Returns
    -------
    torch.Tensor, shape (W, T)
        softmax(logits) after the step, a transposed view of a (T, W) array.
    """
    state, options = adam_options(optimizer, logits, strength, floor)
    v, alpha, gamma, offset = terms
    out = torch.empty(beta_t.shape, dtype=torch.float32)
    adam_and_topics_kernel(logits.detach().numpy(), state["exp_avg"].numpy(), state["exp_avg_sq"].numpy(),
                           beta_t, v, alpha, gamma, offset, words, data, options, shift, out.numpy())
    return out.t()


def adam_options(optimizer, logits: torch.nn.Parameter, strength: float, floor: float = float("inf")):
    """Advance the topic logits' Adam step count k (``optimizer``'s state, a CPU tensor)
    and return (their state, the step's ``options`` for :func:`adam_and_topics_kernel`):
    lr / (1 - beta1^k), 1 - beta1, 1 - beta2, beta2, 1 / sqrt(1 - beta2^k), eps, s and
    the floor, float32."""
    group = optimizer.param_groups[0]                  # the model's Adam has one group
    beta1, beta2 = group["betas"]
    state = optimizer.state_of(logits)
    count = state["step"].numpy()                      # advanced in place
    count += 1
    step = float(count)
    return state, np.array([group["lr"] / (1 - beta1 ** step), 1 - beta1, 1 - beta2, beta2,
                            (1 - beta2 ** step) ** -0.5, group["eps"], strength, floor], dtype=np.float32)


def row_shift(logits: torch.Tensor) -> np.ndarray:
    """The softmax shift of an epoch's first step: each row's maximum, (T,) float32."""
    return logits.detach().amax(dim=1).numpy().astype(np.float32)


if numba is not None:
    from bpetopics.compiled.kernel_cache import cached_njit
    from bpetopics.models.poissbpe.compiled.vector_math import expf

    @numba.njit(nogil=True, fastmath={"reassoc"})
    def _row_sum(x):  # pragma: no cover - compiled
        """sum_w x_w, in vector-wide partial sums (``reassoc`` alone, as fused_theta._dot)."""
        total = np.float32(0.0)
        for w in range(x.shape[0]):
            total += x[w]
        return total

    @numba.njit(nogil=True, error_model="numpy")
    def _exp_row(logits, shift, out):  # pragma: no cover - compiled
        """out = exp(logits - shift) over a row; returns its sum."""
        for w in range(logits.shape[0]):
            out[w] = expf(logits[w] - shift)
        return _row_sum(out)

    @cached_njit(nogil=True, error_model="numpy")
    def adam_and_topics_kernel(logits, exp_avg, exp_avg_sq, beta_t, v, alpha, gamma, offset, words,
                               data, options, shift, out):  # pragma: no cover - compiled
        """The module's step, topic by topic: logits, moments and shift in place, the next
        topics into out (T, W). ``options``: lr / (1 - beta1^k), 1 - beta1, 1 - beta2,
        beta2, 1 / sqrt(1 - beta2^k) (a product, not a second division), eps, s, floor.
        (``error_model="numpy"``: a division is not checked for zero, which kept the
        loops scalar.)"""
        step_size, one_minus_beta1, one_minus_beta2, beta2 = options[0], options[1], options[2], options[3]
        bias2_scale, eps, strength, floor = options[4], options[5], options[6], options[7]
        n_topics, n_words = logits.shape
        sparse = np.zeros(n_words, dtype=np.float32)     # the data term, zero off the batch's words
        for t in range(n_topics):
            row, a, g, o = beta_t[t], alpha[t], gamma[t], offset[t]
            lt, mt, ut, ot, dt = logits[t], exp_avg[t], exp_avg_sq[t], out[t], data[t]
            for u in range(words.shape[0]):
                sparse[words[u]] = dt[u]
            for w in range(n_words):                      # the gradient, then Adam
                gw = row[w] * (a * v[w] + g * row[w] + o) - strength + sparse[w]
                m = mt[w] + one_minus_beta1 * (gw - mt[w])
                u2 = beta2 * ut[w] + one_minus_beta2 * gw * gw
                mt[w], ut[w] = m, u2
                lt[w] -= step_size * m / (np.sqrt(u2) * bias2_scale + eps)
            for u in range(words.shape[0]):
                sparse[words[u]] = 0.0
            c = shift[t]                                  # the next topic
            if floor < np.inf:
                lowest = c - floor
                for w in range(n_words):
                    lt[w] = max(lt[w], lowest)
            total = _exp_row(lt, c, ot)
            if not (total > np.float32(1e-10) and total < np.float32(1e10)):
                c = lt[0]                                 # far from the shift: by its max
                for w in range(n_words):
                    c = max(c, lt[w])
                total = _exp_row(lt, c, ot)
            shift[t] = c + np.log(total)
            scale = np.float32(1.0) / total
            for w in range(n_words):
                ot[w] *= scale
