"""NCCL smoke check (one GPU, so one rank): PoissBPE trained through TorchGroup with the
'cpu:gloo,cuda:nccl' backend equals plain CUDA training; prints epoch seconds."""
import os, sys, time
os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="29533", RANK="0", WORLD_SIZE="1", LOCAL_RANK="0")
import torch, torch.distributed as dist
from bpetopics.text.corpus import load_splits
from bpetopics.models import PoissBPE
from bpetopics.runs.distributed import init_group, distributed_fit, close_group
device = sys.argv[2] if len(sys.argv) > 2 else "cuda"
X = load_splits(sys.argv[1])["train"].counts
print("docs", X.shape, "device", device, torch.cuda.get_device_name() if torch.cuda.is_available() else "")
def make():
    return PoissBPE(n_topics=20, epochs=3, random_state=0, device=device, progress=False)
t = time.perf_counter(); a = make().fit(X); ta = time.perf_counter() - t
group = init_group(device)
print("backend", dist.get_backend(), "world", dist.get_world_size())
t = time.perf_counter(); b = distributed_fit(make(), X, group); tb = time.perf_counter() - t
close_group()
import numpy as np
for name in ("topic_word_",):
    ca, cb = np.asarray(getattr(a, name)), np.asarray(getattr(b, name))
    print(name, ca.shape, "max abs diff", float(np.abs(ca - cb).max()))
print("codes equal:", bool((a.transform(X) != b.transform(X)).nnz == 0) if hasattr(a.transform(X), "nnz") else bool((a.transform(X) == b.transform(X)).all()))
print("seconds plain / via group:", round(ta, 2), round(tb, 2))
print("history plain", [round(h["seconds"], 2) for h in a.history_])
print("history group", [round(h["seconds"], 2) for h in b.history_])
