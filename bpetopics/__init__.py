"""bpetopics: topic models with Beta-Bernoulli-process sparse codes and a deep decoder.

The public models are imported lazily so that ``import bpetopics`` stays cheap and the
command line starts fast.
"""

__version__ = "0.1.0"

__all__ = ["PoissBPE", "GaussBPE", "BernBPE", "TopicModel", "__version__"]


def __getattr__(name):
    if name in ("PoissBPE", "GaussBPE", "BernBPE"):
        from bpetopics import models

        return getattr(models, name)
    if name == "TopicModel":
        from bpetopics.topic_model import TopicModel

        return TopicModel
    raise AttributeError(f"module 'bpetopics' has no attribute {name!r}")
