"""Evaluation of topic models: coherence, diversity, completion perplexity, code sparsity,
classification. (The gensim LDA baseline is in :mod:`bpetopics.baselines`, the
comparison over seeds in :mod:`bpetopics.experiments.text_comparison`.)

Every function takes the topic-model contract of ``docs/design.md``: ``topic_word_``
(T x W, rows on the simplex) and ``doc_topic(X)`` (N x T), so LDA and BPE models are
measured by the same code.
"""

from bpetopics.evaluation.classification import classification_accuracy
from bpetopics.evaluation.coherence import (
    CoherenceScores,
    gensim_coherence,
    npmi_coherence,
    top_word_ids,
    top_words,
)
from bpetopics.evaluation.cooccurrence import EncodedTexts, encode_texts, window_cooccurrence
from bpetopics.evaluation.diversity import code_stats, hoyer_sparsity, topic_diversity, unused_topic_share
from bpetopics.evaluation.evaluate import evaluate_topic_model
from bpetopics.evaluation.perplexity import (
    PerplexityResult,
    completion_perplexity,
    heldout_log_likelihood,
    split_documents,
)

__all__ = [
    "CoherenceScores",
    "EncodedTexts",
    "PerplexityResult",
    "classification_accuracy",
    "code_stats",
    "completion_perplexity",
    "encode_texts",
    "evaluate_topic_model",
    "gensim_coherence",
    "heldout_log_likelihood",
    "hoyer_sparsity",
    "npmi_coherence",
    "split_documents",
    "top_word_ids",
    "top_words",
    "topic_diversity",
    "unused_topic_share",
    "window_cooccurrence",
]
