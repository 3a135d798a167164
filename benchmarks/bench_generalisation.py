"""How far each model's topics carry from the training documents to held-out ones.

The same topics (top 10 words) are scored by NPMI with three reference corpora: the
training split they were fitted on, the held-out split, and both together. A model whose
topics lead on the training reference and trail on the held-out one has fitted the
co-occurrences of its training documents more tightly than the corpus supports. Also
printed: the median document frequency (in the training split) of the topics' top words;
how many topics have none of the training split's 100 most frequent words among their
top 10 (topics of rarer words only), and those topics' mean NPMI on the held-out split;
the diversity of the top 25 words (the share of unique words among all topics' top 25);
and the training CPU seconds.

Prints one markdown row per model (mean +/- std over seeds) for a cell of the quality
grid (``benchmarks/bench_quality_grid.py``: the same corpora, vocabulary and held-out
split).

Run: ``python -m benchmarks generalisation [--corpus 20newsgroups] [--topics 200]
[--seeds 0,1,2] [--models PoissBPE,Tomotopy-200,Tomotopy,NMF,LDA] [--params '{}']
[--vocab-size 2000]``
(offline data: SCIKIT_LEARN_DATA, NLTK_DATA, BPETOPICS_DATA as in
docs/getting-started.md; set OMP_NUM_THREADS=1 and the like). ``--params``: PoissBPE
keyword arguments as JSON. ``--vocab-size``: the most frequent words kept (the grid's 2,000
by default; a number above the corpus's distinct words keeps them all).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_quality_grid import CORPORA, MODELS, NAMES, one_thread, warm_up  # noqa: E402
from bpetopics.evaluation.coherence import npmi_coherence, top_word_ids  # noqa: E402
from bpetopics.evaluation.diversity import topic_diversity  # noqa: E402
from bpetopics.experiments.quality_grid import frequent_words  # noqa: E402
from bpetopics.experiments.text_comparison import TEXT_MODELS, encode_texts, model_names  # noqa: E402
from bpetopics.experiments.text_setup import comparison_data  # noqa: E402

COLUMNS = ("NPMI (train split)", "NPMI (test split)", "NPMI (whole corpus)", "train - test",
           "median df of top words", "topics without frequent words", "their NPMI (test split)",
           "diversity top 25", "CPU s")
#: How many of the corpus's most frequent words (by tokens in the training split) count as
#: frequent: the quality grid's count of generic topics takes as many.
FREQUENT_WORDS = 100


def measure(model, references: dict, document_frequency: np.ndarray, frequent: np.ndarray,
            vocabulary: list) -> list:
    """The COLUMNS of one fitted model, but its CPU seconds; ``frequent`` (W,) marks the
    corpus's most frequent words (NaN for "their NPMI" when no topic lacks them)."""
    top = top_word_ids(model.topic_word_, 10)
    per_topic = {name: npmi_coherence(top, texts, vocabulary).per_topic for name, texts in references.items()}
    npmi = {name: float(np.mean(values)) for name, values in per_topic.items()}
    rare = ~frequent[top].any(axis=1)                                # (T,): no frequent word in the top 10
    rare_npmi = float(np.mean(per_topic["test"][rare])) if rare.any() else float("nan")
    return [npmi["train"], npmi["test"], npmi["corpus"], npmi["train"] - npmi["test"],
            float(np.median(document_frequency[top])), float(rare.sum()), rare_npmi,
            topic_diversity(model.topic_word_, 25)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default="20newsgroups", choices=list(CORPORA))
    parser.add_argument("--topics", type=int, default=200)
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--models", default=MODELS, help=f"registry names, comma-separated [default: {MODELS}]")
    parser.add_argument("--params", default="{}", help="PoissBPE keyword arguments, JSON")
    parser.add_argument("--vocab-size", type=int, default=None,
                        help="the most frequent words kept [default: the quality grid's 2,000]")
    args = parser.parse_args()
    one_thread()
    models = model_names(args.models)
    params = json.loads(args.params)
    source, max_docs = CORPORA[args.corpus]
    settings = {"max_docs": max_docs, "random_state": 0}
    if args.vocab_size is not None:
        settings["vocab_size"] = args.vocab_size
    data = comparison_data(source, settings)
    train, test = data.train, data.test
    vocabulary = list(train.vocabulary)
    references = {"train": encode_texts(train.texts, vocabulary), "test": encode_texts(test.texts, vocabulary),
                  "corpus": encode_texts(list(train.texts) + list(test.texts), vocabulary)}
    document_frequency = train.counts.tocsc().getnnz(axis=0)       # training documents holding each word
    frequent = np.isin(vocabulary, list(frequent_words(train.counts, vocabulary, FREQUENT_WORDS)))
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
            rows.append(measure(model, references, document_frequency, frequent, vocabulary) + [cpu])
        values = np.array(rows)
        with warnings.catch_warnings():      # "their NPMI" is NaN where no topic lacks the frequent words
            warnings.simplefilter("ignore", RuntimeWarning)
            means = np.nanmean(values, axis=0)
            spread = np.nan_to_num(np.nanstd(values, axis=0, ddof=1)) if len(rows) > 1 else np.zeros_like(means)
        cells = ["-" if np.isnan(m) else f"{m:.0f}" if c == 4 else f"{m:.1f}" if c in (5, 8)
                 else f"{m:.3f} ± {s:.3f}" for c, (m, s) in enumerate(zip(means, spread))]
        print(f"| {NAMES.get(name, name)} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
