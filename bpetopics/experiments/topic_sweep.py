"""A comparison over several numbers of topics (``bpetopics compare --topics 10,20,50``):
one comparison a T, each in its own folder ``T<T>/`` (:mod:`bpetopics.experiments.comparison_report`'s
files), and the measures side by side over T in ``by-topics.csv`` (mean and standard
deviation over seeds, a row per T and model) and ``by-topics.md`` (a table, the best mean
of each T in bold), the quality grid's per-corpus table
(:func:`bpetopics.experiments.quality_grid.corpus_tables`) for one corpus.

How many topics to ask for is a question of the corpus: held-out perplexity, coherence
and diversity over T, measured on documents the models never saw, are what a choice rests on.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from bpetopics.experiments.quality_grid import aggregate, corpus_tables

__all__ = ["REFERENCE_LABELS", "SWEEP_FILES", "sweep_folder", "topic_sweep_markdown", "write_topic_sweep"]

#: The files of the sweep itself, beside the folders of its comparisons.
SWEEP_FILES = ("by-topics.csv", "by-topics.md")

#: The column ``npmi`` under each coherence reference of
#: :func:`~bpetopics.experiments.text_comparison.choose_reference` ("corpus": it is
#: ``npmi_corpus`` again, and left out).
REFERENCE_LABELS = {"test": "NPMI (test split)", "train": "NPMI (training split)"}


def sweep_folder(out: str | os.PathLike, n_topics: int) -> Path:
    """The folder of the comparison at ``n_topics`` topics in the sweep ``out``: ``out/T<T>``."""
    return Path(out) / f"T{int(n_topics)}"


def topic_sweep_markdown(cells: pd.DataFrame, corpus: str, heldout: str, reference: str = "test") -> str:
    """``by-topics.md``: a title, what was held out, and :func:`corpus_tables` of ``cells``
    (:func:`~bpetopics.experiments.quality_grid.aggregate`'s rows, one corpus), whose
    ``npmi`` was measured on the ``reference`` texts."""
    if reference not in REFERENCE_LABELS:
        cells = cells.assign(npmi_mean=float("nan"), npmi_std=float("nan"))     # (= npmi_corpus)
    tables = corpus_tables(cells.assign(corpus=str(corpus)))
    table = tables[tables.index("| T |"):]                        # (its heading and counts said here)
    table = table.replace("| NPMI (test split) |", f"| {REFERENCE_LABELS.get(reference, '')} |", 1)
    first = cells.iloc[0]
    return (f"# {corpus}: the models over the number of topics T\n\n"
            f"{int(first['n_train']):,} training and {int(first['n_test']):,} held-out documents "
            f"({heldout}), {int(first['n_words']):,} words, {int(first['seeds'])} seed(s); mean ± standard "
            f"deviation over seeds, the best mean of each T in bold. Each T's comparison, with every "
            f"measure and each model's topics, is in `T<T>/comparison.md`.\n\n{table}")


def write_topic_sweep(results: dict, corpus: str, out: str | os.PathLike, heldout: str,
                      reference: str = "test") -> dict:
    """Write ``by-topics.csv`` and ``by-topics.md`` into ``out`` (atomically, each).

    Parameters
    ----------
    results : dict of int to pandas.DataFrame
        T -> :func:`~bpetopics.experiments.text_comparison.compare_models`' rows at T.
    corpus : str
        The corpus, as named on the command line.
    out : str or path
        The sweep's folder.
    heldout : str
        What the held-out documents are, in words.
    reference : {"test", "train", "corpus"}
        Whose texts the rows' ``npmi`` was measured on.

    Returns
    -------
    dict
        ``{"csv": path, "md": path}``.
    """
    from bpetopics.files import write_text_atomic

    runs = pd.concat([rows.assign(corpus=str(corpus), n_topics=int(t)) for t, rows in results.items()],
                     ignore_index=True)
    cells = aggregate(runs)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"csv": out / SWEEP_FILES[0], "md": out / SWEEP_FILES[1]}
    write_text_atomic(paths["csv"], cells.drop(columns=["corpus"]).to_csv(index=False))
    write_text_atomic(paths["md"], topic_sweep_markdown(cells, corpus, heldout, reference))
    return paths
