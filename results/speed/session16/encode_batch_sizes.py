"""Encoding throughput of PoissBPE's transform by batch size (session 16), one thread, 20 Newsgroups' test split;
asserts the codes are the same for every batch size. Usage: python results/speed/session16/encode_batch_sizes.py T"""
import time, sys, numpy as np, torch
torch.set_num_threads(1)
from threadpoolctl import threadpool_limits
threadpool_limits(1, user_api="blas")
from bpetopics import PoissBPE
from bpetopics.text import prepare_corpus
T = int(sys.argv[1])
s = prepare_corpus("20newsgroups", vocab_size=2000)
X, Xt = s["train"].counts.tocsr(), s["test"].counts
m = PoissBPE(n_topics=T, random_state=0, device="cpu", progress=False).fit(X)
m.transform(Xt)
ref = m.transform(Xt)
for rep in range(2):
    for bs in (512, 1024, 2048, 4096, 8192):
        ts = []
        for _ in range(5):
            t = time.process_time(); c = m.transform(Xt, batch_size=bs); ts.append(time.process_time() - t)
        assert np.array_equal(c, ref)
        print(T, bs, f"{min(ts):.4f} s, {Xt.shape[0] / min(ts):,.0f} docs/s", flush=True)
