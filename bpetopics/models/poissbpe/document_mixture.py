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
here is the reference, batched with torch (on the model's device).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import torch

from bpetopics.models.poissbpe.compiled import document_mixture as compiled, kernels

#: A document stops when a cycle raises J by at most this many nats per token and
#: pseudo-token (docs/defaults.md says how close to the maximum that leaves it).
TOLERANCE = 1e-9
#: ... or after this many cycles (of at most three EM steps).
MAX_CYCLES = 100
#: Documents refined together (the reference's (non-zeros, T) products; float64 copies of
#: their prior mixtures).
BATCH_SIZE = 1024


def document_mixtures(X, topic_word: np.ndarray, prior_mixtures: np.ndarray, concentration: float,
                      tol: float = TOLERANCE, max_cycles: int = MAX_CYCLES, device="cpu",
                      dtype=np.float64) -> np.ndarray:
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
    device : str or torch.device
        Where the reference runs (the compiled path runs on the CPU).
    dtype : numpy dtype
        Of the result (the EM runs in float64 either way).

    Returns
    -------
    np.ndarray, shape (N, T), rows on the simplex
    """
    X = sp.csr_matrix(X, dtype=np.float64)
    X.sum_duplicates()
    prior_mixtures = np.asarray(prior_mixtures)
    beta = np.ascontiguousarray(np.asarray(topic_word, dtype=np.float64).T)      # (W, T)
    if not concentration > 0:
        raise ValueError(f"the concentration must be positive, not {concentration!r}")
    if prior_mixtures.ndim != 2 or X.shape[0] != prior_mixtures.shape[0] \
            or beta.shape != (X.shape[1], prior_mixtures.shape[1]):
        raise ValueError(f"X {X.shape}, topic_word {np.shape(topic_word)} and prior_mixtures "
                         f"{prior_mixtures.shape} do not fit together")
    out = np.empty(prior_mixtures.shape, dtype=dtype)
    compiled_path = kernels.available("cpu")
    beta_t = None if compiled_path else torch.as_tensor(beta, device=device)
    # in batches: float64 copies of a batch's prior mixtures only, whatever N
    for begin in range(0, X.shape[0], BATCH_SIZE):
        rows = slice(begin, begin + BATCH_SIZE)
        part, prior = X[rows], np.ascontiguousarray(prior_mixtures[rows], dtype=np.float64)
        if compiled_path:
            out[rows] = compiled.document_mixtures(part.indptr.astype(np.int64), part.indices.astype(np.int64),
                                                   part.data, beta, prior, float(concentration), float(tol),
                                                   int(max_cycles))
        else:
            out[rows] = _refine_batch(part, beta_t, torch.as_tensor(prior, device=device), float(concentration),
                                      tol, max_cycles).cpu().numpy()
    return out


def _refine_batch(X: sp.csr_matrix, beta: torch.Tensor, prior: torch.Tensor, concentration: float,
                  tol: float, max_cycles: int) -> torch.Tensor:
    """The cycles of the module docstring for a batch of rows at once, (B, T) on
    ``beta``'s device; each cycle computes only the rows still running."""
    device = beta.device
    n_docs = X.shape[0]
    doc_of = torch.as_tensor(np.repeat(np.arange(n_docs), np.diff(X.indptr)), device=device)   # (nnz,)
    words = torch.as_tensor(X.indices.astype(np.int64), device=device)
    counts = torch.as_tensor(X.data, device=device)
    tokens = torch.zeros(n_docs, dtype=torch.float64, device=device).index_add_(0, doc_of, counts)
    out = prior.clone()
    theta0, theta2 = prior.clone(), prior.clone()
    best = torch.full((n_docs,), -torch.inf, dtype=torch.float64, device=device)
    running = torch.arange(n_docs, device=device)             # the rows still running
    place = torch.empty(n_docs, dtype=torch.int64, device=device)
    for _ in range(max_cycles):
        # the running rows' non-zeros, with the rows numbered 0..A-1
        place[running] = torch.arange(len(running), device=device)
        keep = torch.zeros(n_docs, dtype=torch.bool, device=device)
        keep[running] = True
        nz = keep[doc_of]
        local, beta_nz, x = place[doc_of[nz]], beta[words[nz]], counts[nz]
        centre, n_tok = prior[running], tokens[running]

        def em_step(theta):
            """(J(theta) (A,), F(theta) (A, T)) of the running rows."""
            phi = (beta_nz * theta[local]).sum(1).clamp_min(1e-300)
            objective = torch.zeros(len(theta), dtype=theta.dtype, device=device).index_add_(0, local, x * phi.log())
            objective += (concentration * centre * theta.clamp_min(1e-300).log()).where(centre > 0, 0.0).sum(1)
            r = theta * torch.zeros_like(theta).index_add_(0, local, beta_nz * (x / phi)[:, None])
            return objective, (concentration * centre + r) / (concentration + n_tok)[:, None]

        start, jumped_to = theta0[running], theta2[running]
        objective, theta1 = em_step(start)
        back = objective < best[running]                          # the jump lost ground
        if back.any():
            start = torch.where(back[:, None], jumped_to, start)
            again, stepped = em_step(start)
            objective, theta1 = torch.where(back, again, objective), torch.where(back[:, None], stepped, theta1)
        done = objective - best[running] <= tol * (concentration + n_tok)
        out[running[done]] = theta1[done]
        if done.all():
            return out
        best[running], theta2[running] = em_step(theta1)
        r = theta1 - start
        v = theta2[running] - 2.0 * theta1 + start
        step, curve = (r * r).sum(1), (v * v).sum(1)
        alpha = torch.where(curve > 0, -(step / torch.where(curve > 0, curve, 1.0)).sqrt(), -1.0)
        alpha = alpha.clamp_max(-1.0)[:, None]
        jump = start - 2.0 * alpha * r + alpha * alpha * v
        inside = (curve > 0) & (jump > 0).all(1)
        theta0[running] = torch.where(inside[:, None], jump, theta2[running])
        out[running] = theta1                                      # where the last cycle got
        running = running[~done]
    return out
