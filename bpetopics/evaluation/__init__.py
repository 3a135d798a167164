"""Evaluation of topic models: coherence, diversity, completion perplexity, code sparsity,
classification, the gensim LDA baseline, and the two compared over seeds
(:func:`compare_models`, :func:`write_comparison`).

Every function takes the topic-model contract of ``docs/CONTRACTS.md``: ``topic_word_``
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
from bpetopics.evaluation.compare import compare_models, write_comparison
from bpetopics.evaluation.cooccurrence import EncodedTexts, encode_texts, window_cooccurrence
from bpetopics.evaluation.diversity import code_stats, hoyer_sparsity, topic_diversity, unused_topic_share
from bpetopics.evaluation.evaluate import evaluate_topic_model
from bpetopics.evaluation.lda import LDABaseline
from bpetopics.evaluation.perplexity import (
    PerplexityResult,
    completion_perplexity,
    heldout_log_likelihood,
    split_documents,
)

__all__ = [
    "CoherenceScores",
    "EncodedTexts",
    "LDABaseline",
    "PerplexityResult",
    "classification_accuracy",
    "code_stats",
    "compare_models",
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
    "write_comparison",
]
