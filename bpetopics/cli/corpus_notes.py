"""The notes ``bpetopics train`` prints before it trains: about the corpus it is given (a
small one, or short texts at many topics: another model may serve better; a few long
documents: ``--passages`` may serve better) and about where it trains (CUDA at small
minibatches: the CPU may serve better; ``compare`` prints that one too)."""

from __future__ import annotations

import shlex

#: Below this many training documents LDA by Gibbs sampling (tomotopy) trains faster and
#: its topics measure more diverse and, up to 100 topics, more coherent on held-out text
#: (docs/results/quality-grid.md: 20 Newsgroups at 500 documents, lee), and ``train``
#: says so.
SMALL_CORPUS_DOCS = 1000


#: A corpus of fewer than SMALL_CORPUS_DOCS documents averaging at least this many tokens
#: (after cleaning: about twice as many words of text) is of long documents, and ``train``
#: points at ``--passages`` (docs/results/text-comparison.md compares the State of the
#: Union addresses whole and in paragraphs).
LONG_DOCUMENT_TOKENS = 500


def long_documents_note(n_docs: int, n_tokens: int, passages) -> str | None:
    """The one-line note ``train`` prints for a small corpus of long documents modelled
    whole (None otherwise)."""
    if passages is not None or not 0 < n_docs < SMALL_CORPUS_DOCS or n_tokens / n_docs < LONG_DOCUMENT_TOKENS:
        return None
    return (f"Note: the documents average {n_tokens / n_docs:,.0f} tokens after cleaning; few long documents "
            f"give mixed topics, and --passages paragraphs (or sentences) models their passages instead "
            f"(docs/getting-started.md)")


def small_corpus_note(n_docs: int, corpus, n_topics: int) -> str | None:
    """The one-line note ``train`` prints for a corpus of fewer than
    :data:`SMALL_CORPUS_DOCS` training documents (None for a larger one)."""
    if n_docs >= SMALL_CORPUS_DOCS:
        return None
    return (f"Note: {n_docs:,} training documents; below about {SMALL_CORPUS_DOCS:,}, LDA by Gibbs sampling "
            f"trained faster with more diverse, mostly more coherent topics than PoissBPE, which predicted "
            f"held-out words better (docs/results/quality-grid.md); "
            f"`bpetopics compare {shlex.quote(str(corpus))} --topics {n_topics} --models poissbpe,tomotopy` "
            f"(and the same corpus options) checks on this corpus")


#: Short texts (fewer distinct words a document than PoissBPE's ``SHORT_TEXT_WORDS``) at
#: this many topics or more: on the quality grid's two short-text corpora at 100 and 200
#: topics LDA by Gibbs sampling mostly gave topics more coherent on held-out texts (on
#: the subject lines PoissBPE's were the more coherent on the whole corpus), while
#: PoissBPE's mixtures classified documents better (docs/results/quality-grid.md), and
#: ``train`` says so.
SHORT_TEXT_TOPICS = 100


def short_texts_note(n_docs: int, n_distinct: int, corpus, n_topics: int) -> str | None:
    """The one-line note ``train`` prints for short texts (``n_distinct`` document-word
    pairs over ``n_docs`` documents: fewer than PoissBPE's ``SHORT_TEXT_WORDS`` a
    document) modelled with :data:`SHORT_TEXT_TOPICS` topics or more (None otherwise)."""
    from bpetopics.models.poissbpe import PoissBPE

    if n_docs <= 0 or n_distinct / n_docs >= PoissBPE.SHORT_TEXT_WORDS or n_topics < SHORT_TEXT_TOPICS:
        return None
    return (f"Note: short texts ({n_distinct / n_docs:.1f} distinct words a document) with {n_topics} topics; on "
            f"short texts at {SHORT_TEXT_TOPICS} topics or more LDA by Gibbs sampling mostly gave topics more "
            f"coherent on held-out texts, while PoissBPE classified documents better "
            f"(docs/results/quality-grid.md); `bpetopics compare {shlex.quote(str(corpus))} --topics {n_topics} "
            f"--models poissbpe,tomotopy` (and the same corpus options) checks on this corpus")


#: Below this many documents a step, a PoissBPE step on CUDA is a run of small kernels
#: that wait on the CPU thread launching them, and the compiled CPU path trained faster
#: (docs/results/speed.md, "On a GPU": slower on CUDA at 64 documents a step, faster at
#: 512 and 4,096); ``train`` and ``compare`` say so when PoissBPE starts on CUDA below it.
CUDA_MIN_BATCH = 512


def cuda_batch_note(device, batch_size: int) -> str | None:
    """The one-line note ``train`` and ``compare`` print when PoissBPE trains on CUDA
    (``device``, resolved) with fewer than :data:`CUDA_MIN_BATCH` documents a step (None
    otherwise)."""
    if str(device).split(":")[0] != "cuda" or int(batch_size) >= CUDA_MIN_BATCH:
        return None
    return (f"Note: training on CUDA at {int(batch_size)} documents a step; at small minibatches each step "
            f"there is a run of small kernels and --device cpu trained faster, while CUDA pays on large "
            f"corpora with --batch-size {CUDA_MIN_BATCH} or more (docs/results/speed.md)")
