"""Priors on the topics of PoissBPE (MAP in the theta step): a diversity-inducing prior
(most of this module) and a symmetric Dirichlet prior (:func:`dirichlet_penalty`,
``topic_smoothing``).

Maximum likelihood does not pin the topics down: with near one-hot codes a code's mixture
is shared by every document that has it, so each topic has to carry the generic words
("one", "would", "use") of its documents, and the same generic words fill the top of many
topics (docs/defaults.md measures it on 20 Newsgroups).

The remedy is a prior on beta that repels topics from each other, in the spirit of the
diversity-promoting priors of Xie, Zhu and Xing ("Diversity-promoting Bayesian learning of
latent variable models", ICML 2016), which penalise the angles between components. The
cosine between two topics is dominated by their most probable words, which is where
topics overlap when they share generic words; a generic word can then live in one
background topic that the mixtures draw on. The theta step's loss is the negative data
term per token, and the prior enters it as

    loss = -sum_n sum_w x_nw ln [beta f(z_n)]_w / sum_n sum_w x_nw + lambda * R(beta)

    R(beta) = sum_{t != s} w_ts cos(beta_t, beta_s),   w_ts = u_t u_s / mean_{t' != s'} u_t' u_s'
            = T (T - 1) * topic_overlap(beta, u)
    cos(beta_t, beta_s) = <beta_t, beta_s> / (|beta_t| |beta_s|)

with u_t = mean_n f_t(z_n), topic t's use in the minibatch (held fixed in the gradient):
the cosines summed over all ordered pairs of topics, with weights that average 1. Two
choices (docs/defaults.md has the measurements behind them):

- Weighting by use. A topic's data gradient is proportional to how much the documents
  use it; an unweighted prior pushes every topic alike, so rarely used topics are driven
  into words no other topic has (junk topics). Weighted, the push on topic t scales with
  u_t, like its data gradient.
- A sum over pairs, as in Xie et al., not a mean: a mean dilutes the push between two
  overlapping topics as T grows. The sum grows the other way, each topic being pushed by
  all T - 1 others, so PoissBPE sums over at most 59 partners a topic (T = 60) and
  shares that push among them above 60 topics (``PoissBPE._penalty_weight``: at T = 100
  the full sum cost NPMI, perplexity and accuracy for diversity). Above 100 topics the
  push on each topic falls as 100 / T: at T = 200 the full push had pulled the topics'
  top words towards rarer ones that meet in the training documents more than in new
  ones. The default lambda is weak for a handful of topics: raise it there.
"""

from __future__ import annotations

import torch


def topic_overlap(beta: torch.Tensor, usage: torch.Tensor | None = None) -> torch.Tensor:
    """Mean cosine similarity between distinct topics, optionally weighted by use.

    PoissBPE's penalty is ``lambda * min(T, 100) min(T - 1, 59) * topic_overlap(beta, usage)``
    (module).

    Parameters
    ----------
    beta : torch.Tensor, shape (W, T)
        Topics as columns (each on the simplex).
    usage : torch.Tensor, shape (T,), optional
        Non-negative weight u_t of each topic (PoissBPE: mean mixture weight in the
        minibatch); pair (t, s) counts u_t u_s. None weighs all pairs alike.

    Returns
    -------
    torch.Tensor, scalar
        sum_{t != s} w_ts cos(beta_t, beta_s) / sum_{t != s} w_ts, in [0, 1] for
        non-negative topics; 0 when T = 1.
    """
    n_topics = beta.shape[1]
    if n_topics < 2:
        return beta.sum() * 0.0
    # cos_ts = G_ts / (|beta_t| |beta_s|) from the Gram matrix G = beta^T beta (T, T):
    # one W x T x T product forward and one backward, instead of normalising beta (W, T)
    gram = beta.t() @ beta                                     # (T, T)
    norms = gram.diagonal().sqrt().clamp_min(1e-30)            # |beta_t|
    cosine = gram / (norms[:, None] * norms[None, :])
    weight = _pair_weights(usage, gram)
    return (weight * cosine).sum() / weight.sum().clamp_min(1e-30)


def _pair_weights(usage, gram: torch.Tensor) -> torch.Tensor:
    """w_ts = u_t u_s off the diagonal, 0 on it (1 off it when ``usage`` is None), (T, T)
    in ``gram``'s dtype and device."""
    off = 1 - torch.eye(gram.shape[0], dtype=gram.dtype, device=gram.device)
    if usage is None:
        return off
    usage = usage.to(gram.dtype)
    return usage[:, None] * usage[None, :] * off


def topic_overlap_grad(beta: torch.Tensor, usage: torch.Tensor | None = None,
                       scale: float = 1.0):
    """:func:`topic_overlap` and its gradient with respect to beta, written out (one
    T x T x W product forward, one back; autograd's graph cost more than the products).

    With G = beta^T beta, n_t = sqrt(G_tt), R = sum_{t != s} w_ts G_ts / (n_t n_s) / sum w:

        A_ts = dR/dG_ts = w_ts / (n_t n_s sum w)                    (t != s)
        dR/dn_t = -sum_s (w_ts cos_ts + w_st cos_st) / (n_t sum w),  A_tt = dR/dn_t / (2 n_t)
        dR/dbeta = beta (A + A^T)

and the inner products <beta_t, dR/dbeta_t> = sum_s (A + A^T)_ts G_ts that the chain rule
through beta's softmax needs come from the Gram matrix, without another pass over beta.

    Parameters
    ----------
    beta : torch.Tensor, shape (W, T)
        Topics as columns (a transposed view of a contiguous (T, W) tensor is fastest).
    usage : torch.Tensor, shape (T,), optional
        As for :func:`topic_overlap`.
    scale : float
        Multiplies the gradient and the inner products (the penalty's weight, applied to
        the T x T matrix A before the product with beta: no pass over W x T).

    Returns
    -------
    value : torch.Tensor, scalar
        R, unscaled.
    grad : torch.Tensor, shape (T, W)
        scale dR/dbeta, transposed (topic by topic, contiguous).
    inner : torch.Tensor, shape (T,)
        <beta_t, grad_t> for each topic t.
    """
    with torch.no_grad():
        beta_t = beta.t()                                          # (T, W)
        n_topics = beta_t.shape[0]
        if n_topics < 2:
            return beta.sum() * 0.0, torch.zeros_like(beta_t), beta_t.new_zeros(n_topics)
        gram = beta_t @ beta_t.t()                                 # (T, T)
        norms = gram.diagonal().sqrt().clamp_min(1e-30)
        weight = _pair_weights(usage, gram)
        total = weight.sum().clamp_min(1e-30)
        d_gram = weight / (total * norms[:, None] * norms[None, :])            # A, off-diagonal
        weighted_cos = gram * d_gram                                           # w_ts cos_ts / sum w
        d_norms = -(weighted_cos.sum(1) + weighted_cos.sum(0)) / norms
        d_gram.diagonal().add_(d_norms / (2 * norms))
        d_gram = (d_gram + d_gram.t()) * scale
        grad = d_gram @ beta_t                                                 # (T, W)
        return weighted_cos.sum(), grad, (d_gram * gram).sum(1)


def dirichlet_penalty(beta: torch.Tensor, strength: float) -> torch.Tensor:
    """-strength sum_t sum_w ln beta_wt: a symmetric Dirichlet prior's negative log density
    (up to a constant) with strength = eta / N_tok per token (``PoissBPE.topic_smoothing``;
    eta in (-1, 0), a concentration below 1, rewards small entries: a sparse prior).

    beta : torch.Tensor, shape (W, T) -> scalar (differentiable)."""
    return -strength * torch.log(beta).sum()


def dirichlet_logit_grad(beta: torch.Tensor, strength: float) -> torch.Tensor:
    """d/dl_tv of :func:`dirichlet_penalty` for beta_t = softmax(l_t) over W words:
    strength (W beta_vt - 1), (T, W) (topic by topic, as the topic logits)."""
    with torch.no_grad():
        beta_t = beta.t()
        return (beta_t * (beta_t.shape[1] * strength)).sub_(strength)
