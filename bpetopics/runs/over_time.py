"""Topic shares over time and per class, with their spread (``bpetopics over-time``).

For each bin of documents (a span of time, or a class), the share of topic t is the
mean of ``doc_topic[:, t]`` over the bin's documents, given with its standard error
(``std / sqrt(n)``) and an interval: ``share ± 1.96 se`` (``interval="se"``) or the
2.5 and 97.5 percentiles of the mean over documents resampled with replacement
(``interval="bootstrap"``). Bins without a document are kept (``documents`` 0, the
shares NaN), so that a gap in time shows as a gap.

The functions take plain arrays (any topic model's ``doc_topic``, N x T);
:func:`run_topic_shares` reads them from a run.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from bpetopics.runs.run import RunError

INTERVALS = ("se", "bootstrap")
#: Columns of the frames, after the bin's own (``start``, ``end`` or ``class``).
SHARE_COLUMNS = ["topic", "label", "share", "se", "low", "high", "documents"]


def _check(doc_topic, n_boot: int, interval: str) -> np.ndarray:
    doc_topic = np.asarray(doc_topic, dtype=np.float64)
    if doc_topic.ndim != 2:
        raise ValueError(f"doc_topic must be N x T, got shape {doc_topic.shape}")
    if interval not in INTERVALS:
        raise ValueError(f"interval must be one of {', '.join(INTERVALS)}; got {interval!r}")
    if interval == "bootstrap" and n_boot < 1:
        raise ValueError(f"n_boot must be at least 1; got {n_boot}")
    return doc_topic


def group_shares(doc_topic, groups, n_groups: int, interval: str = "se", n_boot: int = 1000,
                 seed: int = 0) -> dict:
    """Mean topic shares per group: ``share``, ``se``, ``low``, ``high`` (G x T) and
    ``documents`` (G,). ``groups[i]`` in ``0 .. n_groups - 1`` is document i's group."""
    doc_topic = _check(doc_topic, n_boot, interval)
    groups = np.asarray(groups, dtype=np.int64)
    n_topics = doc_topic.shape[1]
    out = {k: np.full((n_groups, n_topics), np.nan) for k in ("share", "se", "low", "high")}
    out["documents"] = np.bincount(groups, minlength=n_groups)[:n_groups]
    rng = np.random.default_rng(seed)
    for g in range(n_groups):
        rows = doc_topic[groups == g]
        n = len(rows)
        if n == 0:
            continue
        mean = rows.mean(0)
        se = rows.std(0, ddof=1) / np.sqrt(n) if n > 1 else np.full(n_topics, np.nan)
        out["share"][g], out["se"][g] = mean, se
        if interval == "se":
            spread = 1.96 * se     # NaN for a single document: no spread to show
            out["low"][g], out["high"][g] = np.clip(mean - spread, 0, 1), np.clip(mean + spread, 0, 1)
        else:       # resampling counts (multinomial) times the rows: n_boot means, in chunks
            means = np.concatenate([rng.multinomial(n, np.full(n, 1.0 / n), size=min(100, n_boot - b)) @ rows / n
                                    for b in range(0, n_boot, 100)])
            out["low"][g], out["high"][g] = np.percentile(means, [2.5, 97.5], axis=0)
    return out


def _frame(bin_columns: dict, shares: dict, labels) -> pd.DataFrame:
    """Long format: one row per (bin, topic), the bin's columns first."""
    n_groups, n_topics = shares["share"].shape
    labels = [f"topic {t}" for t in range(n_topics)] if labels is None else [str(x) for x in labels]
    if len(labels) != n_topics:
        raise ValueError(f"labels must have {n_topics} entries (one per topic), got {len(labels)}")
    frame = {name: np.repeat(np.asarray(values), n_topics) for name, values in bin_columns.items()}
    frame.update(topic=np.tile(np.arange(n_topics), n_groups), label=np.tile(np.asarray(labels, dtype=object),
                                                                             n_groups))
    for key in ("share", "se", "low", "high"):
        frame[key] = shares[key].ravel()
    frame["documents"] = np.repeat(shares["documents"], n_topics)
    return pd.DataFrame(frame)


def time_bins(timestamps, bins: int | None = 10, freq: str | None = None):
    """(bin index per document, ``start``, ``end``): ``bins`` equal spans from the first
    timestamp to the last (the last span includes its end), or, for dates, calendar
    periods of pandas frequency ``freq`` (``D``, ``W``, ``M``, ``Q``, ``Y``)."""
    times = np.asarray(timestamps)
    if times.ndim != 1 or len(times) == 0:
        raise ValueError("timestamps must be a non-empty 1-D array")
    dates = np.issubdtype(times.dtype, np.datetime64)
    if freq is not None:
        if not dates:
            raise ValueError(f"freq={freq!r} needs dates; these timestamps are numbers: give a number of bins")
        try:
            periods = pd.Series(times.astype("datetime64[s]")).dt.to_period(freq)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"freq={freq!r} is not a pandas period frequency (D, W, M, Q, Y): {exc}") from None
        span = pd.period_range(periods.min(), periods.max(), freq=periods.dt.freq)
        index = np.asarray([p.ordinal for p in periods]) - span[0].ordinal
        return index, span.start_time.to_numpy(), (span + 1).start_time.to_numpy()
    if bins is None or bins < 1:
        raise ValueError(f"bins must be at least 1; got {bins}")
    values = times.astype("datetime64[s]").astype(np.int64) if dates else times.astype(np.float64)
    low, high = values.min(), values.max()
    edges = np.linspace(low, high, bins + 1) if high > low else np.array([low] * bins + [high])
    index = np.clip(np.searchsorted(edges, values, side="right") - 1, 0, bins - 1)
    if dates:
        edges = np.round(edges).astype(np.int64).astype("datetime64[s]")
    return index, edges[:-1], edges[1:]


def topics_over_time(doc_topic, timestamps, bins: int | None = 10, freq: str | None = None, labels=None,
                     interval: str = "se", n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Each topic's mean share among the documents of each span of time.

    Parameters
    ----------
    doc_topic : array (N, T)
        Document-topic mixtures, rows on the simplex.
    timestamps : array (N,)
        Numbers, or dates (``datetime64``).
    bins : int, default=10
        Equal spans from the first timestamp to the last.
    freq : str, optional
        Dates only: calendar periods instead (pandas: ``D``, ``W``, ``M``, ``Q``, ``Y``).
    labels : list of T str, optional
        Topic labels [default: ``topic t``].
    interval : {"se", "bootstrap"}
        ``low``/``high``: ``share ± 1.96 se``, or bootstrap percentiles (``n_boot``
        resamples of the bin's documents, seeded by ``seed``).

    Returns
    -------
    pandas.DataFrame
        One row per (bin, topic): ``bin``, ``start``, ``end``, ``topic``, ``label``,
        ``share``, ``se``, ``low``, ``high``, ``documents`` (of the bin).
    """
    doc_topic = _check(doc_topic, n_boot, interval)
    if len(np.asarray(timestamps)) != len(doc_topic):
        raise ValueError(f"{len(np.asarray(timestamps))} timestamps for {len(doc_topic)} documents")
    index, start, end = time_bins(timestamps, bins, freq)
    shares = group_shares(doc_topic, index, len(start), interval, n_boot, seed)
    return _frame({"bin": np.arange(len(start)), "start": start, "end": end}, shares, labels)


def topics_per_class(doc_topic, classes, class_names=None, labels=None, interval: str = "se",
                     n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Each topic's mean share among the documents of each class.

    ``classes``: one class per document (names, or indices into ``class_names``). The
    other parameters and the columns are those of :func:`topics_over_time`, with
    ``class`` in place of ``bin``, ``start`` and ``end``; classes in sorted order (that
    of ``class_names`` when given).
    """
    doc_topic = _check(doc_topic, n_boot, interval)
    classes = np.asarray(classes)
    if len(classes) != len(doc_topic):
        raise ValueError(f"{len(classes)} classes for {len(doc_topic)} documents")
    if class_names is not None:
        names, index = list(class_names), classes.astype(np.int64)
    else:
        names, index = np.unique(classes, return_inverse=True)
        names = [str(n) for n in names]
    shares = group_shares(doc_topic, index, len(names), interval, n_boot, seed)
    return _frame({"class": np.asarray(names, dtype=object)}, shares, labels)


def run_topic_shares(run, by_label: bool = False, bins: int | None = 10, freq: str | None = None, labels=None,
                     interval: str = "se", n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """:func:`topics_over_time` (or, ``by_label``, :func:`topics_per_class`) of a run's
    training documents: mixtures from ``doc_topics.npz``, timestamps saved with the run
    (trained with ``--time-field``), labels from its corpus (rebuilt). ``labels``: the
    topics' [default: each topic's top two words]. One-line :class:`RunError` s."""
    from bpetopics.viz import topic_labels

    if "codes" in run.config:
        raise RunError(f"{run.path} was trained on a sharded corpus, which keeps no timestamps or mixtures per "
                       "document: train on an in-memory corpus (`bpetopics corpus INPUT --out DIR`)")
    ids, doc_topic = run.doc_topics()
    if labels is None:
        labels = topic_labels(run.model.topic_word_, run.vocabulary, 2)
    if by_label:
        from bpetopics.runs.corpus import run_splits

        train = run_splits(run)["train"]
        if train.labels is None:
            raise RunError(f"the corpus of {run.path} has no labels: train with --label-field (a JSONL or CSV "
                           "corpus) or on a folder with one subfolder per label")
        return topics_per_class(doc_topic, train.labels, train.label_names, labels, interval, n_boot, seed)
    times = run.doc_times()
    if times is None:
        raise RunError(f"{run.path} has no timestamps: train it on a JSONL or CSV corpus with --time-field, "
                       "or pass --by-label for shares per label")
    try:
        return topics_over_time(doc_topic, times, bins, freq, labels, interval, n_boot, seed)
    except ValueError as exc:
        raise RunError(str(exc)) from None
