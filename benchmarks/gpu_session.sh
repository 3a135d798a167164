#!/bin/bash
# What a lent GPU should run next, prepared so that one device call (about 9 minutes) does
# it all. The device machine gets the working tree but not ../shared, so the image data
# travels in .gpu/ (ignored by git):
#
#   bash benchmarks/gpu_session.sh prepare        # here: .gpu/data <- ../shared/data images,
#                                                 # .gpu/table1-full <- a previous session's
#                                                 # table, unpacked from TABLE_TAR if given
#   device run, carry [".gpu"]:  bash benchmarks/gpu_session.sh run
#
# `run` writes into $OUT (the device tool returns 8 files, 64 MiB in all): log.txt (the
# versions; GaussBPE MNIST epoch times on 20,000 images at K = 200 and 800, to compare
# with results/table1-h100-session8/: 13.1 s at K = 200 before the GPU candidate-pass
# budget; the `full` Table 1, started or resumed, stopped by SIGINT after TABLE_SECONDS
# with its finished models and last checkpoints kept) and table1-full.tar.* (that table
# folder in 15 MiB parts: `TABLE_TAR=<files_at>/table1-full.tar. bash
# benchmarks/gpu_session.sh prepare` puts it back for the next session's --resume; the
# whole table with CIFAR-10's VAEs comes to about 60 MiB). BUDGET=tiny DEVICE=cpu
# OUT=/tmp/x try it on a CPU.
set -u
mode=${1:-run}
if [ "$mode" = prepare ]; then
    mkdir -p .gpu/data
    for d in mnist cifar10; do
        [ -d .gpu/data/$d ] || cp -r ../shared/data/$d .gpu/data/
    done
    if [ -n "${TABLE_TAR:-}" ]; then
        cat "$TABLE_TAR"* | tar -x -C .gpu
    fi
    grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >> .git/info/exclude
    du -sh .gpu
    exit 0
fi

export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD BPETOPICS_DATA=$PWD/.gpu/data
DEVICE=${DEVICE:-cuda}; BUDGET=${BUDGET:-full}; TABLE_SECONDS=${TABLE_SECONDS:-420}
LOG=$OUT/log.txt
{ date; nvidia-smi -L 2>&1; python3 -c "import torch; print('torch', torch.__version__)"; } > "$LOG"
E="python3 benchmarks/bench_image_epochs.py --data-root .gpu/data --device $DEVICE --dataset mnist --epochs 2 --report 2"
if [ "$BUDGET" = full ]; then E="$E --train 20000 --test 2000"; else E="$E --train 300 --test 100"; fi
{ timeout 90 $E; timeout 120 $E '{"n_bits": 800}'; } >> "$LOG" 2>&1

TABLE=.gpu/table1-$BUDGET
RESUME=""
[ -f "$TABLE/table.json" ] && RESUME="--resume"
timeout -s INT "$TABLE_SECONDS" python3 -m bpetopics images table --data-root .gpu/data --out "$TABLE" \
    --budget "$BUDGET" --device "$DEVICE" $RESUME --no-progress >> "$LOG" 2>&1
echo "table exit status $? (124: stopped at the deadline, resumable with the same command)" >> "$LOG"
tar -c -C .gpu "$(basename "$TABLE")" | split -b 15m - "$OUT/$(basename "$TABLE").tar."
ls -la "$OUT"
grep -E '^\| mnist|exit status|GaussBPE|BernBPE' "$LOG" | tail -n 20
