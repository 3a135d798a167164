"""TopicModel: raw texts in, topics, labels and search out, in one object.

The text pipeline of ``bpetopics train`` (:func:`bpetopics.text.corpus_from_documents`
with a :class:`~bpetopics.text.TextPipeline`), then :class:`~bpetopics.PoissBPE`: the same
settings and seed give the same topics as ``bpetopics train``. A fitted model is saved
as a run folder (:func:`bpetopics.runs.save_run`) and a run folder, also one written by
``bpetopics train``, loads as a TopicModel. See docs/topic-model.md.
"""

from __future__ import annotations

import numpy as np

from bpetopics.labels import label_topics, labels_record, merge_labels
from bpetopics.text import RawDocuments, TextPipeline, corpus_from_documents
from bpetopics.text.errors import CorpusError
from bpetopics.topic_model_merging import TopicModelMerging

__all__ = ["TopicModel"]

#: Top words in the ``Name`` column (BERTopic's ``3_space_nasa_launch_orbit``).
NAME_WORDS = 4


def _documents(texts) -> tuple[list[str], list[str]]:
    """(texts, ids) of a list of strings (ids: their positions) or a pandas Series (ids:
    its index); ValueError (one line) naming the first document that is not text."""
    index = texts.index if hasattr(texts, "iloc") else None      # a pandas Series: its index
    values = list(texts.tolist() if hasattr(texts, "tolist") else texts) if not isinstance(texts, str) else None
    if values is None:
        raise ValueError("give a list of documents (strings), not one string")
    ids = [str(i) for i in (index if index is not None else range(len(values)))]
    for doc_id, text in zip(ids, values):
        if not isinstance(text, str):
            raise ValueError(f"document {doc_id} is a {type(text).__name__}, not text: give strings "
                             "(drop or fill missing values first)")
    return values, ids


class TopicModel(TopicModelMerging):
    """A topic model of raw texts: the pipeline of ``bpetopics train`` and PoissBPE.

    Parameters
    ----------
    n_topics : int
        T (``--topics``).
    vocab_size : int or None
        Keep the most frequent words (``--vocab-size``; None or 0: all).
    min_df, max_df : int or float
        Document-frequency cuts (``--min-df``, ``--max-df``): counts, or fractions if float.
    stopwords : str, path or iterable of str
        ``"nltk"``, ``"sklearn"``, ``"gensim"``, ``"none"``, a file, or the words.
    random_state : int
        Seed of the model (``--seed``).
    seed_topics : list of list of str or None
        Guided topics (``--seed-topics``): topic t's seed words, ``[["space", "nasa"],
        ["hockey"]]``, mapped to the fitted vocabulary's ids and passed to PoissBPE's
        ``seed_words`` (a prior favouring them in their topic; ``seed_strength`` its
        weight). Words outside the vocabulary are dropped with one warning naming them.
    **params
        Other :class:`~bpetopics.PoissBPE` parameters (``n_bits``, ``epochs``,
        ``device``, ``progress``...), with its defaults, which are ``bpetopics train``'s.

    Attributes
    ----------
    model_ : PoissBPE
    pipeline_ : TextPipeline
    vocabulary_ : list of str
    document_ids_ : list of str
        The training documents kept (those with a word of the vocabulary), in order:
        ``similar_documents``'s rows.
    topics_ : np.ndarray of int, shape (N,)
        Each document given to ``fit``: its top topic, -1 for one without a word of the
        vocabulary (left out of training).
    probabilities_ : np.ndarray, shape (N, T)
        Their posterior topic mixtures (zeros for those left out).
    """

    def __init__(self, n_topics: int = 20, *, vocab_size: int | None = 2000, min_df=5, max_df=0.5,
                 stopwords="nltk", random_state: int = 0, seed_topics=None, **params):
        self.n_topics = n_topics
        self.vocab_size = vocab_size
        self.min_df = min_df
        self.max_df = max_df
        self.stopwords = stopwords
        self.random_state = random_state
        self.seed_topics = seed_topics
        self.params = dict(params)

    def __repr__(self) -> str:
        seeds = {} if self.seed_topics is None else {"seed_topics": self.seed_topics}
        extra = "".join(f", {k}={v!r}" for k, v in {**seeds, **self.params}.items())
        return (f"TopicModel(n_topics={self.n_topics}, vocab_size={self.vocab_size}, min_df={self.min_df}, "
                f"max_df={self.max_df}, stopwords={self.stopwords!r}, random_state={self.random_state}{extra})")

    # ------------------------------------------------------------------ fitting
    def _estimator(self):
        from bpetopics.models import PoissBPE

        params = {"progress": False, **self.params, "n_topics": self.n_topics, "random_state": self.random_state}
        return PoissBPE(**params)

    def fit(self, texts, y=None) -> "TopicModel":
        """Clean and count ``texts`` (a list of strings or a pandas Series), fit the
        vocabulary and PoissBPE, label the topics. Returns ``self``.

        Raises ValueError (one line) for a bad setting, a document that is not text, or
        texts that leave no vocabulary (bpetopics.text.CorpusError, a ValueError)."""
        from bpetopics.runs.search import DocumentSearch

        texts, ids = _documents(texts)
        model = self._estimator()
        model.validate()
        pipeline = TextPipeline(vocab_size=self.vocab_size or None, min_df=self.min_df, max_df=self.max_df,
                                stopwords=self.stopwords)
        pipeline.check_settings()
        if not texts:
            raise CorpusError("no documents: give at least one text")
        corpus = corpus_from_documents({"train": RawDocuments(texts, ids)}, pipeline)["train"]
        if corpus.n_docs == 0:
            raise CorpusError(f"none of the {len(texts):,} documents has a word of the vocabulary")
        model.check_sizes(corpus.n_docs, corpus.n_words)
        if self.seed_topics is not None:
            model.set_params(seed_words=self._seed_word_ids(pipeline.vocabulary_))
        model.fit(corpus.counts)
        mixtures = model.posterior_topic(corpus.counts, model.codes_)
        self._set_fitted(model, pipeline, DocumentSearch(model, pipeline, model.codes_, corpus.counts, mixtures,
                                                         list(corpus.ids)))
        self.corpus_ = corpus
        self._automatic = label_topics(model.topic_word_, self.vocabulary_, corpus.texts)
        rows = {doc_id: r for r, doc_id in enumerate(corpus.ids)}
        kept = np.array([rows.get(i, -1) for i in ids], dtype=np.int64)
        self._train_texts = [None] * corpus.n_docs                # the texts of the training rows
        for position in np.flatnonzero(kept >= 0):
            self._train_texts[kept[position]] = texts[position]
        self.probabilities_ = np.zeros((len(texts), mixtures.shape[1]), dtype=mixtures.dtype)
        self.probabilities_[kept >= 0] = mixtures[kept[kept >= 0]]
        self.topics_ = np.where(kept >= 0, self.probabilities_.argmax(axis=1), -1)
        return self

    def _seed_word_ids(self, vocabulary) -> list:
        """``seed_topics`` as word ids of ``vocabulary``; one warning names the words
        outside it (dropped)."""
        import warnings

        from bpetopics.seed_topics import seed_word_ids

        ids, unknown = seed_word_ids(self.seed_topics, vocabulary)
        if unknown:
            warnings.warn(f"seed words not in the vocabulary (dropped): {', '.join(unknown)}", UserWarning,
                          stacklevel=3)
        return ids

    def _set_fitted(self, model, pipeline, search) -> None:
        self.model_, self.pipeline_, self._search = model, pipeline, search
        self.vocabulary_ = list(pipeline.vocabulary_) if pipeline is not None else None
        self.document_ids_ = list(search.ids) if search.ids is not None else None
        self._manual, self.corpus_, self._run_info, self._train_texts = {}, None, None, None

    def fit_transform(self, texts, y=None) -> tuple[np.ndarray, np.ndarray]:
        """``fit(texts)``, then each document's top topic and mixture: (topics (N,),
        probabilities (N, T)), as :meth:`transform` (-1 and zeros for a document without
        a word of the vocabulary)."""
        self.fit(texts)
        return self.topics_, self.probabilities_

    def _check_fitted(self) -> None:
        if not hasattr(self, "model_"):
            raise RuntimeError("this TopicModel is not fitted yet: call fit(texts) or TopicModel.load(path) first")

    def transform(self, texts) -> tuple[np.ndarray, np.ndarray]:
        """Each document's top topic and topic mixture (the posterior mean of f(z)).

        Returns
        -------
        topics : np.ndarray of int, shape (N,)
            -1 for a document with no word of the vocabulary.
        probabilities : np.ndarray of float32, shape (N, T)
            Rows sum to 1; zeros for a document with no word of the vocabulary.
        """
        self._check_fitted()
        texts, _ = _documents(texts)
        counts, _, mixtures = self._search.encode(texts)
        empty = np.asarray(counts.sum(axis=1)).ravel() == 0
        mixtures = np.where(empty[:, None], 0.0, mixtures).astype(np.float32)
        return np.where(empty, -1, mixtures.argmax(axis=1)), mixtures

    # ------------------------------------------------------------------ topics
    @property
    def topic_labels_(self) -> list[str]:
        """One label per topic: set by hand (:meth:`set_topic_labels`) or automatic."""
        self._check_fitted()
        return merge_labels(self._automatic, self._manual)

    def set_topic_labels(self, labels: dict) -> "TopicModel":
        """Label topics by hand, ``{3: "space"}`` (saved by :meth:`save`); ValueError for
        a topic the model does not have or an empty label."""
        self._check_fitted()
        for topic, label in labels.items():
            if isinstance(topic, bool) or not isinstance(topic, (int, np.integer)) or not 0 <= topic < self._n():
                raise ValueError(f"topic {topic!r} is not one of the model's topics 0..{self._n() - 1}")
            if not str(label).strip():
                raise ValueError(f"the label of topic {topic} is empty: give some text")
        self._manual.update({int(t): " ".join(str(label).split()) for t, label in labels.items()})
        return self

    def _n(self) -> int:
        return int(self.model_.topic_word_.shape[0])

    def get_topic(self, topic: int, top_n: int = 10) -> list[tuple[str, float]]:
        """A topic's ``top_n`` words and their probabilities, most probable first."""
        from bpetopics.topwords import top_word_ids

        self._check_fitted()
        if isinstance(topic, bool) or not isinstance(topic, (int, np.integer)) or not 0 <= topic < self._n():
            raise ValueError(f"topic {topic!r} is not one of the model's topics 0..{self._n() - 1}")
        row = self.model_.topic_word_[topic]
        return [(self.vocabulary_[j], float(row[j])) for j in top_word_ids(row[None, :], top_n)[0]]

    def _training_topics(self) -> np.ndarray:
        """The top topic of each training document (of ``fit``'s texts, or of the run's)."""
        if getattr(self, "topics_", None) is not None:
            return self.topics_
        rows = np.arange(len(self._search.codes))
        self.topics_ = self._search.mixtures_of(rows).argmax(axis=1)
        return self.topics_

    def get_topic_info(self, top_n: int = 10):
        """One row per topic (pandas DataFrame): ``Topic``, ``Count`` (training documents
        whose top topic it is), ``Label``, ``Name`` (``3_space_nasa_launch_orbit``) and
        ``Representation`` (top ``top_n`` words); a row ``-1`` counts the documents
        without a word of the vocabulary, when there are any."""
        import pandas as pd

        self._check_fitted()
        topics = self._training_topics()
        counts = np.bincount(topics[topics >= 0], minlength=self._n())
        rows = []
        if (topics < 0).any():
            rows.append({"Topic": -1, "Count": int((topics < 0).sum()), "Label": "(no word of the vocabulary)",
                         "Name": "-1_", "Representation": []})
        for t, label in enumerate(self.topic_labels_):
            words = [w for w, _ in self.get_topic(t, top_n)]
            rows.append({"Topic": t, "Count": int(counts[t]), "Label": label,
                         "Name": "_".join([str(t), *words[:NAME_WORDS]]), "Representation": words})
        return pd.DataFrame(rows, columns=["Topic", "Count", "Label", "Name", "Representation"])

    def get_representative_docs(self, topic: int | None = None, n: int = 3):
        """The ``n`` training documents that give each topic (or ``topic``) the most weight
        in their mixtures, as ``bpetopics topics RUN --documents N`` lists them (among
        weights equal to two decimals, the longest first). A table rather than
        BERTopic's lists of texts: one row per document (pandas DataFrame), ``Topic``,
        ``Rank`` (1 first), ``Row`` (its row in ``document_ids_``, as
        :meth:`similar_documents` takes it), ``Id``, ``Weight`` (of the topic in its
        mixture) and ``Document`` (the text given to :meth:`fit`; None for a loaded
        model, which keeps no texts: map ``Id`` to yours). ValueError for a topic the
        model does not have."""
        import pandas as pd

        from bpetopics.runs.topics import top_documents

        self._check_fitted()
        if topic is not None and (isinstance(topic, bool) or not isinstance(topic, (int, np.integer))
                                  or not 0 <= topic < self._n()):
            raise ValueError(f"topic {topic!r} is not one of the model's topics 0..{self._n() - 1}")
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"n is {n!r}: give how many documents a topic, a positive int")
        n_rows = len(self._search.codes)
        mixtures = self._search.mixtures_of(np.arange(n_rows))                       # (N, T)
        counts = self._search.counts
        lengths = np.zeros(n_rows) if counts is None else np.asarray(counts.sum(axis=1)).ravel()
        records = []
        for t in ([int(topic)] if topic is not None else range(self._n())):
            for rank, row in enumerate(top_documents(mixtures[:, t], lengths, n), start=1):
                records.append({"Topic": t, "Rank": rank, "Row": int(row),
                                "Id": self.document_ids_[row] if self.document_ids_ is not None else str(row),
                                "Weight": float(mixtures[row, t]),
                                "Document": None if self._train_texts is None else self._train_texts[row]})
        return pd.DataFrame(records, columns=["Topic", "Rank", "Row", "Id", "Weight", "Document"])

    def get_document_info(self, texts):
        """One row per document (pandas DataFrame): ``Document``, ``Topic``, ``Label``,
        ``Name``, ``Probability`` (the top topic's weight), ``Representation`` and
        ``Words`` (the document's words in the vocabulary)."""
        import pandas as pd

        self._check_fitted()
        texts_list, ids = _documents(texts)
        topics, mixtures = self.transform(texts_list)
        counts = self.pipeline_.transform(texts_list)
        info = self.get_topic_info().set_index("Topic")
        return pd.DataFrame({
            "Document": texts_list, "Topic": topics,
            "Label": [info.at[t, "Label"] if t in info.index else "" for t in topics],
            "Name": [info.at[t, "Name"] if t in info.index else "" for t in topics],
            "Probability": np.where(topics >= 0, mixtures.max(axis=1), 0.0),
            "Representation": [info.at[t, "Representation"] if t in info.index else [] for t in topics],
            "Words": np.asarray(counts.sum(axis=1)).ravel()}, index=texts.index if hasattr(texts, "iloc") else None)

    # ------------------------------------------------------------------ search
    def find_topics(self, query: str, top_n: int = 5) -> tuple[list[int], list[float]]:
        """The topics of a query, encoded like a document: (topics, weights in its
        mixture), heaviest first. ValueError when no word of the query is in the
        vocabulary."""
        self._check_fitted()
        return self._search.find_topics(query, top_n)

    def similar_documents(self, doc, k: int = 10, *, pool: int | str | None = "shared",
                          word_weight: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` training documents most like ``doc``: a training document (its row
        in ``document_ids_``, an int) or a text (a str).

        Every document scored by ``(1 - word_weight)`` times the cosine similarity of its
        posterior mixture with the query's plus ``word_weight`` times that of their
        TF-IDF vectors (None: 0.7), highest first, ties by the lower row. With
        ``word_weight=0``, the documents sharing an active bit with the query's binary
        code, ranked by their mixtures alone (every document when fewer than ``k`` share
        one). ``pool=0`` (or None): Hamming distance alone; a positive ``pool``
        (deprecated) re-ranks that many Hamming-nearest documents.
        Returns (rows (k,), scores (k,)): similarities, or Hamming distances.
        """
        self._check_fitted()
        if isinstance(doc, str):
            return self._search.similar(text=doc, k=k, pool=pool, word_weight=word_weight)
        if isinstance(doc, bool) or not isinstance(doc, (int, np.integer)):
            raise ValueError(f"give a training document's row (an int) or a text (a str), not {type(doc).__name__}")
        return self._search.similar(int(doc), k=k, pool=pool, word_weight=word_weight)

    # ------------------------------------------------------------------ files
    def save(self, path, *, overwrite: bool = False):
        """Write the run folder ``path`` that ``bpetopics train`` writes (safetensors and
        JSON; its ``labels.json`` holds the labels, those set by hand too). Returns the path."""
        from bpetopics.runs.folder import save_run

        self._check_fitted()
        record = labels_record(self._automatic, self._manual)
        if self.corpus_ is not None:
            return save_run(path, self.model_, self.corpus_, overwrite=overwrite, labels=record)
        search = self._search
        return save_run(path, self.model_, vocabulary=self.vocabulary_, pipeline=self.pipeline_,
                        counts=search.counts, corpus_info=self._run_info, overwrite=overwrite, labels=record,
                        ids=search.ids)

    @classmethod
    def load(cls, path, device: str | None = "cpu") -> "TopicModel":
        """Read a run folder (written by :meth:`save` or ``bpetopics train``); RunError
        (one line) when it is not a text run or is damaged. Never executes code."""
        from bpetopics.runs.folder import RunError, load_run
        from bpetopics.runs.labels import label_record
        from bpetopics.runs.search import DocumentSearch

        run = load_run(path, device=device)
        if run.is_image_run:
            raise RunError(f"{path} is an image run ({run.config['model']}): a TopicModel reads text runs")
        params = dict(run.config.get("params") or {})
        settings = run.pipeline.get_params() if run.pipeline is not None else {}
        self = cls(params.pop("n_topics", 20), vocab_size=settings.get("vocab_size", 2000),
                   min_df=settings.get("min_df", 5), max_df=settings.get("max_df", 0.5),
                   stopwords=settings.get("stopwords", "nltk"), random_state=params.pop("random_state", 0),
                   **params)
        self._set_fitted(run.model, run.pipeline, DocumentSearch.from_run(run))
        self._automatic, self._manual = label_record(run)
        self._run_info, self.topics_ = dict(run.config.get("corpus") or {}), None
        return self
