"""Topic quality of the pipelined schedule against the steps in order (PoissBPE's
``pipeline``), on the corpora of the comparison tables of docs/results/text-comparison.md, over seeds.

Prints, per corpus and T, the mean +/- standard deviation over seeds of what ``bpetopics
compare`` measures for PoissBPE (NPMI with the chosen reference and with the whole
corpus, diversity top 25, completion perplexity, classifier accuracy, unused topics),
with ``pipeline=False`` and ``pipeline=True``, both fitted in this process on one thread
(the pipelined schedule gives the same model on one thread and two).

Run: ``python benchmarks/bench_pipeline_quality.py [--corpora 20newsgroups:20,abc:20]
[--seeds 0,1,2]`` (offline data: SCIKIT_LEARN_DATA, NLTK_DATA, BPETOPICS_DATA as in docs/getting-started.md).
"""

from __future__ import annotations

import argparse

import torch

from bpetopics.experiments.text_comparison import compare_models
from bpetopics.experiments.text_setup import comparison_data

MEASURES = (("npmi", "NPMI"), ("npmi_corpus", "NPMI (corpus)"), ("diversity", "diversity"),
            ("perplexity", "perplexity"), ("accuracy", "accuracy"),
            ("unused_topics", "unused topics"), ("fit_cpu_seconds", "CPU s"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpora", default="20newsgroups:20,20newsgroups:50,abc:20,state_union:20,lee:20",
                        help="NAME:T pairs, comma-separated")
    parser.add_argument("--seeds", default="0,1,2")
    args = parser.parse_args()
    torch.set_num_threads(1)
    seeds = [int(s) for s in args.seeds.split(",")]
    print(f"PoissBPE defaults but pipeline; seeds {args.seeds}; mean +/- std\n")
    header = None
    for item in args.corpora.split(","):
        name, topics = item.split(":")
        data = comparison_data(name, {})
        for pipeline in (False, True):
            table = compare_models(data.train, data.test, int(topics), seeds, gensim_measures=(),
                                   models=("PoissBPE",), bpe_params={"pipeline": pipeline})
            present = [(col, label) for col, label in MEASURES if col in table.columns]
            if header is None:
                header = present
                print("| corpus | T | pipeline | " + " | ".join(label for _, label in present) + " |")
                print("|---|---:|---|" + "---:|" * len(present))
            cells = [f"{table[col].mean():.4g} +/- {table[col].std(ddof=1) if len(seeds) > 1 else 0:.2g}"
                     for col, _ in header]
            print(f"| {name} | {topics} | {pipeline} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
