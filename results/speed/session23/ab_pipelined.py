"""A/B of the pipelined epoch: commit ae4fe12's (a thread pool, shares under a Python
lock) against this checkout's (claims, hand-off ahead), one process, alternated; the
same model from both, checked. Prints one markdown row: T, words, median epoch ms of
old/new on 1 and 2 threads, the two ratios, whether objective and bits agree.

Set up the old version beside it first (run from the repository root):

    mkdir -p /tmp/old && git show ae4fe12:bpetopics/core/rows_pursuit.py > /tmp/old/old_rows_pursuit.py
    git show ae4fe12:bpetopics/core/pipelined_steps.py \
        | sed 's/from bpetopics.core.rows_pursuit import/from old_rows_pursuit import/' > /tmp/old/old_pipelined_steps.py
    python results/speed/session23/ab_pipelined.py 20 2000      # T, vocabulary size [, epochs]
"""
import time, sys, os, numpy as np, torch
sys.path.insert(0, "/tmp/old")
from collections import defaultdict
from bpetopics.text.prepare import prepare_corpus
from bpetopics.models.poissbpe import PoissBPE
from bpetopics.core import pipelined_steps, kernels
import old_pipelined_steps
from threadpoolctl import threadpool_limits
threadpool_limits(1, user_api="blas")
torch.set_num_threads(1)
T = int(sys.argv[1]); W = int(sys.argv[2]); E = int(sys.argv[3]) if len(sys.argv) > 3 else 7
X = prepare_corpus("20newsgroups", vocab_size=W)["train"].counts.tocsr()
variants = [("old", 1), ("new", 1), ("old", 2), ("new", 2)]
models = {}
for v in variants:
    m = PoissBPE(n_topics=T, epochs=E, device="cpu", progress=False, random_state=0)
    m._setup(X); models[v] = m
res = defaultdict(list); out = defaultdict(list)
for e in range(E):
    for v in variants:
        m = models[v]
        torch.set_num_threads(v[1])
        t = time.perf_counter()
        with kernels.torch_on_one_thread(m.device_):
            r = (pipelined_steps if v[0] == "new" else old_pipelined_steps).run_epoch(m, m._batches(X), v[1])
        el = time.perf_counter() - t
        out[v].append(r)
        if e: res[v].append(el)
torch.set_num_threads(1)
med = {v: np.median(res[v]) for v in variants}
same = all(out[v] == out["old", 1] for v in variants)
print(f"| {T} | {X.shape[1]:,} | " + " | ".join(f"{med[v]*1e3:.1f}" for v in variants)
      + f" | {med['old', 1] / med['old', 2]:.2f}x | {med['new', 1] / med['new', 2]:.2f}x | {same} |", flush=True)
