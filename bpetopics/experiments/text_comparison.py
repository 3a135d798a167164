"""PoissBPE against the baselines on the same documents, over seeds: one table, one figure.

:func:`compare_models` fits both models on the identical bag-of-words matrix (the train
split's counts on one vocabulary), once per seed, and measures each with the same call
to :func:`~bpetopics.evaluation.evaluate_topic_model` on the same held-out documents and
the same coherence reference. :func:`write_comparison` writes ``comparison.csv`` (one row
per model and seed), ``comparison.md`` (mean +- std over seeds) and ``comparison.png``.

Fairness, by construction:

* the same ``counts`` (train split) for both fits and the same held-out ``counts`` (test
  split) for completion perplexity, inference time and the classifier's test features;
* the same reference texts for NPMI (ours and gensim's ``c_npmi``), the same top-N words,
  the same completion split and classifier seed (the run's seed);
* LDA is :class:`~bpetopics.baselines.LDABaseline` with its documented defaults (online
  variational Bayes, 10 passes, 50 E-step iterations, ``alpha="auto"``, ``eta`` = 1/T,
  chunks of 2,000), a setting chosen on 20 Newsgroups in that class's docstring; only
  ``passes`` is usually changed (``--lda-passes``);
* PoissBPE uses its own defaults; ``n_topics`` and the seed are shared;
* ``fit_seconds`` is the wall time of ``fit`` measured here for every model (and
  ``fit_cpu_seconds`` its CPU time, which a busy machine does not inflate), after one untimed
  warm-up fit of each model on a few documents (the first fit in a process pays for
  lazy imports and library initialisation, which would otherwise count against seed 0);
  ``infer_seconds`` is ``doc_topic`` on the held-out documents;
* topics whose coherence is non-finite are scored at -1 and counted for both models
  (``npmi_nonfinite``, ``gensim_c_npmi_nonfinite``).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from bpetopics.evaluation.cooccurrence import encode_texts
from bpetopics.evaluation.evaluate import evaluate_topic_model
__all__ = ["TEXT_MODELS", "TextModel", "MODEL_NAMES", "METRICS", "choose_reference", "compare_models",
           "holdout_split", "model_names", "summarize", "summary_markdown", "plot_comparison",
           "write_comparison"]


@dataclass(frozen=True)
class TextModel:
    """A named model factory of the comparison.

    make : (n_topics, seed, params) -> an unfitted topic model (``fit(X)``,
        ``topic_word_``, ``doc_topic(X)``; docs/CONTRACTS.md)
    warm_up : parameters of the small untimed warm-up fit (e.g. one epoch)
    has_codes : True when ``transform(X)`` gives binary codes (their sparsity is measured)
    """

    make: Callable
    warm_up: dict
    has_codes: bool = False


def _poissbpe(n_topics: int, seed: int, params: dict):
    from bpetopics.models import PoissBPE

    return PoissBPE(**{"progress": False, **params, "n_topics": n_topics, "random_state": seed})


def _lda(n_topics: int, seed: int, params: dict):
    from bpetopics.baselines.lda import LDABaseline

    return LDABaseline(**{**params, "n_topics": n_topics, "random_state": seed})


def _tomotopy(n_topics: int, seed: int, params: dict):
    from bpetopics.baselines.tomotopy_lda import TomotopyLDA

    return TomotopyLDA(**{**params, "n_topics": n_topics, "random_state": seed})


def _nmf(n_topics: int, seed: int, params: dict):
    from bpetopics.baselines.nmf import NMFTopics

    return NMFTopics(**{**params, "n_topics": n_topics, "random_state": seed})


def _prodlda(n_topics: int, seed: int, params: dict):
    from bpetopics.baselines.prodlda import ProdLDA

    return ProdLDA(**{**params, "n_topics": n_topics, "random_state": seed})


#: Every model the comparison knows, in table order. A new baseline is one entry here
#: (and its class in :mod:`bpetopics.baselines`).
TEXT_MODELS = {
    "PoissBPE": TextModel(_poissbpe, {"epochs": 1}, has_codes=True),
    "LDA": TextModel(_lda, {"passes": 1}),
    "Tomotopy": TextModel(_tomotopy, {"iterations": 5}),
    "NMF": TextModel(_nmf, {"max_iter": 5}),
    "ProdLDA": TextModel(_prodlda, {"epochs": 1}),
}
#: The models compared when none are named.
MODEL_NAMES = ("PoissBPE", "LDA")

#: A held-out split with fewer documents than this is too small a coherence reference
#: (a word pair seen in no window scores NPMI -1): ``reference="auto"`` then uses the
#: whole corpus.
MIN_REFERENCE_DOCS = 1000


def model_names(names) -> list:
    """Registry names for ``names`` (a comma-separated string or a sequence), matched
    without regard to case; ValueError naming the unknown ones."""
    if isinstance(names, str):
        names = [n.strip() for n in names.split(",") if n.strip()]
    by_lower = {k.lower(): k for k in TEXT_MODELS}
    unknown = [n for n in names if n.lower() not in by_lower]
    if unknown or not names:
        raise ValueError(f"unknown models {unknown or names}; choose from {', '.join(TEXT_MODELS)}")
    return [by_lower[n.lower()] for n in names]


def choose_reference(reference: str, n_test: int) -> str:
    """The coherence reference actually used: ``"auto"`` is ``"test"`` when the held-out
    split has at least :data:`MIN_REFERENCE_DOCS` documents, else ``"corpus"``."""
    if reference not in ("auto", "test", "train", "corpus"):
        raise ValueError(f"reference must be 'auto', 'test', 'train' or 'corpus'; got {reference!r}")
    if reference == "auto":
        return "test" if n_test >= MIN_REFERENCE_DOCS else "corpus"
    return reference

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


def holdout_split(corpus, fraction: float = 0.2, seed: int = 0):
    """Split one Corpus into (train, held-out) at random, for sources without a test split."""
    from bpetopics.text import Corpus

    n = corpus.n_docs
    n_test = int(round(n * fraction))
    if n_test < 1 or n - n_test < 1:
        raise ValueError(f"{n} documents are too few to hold out {fraction:.0%} of them")
    order = np.random.default_rng(seed).permutation(n)
    parts = []
    for name, idx in (("train", np.sort(order[n_test:])), ("test", np.sort(order[:n_test]))):
        parts.append(Corpus(counts=corpus.counts[idx], vocabulary=list(corpus.vocabulary),
                            texts=[corpus.texts[i] for i in idx], ids=[corpus.ids[i] for i in idx],
                            split=name, labels=None if corpus.labels is None else corpus.labels[idx],
                            label_names=corpus.label_names, pipeline=corpus.pipeline, source=corpus.source))
    return parts[0], parts[1]


def _warm_up(n_topics: int, X, models: Sequence[str], params: dict) -> None:
    """One small untimed fit of each model (lazy imports, thread pools, allocators)."""
    small = X[: min(64, X.shape[0])]
    for name in models:
        TEXT_MODELS[name].make(n_topics, 0, {**params[name], **TEXT_MODELS[name].warm_up}).fit(small)


def compare_models(train, test, n_topics: int, seeds: Sequence[int] = (0, 1, 2), *,
                   bpe_params: dict | None = None, lda_params: dict | None = None, reference: str = "auto",
                   top_n: int = 10, gensim_measures: Sequence[str] = ("c_npmi",), warm_up: bool = True,
                   log: Callable[[str], None] | None = None, models: Sequence[str] = MODEL_NAMES,
                   params: dict | None = None) -> pd.DataFrame:
    """Fit each of ``models`` (PoissBPE and LDA by default) on ``train.counts`` for each
    seed and evaluate them all the same way.

    Parameters
    ----------
    train, test : Corpus
        Same vocabulary. ``counts`` (csr), ``texts`` and ``labels`` are used; the
        classifier's accuracy needs labels on both.
    n_topics : int
        T, for both models.
    seeds : sequence of int
        One fit of each model per seed (``random_state``); the seed also fixes the
        completion split and the classifier.
    bpe_params, lda_params : dict, optional
        Other keyword arguments of ``PoissBPE`` (e.g. ``epochs``, ``n_bits``, ``device``)
        and of ``LDABaseline`` (e.g. ``passes``); defaults otherwise.
    reference : {"auto", "test", "train", "corpus"}
        Whose texts are the coherence reference of ``npmi`` and gensim's measures
        (``"auto"``: see :func:`choose_reference`, which never picks a held-out split
        smaller than :data:`MIN_REFERENCE_DOCS`). ``npmi_corpus`` always uses the whole
        corpus (train and test texts).
    top_n : int
        Top words per topic for coherence.
    gensim_measures : sequence of str
        gensim coherence measures added to ours (empty: skip gensim).
    warm_up : bool
        Do one small untimed fit of each model first (see the module docstring).
    log : callable, optional
        Called with one line per fitted model.
    models : sequence of str
        Names in :data:`TEXT_MODELS`, in table order.
    params : dict, optional
        Keyword arguments per model name (``bpe_params`` and ``lda_params`` are those of
        "PoissBPE" and "LDA").

    Returns
    -------
    pandas.DataFrame
        One row per (model, seed): ``model``, ``seed``, ``n_train``, ``n_test``,
        ``n_words`` and every scalar of :func:`evaluate_topic_model` (``fit_seconds``
        measured here), plus ``top_words`` (list of T lists).
    """
    if list(train.vocabulary) != list(test.vocabulary):
        raise ValueError("train and test must share one vocabulary")
    used = choose_reference(reference, test.counts.shape[0])
    if log is not None and reference == "auto" and used != "test":
        log(f"coherence reference: the whole corpus, since the held-out split has only "
            f"{test.counts.shape[0]} documents (fewer than {MIN_REFERENCE_DOCS})")
    seeds = [int(s) for s in seeds]
    if not seeds:
        raise ValueError("give at least one seed")
    models = model_names(models)
    params = {name: dict((params or {}).get(name, {})) for name in models}
    if "PoissBPE" in params:
        params["PoissBPE"].update(bpe_params or {})
    if "LDA" in params:
        params["LDA"].update(lda_params or {})
    vocabulary = list(train.vocabulary)
    corpus = encode_texts(list(train.texts) + list(test.texts), vocabulary)
    encoded = (corpus if used == "corpus"
               else encode_texts((test if used == "test" else train).texts, vocabulary))
    labels = train.labels is not None and test.labels is not None
    if warm_up:
        _warm_up(n_topics, train.counts, models, params)
    rows = []
    for seed in seeds:
        for name in models:
            model = TEXT_MODELS[name].make(n_topics, seed, params[name])
            t0, c0 = time.perf_counter(), time.process_time()
            model.fit(train.counts)
            fit_seconds = time.perf_counter() - t0
            fit_cpu_seconds = time.process_time() - c0
            codes = model.transform(test.counts) if TEXT_MODELS[name].has_codes else None
            res = evaluate_topic_model(
                model, train.counts, test.counts, encoded, vocabulary,
                train_labels=train.labels if labels else None, test_labels=test.labels if labels else None,
                codes=codes, top_n=top_n, seed=seed, gensim_measures=tuple(gensim_measures),
                corpus_texts=corpus)
            res.pop("npmi_per_topic", None)
            res["fit_seconds"] = fit_seconds
            res["fit_cpu_seconds"] = fit_cpu_seconds
            rows.append({"model": name, "seed": seed, "reference": used, "n_train": train.counts.shape[0],
                         "n_test": test.counts.shape[0], "n_words": len(vocabulary), **res})
            if log is not None:
                acc = "-" if res["accuracy"] is None else f"{res['accuracy']:.3f}"
                log(f"{name} seed {seed}: fit {fit_seconds:.1f} s, NPMI {res['npmi']:.3f}, "
                    f"diversity {res['diversity']:.2f}, perplexity {res['perplexity']:.1f}, accuracy {acc}")
    return pd.DataFrame(rows)


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
    fig = Figure(figsize=(3.0 * ncols, 2.6 * nrows), dpi=dpi)
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
        ax.set_title(labels[column], fontsize=9)
        ax.tick_params(labelsize=8)
        ax.axhline(0, color="grey", linewidth=0.5)
    fig.suptitle(f"{' vs '.join(names)}, {int(results['n_topics'].iloc[0])} topics, "
                 f"{results['seed'].nunique()} seed(s)", fontsize=10)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png")
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
