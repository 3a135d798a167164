"""The model registry: the class named in a saved run's ``config.json`` -> its class.

A new model is one entry here; :func:`bpetopics.runs.load_run` and checkpoints read it.
The VAE baselines are registered too, so that image runs (``bpetopics images train``)
save and load them like the BPE models.
"""

from __future__ import annotations

from bpetopics.baselines.gsvae import GumbelSoftmaxVAE
from bpetopics.baselines.vae import GaussianVAE
from bpetopics.models.images import BernBPE, GaussBPE
from bpetopics.models.poissbpe import PoissBPE

#: Model classes by the name saved in a run's config.json ("model").
MODELS = {cls.__name__: cls for cls in (PoissBPE, GaussBPE, BernBPE, GaussianVAE, GumbelSoftmaxVAE)}

#: Image models by the name ``bpetopics images train --model`` takes.
IMAGE_MODELS = {"gaussbpe": "GaussBPE", "bernbpe": "BernBPE", "vae": "GaussianVAE",
                "gsvae": "GumbelSoftmaxVAE"}
