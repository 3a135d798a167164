"""How far each model's topics carry from the training documents to held-out ones.

The same topics (top 10 words) are scored by NPMI with three reference corpora: the
training split they were fitted on, the held-out split, and both together. A model whose
topics lead on the training reference and trail on the held-out one has fitted the
co-occurrences of its training documents more tightly than the corpus supports. Also
printed: the median document frequency (in the training split) of the topics' top words,
the diversity of the top 25 words (the share of unique words among all topics' top 25),
and the training CPU seconds.

Prints one markdown row per model (mean +/- std over seeds) for a cell of the quality
grid (``benchmarks/bench_quality_grid.py``: the same corpora, vocabulary and held-out
split).

Run: ``python -m benchmarks generalisation [--corpus 20newsgroups] [--topics 200]
[--seeds 0,1,2] [--models PoissBPE,Tomotopy-200,Tomotopy,NMF,LDA] [--params '{}']``
(offline data: SCIKIT_LEARN_DATA, NLTK_DATA, BPETOPICS_DATA as in
docs/getting-started.md; set OMP_NUM_THREADS=1 and the like). ``--params``: PoissBPE
keyword arguments as JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_quality_grid import CORPORA, MODELS, NAMES, one_thread, warm_up  # noqa: E402
from bpetopics.evaluation.coherence import npmi_coherence, top_word_ids  # noqa: E402
from bpetopics.evaluation.diversity import topic_diversity  # noqa: E402
from bpetopics.experiments.text_comparison import TEXT_MODELS, encode_texts, model_names  # noqa: E402
from bpetopics.experiments.text_setup import comparison_data  # noqa: E402

COLUMNS = ("NPMI (train split)", "NPMI (test split)", "NPMI (whole corpus)", "train - test",
           "median df of top words", "diversity top 25", "CPU s")


def measure(model, references: dict, document_frequency: np.ndarray, vocabulary: list) -> list:
    """The COLUMNS of one fitted model, but its CPU seconds."""
    top = top_word_ids(model.topic_word_, 10)
    npmi = {name: float(np.mean(npmi_coherence(top, texts, vocabulary).per_topic))
            for name, texts in references.items()}
    return [npmi["train"], npmi["test"], npmi["corpus"], npmi["train"] - npmi["test"],
            float(np.median(document_frequency[top])), topic_diversity(model.topic_word_, 25)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default="20newsgroups", choices=list(CORPORA))
    parser.add_argument("--topics", type=int, default=200)
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--models", default=MODELS, help=f"registry names, comma-separated [default: {MODELS}]")
    parser.add_argument("--params", default="{}", help="PoissBPE keyword arguments, JSON")
    args = parser.parse_args()
    one_thread()
    models = model_names(args.models)
    params = json.loads(args.params)
    source, max_docs = CORPORA[args.corpus]
    data = comparison_data(source, {"max_docs": max_docs, "random_state": 0})
    train, test = data.train, data.test
    vocabulary = list(train.vocabulary)
    references = {"train": encode_texts(train.texts, vocabulary), "test": encode_texts(test.texts, vocabulary),
                  "corpus": encode_texts(list(train.texts) + list(test.texts), vocabulary)}
    document_frequency = train.counts.tocsc().getnnz(axis=0)       # training documents holding each word
    seeds = [int(s) for s in args.seeds.split(",")]
    print(f"{args.corpus}: {train.n_docs:,} training and {test.n_docs:,} held-out documents, "
          f"{len(vocabulary):,} words, T = {args.topics}, seeds {args.seeds}"
          + (f", PoissBPE with {params}" if params else "") + "\n")
    print("| model | " + " | ".join(COLUMNS) + " |\n|---|" + "---:|" * len(COLUMNS))
    warm_up(train.counts, args.topics, models)      # compiled kernels and lazy imports are not counted
    for name in models:
        rows = []
        for seed in seeds:
            model = TEXT_MODELS[name].make(args.topics, seed, params if name == "PoissBPE" else {})
            start = time.process_time()
            model.fit(train.counts)
            cpu = time.process_time() - start
            rows.append(measure(model, references, document_frequency, vocabulary) + [cpu])
        values = np.array(rows)
        spread = values.std(0, ddof=1) if len(rows) > 1 else np.zeros(values.shape[1])
        cells = [f"{m:.0f}" if c == 4 else f"{m:.1f}" if c == 6 else f"{m:.3f} ± {s:.3f}"
                 for c, (m, s) in enumerate(zip(values.mean(0), spread))]
        print(f"| {NAMES.get(name, name)} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
