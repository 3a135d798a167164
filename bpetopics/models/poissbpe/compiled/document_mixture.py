"""The accelerated EM of :mod:`bpetopics.models.poissbpe.document_mixture`, compiled
(numba, CPU): one document at a time, its non-zeros' rows of beta read in place, the
same cycles, safeguards and stopping rule as the reference, float64."""

from __future__ import annotations

import numpy as np

from bpetopics.models.poissbpe.compiled import kernels

numba = kernels.numba

if numba is not None:
    from bpetopics.compiled.kernel_cache import cached_njit

    @numba.njit(nogil=True)
    def _em_step(start, stop, indices, data, beta, centre, concentration, tokens, theta, out,
                 r):  # pragma: no cover - compiled
        """out = F(theta), the EM map; returns the objective at theta:

            sum_i x_i ln phi_i + a0 sum_t p_t ln theta_t,   phi_i = sum_t beta_(w_i)t theta_t
            r_t = theta_t sum_i x_i beta_(w_i)t / phi_i,     F(theta)_t = (a0 p_t + r_t) / (a0 + N)"""
        n_topics = theta.shape[0]
        for t in range(n_topics):
            r[t] = 0.0
        objective = 0.0
        for i in range(start, stop):
            row = beta[indices[i]]
            phi = 0.0
            for t in range(n_topics):
                phi += row[t] * theta[t]
            phi = max(phi, 1e-300)
            objective += data[i] * np.log(phi)
            scale = data[i] / phi
            for t in range(n_topics):
                r[t] += row[t] * scale
        for t in range(n_topics):
            if centre[t] > 0.0:
                objective += concentration * centre[t] * np.log(max(theta[t], 1e-300))
            out[t] = (concentration * centre[t] + theta[t] * r[t]) / (concentration + tokens)
        return objective

    @cached_njit(nogil=True)
    def document_mixtures(indptr, indices, data, beta, prior, concentration, tol,
                          max_cycles):  # pragma: no cover - compiled
        """theta (N, T) from CSR rows (indptr, indices int64, data float64), beta (W, T)
        and prior (N, T) float64, by the reference's cycles (its module docstring), one
        document at a time."""
        n_docs, n_topics = prior.shape
        out = np.empty_like(prior)
        theta0, theta1, theta2 = np.empty(n_topics), np.empty(n_topics), np.empty(n_topics)
        jump, r = np.empty(n_topics), np.empty(n_topics)
        for d in range(n_docs):
            centre, start, stop = prior[d], indptr[d], indptr[d + 1]
            tokens = 0.0
            for i in range(start, stop):
                tokens += data[i]
            for t in range(n_topics):
                theta0[t] = centre[t]
                theta2[t] = centre[t]
            best = -np.inf
            for _ in range(max_cycles):
                objective = _em_step(start, stop, indices, data, beta, centre, concentration, tokens,
                                     theta0, theta1, r)
                if objective < best:               # the jump lost ground: back to F(F(theta0))
                    for t in range(n_topics):
                        theta0[t] = theta2[t]
                    objective = _em_step(start, stop, indices, data, beta, centre, concentration,
                                         tokens, theta0, theta1, r)
                if objective - best <= tol * (concentration + tokens):
                    break
                best = _em_step(start, stop, indices, data, beta, centre, concentration, tokens,
                                theta1, theta2, r)
                step, curve = 0.0, 0.0
                for t in range(n_topics):
                    a = theta1[t] - theta0[t]
                    v = theta2[t] - 2.0 * theta1[t] + theta0[t]
                    step += a * a
                    curve += v * v
                alpha = -np.sqrt(step / curve) if curve > 0.0 else -1.0
                alpha = min(alpha, -1.0)
                inside = curve > 0.0
                for t in range(n_topics):
                    a = theta1[t] - theta0[t]
                    v = theta2[t] - 2.0 * theta1[t] + theta0[t]
                    jump[t] = theta0[t] - 2.0 * alpha * a + alpha * alpha * v
                    inside = inside and jump[t] > 0.0
                for t in range(n_topics):
                    theta0[t] = jump[t] if inside else theta2[t]
            out[d] = theta1
        return out
