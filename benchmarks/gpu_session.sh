#!/bin/bash
# What a lent GPU should run next, prepared so that one device call (about 9 minutes) does
# it all. The device machine gets the working tree but not ../shared, so the image data
# travels in .gpu/ (ignored by git, and kept here between sessions):
#
#   bash benchmarks/gpu_session.sh prepare        # here: .gpu/data <- ../shared/data images;
#                                                 # TABLE_TAR=<files_at>/table1-full-parts.tgz.
#                                                 # unpacks the pieces a call returned
#   device run, carry [".gpu"]:  bash benchmarks/gpu_session.sh run
#     (the carry is capped at 64 MiB: with pieces under way, carry .gpu/data/mnist and the
#     three MNIST pieces, and CIFAR-10 (.gpu/data/cifar10 and its piece) in a call of its
#     own; `run` trains the data sets whose images it finds)
#   bash benchmarks/gpu_session.sh merge          # here, once every piece has finished
#
# `run` writes into $OUT (the device tool returns 8 files, 64 MiB in all): profile.txt
# (PROFILE=1, the default: one GaussBPE epoch profiled), log.txt (the versions; with
# TIMING=1 GaussBPE MNIST epoch times on 20,000 images at K = 200 and 800; then the `full`
# Table 1, one table per data set in parallel processes sharing the card, each started or
# resumed and stopped by SIGINT after TABLE_SECONDS with its finished models and last
# checkpoints kept) and table1-full-parts.tgz.* (the pieces, gzipped in 15 MiB parts, for
# `prepare`). `merge` moves the finished pieces' runs into .gpu/table1-full and writes the
# one table from them (nothing trains: it refuses while a model is unfinished).
# BUDGET=tiny DEVICE=cpu OUT=/tmp/x PROFILE=0 try it on a CPU. SIGMA=0.15 (run and merge)
# trains GaussBPE at that noise (`images table --sigma`) in pieces of their own
# (.gpu/table1-full-sigma0.15-parts): pieces resume only with the sigma they started with.
set -u
mode=${1:-run}
if [ "$mode" = prepare ]; then
    mkdir -p .gpu/data
    for d in mnist cifar10; do
        [ -d .gpu/data/$d ] || cp -r ../shared/data/$d .gpu/data/
    done
    if [ -n "${TABLE_TAR:-}" ]; then
        cat "$TABLE_TAR"* | tar -xz -C .gpu
    fi
    grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >> .git/info/exclude
    du -sh .gpu
    exit 0
fi

if [ "$mode" = merge ]; then
    BUDGET=${BUDGET:-full}; SIGMA=${SIGMA:-}
    PARTS=.gpu/table1-$BUDGET${SIGMA:+-sigma$SIGMA}-parts; TABLE=.gpu/table1-$BUDGET${SIGMA:+-sigma$SIGMA}
    python3 - "$BUDGET" "$PARTS" "$TABLE" "$SIGMA" <<'PY' || exit 1
import shutil, sys
from dataclasses import replace
from pathlib import Path
from bpetopics.experiments.image_table import BUDGETS, DATASETS
from bpetopics.experiments.image_table_runs import RUNS, open_table, table_models
budget, parts, table = BUDGETS[sys.argv[1]], Path(sys.argv[2]), Path(sys.argv[3])
if sys.argv[4]:
    budget = replace(budget, sigma=float(sys.argv[4]))
missing = [f"{ds}-{slug}" for ds in budget.datasets
           for _, slug, _, _ in table_models(DATASETS[ds][1], budget, 0, "cpu")
           if not (parts / ds / RUNS / f"{ds}-{slug}.json").is_file()]
if missing:
    sys.exit(f"not finished yet: {', '.join(missing)}; run the pieces again first")
open_table(table, budget, 0, overwrite=True)
for ds in budget.datasets:
    for src in (parts / ds / RUNS).iterdir():
        dst = table / RUNS / src.name
        if not dst.exists():
            (shutil.copytree if src.is_dir() else shutil.copy2)(src, dst)
PY
    exec python3 -m bpetopics images table --data-root .gpu/data --out "$TABLE" --budget "$BUDGET" \
        --device cpu --resume --no-progress ${SIGMA:+--sigma $SIGMA}
fi

export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD BPETOPICS_DATA=$PWD/.gpu/data
DEVICE=${DEVICE:-cuda}; BUDGET=${BUDGET:-full}; TABLE_SECONDS=${TABLE_SECONDS:-400}
LOG=$OUT/log.txt
{ date; nvidia-smi -L 2>&1; python3 -c "import torch; print('torch', torch.__version__)"; } > "$LOG"
E="python3 benchmarks/bench_image_epochs.py --data-root .gpu/data --device $DEVICE --dataset mnist --epochs 2 --report 2"
if [ "$BUDGET" = full ]; then E="$E --train 20000 --test 2000"; else E="$E --train 300 --test 100"; fi
if [ "${TIMING:-0}" = 1 ]; then     # timed in session 9 (results/table1-h100-session9/)
    { timeout 60 $E; timeout 75 $E '{"n_bits": 800}'; } >> "$LOG" 2>&1
fi
# where a GaussBPE epoch's time goes on the card (about 50 of its 88 ms a minibatch at
# K = 800 are neither matrix products nor memory traffic by our count): one epoch of
# 5,000 images profiled, the top operators by device and by host time
if [ "${PROFILE:-1}" = 1 ]; then
    P="python3 benchmarks/bench_image_epochs.py --data-root .gpu/data --device $DEVICE --dataset mnist"
    timeout 90 $P --epochs 2 --report 2 --train 5000 --test 500 --profile '{"n_bits": 800}' > "$OUT/profile.txt" 2>&1
fi

# One table per data set, all at once (each process one model at a time; the card and its
# 16 cores are far from full with one). `merge` joins the finished pieces into one table.
# TF32 products for the epochs after session 9's (1.45x at the same MSE, README); TF32=0: float32
TF32=$([ "${TF32:-1}" = 1 ] && echo --tf32)
SIGMA=${SIGMA:-}
PARTS=.gpu/table1-$BUDGET${SIGMA:+-sigma$SIGMA}-parts
DATASETS=${DATASETS:-$(python3 -c "from bpetopics.experiments.image_table import BUDGETS; print(' '.join(BUDGETS['$BUDGET'].datasets))")}
# only the data sets whose images were carried (the carry decides: see the header)
kept=""
for ds in $DATASETS; do
    d=mnist; [ "$ds" = cifar10 ] && d=cifar10
    if [ -d ".gpu/data/$d" ]; then kept="$kept $ds"; else echo "skipping $ds: .gpu/data/$d was not carried" >> "$LOG"; fi
done
DATASETS=$kept
for ds in $DATASETS; do
    T=$PARTS/$ds; RESUME=""
    [ -f "$T/table.json" ] && RESUME="--resume"
    OMP_NUM_THREADS=4 timeout -s INT "$TABLE_SECONDS" python3 -m bpetopics images table --data-root .gpu/data \
        --out "$T" --budget "$BUDGET" --datasets "$ds" --device "$DEVICE" $RESUME $TF32 ${SIGMA:+--sigma $SIGMA} \
        --no-progress \
        > "$OUT/table-$ds.txt" 2>&1 &
done
wait
for ds in $DATASETS; do
    { echo "== $ds"; cat "$OUT/table-$ds.txt"; } >> "$LOG"; rm -f "$OUT/table-$ds.txt"
done
# the tables' records and the BPE runs first, so that a return cut at 64 MiB loses VAEs
P=$(basename "$PARTS")
( cd .gpu && { find "$P" -maxdepth 2 -type f; find "$P"/*/runs -maxdepth 1 -type f
               find "$P"/*/runs -mindepth 1 -maxdepth 1 -type d -name '*bpe*'
               find "$P"/*/runs -mindepth 1 -maxdepth 1 -type d ! -name '*bpe*'; } | tar -c -T - ) \
    | gzip -1 | split -b 15m - "$OUT/$P.tgz."
ls -la "$OUT"
grep -E '^\| |^== |epoch|Error|error' "$LOG" | tail -n 60
