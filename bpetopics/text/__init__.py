"""Text preprocessing and the Corpus type.

``prepare_corpus(source)`` loads a source (``"20newsgroups"``, a folder of text files or
a saved corpus), cleans it (headers, signatures, quotes, encoded attachments, stop
words, numbers, punctuation, short tokens), fits a vocabulary on the train split and
returns ``{"train": Corpus, "test": Corpus}`` with sparse counts. See docs/design.md.

Modules: :mod:`~bpetopics.text.cleaning` (one function per cleaning step),
:mod:`~bpetopics.text.stopwords`, :mod:`~bpetopics.text.loaders` (raw documents),
:mod:`~bpetopics.text.pipeline` (:class:`TextPipeline`), :mod:`~bpetopics.text.corpus`
(:class:`Corpus`, saving and loading), :mod:`~bpetopics.text.prepare`; for corpora larger
than memory :mod:`~bpetopics.text.sharded` (the memory-mapped on-disk format) and
:mod:`~bpetopics.text.streaming` (its chunked two-pass build on worker processes).
"""

from bpetopics.text.cleaning import (
    clean_message,
    strip_binary,
    strip_footer,
    strip_headers,
    strip_quotes,
    tokenize,
)
from bpetopics.text.corpus import Corpus, check_destination, is_saved_corpus, load_splits, save_splits
from bpetopics.text.errors import CorpusError, CorpusWarning
from bpetopics.text.loaders import RawDocuments, load_20newsgroups, load_folder
from bpetopics.text.sources import load_source
from bpetopics.text.pipeline import TextPipeline
from bpetopics.text.prepare import corpus_from_documents, prepare_corpus
from bpetopics.text.stopwords import STOPWORD_CHOICES, load_stopwords

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
