"""How other work on the machine inflates each model's training CPU time (20 Newsgroups).

PoissBPE, tomotopy LDA (200 iterations) and gensim's LdaModel train at T topics on one
thread, alone and beside co-runner processes started for the fits:

  alu         one process spinning on a small array (compute, no memory traffic)
  memory      one process copying two 512 MB arrays back and forth (memory bandwidth,
              and the shared cache evicted)
  2 alu       two spinning processes: with the fit, more busy threads than a 2-core
              machine has, so the fit is time-sliced

Prints, per model and condition, the training CPU seconds (process time, the fastest of
--repeats fits) and their ratio to the idle fit. CPU time, not wall time: a time-sliced
fit is not charged for the time it waits, only for what it loses to cold caches.

Run: ``python -m benchmarks co_runners [--topics 20] [--repeats 2] [--max-docs N]``
(offline data as in docs/getting-started.md; set OMP_NUM_THREADS=1 and the like).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_quality_grid import one_thread, warm_up  # noqa: E402
from bpetopics.experiments.text_comparison import TEXT_MODELS  # noqa: E402
from bpetopics.experiments.text_setup import comparison_data  # noqa: E402

MODELS = ("PoissBPE", "Tomotopy-200", "LDA")
NAMES = {"Tomotopy-200": "tomotopy LDA, 200 iterations", "LDA": "gensim LdaModel"}
SPIN = ("import numpy as np\na = np.random.rand(2000).astype(np.float32)\n"
        "while True:\n    a = a * np.float32(1.0000001) + np.float32(1e-9)\n")
STREAM = ("import numpy as np\na = np.ones(64_000_000)\nb = np.empty_like(a)\n"
          "while True:\n    np.copyto(b, a)\n    np.copyto(a, b)\n")
CONDITIONS = {"idle": (), "alu": (SPIN,), "memory": (STREAM,), "2 alu": (SPIN, SPIN)}


def fit_seconds(name: str, X, n_topics: int) -> float:
    model = TEXT_MODELS[name].make(n_topics, 0, {})
    start = time.process_time()
    model.fit(X)
    return time.process_time() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=2, help="Fits per model and condition (the fastest counts).")
    parser.add_argument("--max-docs", type=int, default=None, help="Documents per split (default: all).")
    args = parser.parse_args()
    one_thread()
    X = comparison_data("20newsgroups", {"max_docs": args.max_docs, "random_state": 0}).train.counts
    warm_up(X, args.topics, list(MODELS))
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    best = {}
    for _ in range(args.repeats):
        for condition, programs in CONDITIONS.items():
            runners = [subprocess.Popen([sys.executable, "-c", code], env=env) for code in programs]
            try:
                if runners:
                    time.sleep(2.0)                      # the co-runners under way
                for name in MODELS:
                    seconds = fit_seconds(name, X, args.topics)
                    best[name, condition] = min(best.get((name, condition), float("inf")), seconds)
            finally:
                for runner in runners:
                    runner.kill()
                    runner.wait()
    print(f"20 Newsgroups, {X.shape[0]:,} training documents, T = {args.topics}, one thread; "
          f"training CPU s, the fastest of {args.repeats}, and the ratio to idle\n")
    print("| model | " + " | ".join(CONDITIONS) + " |")
    print("|---|" + "---:|" * len(CONDITIONS))
    for name in MODELS:
        idle = best[name, "idle"]
        cells = [f"{best[name, c]:.2f} ({best[name, c] / idle:.2f}x)" for c in CONDITIONS]
        print(f"| {NAMES.get(name, name)} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
