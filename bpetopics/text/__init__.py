"""Text preprocessing and the Corpus type.

``prepare_corpus(source)`` loads a source (``"20newsgroups"``, a folder of text files or
a saved corpus), cleans it (headers, signatures, quotes, encoded attachments, stop
words, numbers, punctuation, short tokens), fits a vocabulary on the train split and
returns ``{"train": Corpus, "test": Corpus}`` with sparse counts. See docs/design.md.

Modules: :mod:`~bpetopics.text.cleaning` (one function per cleaning step),
:mod:`~bpetopics.text.stopwords`, :mod:`~bpetopics.text.loaders` (raw documents),
:mod:`~bpetopics.text.passages` (documents split into paragraphs or sentences),
:mod:`~bpetopics.text.markup` (an HTML page's visible text),
:mod:`~bpetopics.text.pipeline` (:class:`TextPipeline`), :mod:`~bpetopics.text.corpus`
(:class:`Corpus`, saving and loading), :mod:`~bpetopics.text.prepare`; for corpora larger
than memory :mod:`~bpetopics.text.sharded` (the memory-mapped on-disk format) and
:mod:`~bpetopics.text.streaming` (its chunked two-pass build on worker processes).
"""

import importlib

# Imported on first use: a command that only reads one light module (its settings, its
# errors) must not load the corpus readers, and with them numba, before it checks its
# arguments.
_EXPORTS = {
    "clean_message": "cleaning", "strip_binary": "cleaning", "strip_footer": "cleaning",
    "strip_headers": "cleaning", "strip_quotes": "cleaning", "tokenize": "cleaning",
    "Corpus": "corpus", "check_destination": "corpus", "is_saved_corpus": "corpus",
    "load_splits": "corpus", "save_splits": "corpus",
    "CorpusError": "errors", "CorpusWarning": "errors",
    "RawDocuments": "loaders", "load_20newsgroups": "loaders", "load_folder": "loaders",
    "load_source": "sources", "TextPipeline": "pipeline",
    "corpus_from_documents": "prepare", "prepare_corpus": "prepare",
    "STOPWORD_CHOICES": "stopwords", "load_stopwords": "stopwords",
}


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"bpetopics.text.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module 'bpetopics.text' has no attribute {name!r}")


__all__ = [
    "Corpus",
    "TextPipeline",
    "prepare_corpus",
    "corpus_from_documents",
    "CorpusError",
    "CorpusWarning",
    "RawDocuments",
    "load_folder",
    "load_20newsgroups",
    "load_source",
    "save_splits",
    "load_splits",
    "is_saved_corpus",
    "check_destination",
    "clean_message",
    "strip_headers",
    "strip_footer",
    "strip_quotes",
    "strip_binary",
    "tokenize",
    "load_stopwords",
    "STOPWORD_CHOICES",
]
