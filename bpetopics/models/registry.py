"""The model registry: the class named in a saved run's ``config.json`` -> its class.

A new model is one entry here; :func:`bpetopics.runs.load_run` and checkpoints read it.
"""

from __future__ import annotations

from bpetopics.models.images import BernBPE, GaussBPE
from bpetopics.models.poissbpe import PoissBPE

#: Model classes by the name saved in a run's config.json ("model").
MODELS = {cls.__name__: cls for cls in (PoissBPE, GaussBPE, BernBPE)}
