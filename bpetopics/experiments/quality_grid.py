"""The quality grid: PoissBPE against the baselines over corpora x T, summed up per cell.

``python -m benchmarks quality_grid`` (``benchmarks/bench_quality_grid.py``) fits every
model on every (corpus, T) cell with
:func:`~bpetopics.experiments.text_comparison.compare_models` and keeps one row per
(corpus, T, model, seed). This module turns those rows into the grid's files:

* :func:`aggregate`: one row per cell and model, the mean and standard deviation over
  seeds of each of :data:`GRID_METRICS` (``grid.csv``);
* :func:`corpus_tables`: a Markdown table per corpus;
* :func:`summarize_grid` and :func:`summary_table`: per cell, the best baseline on NPMI,
  top-25 diversity and completion perplexity, and whether PoissBPE leads, ties (within
  one standard deviation) or loses there (:func:`verdict`);
* :func:`count_generic_topics`: topics whose top words are mostly the corpus's most
  frequent words (a topic that says "this is the corpus", not what a part of it is about).
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pandas as pd

__all__ = ["GRID_METRICS", "SUMMARY_METRICS", "OURS", "aggregate", "corpus_tables", "count_generic_topics",
           "frequent_words", "losses", "summarize_grid", "summary_table", "verdict"]

#: The model the grid is about; every other model is a baseline.
OURS = "PoissBPE"

#: (column of compare_models' rows, label, direction): "+" higher is better, "-" lower,
#: "" neither. ``generic_topics`` is added by the grid (:func:`count_generic_topics`).
GRID_METRICS = (
    ("npmi", "NPMI (test split)", "+"),
    ("npmi_corpus", "NPMI (whole corpus)", "+"),
    ("diversity_top10", "diversity top 10", "+"),
    ("diversity", "diversity top 25", "+"),
    ("perplexity", "perplexity", "-"),
    ("accuracy", "accuracy", "+"),
    ("fit_cpu_seconds", "CPU s", "-"),
    ("generic_topics", "generic topics", "-"),
)

#: The measures of the summary: PoissBPE against the best baseline on each.
SUMMARY_METRICS = (("npmi", "NPMI (test split)"), ("npmi_corpus", "NPMI (whole corpus)"),
                   ("diversity", "diversity top 25"), ("perplexity", "perplexity"))

#: A cell's keys.
CELL = ["corpus", "n_topics"]

_DIRECTION = {column: direction for column, _, direction in GRID_METRICS}


def frequent_words(counts, vocabulary: Sequence[str], n: int = 100) -> set:
    """The ``n`` words of ``vocabulary`` with the most tokens in ``counts`` (N, W); ties
    broken by vocabulary order."""
    totals = np.asarray(counts.sum(axis=0)).ravel()
    order = np.argsort(-totals, kind="stable")[:n]
    return {vocabulary[i] for i in order}


def count_generic_topics(top_words: Sequence[Sequence[str]], frequent: set, top_n: int = 10,
                         min_frequent: int = 6) -> int:
    """How many topics have at least ``min_frequent`` of their first ``top_n`` words in
    ``frequent`` (usually :func:`frequent_words`: the corpus's 100 most frequent)."""
    return sum(sum(word in frequent for word in list(words)[:top_n]) >= min_frequent for words in top_words)


def _std(values: pd.Series) -> float:
    """Standard deviation over seeds (ddof 1), 0 for a single seed."""
    values = values.dropna()
    return float(values.std(ddof=1)) if len(values) > 1 else 0.0


def aggregate(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per (corpus, n_topics, model) of ``runs`` (one row per seed): ``seeds``,
    ``n_train``, ``n_test``, ``n_words`` and ``<metric>_mean`` / ``<metric>_std`` for each
    of :data:`GRID_METRICS` present (NaN where a model gives no value, e.g. no accuracy
    without labels). Cells keep their order of first appearance; models too."""
    keys = CELL + ["model"]
    rows = []
    for key, group in runs.groupby(keys, sort=False):
        row = dict(zip(keys, key))
        row["seeds"] = int(group["seed"].nunique())
        for column in ("n_train", "n_test", "n_words"):
            if column in group:
                row[column] = int(group[column].iloc[0])
        for column, _, _ in GRID_METRICS:
            values = pd.to_numeric(group[column], errors="coerce") if column in group else pd.Series(dtype=float)
            row[f"{column}_mean"] = float(values.mean()) if values.notna().any() else math.nan
            row[f"{column}_std"] = _std(values) if values.notna().any() else math.nan
        rows.append(row)
    return pd.DataFrame(rows)


def verdict(ours: float, ours_std: float, best: float, best_std: float, direction: str) -> str:
    """``"leads"``, ``"ties"`` or ``"loses"``: PoissBPE's mean against the best baseline's,
    a tie when they differ by at most the larger of the two standard deviations (so with
    one seed, only when equal); ``"n/a"`` when either is missing."""
    if direction not in ("+", "-"):
        raise ValueError(f"direction must be '+' (higher is better) or '-'; got {direction!r}")
    if any(v is None or not math.isfinite(v) for v in (ours, best)):
        return "n/a"
    spread = max(0.0 if not math.isfinite(s) else s for s in (ours_std, best_std))
    gain = (ours - best) if direction == "+" else (best - ours)
    if abs(gain) <= spread:
        return "ties"
    return "leads" if gain > 0 else "loses"


def _best_baseline(cell: pd.DataFrame, column: str, direction: str):
    """The baseline row of ``cell`` with the best mean of ``column`` (None if none has one)."""
    baselines = cell[(cell["model"] != OURS) & cell[f"{column}_mean"].notna()]
    if baselines.empty:
        return None
    values = baselines[f"{column}_mean"]
    return baselines.loc[values.idxmax() if direction == "+" else values.idxmin()]


def summarize_grid(cells: pd.DataFrame) -> pd.DataFrame:
    """Per (corpus, n_topics) of :func:`aggregate`'s ``cells``, for each of
    :data:`SUMMARY_METRICS`: ``<metric>_best`` (the best baseline's name), ``<metric>_best_mean``,
    ``<metric>_ours`` (PoissBPE's mean) and ``<metric>_verdict`` (:func:`verdict`)."""
    rows = []
    for key, cell in cells.groupby(CELL, sort=False):
        row = dict(zip(CELL, key))
        ours = cell[cell["model"] == OURS]
        for column, _ in SUMMARY_METRICS:
            direction = _DIRECTION[column]
            best = _best_baseline(cell, column, direction)
            mean = float(ours[f"{column}_mean"].iloc[0]) if len(ours) else math.nan
            std = float(ours[f"{column}_std"].iloc[0]) if len(ours) else math.nan
            row[f"{column}_best"] = None if best is None else best["model"]
            row[f"{column}_best_mean"] = math.nan if best is None else float(best[f"{column}_mean"])
            row[f"{column}_ours"] = mean
            row[f"{column}_verdict"] = ("n/a" if best is None else
                                        verdict(mean, std, float(best[f"{column}_mean"]),
                                                float(best[f"{column}_std"]), direction))
        rows.append(row)
    return pd.DataFrame(rows)


def losses(summary: pd.DataFrame, names: dict | None = None) -> list:
    """One line per (cell, measure) of :func:`summarize_grid` where PoissBPE loses
    (``names`` renames models for display)."""
    names = names or {}
    out = []
    for _, row in summary.iterrows():
        for column, label in SUMMARY_METRICS:
            if row[f"{column}_verdict"] == "loses":
                best = row[f"{column}_best"]
                out.append(f"{row['corpus']}, T = {row['n_topics']}: {label} "
                           f"{_fmt(row[f'{column}_ours'], column)} against {names.get(best, best)}'s "
                           f"{_fmt(row[f'{column}_best_mean'], column)}")
    return out


#: Decimals shown per measure (3 for the others).
DECIMALS = {"perplexity": 0, "fit_cpu_seconds": 2, "generic_topics": 1}


def _fmt(value: float, column: str = "") -> str:
    if value is None or not math.isfinite(value):
        return "-"
    return f"{value:,.{DECIMALS.get(column, 3)}f}"


def _cell_text(row, column: str) -> str:
    mean, std = row[f"{column}_mean"], row[f"{column}_std"]
    if not math.isfinite(mean):
        return "-"
    return _fmt(mean, column) if row["seeds"] < 2 else f"{_fmt(mean, column)} ± {_fmt(std, column)}"


def corpus_tables(cells: pd.DataFrame, names: dict | None = None) -> str:
    """A Markdown table per corpus of :func:`aggregate`'s ``cells``: a row per (T, model),
    a column per measure (mean ± std over seeds; the mean alone for one seed), the best
    mean of each T in bold. ``names`` renames models for display."""
    names = names or {}
    parts = []
    for corpus, table in cells.groupby("corpus", sort=False):
        first = table.iloc[0]
        parts.append(f"### {corpus}\n\n{int(first['n_train']):,} training and {int(first['n_test']):,} held-out "
                     f"documents, {int(first['n_words']):,} words, {int(first['seeds'])} seed(s).\n")
        columns = [(c, label, d) for c, label, d in GRID_METRICS if table[f"{c}_mean"].notna().any()]
        parts.append("| T | model | " + " | ".join(label for _, label, _ in columns) + " |")
        parts.append("|---:|---|" + "---:|" * len(columns))
        for _, cell in table.groupby("n_topics", sort=False):
            best = {}
            for c, _, d in columns:
                values = cell[f"{c}_mean"]
                if d in ("+", "-") and values.notna().any():
                    best[c] = values.max() if d == "+" else values.min()
            for _, row in cell.iterrows():
                texts = []
                for c, _, _ in columns:
                    text = _cell_text(row, c)
                    texts.append(f"**{text}**" if c in best and row[f"{c}_mean"] == best[c] else text)
                parts.append(f"| {row['n_topics']} | {names.get(row['model'], row['model'])} | "
                             + " | ".join(texts) + " |")
        parts.append("")
    return "\n".join(parts)


def summary_table(summary: pd.DataFrame, names: dict | None = None) -> str:
    """:func:`summarize_grid` as Markdown: a row per cell, a column per measure holding
    the best baseline with its mean, PoissBPE's mean and the verdict in bold."""
    names = names or {}
    lines = ["| corpus | T | " + " | ".join(f"{label}: best baseline / PoissBPE" for _, label in SUMMARY_METRICS)
             + " |", "|---|---:|" + "---|" * len(SUMMARY_METRICS)]
    for _, row in summary.iterrows():
        texts = []
        for column, _ in SUMMARY_METRICS:
            best = row[f"{column}_best"]
            baseline = "-" if best is None else f"{names.get(best, best)} {_fmt(row[f'{column}_best_mean'], column)}"
            texts.append(f"{baseline} / {_fmt(row[f'{column}_ours'], column)}: **{row[f'{column}_verdict']}**")
        lines.append(f"| {row['corpus']} | {row['n_topics']} | " + " | ".join(texts) + " |")
    return "\n".join(lines) + "\n"
