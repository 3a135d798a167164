"""Our vectorised NPMI against gensim's c_npmi on 20 Newsgroups.

Topics come from the train split (a quick gensim LDA, or random word sets with
``--topics random``); the reference corpus is the test split's tokens, restricted to the
vocabulary. Prints seconds for each implementation, the speed ratio and the largest
absolute per-topic difference.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_coherence.py
    .venv/bin/python benchmarks/bench_coherence.py --topics random --n-topics 50
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np


def load(vocab_size: int, data_home: str, max_docs: int | None):
    from sklearn.datasets import fetch_20newsgroups
    from sklearn.feature_extraction.text import CountVectorizer

    kw = dict(data_home=data_home, download_if_missing=False, remove=("headers", "footers", "quotes"))
    train = fetch_20newsgroups(subset="train", **kw).data
    test = fetch_20newsgroups(subset="test", **kw).data
    if max_docs:
        train, test = train[:max_docs], test[:max_docs]
    cv = CountVectorizer(
        stop_words="english", max_features=vocab_size, min_df=5, max_df=0.5,
        token_pattern=r"(?u)\b[a-zA-Z]{3,}\b",
    )
    X_train = cv.fit_transform(train)
    vocabulary = list(cv.get_feature_names_out())
    keep = set(vocabulary)
    analyze = cv.build_analyzer()
    texts = [[w for w in analyze(doc) if w in keep] for doc in test]
    return X_train, vocabulary, texts


def main(argv=None):
    from bpetopics.baselines import LDABaseline
    from bpetopics.evaluation import encode_texts, gensim_coherence, npmi_coherence, top_word_ids

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--topics", choices=["lda", "random"], default="lda")
    p.add_argument("--n-topics", type=int, default=20)
    p.add_argument("--top-n", type=int, default=10)
    p.add_argument("--vocab-size", type=int, default=2000)
    p.add_argument("--passes", type=int, default=2, help="LDA passes (topics source only)")
    p.add_argument("--max-docs", type=int, default=None, help="cap each split (quick runs)")
    p.add_argument("--data-home", default=os.environ.get("BPETOPICS_SKLEARN_DATA", "/work/shared/data/sklearn"))
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)

    X_train, vocabulary, texts = load(args.vocab_size, args.data_home, args.max_docs)
    n_tokens = sum(map(len, texts))
    if args.topics == "lda":
        lda = LDABaseline(args.n_topics, passes=args.passes, random_state=args.seed).fit(X_train)
        topics = top_word_ids(lda.topic_word_, args.top_n)
    else:
        rng = np.random.default_rng(args.seed)
        topics = np.vstack([rng.choice(len(vocabulary), args.top_n, replace=False) for _ in range(args.n_topics)])

    t0 = time.perf_counter()
    encoded = encode_texts(texts, vocabulary)
    t_encode = time.perf_counter() - t0
    ours = npmi_coherence(topics, encoded, vocabulary)  # timed without the encoding
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = gensim_coherence(topics, texts, vocabulary, measure="c_npmi")
    diff = np.abs(ours.per_topic - ref.per_topic)

    print(f"20 Newsgroups: topics={args.topics} T={args.n_topics} top_n={args.top_n} "
          f"W={len(vocabulary)}; reference = test split, {len(texts)} docs, {n_tokens} tokens, window 10")
    print()
    print(f"| implementation | seconds | mean NPMI | non-finite topics |")
    print(f"|---|---|---|---|")
    print(f"| gensim c_npmi (processes=1) | {ref.seconds:.2f} | {ref.mean:.6f} | {ref.n_nonfinite} |")
    print(f"| bpetopics npmi_coherence | {ours.seconds:.3f} (+{t_encode:.2f} to encode the texts once) "
          f"| {ours.mean:.6f} | {ours.n_nonfinite} |")
    print()
    print(f"speed ratio gensim / ours: {ref.seconds / ours.seconds:.0f}x "
          f"({ref.seconds / (ours.seconds + t_encode):.0f}x counting the encoding)")
    print(f"max |ours - gensim| over topics: {diff.max():.3e}")
    for t in np.flatnonzero(ours.nonfinite):
        words = " ".join(vocabulary[i] for i in topics[t])
        print(f"topic {t} scored -1 (a top word never occurs in the reference): {words}")


if __name__ == "__main__":
    main()
