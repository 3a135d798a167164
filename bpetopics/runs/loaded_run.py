"""A loaded run (:class:`Run`): the fitted model, its vocabulary or image data record,
its config, and the saved codes, counts and mixtures read on demand.

:func:`bpetopics.runs.folder.load_run` builds it (text runs, and image runs through
:mod:`bpetopics.runs.image_folder`); this module only reads what a run folder holds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from bpetopics.runs.run import (CODES_FILE, COUNTS_FILE, DOC_CODES_FILE, DOC_TOPICS_FILE, RunError,
                                damage_is_run_error, first_line)
from bpetopics.runs.sharded_codes import all_codes


@dataclass
class Run:
    """A loaded run: the fitted model, the text pipeline, the vocabulary, the config."""

    model: object
    pipeline: object | None
    vocabulary: list[str]
    config: dict
    path: Path
    summary: dict = field(default_factory=dict)
    data: dict | None = None  # image runs: config["data"] (bpetopics.runs.image_folder)

    @property
    def is_image_run(self) -> bool:
        return self.data is not None

    def resolved_params(self) -> dict:
        """The parameters the run trained with: ``config["params"]``, each None that
        stands for a value computed from the data (``n_bits``, ``alpha``, ``gamma``,
        ``epochs``, ``topic_smoothing``, ``mixture_entropy``, ``initial_topics``,
        ``document_concentration``)
        replaced by that value, as the model computes it for the run's N documents and
        corpus. Older runs hold only the None: the value is computed again from the
        saved model and corpus record (a None left is one with no value to compute:
        ``max_bits``, no limit)."""
        params, model = dict(self.config.get("params") or {}), self.model
        n_data = self.config.get("n_data") or getattr(model, "n_data_", None)

        def fill(name, compute):
            if name in params and params[name] is None:
                value = compute()
                if value is not None:
                    params[name] = value

        fill("n_bits", lambda: model.code_length() if hasattr(model, "code_length") else None)
        if hasattr(model, "prior_hyperparameters") and n_data:
            alpha, gamma = model.prior_hyperparameters(n_data)
            fill("alpha", lambda: alpha)
            fill("gamma", lambda: gamma)
        fill("epochs", self._trained_epochs)
        fill("topic_smoothing", self._topic_smoothing)
        fill("mixture_entropy",
             lambda: model.mixture_entropy_in_use() if hasattr(model, "mixture_entropy_in_use") and n_data else None)
        fill("initial_topics", lambda: model.initial_topic_count() if hasattr(model, "initial_topic_count") else None)
        fill("document_concentration",
             lambda: model.concentration_in_use() if hasattr(model, "concentration_in_use") else None)
        return params

    def _trained_epochs(self) -> int | None:
        """The epochs the saved model trained (``epoch_``): the default rule's count when
        it trained, which a later version's rule need not give again; the rule's count for a
        model that has not trained."""
        model = self.model
        if getattr(model, "epoch_", 0):
            return int(model.epoch_)
        if hasattr(model, "total_epochs") and hasattr(model, "n_data_"):
            return model.total_epochs()
        return None

    def _topic_smoothing(self) -> float | None:
        """The Dirichlet prior's eta the run used: summary.json's (recorded since it was
        computed from the corpus), else computed from the training corpus's tokens."""
        if self.summary.get("topic_smoothing") is not None:
            return float(self.summary["topic_smoothing"])
        from bpetopics.models.poissbpe.topic_priors import smoothing_for

        tokens = ((self.config.get("corpus") or {}).get("summary") or {}).get("tokens")
        if tokens is None and self.has_counts():
            tokens = float(self.counts().sum())
        return None if tokens is None else smoothing_for(tokens)

    def codes(self) -> np.ndarray:
        """Image runs: the training images' codes (N x K), as saved."""
        if self.data is None:
            raise RunError(f"{self.path} is a text run: its codes are doc_codes()")
        return read_codes(self.path, self.config["n_data"])[0]

    @damage_is_run_error
    def doc_codes(self) -> sp.csr_matrix:
        """Codes of the training documents, CSR (N x K) uint8 (sharded: codes/ stacked)."""
        if "codes" in self.config:
            return all_codes(self)
        return sp.load_npz(self.path / DOC_CODES_FILE).tocsr()

    def has_counts(self) -> bool:
        """True when the run holds its training counts (``counts.npz``)."""
        return (self.path / COUNTS_FILE).is_file()

    def counts(self) -> sp.csr_matrix:
        """The training counts, CSR (N x W), rows in the order of :meth:`doc_topics`'s ids.

        Raises RunError (one line) when the run has none (saved without a corpus, or by an
        older bpetopics) or the file is damaged.
        """
        file = self.path / COUNTS_FILE
        if not file.is_file():
            raise RunError(f"{self.path} has no training counts ({COUNTS_FILE}): it was saved without its corpus "
                           "or by an older bpetopics; train it again to add them")
        try:
            counts = sp.load_npz(file).tocsr()  # scipy reads .npz with allow_pickle=False
        except Exception as exc:
            raise RunError(f"{file} is corrupted ({first_line(exc)})") from None
        expected = (self.config.get("n_data"), self.config.get("n_features"))
        if counts.shape != expected:
            raise RunError(f"{file} has shape {counts.shape}, expected {expected}")
        return counts

    @damage_is_run_error
    def doc_topics(self) -> tuple[list[str], np.ndarray]:
        """(ids, mixtures (N x T)) of the training documents."""
        if "codes" in self.config:
            raise RunError(f"{self.path} was trained on a sharded corpus and keeps no {DOC_TOPICS_FILE}: the ids are "
                           "the corpus's, the mixtures model.code_topic(run.doc_codes())")
        with np.load(self.path / DOC_TOPICS_FILE, allow_pickle=False) as f:
            return [str(i) for i in f["ids"]], f["doc_topic"]

    @damage_is_run_error
    def doc_times(self) -> np.ndarray | None:
        """The training documents' timestamps (``float64`` numbers or ``datetime64[s]``
        dates, in the order of :meth:`doc_topics`'s ids), or None when the corpus had
        none (trained without ``--time-field``, or on a sharded corpus)."""
        if "codes" in self.config:
            return None
        with np.load(self.path / DOC_TOPICS_FILE, allow_pickle=False) as f:
            return f["times"] if "times" in f.files else None


def read_codes(path: Path, n_data: int) -> tuple[np.ndarray, np.ndarray | None]:
    """(codes (N x K), labels (N,) or None) of an image run; RunError when damaged."""
    file = Path(path) / CODES_FILE
    if not file.is_file():
        raise RunError(f"{path} is not complete ({CODES_FILE} is missing)")
    try:
        with np.load(file, allow_pickle=False) as f:
            codes = f["codes"]
            labels = f["labels"] if "labels" in f.files else None
    except Exception as exc:
        raise RunError(f"{file} is corrupted ({first_line(exc)}): train the run again") from None
    if codes.ndim != 2 or codes.shape[0] != n_data:
        raise RunError(f"{file} holds codes of shape {codes.shape}, expected {n_data} rows")
    return codes, labels
