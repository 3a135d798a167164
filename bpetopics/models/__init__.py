"""The public models: thin variants of the shared estimator (:mod:`bpetopics.bpe.model`),
one likelihood each.

:mod:`~bpetopics.models.poissbpe` (PoissBPE, text), :mod:`~bpetopics.models.images`
(GaussBPE, BernBPE), :mod:`~bpetopics.models.registry` (name -> class, used to load
saved runs). A new likelihood goes in its model's package here (it implements
:class:`bpetopics.bpe.likelihoods.Likelihood`), with its estimator, and one entry in the
registry.
"""

from bpetopics.models.images import BernBPE, GaussBPE
from bpetopics.models.poissbpe import PoissBPE

__all__ = ["PoissBPE", "GaussBPE", "BernBPE"]
