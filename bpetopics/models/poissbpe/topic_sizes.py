"""PoissBPE's size checks (:class:`TopicSizes`): those of the shared estimator
(:class:`~bpetopics.bpe.size_checks.SizeChecks`) with the topics: no more topics than
documents or words, codes of 2.5 bits a topic, the topics' memory, and ``soft_codes``
in one process only."""

from __future__ import annotations

from bpetopics.bpe import sizes
from bpetopics.bpe.device import resolve_device
from bpetopics.bpe.pursuit import default_budget


class TopicSizes:
    """The size checks of a topic model (a part of PoissBPE, before the shared estimator
    in its bases)."""

    def check_sizes(self, n_data: int, n_features: int) -> None:
        """As :meth:`BPEBase.check_sizes`, and refuse more topics than documents or words
        (a topic needs documents to explain and words to spread over)."""
        self._validate_params()
        self.check_processes(self.step_group.size)
        if self.n_topics > n_data:
            raise sizes.SizeError("n_topics", self.n_topics, f"is more than the {n_data:,} documents")
        if self.n_topics > n_features:
            raise sizes.SizeError("n_topics", self.n_topics, f"is more than the {n_features:,} words of the vocabulary")
        if self.initial_topics is not None and self.initial_topics > self.n_topics:
            raise ValueError(f"initial_topics must be at most n_topics ({self.n_topics}); got {self.initial_topics}")
        super().check_sizes(n_data, n_features)

    def check_processes(self, n_processes: int, label=str) -> None:
        """Refuse ``soft_codes`` > 1 with several processes sharing each step (one line;
        ``label`` names the parameter, e.g. ``--soft-codes``)."""
        if self.soft_codes > 1 and n_processes > 1:
            name = label("soft_codes")
            raise ValueError(f"{name} {self.soft_codes} trains in one process only; use {name} 1 with "
                             "several processes")

    def _check_code_length(self) -> None:
        """As :meth:`BPEBase._check_code_length`, naming ``n_topics`` when it sets K."""
        if self.n_bits is None and self.code_length() > sizes.MAX_BITS:
            raise sizes.SizeError("n_topics", self.n_topics, f"gives default codes of {self.code_length():,} "
                                                             f"bits, more than the {sizes.MAX_BITS:,} the pursuit can search")
        super()._check_code_length()

    def _least_data(self, n_data: int) -> tuple[int, int]:
        """At least T documents and T words (:meth:`check_sizes` refuses fewer)."""
        return max(int(n_data), int(self.n_topics)), int(self.n_topics)

    def _size_parameters(self) -> dict:
        """As :meth:`BPEBase._size_parameters`, with the topics and ``topic_init_docs``."""
        return {**super()._size_parameters(), "n_topics": int(self.n_topics),
                "topic_init_docs": int(self.topic_init_docs)}

    def _fit_memory(self, n_data: int, n_features: int, size: dict) -> dict:
        """As :meth:`BPEBase._fit_memory`, with the topics (W x T logits and softmax) and
        their start: ``topic_init_docs`` documents drawn for each topic (an index and a
        sparse entry each, 24 bytes)."""
        parts = sizes.estimate_fit_bytes(n_data, n_features, size["n_bits"], size["n_topics"], size["hidden"],
                                         size["batch_size"], size["n_topics"],
                                         default_budget(resolve_device(self.device)))
        parts["topic_init"] = 24 * size["n_topics"] * size["topic_init_docs"]
        return parts
