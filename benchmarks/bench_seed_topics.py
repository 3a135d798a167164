"""Guided topics on 20 Newsgroups: do seeded topics form around their seeds, and at what
cost in NPMI?

Four groups (comp.graphics, rec.sport.hockey, sci.space, talk.politics.mideast), their
train split (vocabulary: 2,000 words, NLTK stop words), T topics; each group's topic
seeded with two words (graphics image, hockey team, space nasa, israel armenian). For
each seed, PoissBPE without and with ``seed_words`` (the same settings otherwise), and one
markdown row each: NPMI (top 10 words, the test split as reference), the seeded topics
whose two seed words are both among their top 10 (and the seed pairs among
some topic's top 10), training CPU seconds (one thread).

Run: ``python -m benchmarks seed_topics [--topics 10] [--seeds 0,1] [--strength 0.02]``
(offline data: SCIKIT_LEARN_DATA, NLTK_DATA, BPETOPICS_DATA as in docs/getting-started.md).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from bpetopics import PoissBPE
from bpetopics.evaluation.coherence import npmi_coherence, top_word_ids
from bpetopics.seed_topics import seed_word_ids
from bpetopics.text import prepare_corpus

GROUPS = ["comp.graphics", "rec.sport.hockey", "sci.space", "talk.politics.mideast"]
SEEDS = [["graphics", "image"], ["hockey", "team"], ["space", "nasa"], ["israel", "armenian"]]


def measure(train, test, n_topics, seed, seed_words, strength) -> tuple:
    start = time.process_time()
    model = PoissBPE(n_topics=n_topics, random_state=seed, progress=False, seed_words=seed_words,
                     seed_strength=strength).fit(train.counts)
    cpu = time.process_time() - start
    top = top_word_ids(model.topic_word_, 10)
    npmi = float(np.mean(npmi_coherence(top, test.texts, train.vocabulary).per_topic))
    ids, _ = seed_word_ids(SEEDS, train.vocabulary)
    formed = sum(set(words) <= set(top[t].tolist()) for t, words in enumerate(ids))
    anywhere = sum(any(set(words) <= set(row.tolist()) for row in top) for words in ids)
    return npmi, formed, anywhere, cpu


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--topics", type=int, default=10)
    parser.add_argument("--seeds", default="0,1")
    parser.add_argument("--strength", type=float, default=0.02)
    parser.add_argument("--max-docs", type=int, default=None)
    args = parser.parse_args()
    torch.set_num_threads(1)
    splits = prepare_corpus("20newsgroups", categories=GROUPS, max_docs=args.max_docs)
    train, test = splits["train"], splits["test"]
    ids, unknown = seed_word_ids(SEEDS, train.vocabulary)
    assert not unknown, unknown
    print(f"20 Newsgroups, {len(GROUPS)} groups: {train.n_docs:,} train documents, {train.n_words:,} words; "
          f"T = {args.topics}, seed strength {args.strength}\n")
    print("| seed | seed words | NPMI | seed pairs in their topic's top 10 (of 4) | in some topic's top 10 | CPU s |")
    print("|---|---|---|---|---|---|")
    rows = {False: [], True: []}
    for seed in [int(s) for s in args.seeds.split(",")]:
        for seeded in (False, True):
            npmi, formed, anywhere, cpu = measure(train, test, args.topics, seed, ids if seeded else None,
                                                  args.strength)
            rows[seeded].append((npmi, formed, anywhere))
            print(f"| {seed} | {'yes' if seeded else 'no'} | {npmi:.4f} | {formed} | {anywhere} | {cpu:.1f} |",
                  flush=True)
    for seeded, found in rows.items():
        npmi = np.array([r[0] for r in found])
        print(f"| mean | {'yes' if seeded else 'no'} | {npmi.mean():.4f} | "
              f"{np.mean([r[1] for r in found]):.1f} | {np.mean([r[2] for r in found]):.1f} | |")


if __name__ == "__main__":
    main()
