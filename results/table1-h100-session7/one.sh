export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD BPETOPICS_DATA=$PWD/.gpu/data
B="python3 benchmarks/bench_image_epochs.py --data-root .gpu/data --device cuda --epochs 2 --report 2 --train 20000 --test 2000"
$B --dataset mnist > $OUT/mnist_alone.txt 2>&1
$B --dataset binary_mnist --deadline 60 > $OUT/binary_alone.txt 2>&1
python3 - > $OUT/prof.txt 2>&1 <<'PY'
import torch
from torch.profiler import profile, ProfilerActivity
from bpetopics.experiments.image_table import load_split
from bpetopics.models import GaussBPE
X, _ = load_split("mnist", "train", ".gpu/data", 4096, 0)
m = GaussBPE(n_bits=200, batch_size=128, lr=1e-3, epochs=2, random_state=0, device="cuda", progress=False)
m.partial_fit(X)
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
    m.partial_fit(X)
print(p.key_averages().table(sort_by="cuda_time_total", row_limit=25))
print(p.key_averages().table(sort_by="cpu_time_total", row_limit=15))
PY
