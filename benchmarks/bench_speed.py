"""PoissBPE against gensim LDA and tomotopy LDA on 20 Newsgroups: CPU time and quality.

Prints a markdown table (and writes it with ``--out``): training CPU seconds of PoissBPE
(defaults), gensim ``LdaModel`` (our ``LDABaseline`` defaults) and tomotopy LDA (1,000
Gibbs iterations), all on one thread in this process, their ratios, NPMI (top 10 words,
test split as reference), topic diversity (top 25) and completion perplexity (test
split); above 2,000 words the cost per non-zero against the same fit at 2,000; a steady
epoch with the topic logits' Adam step and the next topics in one pass against the three
passes before it; then the pursuit's useful work per second against this machine's
one-thread matmul and logarithm rates (and the floor they set), the later-step paths
compared (packed torch, numba step by step, numba fused), the pursuit as training runs it
(from the CSR rows), encoding documents per second, and a steady epoch (the steps in
order on one thread; the pipelined schedule, the default, on one thread and on two) and
an encoding on 1 against 2 threads (wall seconds, alternated in one process), next to
what two threads of dense arithmetic (a matmul, a log) get done over one on this machine,
measured before and after them (:func:`two_thread_throughput`).

Run: ``python benchmarks/bench_speed.py [--topics 50] [--vocab-size 50000] [--out DIR]``
(offline data: SCIKIT_LEARN_DATA, NLTK_DATA, BPETOPICS_DATA as in docs/getting-started.md).
"""

from __future__ import annotations

import argparse
import threading
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
import torch
from threadpoolctl import threadpool_limits

from bpetopics import PoissBPE
from bpetopics.models.poissbpe.compiled import fused_pursuit, kernels
from bpetopics.bpe.pursuit import greedy_pursuit
from bpetopics.models.poissbpe.two_means import two_means
from bpetopics.evaluation.coherence import npmi_coherence, top_word_ids
from bpetopics.evaluation.diversity import topic_diversity
from bpetopics.baselines.lda import LDABaseline
from bpetopics.evaluation.perplexity import completion_perplexity
from bpetopics.text import prepare_corpus


class TomotopyLDA:
    """tomotopy ``LDAModel`` (collapsed Gibbs) behind the topic-model contract."""

    def __init__(self, n_topics, iterations=1000, seed=0):
        self.n_topics, self.iterations, self.seed = n_topics, iterations, seed

    def _words(self, X):
        X = X.tocsr()
        return [np.repeat(X.indices[a:b], X.data[a:b].astype(int)).astype(str).tolist()
                for a, b in zip(X.indptr[:-1], X.indptr[1:])]

    def fit(self, X):
        import tomotopy

        self.model_ = tomotopy.LDAModel(k=self.n_topics, seed=self.seed)
        for words in self._words(X):
            if words:
                self.model_.add_doc(words)
        self.model_.train(self.iterations, workers=1)
        ids = np.array([int(w) for w in self.model_.used_vocabs])
        self.topic_word_ = np.full((self.n_topics, X.shape[1]), 1e-12)
        for k in range(self.n_topics):
            self.topic_word_[k, ids] = self.model_.get_topic_word_dist(k)
        self.topic_word_ /= self.topic_word_.sum(1, keepdims=True)
        return self

    def doc_topic(self, X):
        known = set(self.model_.used_vocabs)
        out = np.full((X.shape[0], self.n_topics), 1.0 / self.n_topics)
        docs = [[w for w in words if w in known] for words in self._words(X)]
        keep = [i for i, d in enumerate(docs) if d]
        made = [self.model_.make_doc(docs[i]) for i in keep]
        inferred, _ = self.model_.infer(made, workers=1)
        for i, doc in zip(keep, inferred):      # tomotopy 0.14 returns the distributions
            out[i] = doc if isinstance(doc, np.ndarray) else doc.get_topic_dist()
        return out


def machine_rates():
    """One-thread float32 matmul rate (FLOP/s) and natural-log rate (logs/s)."""
    a, b = torch.rand(512, 512), torch.rand(512, 512)
    x = torch.rand(1 << 22) + 0.5
    best_mm = best_log = np.inf
    for _ in range(5):
        t = time.process_time()
        for _ in range(10):
            a @ b
        best_mm = min(best_mm, time.process_time() - t)
        t = time.process_time()
        for _ in range(5):
            torch.log(x)
        best_log = min(best_log, time.process_time() - t)
    return 10 * 2 * 512 ** 3 / best_mm, 5 * x.numel() / best_log


def two_thread_throughput(repeats=3):
    """The machine's own ceiling for two threads: how much more dense arithmetic two
    threads get done than one, for a one-thread matmul (512 x 512, float32) and a
    one-thread log over 2^20 floats, each run in this thread alone and then in this
    thread and a second one at once (torch releases the GIL). Medians of ``repeats``.
    On two cores 2.0x; on two hardware threads of one core (as virtual machines often
    give), dense arithmetic shares the core's units and gets far less. A loop bound by
    its own latency (a running sum) scales 2x either way, so it cannot tell them apart."""
    a, b = torch.rand(512, 512), torch.rand(512, 512)
    x = torch.rand(1 << 20) + 0.5

    def matmuls(n=200):
        for _ in range(n):
            a @ b

    def logs(n=100):
        for _ in range(n):
            torch.log(x)

    def ratio(work):
        work(10)
        t = time.perf_counter()
        work()
        one = time.perf_counter() - t
        other = threading.Thread(target=work)
        t = time.perf_counter()
        other.start()
        work()
        other.join()
        return 2 * one / (time.perf_counter() - t)

    torch.set_num_threads(1)
    return (float(np.median([ratio(matmuls) for _ in range(repeats)])),
            float(np.median([ratio(logs) for _ in range(repeats)])))


def pursuit_epoch(model, X, batch_size):
    """CPU seconds of one epoch's pursuits (minibatches of ``batch_size`` at the trained
    model) and the useful work: per document and step, nnz x K logarithms and
    nnz x K x T multiply-adds over its real non-zeros."""
    log_odds = model.prior_.bit_log_odds()
    beta = model.likelihood_.topic_word().detach()
    codes = []
    t = time.process_time()
    for begin in range(0, X.shape[0], batch_size):
        batch = model.likelihood_.batch(X[begin:begin + batch_size], "cpu")
        codes.append(greedy_pursuit(model.decoder_, model.likelihood_, batch, log_odds,
                                    model.max_bits, params=beta))
    seconds = time.process_time() - t
    bits = torch.cat(codes).sum(1).numpy()
    steps = np.minimum(bits + 1, model.code_length())
    logs = float((np.diff(X.indptr) * model.code_length() * steps).sum())
    return seconds, logs, logs * model.n_topics


def timed_fit(model, X):
    t = time.process_time()
    model.fit(X)
    return time.process_time() - t


def quality(model, test, vocabulary):
    npmi = npmi_coherence(top_word_ids(model.topic_word_, 10), test.texts, vocabulary)
    perplexity = completion_perplexity(model, test.counts).perplexity
    return (f"{np.mean(npmi.per_topic):.3f} / {topic_diversity(model.topic_word_):.2f} / "
            f"{perplexity:.0f}")


#: threads_wall's settings: (pipeline, threads).
SCHEDULES = ((False, 1), (True, 1), (True, 2))


def threads_wall(X, test, topics, epochs=10):
    """Median wall seconds of a steady training epoch for each of :data:`SCHEDULES` (the
    steps in order on one thread; the pipelined schedule, the default, on one thread and
    on two: the same model), and of encoding ``test`` on 1 and on 2 threads: models from
    the same start, their epochs alternated (epoch 1 of each is not counted), so all see
    the same machine load; nine epochs each, as this host's load moves the two-thread
    figure within minutes."""
    models = {}
    for pipeline, threads in SCHEDULES:
        models[pipeline, threads] = PoissBPE(n_topics=topics, epochs=epochs, device="cpu", progress=False,
                                             pipeline=pipeline)
        models[pipeline, threads]._setup(X)
    epoch = {key: [] for key in models}
    for e in range(epochs):
        for (pipeline, threads), model in models.items():
            torch.set_num_threads(threads)
            t = time.perf_counter()
            model._run_epoch(X, model._batches(X))
            if e:
                epoch[pipeline, threads].append(time.perf_counter() - t)
    encode = {1: [], 2: []}
    for _ in range(3):
        for threads in (1, 2):
            torch.set_num_threads(threads)
            t = time.perf_counter()
            models[True, 1].transform(test)
            encode[threads].append(time.perf_counter() - t)
    torch.set_num_threads(1)
    return ({k: float(np.median(v)) for k, v in epoch.items()},
            {k: float(np.median(v)) for k, v in encode.items()})


def rows_pursuit_epoch(model, X, batch_size):
    """CPU seconds of one epoch's pursuits as training runs them (from the CSR rows, one
    compiled call for the first step's table, :mod:`bpetopics.models.poissbpe.compiled.rows_pursuit`)."""
    from bpetopics.models.poissbpe.compiled.rows_pursuit import ThetaCopy, pursue

    beta = model.likelihood_.minibatch_params()
    t = time.process_time()
    for begin in range(0, X.shape[0], batch_size):
        pursue(X[begin:begin + batch_size], ThetaCopy.of_model(model, beta, model.step_))
    return time.process_time() - t


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=20)
    parser.add_argument("--vocab-size", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tomotopy-iterations", type=int, default=1000)
    parser.add_argument("--no-baselines", action="store_true", help="PoissBPE only")
    parser.add_argument("--out", default=None, help="folder for the table (markdown)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    # numpy's and scipy's BLAS on one thread too (gensim's E-step, the topic moves): every
    # model on one thread, as the table says (gensim's time was the same either way at T = 20)
    threadpool_limits(1, user_api="blas")

    splits = prepare_corpus("20newsgroups", vocab_size=args.vocab_size)
    train, test = splits["train"], splits["test"]
    X, T = train.counts.tocsr(), args.topics
    mm_rate, log_rate = machine_rates()
    rows = [("corpus", f"{X.shape[0]:,} train / {test.counts.shape[0]:,} test docs, "
                       f"W = {X.shape[1]:,}, {X.nnz:,} train non-zeros, T = {T}")]

    # The compiled kernels are built once per installation (numba caches them on disk);
    # a small fit first keeps that one-time cost out of the training time, and so does
    # one split-move 2-means (a 300-document fit makes no split check).
    start = time.process_time()
    two_means(sp.csr_matrix(np.eye(3)))
    compile_s = time.process_time() - start
    compile_s += timed_fit(PoissBPE(n_topics=T, epochs=1, device="cpu", progress=False), X[:300])
    rows.append(("one-time kernel build or cache load, first use (CPU s, not counted below)",
                 f"{compile_s:.1f}"))
    bpe = PoissBPE(n_topics=T, random_state=args.seed, device="cpu", progress=False)
    bpe_s = timed_fit(bpe, X)
    bpe_q = quality(bpe, test, train.vocabulary)
    epochs = [h["seconds"] for h in bpe.history_]
    rows += [("PoissBPE training (CPU s)", f"{bpe_s:.2f} ({len(epochs)} epochs, steady epoch "
                                           f"{np.median(epochs):.2f} s wall)"),
             ("PoissBPE NPMI / diversity / completion perplexity", bpe_q),
             ("PoissBPE CPU s per epoch per million non-zeros",
              f"{bpe_s / len(epochs) / X.nnz * 1e6:.3f}")]
    if X.shape[1] > 2000:
        # the cost per non-zero against 2,000 words, the same fit in this process
        small = prepare_corpus("20newsgroups", vocab_size=2000)["train"].counts.tocsr()
        small_bpe = PoissBPE(n_topics=T, random_state=args.seed, device="cpu", progress=False)
        small_s = timed_fit(small_bpe, small)
        small_rate = small_s / len(small_bpe.history_) / small.nnz
        rows.append((f"the same at 2,000 words (CPU s; per million non-zeros) / cost per non-zero "
                     f"at {X.shape[1]:,} words over it (target <= 1.3)",
                     f"{small_s:.2f}; {small_rate * 1e6:.3f} / "
                     f"{bpe_s / len(epochs) / X.nnz / small_rate:.2f}x"))
    if not args.no_baselines:
        lda = LDABaseline(n_topics=T, random_state=args.seed)
        lda_s = timed_fit(lda, X)
        lda_q = quality(lda, test, train.vocabulary)
        tomo = TomotopyLDA(T, args.tomotopy_iterations, args.seed)
        tomo_s = timed_fit(tomo, X)
        tomo_q = quality(tomo, test, train.vocabulary)
        rows += [("gensim LdaModel training (CPU s)", f"{lda_s:.1f}"),
                 ("gensim NPMI / diversity / completion perplexity", lda_q),
                 (f"tomotopy LDA ({args.tomotopy_iterations} iterations) training (CPU s)",
                  f"{tomo_s:.1f}"),
                 ("tomotopy NPMI / diversity / completion perplexity", tomo_q),
                 ("PoissBPE / gensim (target <= 0.33)", f"{bpe_s / lda_s:.2f}"),
                 ("PoissBPE / tomotopy (target <= 0.5)", f"{bpe_s / tomo_s:.2f}")]

    seconds, logs, fmas = pursuit_epoch(bpe, X, bpe.batch_size)
    floor = logs / log_rate + 2 * fmas / mm_rate
    rows += [("machine: one-thread matmul, log rate", f"{mm_rate / 1e9:.1f} GFLOP/s, "
                                                       f"{log_rate / 1e6:.0f} M logs/s"),
             ("pursuit per epoch, trained model (CPU s)", f"{seconds:.3f}"),
             ("pursuit useful work per epoch", f"{logs / 1e6:.1f} M logs, "
                                               f"{fmas / 1e9:.2f} G multiply-adds"),
             ("pursuit useful work per second", f"{2 * fmas / seconds / 1e9:.1f} GFLOP/s, "
                                                f"{logs / seconds / 1e6:.0f} M logs/s"),
             ("floor from those rates (s) / pursuit over floor (target <= 4)",
              f"{floor:.3f} / {seconds / floor:.2f}")]
    if kernels.available("cpu"):
        rows_s = rows_pursuit_epoch(bpe, X, bpe.batch_size)
        rows.append(("pursuit per epoch from the CSR rows, as training runs it (CPU s)",
                     f"{rows_s:.3f} ({seconds / rows_s:.2f}x faster than the above)"))
        saved, saved_usable = kernels.available, fused_pursuit.usable
        fused_pursuit.usable = lambda decoder, device: False
        try:
            stepwise_s = pursuit_epoch(bpe, X, bpe.batch_size)[0]
            kernels.available = lambda device: False
            torch_s = pursuit_epoch(bpe, X, bpe.batch_size)[0]
        finally:
            kernels.available, fused_pursuit.usable = saved, saved_usable
        rows.append(("later steps: packed torch / numba step by step / numba fused "
                     "(pursuit per epoch, CPU s)",
                     f"{torch_s:.3f} / {stepwise_s:.3f} / {seconds:.3f} "
                     f"(fused {torch_s / seconds:.1f}x and {stepwise_s / seconds:.1f}x faster)"))

    t = time.process_time()
    bpe.transform(test.counts)
    enc = time.process_time() - t
    rows.append(("encoding the test split (documents/s, one thread)",
                 f"{test.counts.shape[0] / enc:,.0f}"))
    before = two_thread_throughput()
    epoch, encode = threads_wall(X, test.counts, T)
    after = two_thread_throughput()
    in_order, one, two = (epoch[key] for key in SCHEDULES)
    rows += [("machine: two threads' throughput over one, matmul / log, before and after the epochs below",
              f"{before[0]:.2f}x / {before[1]:.2f}x, {after[0]:.2f}x / {after[1]:.2f}x"),
             ("steady epoch wall s, steps in order 1 thread / pipelined 1 thread / pipelined 2 threads",
              f"{in_order:.3f} / {one:.3f} / {two:.3f}"),
             ("steady epoch, pipelined, 2 threads over 1 (target >= 1.6x) / over in order on 1",
              f"{one / two:.2f}x / {in_order / two:.2f}x"),
             ("encoding the test split, wall s, 1 thread / 2 threads",
              f"{encode[1]:.3f} / {encode[2]:.3f} ({encode[1] / encode[2]:.2f}x)")]

    width = max(len(name) for name, _ in rows)
    table = "\n".join([f"| {'measure'.ljust(width)} | value |", f"|{'-' * (width + 2)}|-------|"]
                      + [f"| {name.ljust(width)} | {value} |" for name, value in rows])
    print(table)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        path = out / f"speed_T{T}_W{X.shape[1]}.md"
        path.write_text(table + "\n")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
