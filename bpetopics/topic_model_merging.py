"""Merging a :class:`~bpetopics.TopicModel`'s topics: the documents' mixtures, top topics
and labels follow the merge (:func:`bpetopics.models.poissbpe.topic_merging.merge_topics`
does the model's part)."""

from __future__ import annotations

import numpy as np

from bpetopics.labels import fallback_label, label_topics

__all__ = ["TopicModelMerging"]


class TopicModelMerging:
    """``merge_topics`` and ``reduce_topics`` of :class:`~bpetopics.TopicModel`: a mixin
    that reads its fitted state (``model_``, the document search, the labels)."""

    def merge_topics(self, topics_to_merge):
        """Merge each group of topics into one, in place: ``[[1, 4], [2, 7, 9]]``.

        A merged topic's mixture weight is the sum of its topics' (exactly, for every
        code: the codes do not change) and its words the token-weighted mixture of
        theirs; it takes its lowest topic's number, the others keep their order
        (:func:`bpetopics.models.poissbpe.topic_merging.merge_topics`). ``topics_``,
        ``probabilities_`` and the labels follow (a merged topic keeps the first label set
        by hand among its topics); :meth:`save` keeps the merge. Returns the
        :class:`~bpetopics.models.poissbpe.topic_merging.TopicMergeReport` (its ``str``: the
        log-likelihood per token of the training counts before and after). ValueError
        (one line) for a topic the model does not have, one in two groups, a group of one."""
        from bpetopics.models.poissbpe.topic_merging import merge_topics

        self._check_fitted()
        return self._after_merge(merge_topics(self.model_, self._training_counts(), topics_to_merge,
                                              self._search.codes))

    def reduce_topics(self, n_topics: int):
        """Merge the most similar topics, a pair at a time, until ``n_topics`` remain
        (similarity: the mean of the cosine of their word distributions and of their
        co-activation in the training documents' mixtures;
        :func:`bpetopics.models.poissbpe.topic_merging.reduce_topics`). Returns the report as
        :meth:`merge_topics` does."""
        from bpetopics.models.poissbpe.topic_merging import reduce_topics

        self._check_fitted()
        return self._after_merge(reduce_topics(self.model_, self._training_counts(), n_topics, self._search.codes))

    def _training_counts(self):
        if self._search.counts is None:
            raise ValueError("this model has no training counts (a run saved without counts.npz): merging "
                             "weighs topics by the tokens they explain")
        return self._search.counts

    def _after_merge(self, report):
        """Carry the documents' mixtures, top topics and labels over to the merged topics."""
        matrix = np.zeros((report.n_topics_before, report.n_topics_after))
        matrix[np.arange(report.n_topics_before), report.mapping] = 1.0
        search = self._search
        if search.mixtures is not None:
            search.mixtures = (np.asarray(search.mixtures, dtype=np.float64) @ matrix).astype(search.mixtures.dtype)
        if getattr(self, "probabilities_", None) is not None:
            self.probabilities_ = (self.probabilities_.astype(np.float64) @ matrix).astype(self.probabilities_.dtype)
            self.topics_ = np.where(self.topics_ >= 0, self.probabilities_.argmax(axis=1), -1)
        else:
            self.topics_ = None
        manual = {}
        for topic in sorted(self._manual):
            manual.setdefault(int(report.mapping[topic]), self._manual[topic])
        merged = {int(report.mapping[g[0]]) for g in report.groups}
        texts = self.corpus_.texts if self.corpus_ is not None else None
        topic_word = self.model_.topic_word_
        if texts is not None:
            automatic = label_topics(topic_word, self.vocabulary_, texts)
        else:
            kept = {int(new): self._automatic[old] for old, new in enumerate(report.mapping)}
            automatic = [fallback_label(topic_word[t], self.vocabulary_) if t in merged else kept[t]
                         for t in range(report.n_topics_after)]
        self._automatic, self._manual = automatic, manual
        return report
