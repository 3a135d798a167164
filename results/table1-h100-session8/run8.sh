#!/bin/bash
# Session 8 on a lent GPU: (A) time the dense-pursuit fix alone on 20,000 MNIST images,
# (B) Table 1's BPE models on full splits for as many epochs as fit, K = 800 beside K = 200.
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD OMP_NUM_THREADS=3 BPETOPICS_DATA=$PWD/.gpu/data
D=.gpu/data; DL=${DEADLINE:-430}
{ date; nvidia-smi -L; python3 -c "import torch, numba; print('torch', torch.__version__, 'numba', numba.__version__)"; } > $OUT/env.txt 2>&1
A="python3 benchmarks/bench_image_epochs.py --data-root $D --device cuda --epochs 2 --report 1,2 --train 20000 --test 2000"
{ timeout 80 $A --dataset mnist; timeout 80 $A --dataset binary_mnist; } > $OUT/alone.txt 2>&1
nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv -l 20 > $OUT/util.csv 2>&1 &
B="python3 benchmarks/bench_image_epochs.py --data-root $D --device cuda --deadline $DL --epochs 30 --report 2,4,6,8,10,15,20,25,30"
$B --dataset mnist > $OUT/mnist.txt 2>&1 &
$B --dataset mnist '{"n_bits": 800}' > $OUT/mnist_k800.txt 2>&1 &
$B --dataset scaled_mnist > $OUT/scaled.txt 2>&1 &
$B --dataset binary_mnist > $OUT/binary.txt 2>&1 &
wait %2 %3 %4 %5
kill %1 2>/dev/null
cat $OUT/alone.txt; tail -n 6 $OUT/mnist*.txt $OUT/scaled.txt $OUT/binary.txt
