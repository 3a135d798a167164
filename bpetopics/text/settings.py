"""How a corpus is built from its source, as one named record.

:class:`CorpusSettings` holds the corpus options the commands share (``corpus``,
``train``, ``compare``): the vocabulary's size and document-frequency bounds, the stop
words, where 20 Newsgroups lives, the labels kept, the documents drawn and their seed,
the share held out as a test split, the passages documents are split into, and a JSONL
or CSV source's fields. It travels from
the command line to :func:`~bpetopics.text.prepare.prepare_corpus`
(:meth:`CorpusSettings.keywords`) and into a run's config.json, whose
``corpus.settings`` are those keywords (the record fields only where they differ from
their defaults); :meth:`CorpusSettings.from_record` reads them back from a run.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

#: The settings of a JSONL or CSV source and their defaults (recorded only when changed).
RECORD_FIELDS = {"text_field": "text", "id_field": None, "label_field": None, "skip_bad_lines": False,
                 "time_field": None}


@dataclass(frozen=True)
class CorpusSettings:
    """The settings that build a corpus from its source (``prepare_corpus``'s keywords).

    Attributes
    ----------
    vocab_size : int or None
        Keep the this many most frequent words (None: all of them).
    min_df, max_df : int or float
        Document-frequency bounds of a word (a count, or a share of the documents).
    stopwords : str
        The stop-word list ("nltk", "sklearn", "none", or a file).
    data_home : str or None
        Where scikit-learn keeps 20 Newsgroups.
    categories : tuple of str or None
        Keep only these labels (None: all).
    max_docs : int or None
        Keep at most this many documents per split, drawn with ``random_state``.
    random_state : int
        Seed of that draw (and of ``test_size``'s).
    test_size : float or None
        A source without a test split: hold out this share of its documents as one
        (None: none).
    passages : str or None
        Split each document into "paragraphs" or "sentences" (None: whole documents).
    text_field, id_field, label_field, time_field : str or None
        A JSONL or CSV source's keys or columns.
    skip_bad_lines : bool
        A JSONL or CSV source: skip malformed lines instead of stopping.
    """

    vocab_size: int | None = 2000
    min_df: int | float = 5
    max_df: int | float = 0.5
    stopwords: str = "nltk"
    data_home: str | None = None
    categories: tuple | None = None
    max_docs: int | None = None
    random_state: int = 0
    test_size: float | None = None
    passages: str | None = None
    text_field: str = RECORD_FIELDS["text_field"]
    id_field: str | None = RECORD_FIELDS["id_field"]
    label_field: str | None = RECORD_FIELDS["label_field"]
    skip_bad_lines: bool = RECORD_FIELDS["skip_bad_lines"]
    time_field: str | None = RECORD_FIELDS["time_field"]

    @classmethod
    def from_options(cls, *, vocab_size, min_df, max_df, stopwords, data_home, categories, max_docs, seed,
                     test_size=None, passages=None, **record_fields) -> "CorpusSettings":
        """The command line's corpus options: ``vocab_size`` 0 means all words (None);
        ``categories`` a comma-separated string, split on commas; ``seed`` the draws';
        ``record_fields`` any of :data:`RECORD_FIELDS`."""
        unknown = set(record_fields) - set(RECORD_FIELDS)
        if unknown:
            raise TypeError(f"unknown corpus settings: {', '.join(sorted(unknown))}")
        return cls(vocab_size=vocab_size or None, min_df=min_df, max_df=max_df, stopwords=stopwords,
                   data_home=data_home, max_docs=max_docs, random_state=seed, test_size=test_size,
                   passages=passages,
                   categories=None if categories is None
                   else tuple(c.strip() for c in categories.split(",") if c.strip()),
                   **record_fields)

    @classmethod
    def from_record(cls, settings: dict) -> "CorpusSettings":
        """The settings a run recorded (``config["corpus"]["settings"]``); what a run of an
        older bpetopics did not record takes its default, keys of other kinds (a saved
        corpus's path) are left out."""
        names = {f.name for f in fields(cls)}
        given = {k: v for k, v in settings.items() if k in names}
        if given.get("categories") is not None:
            given["categories"] = tuple(given["categories"])
        return cls(**given)

    def keywords(self) -> dict:
        """``prepare_corpus``'s keyword arguments, as config.json records them: the record
        fields, ``test_size`` and ``passages`` only where they differ from their defaults;
        ``categories`` a list."""
        out = {"vocab_size": self.vocab_size, "min_df": self.min_df, "max_df": self.max_df,
               "stopwords": self.stopwords, "data_home": self.data_home, "max_docs": self.max_docs,
               "random_state": self.random_state,
               "categories": None if self.categories is None else list(self.categories)}
        out.update({k: getattr(self, k) for k, default in RECORD_FIELDS.items() if getattr(self, k) != default})
        if self.test_size is not None:
            out["test_size"] = self.test_size
        if self.passages is not None:
            out["passages"] = self.passages
        return out

    def record_fields(self) -> dict:
        """The :data:`RECORD_FIELDS` (a JSONL or CSV source's), all of them."""
        return {k: getattr(self, k) for k in RECORD_FIELDS}
