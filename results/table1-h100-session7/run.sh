#!/bin/bash
# One lent-GPU session: Table 1's BPE models on full splits for as many epochs as fit
# (held-out error per epoch), and the NCCL path of distributed training (one rank).
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD OMP_NUM_THREADS=3 BPETOPICS_DATA=$PWD/.gpu/data
D=.gpu/data; DL=${DEADLINE:-480}
{ date; nvidia-smi -L || true; python3 -c "import torch, numba, numpy, scipy, sklearn, click, safetensors; print('torch', torch.__version__, 'numba', numba.__version__, 'numpy', numpy.__version__)"; } > $OUT/env.txt 2>&1
nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv -l 15 > $OUT/util.csv 2>&1 &
B="python3 benchmarks/bench_image_epochs.py --data-root $D --device ${DEV:-cuda} $EXTRA --deadline $DL --epochs 30 --report 3,6,10,15,20,25,30"
$B --dataset mnist > $OUT/mnist.txt 2>&1 &
$B --dataset mnist '{"sigma": 0.25}' > $OUT/mnist_s025.txt 2>&1 &
$B --dataset scaled_mnist > $OUT/scaled.txt 2>&1 &
$B --dataset binary_mnist > $OUT/binary.txt 2>&1 &
timeout 200 python3 .gpu/nccl_check.py corpora/gpu20ng ${DEV:-cuda} > $OUT/nccl.txt 2>&1 &
wait %2 %3 %4 %5 %6
kill %1 2>/dev/null
tail -n 4 $OUT/*.txt
