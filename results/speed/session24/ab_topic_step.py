"""Session 24: a steady epoch with the topic logits' Adam step and next topics in one pass
(core/topic_step.py, PoissBPE.fused_topic_step = True) against the three passes before
(False), two models from the same start in one process, one thread, epochs alternated
(the first not counted), median CPU s.

Usage: python results/speed/session24/ab_topic_step.py T VOCAB_SIZE [REPEATS]
(VOCAB_SIZE 50000: all 15,609 words; offline data as in README)."""
import time, sys, numpy as np, torch
from bpetopics.text import prepare_corpus
from bpetopics import PoissBPE
from threadpoolctl import threadpool_limits
threadpool_limits(1, user_api="blas"); torch.set_num_threads(1)
T = int(sys.argv[1]); W = int(sys.argv[2]); reps = int(sys.argv[3]) if len(sys.argv) > 3 else 8
X = prepare_corpus("20newsgroups", vocab_size=W)["train"].counts.tocsr()
ms = {}
for on in (False, True):
    m = PoissBPE(n_topics=T, epochs=40, device="cpu", progress=False, random_state=0); m._setup(X)
    m.fused_topic_step = on; ms[on] = m
res = {False: [], True: []}
for r in range(reps + 1):
    for on in (False, True):
        c = time.process_time(); ms[on]._run_epoch(X, ms[on]._batches(X)); el = time.process_time() - c
        if r: res[on].append(el)
a, b = np.median(res[False]), np.median(res[True])
print(f"T {T} W {W} nnz {X.nnz}: epoch CPU off {a*1e3:.1f} on {b*1e3:.1f} ms ({a/b:.3f}x); per Mnnz off {a/X.nnz*1e6:.3f} on {b/X.nnz*1e6:.3f}")
print("objective", ms[False].history_[-1]["objective"], ms[True].history_[-1]["objective"])
