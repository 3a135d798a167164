"""What PoissBPE is compared against, each behind the topic-model contract of
``docs/CONTRACTS.md`` (``fit(X)``, ``topic_word_`` (T x W), ``doc_topic(X)`` (N x T),
``top_words(vocabulary, n)``):

* :class:`TomotopyLDA`: LDA by collapsed Gibbs sampling (tomotopy);
* :class:`NMFTopics`: NMF with the KL loss on counts (scikit-learn);
* :class:`ProdLDA`: the neural bag-of-words topic model (Srivastava and Sutton 2017).
"""

from bpetopics.baselines.nmf import NMFTopics
from bpetopics.baselines.prodlda import ProdLDA
from bpetopics.baselines.tomotopy_lda import TomotopyLDA

__all__ = ["NMFTopics", "ProdLDA", "TomotopyLDA"]
