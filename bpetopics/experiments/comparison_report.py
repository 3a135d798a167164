"""The files of a comparison: ``comparison.csv`` (one row per model and seed),
``comparison.md`` (mean +- std over seeds, the settings, each model's topics) and
``comparison.png`` (the main measures side by side), from the results of
:func:`bpetopics.experiments.text_comparison.compare_models`."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["FIGURE_METRICS", "FILES", "METRICS", "plot_comparison", "summarize", "summary_markdown",
           "write_comparison"]

#: (column, label, direction): the rows of comparison.md ("+" higher is better, "-" lower).
METRICS = (
    ("npmi", "NPMI (ours)", "+"),
    ("npmi_corpus", "NPMI, whole corpus as reference (OCTIS protocol)", "+"),
    ("gensim_c_npmi", "NPMI (gensim c_npmi)", "+"),
    ("npmi_nonfinite", "topics with non-finite NPMI (ours)", "-"),
    ("npmi_corpus_nonfinite", "topics with non-finite NPMI (whole corpus)", "-"),
    ("gensim_c_npmi_nonfinite", "topics with non-finite NPMI (gensim)", "-"),
    ("gensim_c_v", "C_V (gensim)", "+"),
    ("gensim_u_mass", "UMass (gensim)", "+"),
    ("gensim_c_uci", "UCI (gensim)", "+"),
    ("diversity", "topic diversity (top 25)", "+"),
    ("diversity_top10", "topic diversity (top 10)", "+"),
    ("exclusive_diversity", "words in exactly one topic's top 25 (TopMost TD)", "+"),
    ("perplexity", "completion perplexity", "-"),
    ("accuracy", "accuracy (logistic regression on mixtures)", "+"),
    ("purity", "purity of top-topic clusters vs labels", "+"),
    ("nmi", "NMI of top-topic clusters vs labels", "+"),
    ("unused_topics", "share of topics no document's argmax", "-"),
    ("code_mean_active", "active bits per code (PoissBPE)", ""),
    ("code_mean_hoyer", "Hoyer sparsity of codes (PoissBPE)", ""),
    ("code_n_distinct", "distinct codes (PoissBPE)", ""),
    ("code_share_unused_bits", "share of unused bits (PoissBPE)", ""),
    ("fit_seconds", "training wall time (s)", "-"),
    ("fit_cpu_seconds", "training CPU time, all threads of the process (s)", "-"),
    ("infer_seconds", "inference wall time, held-out (s)", "-"),
)

#: The panels of comparison.png.
FIGURE_METRICS = ("npmi", "gensim_c_npmi", "diversity", "perplexity", "accuracy", "fit_seconds", "infer_seconds")

FILES = ("comparison.csv", "comparison.md", "comparison.png")


def _models(results: pd.DataFrame) -> list:
    """The models of ``results``, in their order of appearance."""
    return list(dict.fromkeys(results["model"]))


def _numeric(df: pd.DataFrame, column: str) -> pd.Series:
    return pd.to_numeric(df[column], errors="coerce") if column in df else pd.Series(np.nan, index=df.index)


def summarize(results: pd.DataFrame) -> pd.DataFrame:
    """Mean, std (over seeds, ddof=1; NaN for one seed) and seed count of each metric.

    Returns a frame indexed by (metric, model) with columns ``mean``, ``std``, ``n``.
    """
    out = []
    for column, _, _ in METRICS:
        for name in _models(results):
            values = _numeric(results[results["model"] == name], column).dropna()
            out.append({"metric": column, "model": name, "n": len(values),
                        "mean": values.mean() if len(values) else np.nan,
                        "std": values.std(ddof=1) if len(values) > 1 else np.nan})
    return pd.DataFrame(out).set_index(["metric", "model"])


def _decimals(column: str, mean: float) -> int:
    """Decimals for a metric: counts get one (a mean of counts), others follow the magnitude."""
    if column.endswith("nonfinite") or column.endswith("n_distinct"):
        return 1
    a = abs(mean) if np.isfinite(mean) else 0.0
    return 4 if a < 1 else 3 if a < 10 else 2 if a < 100 else 1


def _cell(column: str, s) -> str:
    if s["n"] == 0:
        return "—"
    d = _decimals(column, s["mean"])
    if s["n"] == 1:
        return f"{s['mean']:.{0 if d == 1 and column.endswith(('nonfinite', 'n_distinct')) else d}f}"
    return f"{s['mean']:.{d}f} ± {s['std']:.{d}f}"


def summary_markdown(results: pd.DataFrame, settings: dict | None = None) -> str:
    """comparison.md: the setting, then one row per metric with mean ± std per model."""
    stats = summarize(results)
    seeds = sorted(set(int(s) for s in results["seed"]))
    first = results.iloc[0]
    names = _models(results)
    lines = ["# " + " vs ".join(names), "",
             f"{int(first['n_train']):,} training documents, {int(first['n_test']):,} held-out documents, "
             f"{int(first['n_words']):,} words, {int(first['n_topics'])} topics; "
             + (f"seeds {', '.join(map(str, seeds))}: mean ± standard deviation over seeds"
                if len(seeds) > 1 else f"one seed ({seeds[0]})")
             + " (↑ higher is better, ↓ lower).", ""]
    for key, value in (settings or {}).items():
        lines.append(f"- {key}: {value}")
    if settings:
        lines.append("")
    lines += ["| metric | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
    for column, label, direction in METRICS:
        if column not in results or results[column].isna().all():
            continue
        arrow = {"+": " ↑", "-": " ↓"}.get(direction, "")
        cells = [_cell(column, stats.loc[(column, name)]) for name in names]
        lines.append(f"| {label}{arrow} | " + " | ".join(cells) + " |")
    if "top_words" in results:
        lines += ["", f"## Topics (seed {seeds[0]}, top 10 words)"]
        for name in names:
            row = results[(results["model"] == name) & (results["seed"] == seeds[0])]
            if len(row):
                lines += ["", f"{name}:", ""]
                lines += [f"{t}. " + " ".join(words[:10]) for t, words in enumerate(row.iloc[0]["top_words"])]
    return "\n".join(lines) + "\n"


def plot_comparison(results: pd.DataFrame, path: str | os.PathLike, dpi: int = 110) -> Path:
    """comparison.png: one panel per metric, a bar per model (mean, std error bar, seeds as dots)."""
    from matplotlib.figure import Figure

    from bpetopics.files import atomic_path

    stats = summarize(results)
    labels = {c: label + {"+": " ↑", "-": " ↓"}.get(d, "") for c, label, d in METRICS}
    panels = [c for c in FIGURE_METRICS if c in results and not results[c].isna().all()]
    ncols = 4
    nrows = -(-len(panels) // ncols)
    # constrained layout makes room for the (wrapped) titles and the suptitle; the saved
    # box fits every artist too (a long title in the last column was clipped)
    fig = Figure(figsize=(3.0 * ncols, 2.6 * nrows), dpi=dpi, layout="constrained")
    colors = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b")
    names = _models(results)
    for i, column in enumerate(panels):
        ax = fig.add_subplot(nrows, ncols, i + 1)
        for j, name in enumerate(names):
            s = stats.loc[(column, name)]
            ax.bar(j, s["mean"], yerr=None if not np.isfinite(s["std"]) else s["std"], color=colors[j % len(colors)],
                   alpha=0.8, capsize=4, width=0.6)
            values = _numeric(results[results["model"] == name], column).dropna().to_numpy()
            ax.scatter(np.full(len(values), j), values, color="k", s=8, zorder=3)
        ax.set_xticks(range(len(names)), names)
        ax.set_title(textwrap.fill(labels[column], 30), fontsize=9)   # within its panel: none clipped
        ax.tick_params(labelsize=8)
        ax.axhline(0, color="grey", linewidth=0.5)
    fig.suptitle(f"{' vs '.join(names)}, {int(results['n_topics'].iloc[0])} topics, "
                 f"{results['seed'].nunique()} seed(s)", fontsize=10)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", bbox_inches="tight", pad_inches=0.1)
    return Path(path)


def write_comparison(results: pd.DataFrame, out: str | os.PathLike, settings: dict | None = None) -> dict:
    """Write comparison.csv, comparison.md and comparison.png into the folder ``out``.

    Each file is written to a temporary file beside it and renamed into place. Returns
    ``{"csv": path, "md": path, "png": path}``.
    """
    from bpetopics.files import write_text_atomic

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    table = results.drop(columns=[c for c in ("top_words",) if c in results])
    paths = {"csv": out / FILES[0], "md": out / FILES[1], "png": out / FILES[2]}
    write_text_atomic(paths["csv"], table.to_csv(index=False))
    write_text_atomic(paths["md"], summary_markdown(results, settings))
    plot_comparison(results, paths["png"])
    return paths
