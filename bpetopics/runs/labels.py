"""A run's topic labels: read from its ``labels.json``, computed when missing, set by hand.

``bpetopics train`` (and :func:`~bpetopics.runs.folder.save_run` given a corpus with
texts) writes ``labels.json``; :func:`topic_labels` is what the commands and pictures
show (labels set by hand over the automatic ones). A run without the file (trained by an
older bpetopics, or on a sharded corpus) gets its labels computed from its corpus, rebuilt
(:func:`~bpetopics.runs.corpus.run_splits`), or else each topic's top two words; nothing
is written then. :func:`set_topic_labels` and :func:`relabel_topics` write the file
(atomically).
"""

from __future__ import annotations

import json

from bpetopics.files import write_bytes_atomic
from bpetopics.labels import (fallback_label, label_topics, labels_record, merge_labels,
                              parse_labels_record)
from bpetopics.runs.corpus import run_splits
from bpetopics.runs.run import LABELS_FILE, RunError, json_bytes

__all__ = ["topic_labels", "label_record", "set_topic_labels", "relabel_topics", "automatic_labels"]


def automatic_labels(run, rebuild: bool = True) -> list[str]:
    """Labels computed for ``run`` now: from its corpus's texts when ``rebuild`` and the
    corpus can be rebuilt, else each topic's top two words."""
    topic_word = run.model.topic_word_
    if rebuild:
        try:
            texts = run_splits(run)["train"].texts
        except RunError:
            texts = None
        if texts is not None:
            return label_topics(topic_word, run.vocabulary, texts)
    return [fallback_label(row, run.vocabulary) for row in topic_word]


def label_record(run, rebuild: bool = True) -> tuple[list[str], dict[int, str]]:
    """(automatic labels, labels set by hand) of ``run``: its ``labels.json``, or labels
    computed now (:func:`automatic_labels`) and none by hand. RunError (one line) for a
    damaged file."""
    path = run.path / LABELS_FILE
    n_topics = int(run.model.topic_word_.shape[0])
    if not path.is_file():
        return automatic_labels(run, rebuild), {}
    try:
        return parse_labels_record(json.loads(path.read_text(encoding="utf-8")), n_topics)
    except (ValueError, UnicodeDecodeError) as exc:     # json's errors are ValueErrors
        raise RunError(f"{path} is damaged ({exc}): delete it to label the topics again") from None


def topic_labels(run, rebuild: bool = True) -> list[str]:
    """One label per topic of ``run``: set by hand where one was, else automatic.

    Parameters
    ----------
    run : Run
        A loaded text run (:func:`bpetopics.runs.load_run`).
    rebuild : bool
        For a run without ``labels.json``: rebuild its corpus to compute the labels
        (seconds for 20 Newsgroups); False gives the top two words at once.

    Returns
    -------
    list of str, length T
    """
    return merge_labels(*label_record(run, rebuild))


def set_topic_labels(run, labels: dict) -> list[str]:
    """Set labels by hand (``{3: "space"}``) and write the run's ``labels.json``; returns
    all the labels. ValueError (one line) for a topic the run does not have or an empty
    label; an empty mapping leaves the file as it was."""
    n_topics = int(run.model.topic_word_.shape[0])
    manual = {}
    for topic, label in labels.items():
        if isinstance(topic, bool) or not str(topic).strip().isdigit() or not 0 <= int(topic) < n_topics:
            raise ValueError(f"topic {topic!r} is not one of the run's topics 0..{n_topics - 1}")
        if not str(label).strip():
            raise ValueError(f"the label of topic {topic} is empty: give some text")
        manual[int(topic)] = " ".join(str(label).split())
    automatic, before = label_record(run)
    if manual:
        _write_labels(run, automatic, {**before, **manual})
    return merge_labels(automatic, {**before, **manual})


def relabel_topics(run) -> list[str]:
    """Compute the automatic labels again from the run's corpus (a run labelled by an older
    bpetopics, or whose labels.json was lost) and write ``labels.json``, keeping the labels
    set by hand; returns all the labels. RunError (one line) when the corpus cannot be
    rebuilt (its labels would only be the top two words)."""
    settings = (run.config.get("corpus") or {}).get("settings") or {}
    texts = None if "sharded_corpus" in settings else run_splits(run)["train"].texts
    if texts is None:
        raise RunError(f"the corpus of {run.path} keeps no word order (a sharded corpus), so its topics "
                       "cannot be labelled by collocations: set labels by hand with --set-label")
    automatic = label_topics(run.model.topic_word_, run.vocabulary, texts)
    _, manual = label_record(run, rebuild=False)
    _write_labels(run, automatic, manual)
    return merge_labels(automatic, manual)


def _write_labels(run, automatic, manual) -> None:
    """Write the run's ``labels.json`` (atomically), as run files are written."""
    write_bytes_atomic(run.path / LABELS_FILE, json_bytes(labels_record(automatic, manual)))
