"""GaussBPE and BernBPE, the image models: their estimators, likelihoods and pursuits;
:mod:`~bpetopics.models.images.compiled` holds their numba kernels."""

from bpetopics.models.images.model import BernBPE, GaussBPE

__all__ = ["GaussBPE", "BernBPE"]
