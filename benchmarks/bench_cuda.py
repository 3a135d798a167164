"""PoissBPE on CUDA beside the CPU: the quality grid's largest cells and a sharded corpus
of 1,000,000 documents.

Two parts, each row written to ``--out`` as soon as it is measured (a run stopped early
keeps what it finished):

* ``grid``: the quality grid's 20 Newsgroups cell with all documents (the same corpus
  settings as ``python -m benchmarks quality_grid``: its test split held out, 2,000
  words), PoissBPE with its defaults at each T of ``--topics`` on each device of
  ``--devices``; epochs, the median epoch's wall seconds, the fit's wall and CPU
  seconds, and the grid's measures (NPMI with the test split and with the whole corpus
  as references, top-10 and top-25 diversity, completion perplexity, accuracy, unused
  topics). One untimed small fit per device first (CUDA's start-up, compiled kernels).
  Rows: ``grid.csv``.
* ``shards``: ``--docs`` documents resampled from 20 Newsgroups into a JSONL file and
  built into a sharded corpus with ``--jobs`` workers (as ``python -m benchmarks stream``
  does), then PoissBPE at T = ``--shard-topics`` trained from the shards for
  ``--shard-epochs`` epochs of ``--shard-batch`` documents a step on each device; every
  epoch's wall seconds (the first pays for start-up) and bits switched on a document.
  Rows: ``shards.csv``.

CPU rows use ``--threads`` torch threads (1, as in the quality grid, unless given).
``cuda.md`` holds the header and both tables. Run: ``python -m benchmarks cuda
[--parts grid,shards] [--topics 100,200] [--devices cpu,cuda] [--docs 1000000]
[--out DIR]`` (offline data: SCIKIT_LEARN_DATA and NLTK_DATA as in
docs/getting-started.md); ``--quick`` is a small run that checks it works.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.__main__ import header  # noqa: E402
from benchmarks.bench_quality_grid import cpu_threads  # noqa: E402


def set_threads(device: str, threads: int) -> None:
    """CPU rows on ``threads`` threads (torch, BLAS, numba); CUDA rows leave them as found."""
    if device == "cpu":
        cpu_threads(threads)


def synchronize(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def device_name(device: str, threads: int) -> str:
    import torch

    from bpetopics.bpe.machine import cpu_model

    if device.startswith("cuda"):
        return torch.cuda.get_device_name(torch.device(device))
    return f"{cpu_model()}, {threads} thread{'s' if threads > 1 else ''}"


def grid_rows(topics: list, devices: list, threads: int, seed: int, max_docs, params: dict, emit) -> None:
    """The grid part: one fit a (T, device), measured as the quality grid measures."""
    import numpy as np

    from bpetopics.evaluation import evaluate_topic_model
    from bpetopics.evaluation.cooccurrence import encode_texts
    from bpetopics.experiments.text_comparison import TEXT_MODELS
    from bpetopics.experiments.text_setup import comparison_data

    start = time.perf_counter()
    data = comparison_data("20newsgroups", {"max_docs": max_docs, "random_state": 0})
    train, test = data.train, data.test
    vocabulary = list(train.vocabulary)
    corpus = encode_texts(list(train.texts) + list(test.texts), vocabulary)
    reference = encode_texts(test.texts, vocabulary)
    print(f"20 Newsgroups: {train.n_docs:,} training and {test.n_docs:,} held-out documents, "
          f"{len(vocabulary):,} words, prepared in {time.perf_counter() - start:.0f} s", flush=True)
    make = TEXT_MODELS["PoissBPE"].make
    for device in devices:
        set_threads(device, threads)
        make(max(topics), seed, {**params, "device": device, "epochs": 1}).fit(train.counts[:500])
        synchronize(device)
        for n_topics in topics:
            model = make(n_topics, seed, {**params, "device": device})
            wall, cpu = time.perf_counter(), time.process_time()
            model.fit(train.counts)
            synchronize(device)
            fit_seconds, fit_cpu = time.perf_counter() - wall, time.process_time() - cpu
            epochs = [h["seconds"] for h in model.history_]
            res = evaluate_topic_model(model, train.counts, test.counts, reference, vocabulary,
                                       train_labels=train.labels, test_labels=test.labels,
                                       codes=model.transform(test.counts), top_n=10, seed=seed,
                                       gensim_measures=(), corpus_texts=corpus)
            mixtures = model.doc_topic(train.counts)
            emit("grid", {"n_topics": n_topics, "device": device_name(device, threads), "backend": model.backend_,
                          "epochs": len(epochs), "epoch_seconds": statistics.median(epochs),
                          "fit_seconds": fit_seconds, "fit_cpu_seconds": fit_cpu, "npmi": res["npmi"],
                          "npmi_corpus": res["npmi_corpus"], "diversity_top10": res["diversity_top10"],
                          "diversity": res["diversity"], "perplexity": res["perplexity"],
                          "accuracy": res["accuracy"],
                          "unused_topics": int((np.asarray(mixtures).max(0) < 1e-3).sum())})


def shard_rows(docs: int, jobs: int, workdir: Path, n_topics: int, epochs: int, batch: int, devices: list,
               threads: int, seed: int, params: dict, emit) -> None:
    """The shards part: build the corpus, then a few epochs from the shards per device."""
    from bench_stream import write_jsonl

    from bpetopics import PoissBPE
    from bpetopics.text import TextPipeline
    from bpetopics.text.sharded import is_sharded_corpus, open_sharded
    from bpetopics.text.streaming import build_sharded

    workdir.mkdir(parents=True, exist_ok=True)
    source, shards = workdir / f"corpus_{docs}.jsonl", workdir / f"shards_{docs}"
    if not is_sharded_corpus(shards):
        start = time.perf_counter()
        write_jsonl(source, docs, seed=0)
        written = time.perf_counter() - start
        build_sharded(source, shards, TextPipeline(), jobs=jobs, label_field="label", id_field="id",
                      overwrite=True)
        print(f"sharded corpus: JSONL written in {written:.0f} s, built with {jobs} workers in "
              f"{time.perf_counter() - start - written:.0f} s", flush=True)
    counts = open_sharded(shards).counts
    print(f"sharded corpus: {counts.shape[0]:,} documents, {counts.shape[1]:,} words, {counts.nnz:,} non-zeros",
          flush=True)
    for device in devices:
        set_threads(device, threads)
        model = PoissBPE(**{"progress": False, **params, "n_topics": n_topics, "epochs": epochs,
                            "batch_size": batch, "random_state": seed, "device": device})
        wall = time.perf_counter()
        model.fit(counts, encode=False)
        synchronize(device)
        seconds = [h["seconds"] for h in model.history_]
        emit("shards", {"n_docs": counts.shape[0], "nnz": counts.nnz, "n_topics": n_topics, "batch_size": batch,
                        "device": device_name(device, threads), "backend": model.backend_,
                        "epoch_seconds": " / ".join(f"{s:.1f}" for s in seconds),
                        "bits_per_doc": " / ".join(f"{h['active_bits']:.1f}" for h in model.history_),
                        "last_epoch_seconds": seconds[-1], "us_per_nonzero": 1e6 * seconds[-1] / counts.nnz,
                        "fit_seconds": time.perf_counter() - wall})


def markdown_table(rows: list) -> str:
    """Rows (dicts with the same keys) as a markdown table, floats to 4 significant digits."""
    keys = list(rows[0])
    cell = lambda v: f"{v:.4g}" if isinstance(v, float) else str(v)   # noqa: E731
    return "\n".join(["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
                     + ["| " + " | ".join(cell(r.get(k)) for k in keys) + " |" for r in rows])


def main() -> None:
    import torch

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", default="grid,shards", help="grid, shards or both (comma-separated)")
    parser.add_argument("--topics", default="100,200", help="T values of the grid part")
    parser.add_argument("--devices", help="comma-separated [default: cpu, and cuda when present]")
    parser.add_argument("--threads", type=int, default=1, help="torch threads of the CPU rows")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-docs", type=int, help="documents drawn per split of 20 Newsgroups [default: all]")
    parser.add_argument("--docs", type=int, default=1_000_000, help="documents of the sharded corpus")
    parser.add_argument("--jobs", type=int, default=os.cpu_count(), help="workers building the sharded corpus")
    parser.add_argument("--shard-topics", type=int, default=200)
    parser.add_argument("--shard-epochs", type=int, default=2)
    parser.add_argument("--shard-batch", type=int, default=4096, help="documents a step on the shards")
    parser.add_argument("--params", default="{}", help="other PoissBPE keyword arguments, JSON")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/bpetopics-bench-cuda"))
    parser.add_argument("--out", type=Path, default=Path("results/cuda"))
    parser.add_argument("--quick", action="store_true", help="a small run that checks the benchmark works")
    args = parser.parse_args()
    if args.quick:
        args.topics, args.max_docs, args.docs, args.shard_topics, args.shard_epochs = "20", 300, 3000, 20, 1
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    if set(parts) - {"grid", "shards"}:
        parser.error(f"unknown --parts {sorted(set(parts) - {'grid', 'shards'})}; choose grid, shards")
    devices = (args.devices.split(",") if args.devices
               else ["cpu"] + (["cuda"] if torch.cuda.is_available() else []))
    params = json.loads(args.params)
    args.out.mkdir(parents=True, exist_ok=True)
    tables: dict = {}
    command = "python -m benchmarks cuda " + " ".join(sys.argv[1:])

    def emit(part: str, row: dict) -> None:
        """Keep the row, print it, and rewrite the part's CSV and the report."""
        tables.setdefault(part, []).append(row)
        print(f"{part}: " + ", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}"
                                      for k, v in row.items()), flush=True)
        pd.DataFrame(tables[part]).to_csv(args.out / f"{part}.csv", index=False)
        report = [header(), f"command: {command}", ""]
        for name, rows in tables.items():
            report += [f"## {name}", "", markdown_table(rows), ""]
        (args.out / "cuda.md").write_text("\n".join(report), encoding="utf-8")

    if "grid" in parts:
        grid_rows([int(t) for t in args.topics.split(",")], devices, args.threads, args.seed, args.max_docs,
                  params, emit)
    if "shards" in parts:
        shard_rows(args.docs, args.jobs, args.workdir, args.shard_topics, args.shard_epochs, args.shard_batch,
                   devices, args.threads, args.seed, params, emit)


if __name__ == "__main__":
    main()
