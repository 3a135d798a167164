"""Baselines the BPE models are compared with.

:mod:`~bpetopics.baselines.lda` (gensim LDA, text), :mod:`~bpetopics.baselines.vae`
(Gaussian VAE, images), :mod:`~bpetopics.baselines.gsvae` (Gumbel-Softmax VAE,
images), on the shared :mod:`~bpetopics.baselines.vae_base`. A new baseline (tomotopy,
NMF, ProdLDA, ...) is one module here exposing the topic-model contract of
docs/CONTRACTS.md (``fit``, ``topic_word_``, ``doc_topic``), and one entry in the
factories of :mod:`bpetopics.experiments.text_comparison` (``TEXT_MODELS``).

Classes are imported lazily (gensim and torch are heavy).
"""

__all__ = ["LDABaseline", "GaussianVAE", "GumbelSoftmaxVAE"]


def __getattr__(name):
    if name == "LDABaseline":
        from bpetopics.baselines.lda import LDABaseline

        return LDABaseline
    if name == "GaussianVAE":
        from bpetopics.baselines.vae import GaussianVAE

        return GaussianVAE
    if name == "GumbelSoftmaxVAE":
        from bpetopics.baselines.gsvae import GumbelSoftmaxVAE

        return GumbelSoftmaxVAE
    raise AttributeError(f"module 'bpetopics.baselines' has no attribute {name!r}")
