"""How much a second busy thread slows this one's theta steps (20 Newsgroups, T = 20).

The theta steps of one epoch's minibatches (codes pursued once beforehand, the same
steps each time) are timed on this thread alone, beside a second thread running a
compiled loop that holds no lock (numba, ``nogil``), beside a second thread pursuing
minibatches as training does (compiled calls with a little Python between them), and
alone again. On a machine whose two threads share nothing the first three agree; the
slow-down measures what the pipelined schedule's two threads cost each other.

Run: ``python benchmarks/bench_thread_contention.py`` (offline data as in docs/getting-started.md).
"""

from __future__ import annotations

import threading
import time

import numpy as np
import torch
from numba import njit

from bpetopics import PoissBPE
from bpetopics.models.poissbpe.compiled.rows_pursuit import RowsPursuit, ThetaCopy
from bpetopics.text import prepare_corpus


@njit(nogil=True, fastmath=True)
def _squares(a, reps):  # pragma: no cover - compiled
    total = 0.0
    for _ in range(reps):
        for i in range(a.shape[0]):
            total += a[i] * a[i]
    return total


def main() -> None:
    torch.set_num_threads(1)
    X = prepare_corpus("20newsgroups", vocab_size=2000)["train"].counts
    model = PoissBPE(n_topics=20, epochs=2, device="cpu", progress=False).fit(X[:3000])
    rng = np.random.default_rng(0)
    batches = [X[rng.choice(X.shape[0], 64, replace=False)] for _ in range(X.shape[0] // 64)]
    beta = model.likelihood_.minibatch_params()
    pursued = [RowsPursuit(B, ThetaCopy.of_model(model, beta, model.step_)).finish().result() for B in batches]
    a = np.random.default_rng(1).random(65536).astype(np.float32)
    _squares(a, 1)
    stop = threading.Event()

    def compiled_loop():
        while not stop.is_set():
            _squares(a, 200)

    def pursuits():
        while not stop.is_set():
            for B in batches[:20]:
                RowsPursuit(B, ThetaCopy.of_model(model, beta, model.step_)).finish()

    def theta_epoch():
        t = time.perf_counter()
        for B, (batch, codes, _) in zip(batches, pursued):
            model._theta_step(B, batch, codes, beta, 1.0)
        return time.perf_counter() - t

    theta_epoch()
    print("| second thread | theta steps of an epoch, ms (best of 3) |\n|---|---:|")
    for name, work in (("none", None), ("compiled loop, no lock", compiled_loop),
                       ("pursuing minibatches", pursuits), ("none", None)):
        stop.clear()
        other = threading.Thread(target=work) if work else None
        if other:
            other.start()
            time.sleep(0.05)
        best = min(theta_epoch() for _ in range(3))
        stop.set()
        if other:
            other.join()
        print(f"| {name} | {best * 1000:.1f} |", flush=True)


if __name__ == "__main__":
    main()
