"""PoissBPE's document mixtures against its code posterior, for prediction.

``doc_topic`` reports each document's own mixture: the MAP under a Dirichlet prior of
a0 pseudo-tokens (``document_concentration``) centred on the code's posterior mean
mixture (``posterior="local"``; bpetopics/models/poissbpe/document_mixture.py). The
refinement runs after training and changes no topic, so one fit per seed serves every a0:
this benchmark fits PoissBPE once per cell and seed and measures completion perplexity,
the accuracy of a logistic regression on the mixtures and the CPU time of the test
split's mixtures (``doc_topic``, codes included) with the code posterior and with each
a0, on the quality grid's cells (``benchmarks/bench_quality_grid.py``: the same corpora,
vocabulary and held-out split). Each matrix's code posterior is computed once per fit and
refined for every a0 (its CPU seconds counted in every a0's).

Prints one markdown row per cell and mixture (mean +/- std over seeds).

Run: ``python -m benchmarks document_mixture [--cells 20newsgroups:200,abc:50]
[--concentrations 3,10,30,100] [--seeds 0,1,2]`` (offline data: SCIKIT_LEARN_DATA,
NLTK_DATA, BPETOPICS_DATA as in docs/getting-started.md; set OMP_NUM_THREADS=1 and the
like).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_quality_grid import CORPORA, one_thread  # noqa: E402
from bpetopics.evaluation.classification import classification_accuracy  # noqa: E402
from bpetopics.evaluation.perplexity import completion_perplexity  # noqa: E402
from bpetopics.experiments.text_setup import comparison_data  # noqa: E402
from bpetopics.models import PoissBPE  # noqa: E402
from bpetopics.models.poissbpe.document_mixture import document_mixtures  # noqa: E402

CELLS = ("20newsgroups-500:20,20newsgroups-2000:100,20newsgroups:200,abc:50,state_union:50,"
         "20newsgroups-subjects:200")


def matrix_key(X) -> tuple:
    """A key of a CSR matrix's contents (the completion's observed halves are new objects
    at every call, with the same contents)."""
    return X.shape, X.nnz, hash(X.indices.tobytes()), hash(X.data.tobytes())


class Mixtures:
    """A fitted model seen through one kind of document mixture (what
    ``completion_perplexity`` reads: ``topic_word_`` and ``doc_topic``): the code posterior
    (``concentration`` None) or the document mixtures around it. The code posterior of
    each matrix is computed once and shared by every kind of one model (``local``, with
    its CPU seconds in ``local_seconds``)."""

    def __init__(self, model, concentration, local: dict, local_seconds: dict):
        self.model, self.concentration = model, concentration
        self.local, self.local_seconds = local, local_seconds
        self.topic_word_ = model.topic_word_

    def doc_topic(self, X):
        key = matrix_key(X)
        if key not in self.local:
            start = time.process_time()
            self.local[key] = self.model.doc_topic(X, posterior="local")
            self.local_seconds[key] = time.process_time() - start
        if self.concentration is None:
            return self.local[key]
        return document_mixtures(X, self.topic_word_, self.local[key], self.concentration, dtype=np.float32)


def measure(mixtures: Mixtures, data) -> tuple:
    """(completion perplexity, accuracy, CPU s of the test split's mixtures, the code
    posterior's included) of the test split."""
    train, test = data.train, data.test
    start = time.process_time()
    test_mixtures = mixtures.doc_topic(test.counts)
    seconds = time.process_time() - start
    if mixtures.concentration is not None:                    # the shared code posterior's share
        seconds += mixtures.local_seconds[matrix_key(test.counts)]
    perplexity = completion_perplexity(mixtures, test.counts, seed=0).perplexity
    accuracy = (classification_accuracy(mixtures.doc_topic(train.counts), train.labels,
                                        test_mixtures, test.labels, seed=0)
                if train.labels is not None else float("nan"))
    return perplexity, accuracy, seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cells", default=CELLS, help=f"corpus:T, comma-separated [default: {CELLS}]")
    parser.add_argument("--concentrations", default="3,10,30,100", help="a0 values, comma-separated")
    parser.add_argument("--seeds", default="0,1,2")
    args = parser.parse_args()
    cells = [(c.split(":")[0], int(c.split(":")[1])) for c in args.cells.split(",") if c.strip()]
    unknown = [c for c, _ in cells if c not in CORPORA]
    if unknown:
        parser.error(f"unknown corpora {unknown}; choose from {', '.join(CORPORA)}")
    concentrations = [float(a) for a in args.concentrations.split(",")]
    seeds = [int(s) for s in args.seeds.split(",")]
    one_thread()
    print("| corpus | T | mixture | completion perplexity | accuracy | mixtures of the test split, CPU s |\n"
          "|---|---:|---|---:|---:|---:|", flush=True)
    for name, n_topics in cells:
        source, max_docs = CORPORA[name]
        data = comparison_data(source, {"max_docs": max_docs, "random_state": 0})
        kinds = [None] + concentrations
        scores = {kind: [] for kind in kinds}
        for seed in seeds:
            model = PoissBPE(n_topics=n_topics, random_state=seed, progress=False).fit(data.train.counts)
            local, local_seconds = {}, {}
            for kind in kinds:                               # the code posterior first
                scores[kind].append(measure(Mixtures(model, kind, local, local_seconds), data))
        for kind in kinds:
            values = np.asarray(scores[kind])
            label = "code posterior ('local')" if kind is None else f"document, a0 = {kind:g}"
            cols = [f"{values[:, j].mean():.{p}f} ± {values[:, j].std():.{p}f}" for j, p in ((0, 1), (1, 3))]
            print(f"| {name} | {n_topics} | {label} | {cols[0]} | {cols[1]} | {values[:, 2].mean():.2f} |", flush=True)


if __name__ == "__main__":
    main()
