"""bpetopics: topic models with Beta-Bernoulli-process sparse codes and a deep decoder.

The public models, and the entry points of a first session (``prepare_corpus`` from
:mod:`bpetopics.text`, ``save_run`` and ``load_run`` from :mod:`bpetopics.runs`), are
imported lazily so that ``import bpetopics`` stays cheap and the command line starts fast.
"""

__version__ = "0.1.0"

__all__ = ["PoissBPE", "GaussBPE", "BernBPE", "TopicModel", "prepare_corpus", "save_run", "load_run",
           "__version__"]


def __getattr__(name):
    if name in ("PoissBPE", "GaussBPE", "BernBPE"):
        from bpetopics import models

        return getattr(models, name)
    if name == "TopicModel":
        from bpetopics.topic_model import TopicModel

        return TopicModel
    if name == "prepare_corpus":
        from bpetopics.text import prepare_corpus

        return prepare_corpus
    if name in ("save_run", "load_run"):
        from bpetopics import runs

        return getattr(runs, name)
    raise AttributeError(f"module 'bpetopics' has no attribute {name!r}")
