"""PoissBPE, the text model: its estimator, Poisson likelihood, packed batches, pursuit,
code posterior, topic priors and topic moves; :mod:`~bpetopics.models.poissbpe.compiled`
holds its numba kernels, each beside the torch code it speeds up."""

from bpetopics.models.poissbpe.model import PoissBPE

__all__ = ["PoissBPE"]
