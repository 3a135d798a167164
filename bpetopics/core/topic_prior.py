"""A diversity-inducing prior on the topics of PoissBPE (MAP in the theta step).

Maximum likelihood does not pin the topics down: with near one-hot codes a code's mixture
is shared by every document that has it, so each topic has to carry the generic words
("one", "would", "use") of its documents, and the same generic words fill the top of many
topics (README measures it on 20 Newsgroups).

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
choices (README has the measurements behind them):

- Weighting by use. A topic's data gradient is proportional to how much the documents
  use it; an unweighted prior pushes every topic alike, so rarely used topics are driven
  into words no other topic has (junk topics). Weighted, the push on topic t scales with
  u_t, like its data gradient.
- A sum over pairs, as in Xie et al., not a mean: a mean dilutes the push between two
  overlapping topics as T grows, so the right lambda would depend on T. With the sum one
  default lambda serves T = 20 and T = 50; it is weak for a handful of topics: raise it
  there.
"""

from __future__ import annotations

import torch


def topic_overlap(beta: torch.Tensor, usage: torch.Tensor | None = None) -> torch.Tensor:
    """Mean cosine similarity between distinct topics, optionally weighted by use.

    PoissBPE's penalty is ``lambda * T (T - 1) * topic_overlap(beta, usage)`` (module).

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
    if usage is None:
        weight = torch.ones_like(cosine)
    else:
        usage = usage.to(cosine.dtype)
        weight = usage[:, None] * usage[None, :]
    weight = weight * (1 - torch.eye(n_topics, dtype=cosine.dtype, device=cosine.device))
    return (weight * cosine).sum() / weight.sum().clamp_min(1e-30)
