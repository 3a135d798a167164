"""The beta-process prior over code bits and its variational posterior q(pi).

Generative side (docs/model.md)::

    pi_k ~ Beta(alpha * gamma / K, alpha * (1 - gamma / K))     k = 1..K
    z_nk ~ Bernoulli(pi_k)

Variational side: q(pi_k) = Beta(a_k, b_k), updated by a stochastic natural-gradient
step from each minibatch's codes. The pursuit only needs the expected log-odds of a
bit, E_q[ln pi_k] - E_q[ln(1 - pi_k)] = psi(a_k) - psi(b_k): the change in the score
when bit k is switched on.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass
class CodeStatistics:
    """The sufficient statistics of a set of codes for q(pi)'s step.

    on : torch.Tensor, shape (K,), float64 -- per-bit count of codes with the bit on
    n_codes : int -- number of codes, |S|
    """

    on: torch.Tensor
    n_codes: int

    def __add__(self, other: "CodeStatistics") -> "CodeStatistics":
        return CodeStatistics(self.on + other.on.to(self.on.device), self.n_codes + other.n_codes)


def check_prior(n_bits: int, gamma: float, kappa: float) -> None:
    """Refuse (ValueError, one line) a prior :class:`BetaProcessPrior` cannot hold:
    gamma outside (0, K) or kappa outside (0.5, 1]. Allocates nothing."""
    if not 0 < gamma < n_bits:
        raise ValueError(f"gamma must lie in (0, n_bits={n_bits}); got {gamma}")
    if not 0.5 < kappa <= 1:
        raise ValueError(f"kappa must lie in (0.5, 1]; got {kappa}")


class BetaProcessPrior:
    """Beta-process prior q(pi_k) = Beta(a_k, b_k) over K code bits.

    Parameters
    ----------
    n_bits : int
        K, the number of latent bits.
    n_data : int
        N, the size of the data set (scales the minibatch statistics).
    alpha, gamma : float
        Beta-process concentration and mass: the prior is
        Beta(alpha * gamma / K, alpha * (1 - gamma / K)), so gamma is the expected
        number of active bits per point under the prior. Needs 0 < gamma < K.
    tau, kappa : float
        Robbins-Monro step size eta_t = (t + tau) ** -kappa, kappa in (0.5, 1].
    flat_start : bool
        Start q(pi) at Beta(1, 1) (log-odds 0 for every bit) instead of at the prior.
        Started at the prior, every bit costs ~ln(N K / (alpha gamma)) nats while the
        decoder is still random, no bit pays for itself and every code stays empty.
    device : torch.device or str

    Attributes
    ----------
    a, b : torch.Tensor, shape (K,)
        Parameters of q(pi).
    t : int
        Number of natural-gradient steps taken.
    """

    def __init__(self, n_bits, n_data, alpha=1.0, gamma=2.0, tau=1.0, kappa=0.7,
                 flat_start=True, device="cpu"):
        check_prior(n_bits, gamma, kappa)
        self.n_bits, self.n_data = int(n_bits), int(n_data)
        self.alpha, self.gamma, self.tau, self.kappa = alpha, gamma, tau, kappa
        dtype = torch.float64
        self.prior_a = torch.full((n_bits,), alpha * gamma / n_bits, dtype=dtype, device=device)
        self.prior_b = torch.full((n_bits,), alpha * (1 - gamma / n_bits), dtype=dtype, device=device)
        if flat_start:
            self.a = torch.ones(n_bits, dtype=dtype, device=device)
            self.b = torch.ones(n_bits, dtype=dtype, device=device)
        else:
            self.a, self.b = self.prior_a.clone(), self.prior_b.clone()
        self.t = 0

    def step_size(self) -> float:
        """eta_t = (t + tau) ** -kappa."""
        return float((self.t + self.tau) ** -self.kappa)

    def statistics(self, codes: torch.Tensor) -> "CodeStatistics":
        """What a minibatch S of codes contributes to a step: per-bit counts of ones and
        |S|. Statistics of several minibatches (or workers) add up with ``+``.

        Parameters
        ----------
        codes : torch.Tensor, shape (|S|, K), entries in {0, 1}
        """
        codes = codes.to(self.a.dtype)
        return CodeStatistics(on=codes.sum(0), n_codes=int(codes.shape[0]))

    def apply(self, stats: "CodeStatistics") -> None:
        """Natural-gradient step on q(pi) from (summed) minibatch statistics.

        a'_k = alpha gamma / K     + (N / |S|) sum_{n in S} z_nk
        b'_k = alpha (1 - gamma/K) + (N / |S|) sum_{n in S} (1 - z_nk)
        a_k <- (1 - eta_t) a_k + eta_t a'_k ;  b_k likewise.
        """
        on = stats.on.to(device=self.a.device, dtype=self.a.dtype)
        scale = self.n_data / stats.n_codes
        a_hat = self.prior_a + scale * on
        b_hat = self.prior_b + scale * (stats.n_codes - on)
        eta = self.step_size()
        self.a = (1 - eta) * self.a + eta * a_hat
        self.b = (1 - eta) * self.b + eta * b_hat
        self.t += 1

    def step(self, codes: torch.Tensor) -> None:
        """One natural-gradient step from a minibatch of codes (shape (|S|, K)):
        ``apply(statistics(codes))`` (PoissBPE's compiled backend makes the same step in
        one pass: :mod:`bpetopics.models.poissbpe.compiled.prior`)."""
        self.apply(self.statistics(codes))

    def bit_log_odds(self) -> torch.Tensor:
        """psi(a_k) - psi(b_k): change of E_q[ln p(z | pi)] when bit k switches on.

        Returns
        -------
        torch.Tensor, shape (K,), float64
        """
        return torch.digamma(self.a) - torch.digamma(self.b)

    def expected_log_prior(self, codes: torch.Tensor) -> torch.Tensor:
        """E_q[ln p(z | pi)] for each code.

        sum_k z_k [psi(a_k) - psi(a_k + b_k)] + (1 - z_k) [psi(b_k) - psi(a_k + b_k)]

        Parameters
        ----------
        codes : torch.Tensor, shape (N, K)

        Returns
        -------
        torch.Tensor, shape (N,), float64
        """
        total = torch.digamma(self.a + self.b)
        on, off = torch.digamma(self.a) - total, torch.digamma(self.b) - total
        codes = codes.to(on.dtype)
        return codes @ on + (1 - codes) @ off

    def mean(self) -> torch.Tensor:
        """E_q[pi_k] = a_k / (a_k + b_k), shape (K,)."""
        return self.a / (self.a + self.b)

    def state_dict(self) -> dict:
        return {"a": self.a.cpu(), "b": self.b.cpu(), "t": torch.tensor(self.t)}

    def load_state_dict(self, state: dict) -> None:
        device = self.a.device
        self.a = state["a"].to(device=device, dtype=torch.float64)
        self.b = state["b"].to(device=device, dtype=torch.float64)
        self.t = int(state["t"])
