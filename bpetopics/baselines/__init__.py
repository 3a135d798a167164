"""Baselines the BPE models are compared with.

Text, each behind the topic-model contract of docs/design.md (``fit``,
``topic_word_``, ``doc_topic``, ``top_words``):

* :mod:`~bpetopics.baselines.lda`: LDA by online variational Bayes (gensim ``LdaModel``);
* :mod:`~bpetopics.baselines.tomotopy_lda`: LDA by collapsed Gibbs sampling (tomotopy),
  the LDA a practitioner picks today;
* :mod:`~bpetopics.baselines.nmf`: NMF with the KL loss on counts (scikit-learn);
* :mod:`~bpetopics.baselines.prodlda`: ProdLDA, the neural bag-of-words topic model.

Images: :mod:`~bpetopics.baselines.vae` (Gaussian VAE), :mod:`~bpetopics.baselines.gsvae`
(Gumbel-Softmax VAE), on the shared :mod:`~bpetopics.baselines.vae_base`.

A new baseline is one module here and one entry in the factories of
:mod:`bpetopics.experiments.text_comparison` (``TEXT_MODELS``). Classes are imported
lazily (gensim, tomotopy and torch are heavy).
"""

from importlib import import_module

_WHERE = {
    "LDABaseline": "lda",
    "TomotopyLDA": "tomotopy_lda",
    "NMFTopics": "nmf",
    "ProdLDA": "prodlda",
    "GaussianVAE": "vae",
    "GumbelSoftmaxVAE": "gsvae",
}

__all__ = list(_WHERE)


def __getattr__(name):
    if name in _WHERE:
        return getattr(import_module(f"bpetopics.baselines.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'bpetopics.baselines' has no attribute {name!r}")
