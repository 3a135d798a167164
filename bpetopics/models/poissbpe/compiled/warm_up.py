"""Compile the CPU kernels ahead of a first training: ``bpetopics compile``.

numba compiles each kernel on its first call and keeps the machine code in its on-disk
cache, so a machine's first training would otherwise spend its first epoch compiling.
:func:`compile_kernels` runs what a default ``bpetopics train`` and ``encode`` run, on a
small planted corpus: PoissBPE's pipelined and in-order schedules, the end-of-epoch
topic moves, and encoding. Kernels already in the cache load in well under a second, so
running it again is cheap. ``make venv`` runs it after installing.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def planted_corpus(n_docs: int = 600, n_words: int = 400, n_topics: int = 8, seed: int = 0):
    """Documents drawn from ``n_topics`` planted topics over ``n_words`` words (Zipfian
    within each topic), 20-120 tokens each: a CSR matrix (n_docs, n_words) of counts."""
    rng = np.random.default_rng(seed)
    topics = np.stack([rng.permutation(1.0 / np.arange(1, n_words + 1)) for _ in range(n_topics)])
    topics /= topics.sum(1, keepdims=True)
    rows = []
    for _ in range(n_docs):
        mix = rng.dirichlet(np.full(n_topics, 0.2))
        rows.append(rng.multinomial(rng.integers(20, 121), mix @ topics))
    return sp.csr_matrix(np.asarray(rows, dtype=np.float64))


def compile_kernels(progress: bool = False) -> float:
    """Compile (or load from numba's cache) the kernels of a default text training and of
    encoding, for this machine; return the wall seconds spent compiling (0 when all came
    from the cache, or without numba).

    The model trains on a small planted corpus for two short fits (pipelined, in order)
    and encodes it; its results are thrown away.
    """
    import torch

    from bpetopics.bpe.compile_clock import CompileClock
    from bpetopics.models import PoissBPE

    X = planted_corpus()
    threads = torch.get_num_threads()
    with CompileClock().listening() as clock:
        for pipeline in (True, False):
            model = PoissBPE(n_topics=8, epochs=2, batch_size=128, pipeline=pipeline,
                             random_state=0, progress=progress, device="cpu")
            model.fit(X)
        model.transform(X)
        model.doc_topic(X)
    torch.set_num_threads(threads)
    return clock.seconds
