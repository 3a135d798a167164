"""Plots of topic shares over time and per class (the frames of
:mod:`bpetopics.runs.over_time`), with matplotlib, headless (no pyplot state)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from bpetopics.files import atomic_path

__all__ = ["plot_topics_over_time", "plot_topics_per_class"]


def _largest(frame, topics, top: int) -> list:
    if topics is not None:
        return [int(t) for t in topics]
    mean = frame.groupby("topic")["share"].mean().sort_values(ascending=False, kind="stable")
    return [int(t) for t in mean.index[:top]]


def _save(fig, path) -> Path:
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=fig.dpi, bbox_inches="tight")
    return Path(path)


def plot_topics_over_time(frame, path: str | os.PathLike, topics=None, top: int = 8, title: str | None = None,
                          dpi: int = 110) -> Path:
    """Draw each topic's share per span of time as a line, its interval (``low`` to
    ``high``) shaded, and the documents per span as grey bars below; write a PNG.

    ``frame``: :func:`~bpetopics.runs.over_time.topics_over_time`'s. ``topics``: those
    drawn [default: the ``top`` with the largest mean share]. Returns ``path``.
    """
    from matplotlib.figure import Figure

    shown = _largest(frame, topics, top)
    bins = frame.drop_duplicates("bin").sort_values("bin")
    middle = bins["start"] + (bins["end"] - bins["start"]) / 2
    fig = Figure(figsize=(10, 6), dpi=dpi)
    ax, counts = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [4, 1]})
    for t in shown:
        rows = frame[frame["topic"] == t].sort_values("bin")
        line, = ax.plot(middle.to_numpy(), rows["share"].to_numpy(), marker="o", ms=3, lw=1.5,
                        label=f"{t}: {rows['label'].iloc[0]}")
        ax.fill_between(middle.to_numpy(), rows["low"].to_numpy(dtype=float), rows["high"].to_numpy(dtype=float),
                        color=line.get_color(), alpha=0.15, lw=0)
    ax.set_ylabel("mean topic share")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
    ax.set_title(title or "Topics over time (shaded: 95% interval)")
    ax.grid(alpha=0.3)
    width = (bins["end"] - bins["start"]).to_numpy() * 0.9
    counts.bar(middle.to_numpy(), bins["documents"].to_numpy(), width=width, color="0.6")
    counts.set_ylabel("documents")
    if np.issubdtype(bins["start"].dtype, np.datetime64):
        fig.autofmt_xdate()
    return _save(fig, path)


def plot_topics_per_class(frame, path: str | os.PathLike, topics=None, top: int = 20, title: str | None = None,
                          dpi: int = 110) -> Path:
    """Draw each class's mean topic shares as a heat map (rows: classes with their
    documents, columns: topics, cells: the share in percent); write a PNG.

    ``frame``: :func:`~bpetopics.runs.over_time.topics_per_class`'s. ``topics``: the
    columns [default: the ``top`` with the largest mean share]. Returns ``path``.
    """
    from matplotlib.figure import Figure

    shown = _largest(frame, topics, top)
    classes = list(dict.fromkeys(frame["class"]))
    table = frame.pivot_table(index="class", columns="topic", values="share", sort=False).reindex(classes)[shown]
    documents = frame.drop_duplicates("class").set_index("class")["documents"].reindex(classes)
    labels = frame.drop_duplicates("topic").set_index("topic")["label"]
    fig = Figure(figsize=(1.5 + 0.6 * len(shown), 1.5 + 0.35 * len(classes)), dpi=dpi)
    ax = fig.subplots()
    image = ax.imshow(table.to_numpy(dtype=float), aspect="auto", cmap="Blues", vmin=0)
    ax.set_xticks(range(len(shown)), [f"{t}: {labels[t]}" for t in shown], rotation=60, ha="right", fontsize=8)
    ax.set_yticks(range(len(classes)), [f"{c} ({n:,})" for c, n in zip(classes, documents)], fontsize=8)
    for (i, j), value in np.ndenumerate(table.to_numpy(dtype=float)):
        if np.isfinite(value):
            ax.text(j, i, f"{100 * value:.0f}", ha="center", va="center", fontsize=7,
                    color="white" if value > 0.6 * np.nanmax(table.to_numpy(dtype=float)) else "black")
    fig.colorbar(image, ax=ax, label="mean topic share")
    ax.set_title(title or "Topics per class (percent of the class's documents' mixtures)")
    return _save(fig, path)
