"""The quality grid: PoissBPE against tomotopy (200 and 1,000 iterations), NMF and gensim's
LdaModel over corpora x T, one thread, over seeds.

Each (corpus, T) cell is one call of ``compare_models`` (the machinery of ``bpetopics
compare``): every model fitted on the same bag of words, measured on the same held-out
documents. Per cell and model (mean and std over seeds): NPMI with the test split as
reference and with the whole corpus, topic diversity of the top 10 and top 25 words,
completion perplexity, the accuracy of a classifier on the mixtures (labelled corpora),
training CPU seconds (process time, one thread), and the generic topics (top 10 words
mostly, 6 or more, among the corpus's 100 most frequent).

Writes to --out: ``runs.csv`` (a row per cell, model and seed), ``grid.csv`` (a row per
cell and model), ``grid.md`` (the runner's header, a table per corpus, and the summary:
per cell, the best baseline on NPMI, top-25 diversity and perplexity and whether
PoissBPE leads, ties within one std, or loses). Rows already in runs.csv are kept and not
fitted again, so a second command with other corpora or T adds to the same grid.
``--params`` (JSON) sets PoissBPE's keyword arguments, to compare a setting against the
defaults' grid; such a grid needs its own --out.

Run: ``python -m benchmarks quality_grid [--quick] [--corpora 20newsgroups-2000,abc]
[--topics 20,50] [--models poissbpe,tomotopy-200,tomotopy,nmf,lda] [--seeds 3]
[--params '{"epochs": 150}'] [--out results/quality-grid]`` (offline data: SCIKIT_LEARN_DATA, NLTK_DATA,
BPETOPICS_DATA as in docs/getting-started.md; set OMP_NUM_THREADS=1 and the like).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import pandas as pd
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.__main__ import header  # noqa: E402
from bpetopics.experiments.quality_grid import (aggregate, corpus_tables, count_generic_topics,  # noqa: E402
                                                frequent_words, losses, summarize_grid, summary_table)
from bpetopics.experiments.text_comparison import TEXT_MODELS, compare_models, model_names  # noqa: E402
from bpetopics.experiments.text_setup import comparison_data  # noqa: E402

#: Grid corpus name -> (corpus argument, documents drawn per split or None for all).
CORPORA = {
    "20newsgroups-500": ("20newsgroups", 500),
    "20newsgroups-2000": ("20newsgroups", 2000),
    "20newsgroups": ("20newsgroups", None),
    "abc": ("abc", None),
    "state_union": ("state_union", None),
    "lee": ("lee", None),
    "20newsgroups-subjects": ("20newsgroups-subjects", None),
    "abc-sentences": ("abc-sentences", None),
    "state_union-sentences": ("state_union-sentences", None),
}
MODELS = "PoissBPE,Tomotopy-200,Tomotopy,NMF,LDA"
#: Registry names as the tables show them.
NAMES = {"Tomotopy": "Tomotopy-1000", "LDA": "LDA (gensim)"}
FULL = {"corpora": ",".join(CORPORA), "topics": "20,50,100,200", "seeds": 3}
QUICK = {"corpora": "20newsgroups-500,20newsgroups-2000,abc,20newsgroups-subjects", "topics": "20,50", "seeds": 1}
#: Columns of runs.csv: the cell, the model, the seed, the sizes and every measure kept.
RUN_COLUMNS = ["corpus", "n_topics", "model", "seed", "n_train", "n_test", "n_words", "reference", "npmi",
               "npmi_corpus", "diversity_top10", "diversity", "perplexity", "accuracy", "fit_cpu_seconds",
               "fit_seconds", "generic_topics", "unused_topics", "npmi_nonfinite", "npmi_corpus_nonfinite"]


def cpu_threads(n: int) -> None:
    """Every library on ``n`` threads: torch, BLAS and OpenMP pools, numba (at most the
    threads numba was started with)."""
    import torch
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(n)
    threadpool_limits(n)
    try:
        import numba

        numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
    except (ImportError, ValueError):
        pass


def one_thread() -> None:
    """Every library on one thread (:func:`cpu_threads`)."""
    cpu_threads(1)


def write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def warm_up(counts, n_topics: int, models: list) -> None:
    """One untimed fit of each model with its own settings on 200 documents: the first
    full fit in a process pays costs (compiled kernels, lazy imports) that
    ``compare_models``'s shortened warm-up fit does not always pay."""
    small = counts[: max(200, n_topics)]
    for name in models:
        TEXT_MODELS[name].make(n_topics, 0, {}).fit(small)


def missing_seeds(done: set, name: str, n_topics: int, models: list, seeds: list) -> list:
    """[(seeds, models)]: the models of a cell grouped by the seeds they lack in ``done``
    ((corpus, T, model, seed) already measured), so that only those are fitted."""
    groups: dict = {}
    for m in models:
        lacking = tuple(s for s in seeds if (name, n_topics, m, s) not in done)
        if lacking:
            groups.setdefault(lacking, []).append(m)
    return [(list(lacking), group) for lacking, group in groups.items()]


def run_cell(name: str, data, n_topics: int, models: list, seeds: list, bpe_params: dict | None = None) -> pd.DataFrame:
    """Fit and measure ``models`` on one cell (PoissBPE with ``bpe_params``); the
    generic-topic count added."""
    train, test = data.train, data.test
    frequent = frequent_words(sp.vstack([train.counts, test.counts]).tocsr(), train.vocabulary)
    rows = compare_models(train, test, n_topics, seeds, models=models, reference="test", gensim_measures=(),
                          bpe_params=bpe_params,
                          log=lambda line: print(f"  {name} T={n_topics} {line}", flush=True))
    rows["generic_topics"] = [count_generic_topics(words, frequent) for words in rows["top_words"]]
    rows.insert(0, "corpus", name)
    return rows[[c for c in RUN_COLUMNS if c in rows.columns]]


def in_table_order(runs: pd.DataFrame) -> pd.DataFrame:
    """The rows by corpus (first seen first), T, model (as in MODELS) and seed: cells
    refitted later keep their place in the tables."""
    corpus_rank = {c: i for i, c in enumerate(dict.fromkeys(runs["corpus"]))}
    model_rank = {m: i for i, m in enumerate(MODELS.split(","))}
    keys = pd.DataFrame({"c": runs["corpus"].map(corpus_rank), "t": runs["n_topics"].astype(int),
                         "m": runs["model"].map(model_rank).fillna(len(model_rank)), "s": runs["seed"].astype(int)})
    return runs.loc[keys.sort_values(["c", "t", "m", "s"], kind="stable").index].reset_index(drop=True)


def report(runs: pd.DataFrame, headers: str) -> str:
    cells = aggregate(runs)
    summary = summarize_grid(cells)
    lost = losses(summary, NAMES)
    return "\n".join([
        "# Quality grid\n", "```text", headers.strip(), "```\n",
        "Mean ± std over seeds (the mean alone for one seed); the best mean of each T in bold. "
        "NPMI: top 10 words, sliding windows of 10. CPU s: training, process time on one thread. "
        "Generic topics: 6 or more of the top 10 words among the corpus's 100 most frequent.\n",
        "## Tables\n", corpus_tables(cells, NAMES),
        "## Summary\n",
        "PoissBPE against the best baseline of each cell: leads, ties (within the larger of the two "
        "standard deviations over seeds; with one seed, only when equal) or loses.\n",
        summary_table(summary, NAMES),
        "## Where PoissBPE loses\n",
        "\n".join(f"- {line}" for line in lost) if lost else "Nowhere in this grid.", ""])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"the small grid: {QUICK['corpora']}, T {QUICK['topics']}, {QUICK['seeds']} seed")
    parser.add_argument("--corpora", help=f"comma-separated, of {', '.join(CORPORA)} [default: all]")
    parser.add_argument("--topics", help=f"T values, comma-separated [default: {FULL['topics']}]")
    parser.add_argument("--models", default=MODELS, help=f"registry names, comma-separated [default: {MODELS}]")
    parser.add_argument("--seeds", type=int, help=f"fits per model, seeds 0..N-1 [default: {FULL['seeds']}]")
    parser.add_argument("--params", default="{}",
                        help="PoissBPE keyword arguments, JSON, e.g. '{\"epochs\": 150}' (needs its own --out)")
    parser.add_argument("--out", type=Path, default=Path("results/quality-grid"))
    args = parser.parse_args()
    try:
        bpe_params = json.loads(args.params)
    except json.JSONDecodeError as exc:
        parser.error(f"--params is not JSON ({exc}); write e.g. '{{\"epochs\": 150}}'")
    if not isinstance(bpe_params, dict):
        parser.error("--params must be a JSON object of PoissBPE keyword arguments")
    if bpe_params and args.out.resolve() == Path("results/quality-grid").resolve():
        parser.error("--params makes a grid of other settings: give it its own --out, "
                     "e.g. --out results/quality-grid-variant")
    plan = QUICK if args.quick else FULL
    corpora = [c.strip() for c in (args.corpora or plan["corpora"]).split(",") if c.strip()]
    unknown = [c for c in corpora if c not in CORPORA]
    if unknown:
        parser.error(f"unknown --corpora {unknown}; choose from {', '.join(CORPORA)}")
    try:
        topics = [int(t) for t in (args.topics or plan["topics"]).split(",")]
        models = model_names(args.models)
    except ValueError as exc:
        parser.error(str(exc))
    seeds = list(range(args.seeds or plan["seeds"]))
    one_thread()
    args.out.mkdir(parents=True, exist_ok=True)
    runs_path = args.out / "runs.csv"
    runs = pd.read_csv(runs_path) if runs_path.exists() else pd.DataFrame(columns=RUN_COLUMNS)
    headers = (args.out / "headers.txt").read_text(encoding="utf-8") if (args.out / "headers.txt").exists() else ""
    headers += header() + "\ncommand: python -m benchmarks quality_grid " + " ".join(sys.argv[1:]) + "\n\n"
    write_atomic(args.out / "headers.txt", headers)
    warm = False
    done = set(zip(runs["corpus"], runs["n_topics"].astype(int), runs["model"], runs["seed"].astype(int)))
    for name in corpora:
        source, max_docs = CORPORA[name]
        data = None
        for n_topics in topics:
            todo = [m for m in models if any((name, n_topics, m, s) not in done for s in seeds)]
            if not todo:
                continue
            if data is None:
                start = time.perf_counter()
                data = comparison_data(source, {"max_docs": max_docs, "random_state": 0})
                print(f"{name}: {data.train.n_docs:,} training, {data.test.n_docs:,} held-out documents, "
                      f"{data.train.n_words:,} words ({time.perf_counter() - start:.0f} s)", flush=True)
            if not warm:
                warm_up(data.train.counts, n_topics, models)
                warm = True
            new = pd.concat([run_cell(name, data, n_topics, group, lacking, bpe_params)
                             for lacking, group in missing_seeds(done, name, n_topics, todo, seeds)],
                            ignore_index=True)
            keep = [(c, t, m, s) not in done for c, t, m, s in
                    zip(new["corpus"], new["n_topics"], new["model"], new["seed"])]
            runs = in_table_order(pd.concat([runs, new[keep]], ignore_index=True) if len(runs) else new[keep])
            done |= set(zip(new["corpus"], new["n_topics"], new["model"], new["seed"]))
            write_atomic(runs_path, runs.to_csv(index=False))
            write_atomic(args.out / "grid.csv", aggregate(runs).to_csv(index=False))
            write_atomic(args.out / "grid.md", report(runs, headers))
    print("\n" + (args.out / "grid.md").read_text(encoding="utf-8") if (args.out / "grid.md").exists()
          else "nothing to run")


if __name__ == "__main__":
    main()
