"""PoissBPE's topic use on 20 Newsgroups over seeds: the share of topics that are no
held-out document's top topic, with NPMI, diversity and completion perplexity.

Prints one markdown row per seed and the mean +/- standard deviation: training CPU
seconds (one thread), NPMI (top 10, test split as reference), topic diversity (top 25),
the share of topics no test document's top topic, completion perplexity (test split).

Run: ``python benchmarks/bench_topic_use.py [--topics 50] [--seeds 0,1,2]
[--params '{"n_bits": 64}']`` (offline data: SCIKIT_LEARN_DATA, NLTK_DATA,
BPETOPICS_DATA as in docs/getting-started.md). ``--params``: PoissBPE keyword arguments as JSON.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch

from bpetopics import PoissBPE
from bpetopics.evaluation.coherence import npmi_coherence, top_word_ids
from bpetopics.evaluation.diversity import topic_diversity, unused_topic_share
from bpetopics.evaluation.perplexity import completion_perplexity
from bpetopics.text import prepare_corpus

COLUMNS = ("CPU s", "NPMI", "diversity", "unused topics", "perplexity")


def measure(train, test, n_topics, seed, params) -> tuple:
    start = time.process_time()
    model = PoissBPE(n_topics=n_topics, random_state=seed, progress=False, **params).fit(train.counts)
    cpu = time.process_time() - start
    npmi = npmi_coherence(top_word_ids(model.topic_word_, 10), test.texts, train.vocabulary)
    return (cpu, float(np.mean(npmi.per_topic)), topic_diversity(model.topic_word_),
            unused_topic_share(model.doc_topic(test.counts)),
            completion_perplexity(model, test.counts).perplexity)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--params", default="{}", help="PoissBPE keyword arguments, JSON")
    args = parser.parse_args()
    torch.set_num_threads(1)
    params = json.loads(args.params)
    corpus = prepare_corpus("20newsgroups")
    rows = []
    print(f"20 Newsgroups, T = {args.topics}, PoissBPE defaults and {params or 'nothing else'}\n")
    print("| seed | " + " | ".join(COLUMNS) + " |\n|---|" + "---:|" * len(COLUMNS))
    for seed in [int(s) for s in args.seeds.split(",")]:
        rows.append(measure(corpus["train"], corpus["test"], args.topics, seed, params))
        print(f"| {seed} | " + " | ".join(f"{v:.4g}" for v in rows[-1]) + " |", flush=True)
    values = np.array(rows)
    print("| mean +/- std | " + " | ".join(f"{m:.4g} +/- {s:.2g}" for m, s in
                                           zip(values.mean(0), values.std(0, ddof=1 if len(rows) > 1 else 0)))
          + " |")


if __name__ == "__main__":
    main()
