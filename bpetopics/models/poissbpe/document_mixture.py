"""A document's own topic mixture: the code's mixture as a Dirichlet prior, refined by
the document's words (PoissBPE's ``doc_topic``, ``posterior="document"``).

Every document with the same code has the same mixture f(z), and a document of a few
words has a broad posterior over codes, so the code's posterior mean mixture p_n
(:mod:`bpetopics.models.poissbpe.code_posterior`) is a coarse summary of what the
document is about. Here each document gets a mixture theta_n of its own, with p_n as
the centre of a Dirichlet prior of ``a0`` pseudo-tokens, as LDA's document mixtures
have their Dirichlet prior:

    theta_n ~ Dirichlet(1 + a0 p_n),   x_nw ~ Multinomial(N_n, sum_t beta_wt theta_nt)

and ``doc_topic`` reports its maximum a posteriori, the maximum of the concave

    J(theta) = sum_w x_w ln phi_w + a0 sum_t p_t ln theta_t,   phi_w = sum_t beta_wt theta_t

over the simplex. Its EM map F raises J at each step:

    r_t = theta_t sum_w x_w beta_wt / phi_w                        (E: the tokens of topic t)
    F(theta)_t = (a0 p_t + r_t) / (a0 + N)                         (M; sum_t r_t = N)

but EM crawls where the topics overlap (dozens of steps a document), so each
cycle takes two EM steps and jumps along them, as SQUAREM (Varadhan and Roland,
"Simple and globally convergent methods for accelerating the convergence of any EM
algorithm", Scand. J. Statist. 2008):

    theta1 = F(theta0),  theta2 = F(theta1),  r = theta1 - theta0,  v = theta2 - 2 theta1 + theta0
    alpha = min(-|r| / |v|, -1),  theta0' = theta0 - 2 alpha r + alpha^2 v

(alpha = -1 is theta2 itself). A jump that leaves the simplex is replaced by theta2, and
one whose J falls below J(theta1) is taken back to theta2 at the next cycle, so J never
falls below the last EM step's. A document stops when a cycle gains at most ``tol``
nats per token and pseudo-token, and reports F of its last point (on the simplex). With
no words theta_n = p_n. This is an addition to the paper's model, used for reporting and
prediction only: training, the codes and the topics do not change (docs/defaults.md
measures it).

With numba the cycles run one document at a time in one compiled call
(:mod:`bpetopics.models.poissbpe.compiled.document_mixture`); :func:`document_mixtures`
here is the reference, batched with scipy.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from bpetopics.models.poissbpe.compiled import document_mixture as compiled, kernels

#: A document stops when a cycle raises J by at most this many nats per token and
#: pseudo-token (docs/defaults.md says how close to the maximum that leaves it).
TOLERANCE = 1e-9
#: ... or after this many cycles (of at most three EM steps).
MAX_CYCLES = 100
#: Documents refined together by the reference: few, because every row of a batch takes
#: as many cycles as its slowest.
BATCH_SIZE = 16


def document_mixtures(X, topic_word: np.ndarray, prior_mixtures: np.ndarray, concentration: float,
                      tol: float = TOLERANCE, max_cycles: int = MAX_CYCLES) -> np.ndarray:
    """The documents' MAP mixtures under Dirichlet priors centred on ``prior_mixtures``.

    Parameters
    ----------
    X : scipy.sparse matrix, shape (N, W)
        Counts.
    topic_word : np.ndarray, shape (T, W)
        The topics, rows on the simplex.
    prior_mixtures : np.ndarray, shape (N, T)
        p_n, each document's prior centre (rows on the simplex).
    concentration : float
        a0 > 0, the prior's weight in tokens.
    tol, max_cycles :
        A document stops when a cycle gains at most ``tol`` nats per token and
        pseudo-token, or after ``max_cycles`` cycles (module docstring).

    Returns
    -------
    np.ndarray, shape (N, T), float64, rows on the simplex
    """
    X = sp.csr_matrix(X, dtype=np.float64)
    prior = np.ascontiguousarray(prior_mixtures, dtype=np.float64)
    beta = np.ascontiguousarray(np.asarray(topic_word, dtype=np.float64).T)      # (W, T)
    if not concentration > 0:
        raise ValueError(f"the concentration must be positive, not {concentration!r}")
    if X.shape[0] != prior.shape[0] or beta.shape != (X.shape[1], prior.shape[1]):
        raise ValueError(f"X {X.shape}, topic_word {np.shape(topic_word)} and prior_mixtures "
                         f"{prior.shape} do not fit together")
    if kernels.available("cpu"):
        X.sum_duplicates()
        return compiled.document_mixtures(X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data,
                                          beta, prior, float(concentration), float(tol), int(max_cycles))
    out = np.empty_like(prior)
    for begin in range(0, X.shape[0], BATCH_SIZE):
        rows = slice(begin, begin + BATCH_SIZE)
        out[rows] = _refine_batch(X[rows], beta, prior[rows], float(concentration), tol, max_cycles)
    return out


def _refine_batch(X: sp.csr_matrix, beta: np.ndarray, prior: np.ndarray, concentration: float,
                  tol: float, max_cycles: int) -> np.ndarray:
    """The cycles of the module docstring for a batch of rows at once, (B, T)."""
    n_docs, nnz = X.shape[0], X.nnz
    rows = np.repeat(np.arange(n_docs), np.diff(X.indptr))
    of_row = sp.csr_matrix((np.ones(nnz), np.arange(nnz), X.indptr), shape=(n_docs, nnz))  # row sums
    beta_nz = beta[X.indices]                                       # beta_wt at each non-zero (nnz, T)
    tokens = np.asarray(X.sum(1), dtype=np.float64).ravel()         # N_n
    weighted_centre = concentration * prior
    log_centre_mask = prior > 0

    def em_step(theta):
        """(J(theta) (B,), F(theta) (B, T))."""
        phi = np.maximum(np.einsum("it,it->i", beta_nz, theta[rows]), 1e-300)
        objective = of_row @ (X.data * np.log(phi))
        objective += (weighted_centre * np.log(np.maximum(theta, 1e-300)) * log_centre_mask).sum(1)
        r = theta * (of_row @ (beta_nz * (X.data / phi)[:, None]))
        return objective, (weighted_centre + r) / (concentration + tokens)[:, None]

    theta0, theta2 = prior.copy(), prior.copy()
    best = np.full(n_docs, -np.inf)
    out = prior.copy()
    active = np.ones(n_docs, dtype=bool)
    theta1 = prior.copy()
    for _ in range(max_cycles):
        objective, theta1 = em_step(theta0)
        back = objective < best                                     # the jump lost ground
        if back.any():
            theta0[back] = theta2[back]
            again, stepped = em_step(theta0)
            objective[back], theta1[back] = again[back], stepped[back]
        done = active & (objective - best <= tol * (concentration + tokens))
        out[done] = theta1[done]
        active &= ~done
        if not active.any():
            return out
        best, theta2 = em_step(theta1)
        r = theta1 - theta0
        v = theta2 - 2.0 * theta1 + theta0
        step, curve = (r * r).sum(1), (v * v).sum(1)
        alpha = np.where(curve > 0, -np.sqrt(step / np.where(curve > 0, curve, 1.0)), -1.0)
        alpha = np.minimum(alpha, -1.0)[:, None]
        jump = theta0 - 2.0 * alpha * r + alpha * alpha * v
        inside = (curve > 0) & (jump > 0).all(1)
        theta0 = np.where(inside[:, None], jump, theta2)
    out[active] = theta1[active]
    return out
