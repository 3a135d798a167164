"""Similar documents: precision@10 of same-label neighbours and queries per second.

A labelled corpus (--corpus, default 20 Newsgroups, all 20 groups, the project's default
corpus settings): PoissBPE with its defaults (--topics, default 20) and tomotopy LDA (the
same vocabulary) trained on the train split (a corpus without a test split holds out a
fifth of its documents, as ``bpetopics compare`` does); every held-out document queries
the other held-out documents, by

  (w) topics and words: every document scored by 0.3 times the cosine of PoissBPE's
      posterior mixtures plus 0.7 times that of the TF-IDF vectors
      (bpetopics.search.TopicWordIndex: what TopicModel.similar_documents and
      `bpetopics similar` do),
  (x) the same with tomotopy's mixtures,
  (s) the documents sharing an active bit of the query's code, ranked by the exact
      cosine of PoissBPE's posterior mixtures (bpetopics.search.MixtureIndex: the
      search by topics alone, ``word_weight=0``),
  (a) Hamming distance over the bit-packed codes (bpetopics.search.CodeIndex),
  (b) (a)'s nearest --pool re-ranked by the cosine of PoissBPE's posterior mixtures
      (``pool=1000``, deprecated),
  (c) cosine over PoissBPE's posterior mixtures, exhaustive,
  (d) cosine over tomotopy's mixtures, exhaustive,
  (e) cosine over TF-IDF vectors (sparse, float32, the transposed vectors made once), exhaustive.

Precision@10: the share of each query's 10 neighbours with the query's label, averaged;
also for (w) and (x) at other word weights (untimed).
Queries per second: the queries searched in batches of --batch (``batch q/s``) and one
at a time as an interactive call would (``single q/s``, --single of them), the
documents' codes and mixtures computed beforehand. Every method is timed the same way:
--repeats passes over its whole query set in a row, the rate of the fastest pass
(best of 3 by default). What ran before a method does not decide its rate: glibc's
malloc otherwise moves its thresholds with the sizes freed so far, so that an
exhaustive search's similarity matrices were mapped and faulted in afresh for every
batch unless a larger search had run before it; the benchmark fixes the thresholds
(:func:`steady_allocator`) before anything runs, the same for every method. Run with
``python -m benchmarks search [--quick] [--corpus state_union] [--topics 50]``.
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import time

import numpy as np


def precision_at(neighbours, labels) -> float:
    return float((labels[neighbours] == labels[:, None]).mean())


def steady_allocator() -> str:
    """Fix glibc malloc's thresholds (memory up to 32 MiB a block from the heap, which
    keeps up to 1 GiB free), so that they no longer move with what was freed before;
    returns what was done, for the report."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
    except (OSError, TypeError):
        libc = None
    if libc is None or not hasattr(libc, "mallopt"):
        return "allocator: left as it is (no glibc mallopt)"
    m_trim_threshold, m_mmap_threshold = -1, -3
    if not (libc.mallopt(m_mmap_threshold, 32 << 20) and libc.mallopt(m_trim_threshold, 1 << 30)):
        return "allocator: left as it is (mallopt refused)"
    return "allocator: glibc malloc thresholds fixed (mmap 32 MiB, trim 1 GiB) for every method"


def best_rate(run, n_queries, repeats):
    """(what the first of ``repeats`` calls of ``run()`` returned, queries per second of
    the fastest call): each call answers ``n_queries`` queries."""
    first, fastest = None, np.inf
    for repeat in range(repeats):
        start = time.perf_counter()
        answer = run()
        fastest = min(fastest, time.perf_counter() - start)
        first = answer if repeat == 0 else first
    return first, n_queries / fastest


def batch_rate(search, n_queries, batch, repeats):
    """(neighbours of every query, batch q/s): ``search(rows)`` over batches of rows."""
    def run():
        return np.vstack([search(np.arange(begin, min(begin + batch, n_queries)))
                          for begin in range(0, n_queries, batch)])
    return best_rate(run, n_queries, repeats)


def single_rate(search, rows, repeats):
    """Queries per second of ``search`` asked for one row at a time."""
    def run():
        for r in rows:
            search(np.array([r]))
    return best_rate(run, len(rows), repeats)[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2,000 documents a split, 200 Gibbs sweeps.")
    parser.add_argument("--corpus", default="20newsgroups", help="A labelled corpus (default: 20newsgroups).")
    parser.add_argument("--weights", default="0,0.5,0.6,0.7,0.8,0.9,1",
                        help="Word weights whose precision is shown for (w) and (x).")
    parser.add_argument("--max-docs", type=int, default=None, help="Documents per split (default: all).")
    parser.add_argument("--topics", type=int, default=20)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--pool", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--single", type=int, default=300, help="Queries timed one at a time.")
    parser.add_argument("--repeats", type=int, default=3, help="Timed passes a method; the fastest counts.")
    parser.add_argument("--tomotopy-iterations", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.quick:
        args.max_docs, args.tomotopy_iterations = args.max_docs or 2000, min(args.tomotopy_iterations, 200)

    allocator = steady_allocator()
    import scipy.sparse as sp
    from sklearn.feature_extraction.text import TfidfTransformer

    from bpetopics import PoissBPE
    from bpetopics.baselines import TomotopyLDA
    from bpetopics.experiments.text_setup import comparison_data
    from bpetopics.runs.search import DocumentSearch
    from bpetopics.search import WORD_WEIGHT, CodeIndex, MixtureIndex, TopicWordIndex, cosine_nearest, rerank

    data = comparison_data(args.corpus, {"max_docs": args.max_docs, "random_state": args.seed}, seed=args.seed)
    train, test = data.train, data.test
    if test.labels is None:
        raise SystemExit(f"the corpus {args.corpus} has no labels: precision@k needs them")
    labels, k = np.asarray(test.labels), args.k
    print(f"train {train.n_docs:,} / test {test.n_docs:,} documents, {train.n_words:,} words, T = {args.topics}")
    t0 = time.perf_counter()
    model = PoissBPE(n_topics=args.topics, random_state=args.seed, progress=False, device="cpu").fit(train.counts)
    codes = model.transform(test.counts)
    mixtures = model.posterior_topic(test.counts, codes)
    print(f"PoissBPE: trained and encoded in {time.perf_counter() - t0:.1f} s; mean active bits "
          f"{codes.sum(1).mean():.2f}, {len(np.unique(codes, axis=0)):,} distinct codes")
    t0 = time.perf_counter()
    lda = TomotopyLDA(n_topics=args.topics, iterations=args.tomotopy_iterations, random_state=args.seed)
    lda_mixtures = lda.fit(train.counts).doc_topic(test.counts)
    print(f"tomotopy LDA ({args.tomotopy_iterations} sweeps): trained and inferred in {time.perf_counter() - t0:.1f} s")
    tfidf = sp.csr_matrix(TfidfTransformer().fit(train.counts).transform(test.counts), dtype=np.float32)
    unit_tfidf = sp.diags(1.0 / np.maximum(np.sqrt(np.asarray(tfidf.multiply(tfidf).sum(1)).ravel()), 1e-12)) @ tfidf
    unit_tfidf = sp.csr_matrix(unit_tfidf, dtype=np.float32)

    index = CodeIndex.from_codes(codes)
    t0 = time.perf_counter()
    blended = TopicWordIndex(mixtures, test.counts)
    lda_blended = TopicWordIndex(lda_mixtures, test.counts)
    print(f"TopicWordIndex: built in {time.perf_counter() - t0:.2f} s (both)")
    t0 = time.perf_counter()
    shared = MixtureIndex(codes, mixtures)
    shared.nearest_rows([0], k)                       # compiles, or loads numba's cache
    print(f"MixtureIndex: built in {time.perf_counter() - t0:.2f} s (with the compiled loop's first call)")

    def topics_and_words(found):
        return lambda rows: found.nearest_rows(rows, k)[0]

    def shared_bits(rows):
        return shared.nearest_rows(rows, k)[0]

    def hamming(rows):
        return index.nearest(codes[rows], k, exclude=rows)[0]

    def reranked(rows):
        pool, _ = index.nearest(codes[rows], args.pool, exclude=rows)
        return rerank(mixtures[rows], pool, mixtures[pool], k)[0]

    def cosine_of(m):
        return lambda rows: cosine_nearest(m[rows], m, k, exclude=rows)[0]

    postings = sp.csr_matrix(unit_tfidf.T)            # (W, N), made once, as an index would keep it

    def tfidf_cosine(rows):
        sims = (unit_tfidf[rows] @ postings).toarray()
        sims[np.arange(len(rows)), rows] = -np.inf
        top = np.argpartition(-sims, k, axis=1)[:, :k]
        order = np.argsort(-np.take_along_axis(sims, top, 1), axis=1, kind="stable")
        return np.take_along_axis(top, order, 1)

    methods = [(f"(w) topics and words, word weight {WORD_WEIGHT}: **`similar_documents`**", topics_and_words(blended)),
               ("(x) topics and words with tomotopy's mixtures", topics_and_words(lda_blended)),
               ("(s) shared active bit + mixture cosine (`word_weight=0`)", shared_bits),
               ("(a) Hamming over codes", hamming), (f"(b) Hamming + mixture re-rank (pool {args.pool:,}), deprecated", reranked),
               ("(c) cosine over PoissBPE's mixtures", cosine_of(mixtures)),
               ("(d) cosine over tomotopy's mixtures", cosine_of(lda_mixtures)),
               ("(e) TF-IDF cosine", tfidf_cosine)]
    rng = np.random.default_rng(args.seed)
    singles = rng.choice(test.n_docs, size=min(args.single, test.n_docs), replace=False)
    rows = []
    for name, search in methods:
        neighbours, batch_qps = batch_rate(search, test.n_docs, args.batch, args.repeats)
        rows.append((name, precision_at(neighbours, labels), batch_qps, single_rate(search, singles, args.repeats)))
    base = next(row for row in rows if row[0].startswith("(c)"))
    print(f"\nrates: the fastest of {args.repeats} passes over the queries, each method alike; {allocator}")
    print(f"\n| method | precision@{k} | batch q/s | single q/s | batch / (c) | single / (c) |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, p, bq, sq in rows:
        print(f"| {name} | {p:.3f} | {bq:,.0f} | {sq:,.0f} | {bq / base[2]:.2f}x | {sq / base[3]:.2f}x |")
    print(f"\nchance (share of the commonest label): {np.unique(labels, return_counts=True)[1].max() / len(labels):.3f}")
    weights = [float(w) for w in args.weights.split(",")]
    print(f"\n| word weight | {' | '.join(f'{w:g}' for w in weights)} |")
    print(f"|---|{'---:|' * len(weights)}")
    every = np.arange(test.n_docs)
    for name, found in (("(w) PoissBPE", blended), ("(x) tomotopy", lda_blended)):
        shown = [precision_at(found.nearest_rows(every, k, w)[0], labels) for w in weights]
        print(f"| {name} | {' | '.join(f'{p:.3f}' for p in shown)} |")
    search = DocumentSearch(model, None, codes, test.counts, mixtures)
    for weight, what in ((None, "topics and words, the default"), (0.0, "topics alone")):
        search.similar(int(singles[0]), k=k, word_weight=weight)
        whole = best_rate(lambda: [search.similar(int(r), k=k, word_weight=weight) for r in singles], len(singles),
                          args.repeats)[1]
        print(f"DocumentSearch.similar (what TopicModel.similar_documents calls), {what}, one document at a "
              f"time: {whole:,.0f} q/s, {whole / base[3]:.2f}x (c)'s single rate")
    fallback = int(sum((codes[r] @ codes.T > 0).sum() - 1 < k for r in range(0, test.n_docs)))
    print(f"queries sharing an active bit with fewer than {k} documents (searched through their top topics' lists): {fallback:,}")


if __name__ == "__main__":
    main()
