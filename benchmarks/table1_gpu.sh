#!/bin/bash
# Table 1 on a GPU machine: every model in a process of its own, all sharing the card, in
# one run of about 9 minutes (results/table1-full/ was made this way). The GPU machine needs
# the repository and the image data, which travels in .gpu/ (ignored by git):
#
#   bash benchmarks/table1_gpu.sh prepare   # .gpu/data <- ../shared/data images; with
#                                           # TABLE_TAR=<folder>/<parts>.tgz. also unpacks
#                                           # the pieces an earlier run returned
#   bash benchmarks/table1_gpu.sh run       # on the GPU machine, with .gpu/data/mnist,
#                                           # .gpu/data/cifar10 (and any earlier pieces) there
#   bash benchmarks/table1_gpu.sh merge     # once every piece has finished
#
# `run` trains Table 1 with every model in a process of its own (PIECES: "data set:model"
# pairs; default every model of the four data sets, eleven), all sharing the card, each
# started or resumed under PARTS/<data set>-<model>/ and stopped by SIGINT after
# TABLE_SECONDS (or what is left of TOTAL_SECONDS) with its finished model or last
# checkpoint kept. The table's options come from BUDGET (full), BPE_EPOCHS, VAE_EPOCHS,
# SIGMA and SHORTLIST (empty: the budget's pursuit, the shortlist of 32; SHORTLIST=0 asks
# for the exact one), and TF32=1 adds --tf32 (at sigma 0.1 TF32 raised GaussBPE's MSE by
# 0.7, results/table1-full/pursuit_check.md). TIMING=1 times both pursuits of both models
# instead. A CUDA smoke test (the tiny budget, one epoch) runs first; the pieces start only
# when it passes. It writes into $OUT, in files of at most 15 MiB: log.txt (versions, the
# smoke test, every piece's log, the merged table), table.tgz (the table's files, when every
# piece finished: `merge` runs there, so the runs need not come back for it) and
# <parts>.tgz.* (the pieces' records and runs, BPE runs before VAE runs, gzipped in at most
# four 15 MiB parts, for `prepare`; an archive cut there loses the last VAE runs (a
# whole-split MNIST VAE run is 12-15 MB) and says so in log.txt).
# Sizes on one card: a VAE's 100 epochs on a whole MNIST split take 190-280 s; with all
# eleven pieces sharing an NVIDIA H200, the BPE epochs took 243-317 s while the VAEs ran
# and 82-96 s after; the whole table at BPE_EPOCHS=2 TOTAL_SECONDS=560 finished within
# 477 s. Pieces that do not finish resume in the next run (after `prepare` with TABLE_TAR).
# `merge` joins the finished pieces into one table (`images table --resume`: nothing
# trains; it refuses while a piece is unfinished). BUDGET=tiny DEVICE=cpu OUT=/tmp/x tries
# it on a CPU.
set -u
mode=${1:-run}
BUDGET=${BUDGET:-full}; BPE_EPOCHS=${BPE_EPOCHS:-}; VAE_EPOCHS=${VAE_EPOCHS:-}
SIGMA=${SIGMA:-}; SHORTLIST=${SHORTLIST:-}
PIECES=${PIECES:-"mnist:gaussbpe scaled_mnist:gaussbpe cifar10:gaussbpe binary_mnist:bernbpe mnist:vae-fixed mnist:vae-learned scaled_mnist:vae-fixed scaled_mnist:vae-learned binary_mnist:gsvae cifar10:vae-fixed cifar10:vae-learned"}
TAG=table1-$BUDGET${BPE_EPOCHS:+-e$BPE_EPOCHS}${SIGMA:+-sigma$SIGMA}${SHORTLIST:+-shortlist$SHORTLIST}
PARTS=.gpu/$TAG-parts
OPTS="--budget $BUDGET ${BPE_EPOCHS:+--bpe-epochs $BPE_EPOCHS} ${VAE_EPOCHS:+--vae-epochs $VAE_EPOCHS}"
OPTS="$OPTS ${SIGMA:+--sigma $SIGMA}"
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
    TABLE=.gpu/$TAG
    python3 - "$PARTS" "$TABLE" $PIECES <<'PY' || exit 1
import json, shutil, sys
from pathlib import Path
from bpetopics.experiments.image_table_runs import RUNS, TABLE_FILE
parts, table, pieces = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3:]
def finished(p):     # its row and its run (a run cut from a call's return would train again)
    slug = p.replace(":", "-")
    return (parts / slug / RUNS / f"{slug}.json").is_file() and (parts / slug / RUNS / slug).is_dir()
missing = [p for p in pieces if not finished(p)]
if missing:
    sys.exit(f"not finished yet (or its run did not come back): {', '.join(missing)}; run those pieces again")
records = [json.loads((parts / p.replace(":", "-") / TABLE_FILE).read_text()) for p in pieces]
for r in records:              # each piece's record names its own data set
    r["budget"]["datasets"] = list(dict.fromkeys(p.split(":")[0] for p in pieces))
if any(r != records[0] for r in records):
    sys.exit("the pieces were started with different settings; merge pieces of one table")
(table / RUNS).mkdir(parents=True, exist_ok=True)
(table / TABLE_FILE).write_text(json.dumps(records[0], indent=1) + "\n")
for p in pieces:
    for src in (parts / p.replace(":", "-") / RUNS).iterdir():
        dst = table / RUNS / src.name
        if not dst.exists():
            (shutil.copytree if src.is_dir() else shutil.copy2)(src, dst)
PY
    datasets=$(for p in $PIECES; do echo "${p%%:*}"; done | awk '!seen[$0]++' | paste -sd, -)
    exec python3 -m bpetopics images table --data-root .gpu/data --out "$TABLE" $OPTS \
        ${SHORTLIST:+--shortlist $SHORTLIST} --datasets "$datasets" --device cpu --resume --no-progress
fi

export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD BPETOPICS_DATA=$PWD/.gpu/data
DEVICE=${DEVICE:-cuda}; TABLE_SECONDS=${TABLE_SECONDS:-400}; STARTED=$SECONDS
LOG=$OUT/log.txt
{ date; nvidia-smi -L 2>&1; python3 -c "import torch; print('torch', torch.__version__)"; } >> "$LOG"
TF32=$([ "${TF32:-0}" = 1 ] && echo --tf32)
# the smoke test: the tiny budget on this device, one epoch each
if ! timeout 150 python3 -m bpetopics images table --data-root .gpu/data --out /tmp/smoke-table --overwrite \
        --budget tiny --datasets mnist,binary_mnist --device "$DEVICE" --bpe-epochs 1 --vae-epochs 1 $TF32 \
        > "$OUT/smoke.txt" 2>&1; then
    { echo "smoke test failed: no piece started"; cat "$OUT/smoke.txt"; } >> "$LOG"; tail -n 20 "$LOG"; exit 1
fi
{ echo "== smoke test"; cat "$OUT/smoke.txt"; } >> "$LOG"; rm -f "$OUT/smoke.txt"
# TIMING=1: one epoch of 2,000 MNIST images alone on the card, each pursuit (exact, and the
# shortlist's with the exact stop) of GaussBPE (K = 800, sigma 0.3) and BernBPE (K = 200)
if [ "${TIMING:-0}" = 1 ]; then
    B="python3 benchmarks/bench_image_epochs.py --data-root .gpu/data --device $DEVICE --epochs 1 --report 1 --train 2000 --test 500"
    { echo "== timing"
      for s in null 32; do
          timeout 60 $B --dataset mnist "{\"n_bits\": 800, \"shortlist\": $s}" | tail -n 1
          timeout 60 $B --dataset binary_mnist "{\"shortlist\": $s}" | tail -n 1
      done; } >> "$LOG" 2>&1
fi
# TOTAL_SECONDS (the call's limit): the pieces stop in time for the return to be packed
[ -n "${TOTAL_SECONDS:-}" ] && TABLE_SECONDS=$((TOTAL_SECONDS - (SECONDS - STARTED) - 40))
[ "$TABLE_SECONDS" -lt 30 ] && { echo "no time left for the pieces ($TABLE_SECONDS s)" >> "$LOG"; PIECES=""; }
echo "pieces: $PIECES, $TABLE_SECONDS s, options $OPTS ${SHORTLIST:+--shortlist $SHORTLIST} $TF32" >> "$LOG"
# every piece at once, one model a process (the card and its 16 cores are far from full
# with one); a piece found under PARTS resumes
for p in $PIECES; do
    ds=${p%%:*}; model=${p#*:}; T=$PARTS/$ds-$model
    d=mnist; [ "$ds" = cifar10 ] && d=cifar10
    [ -d ".gpu/data/$d" ] || { echo "skipping $p: .gpu/data/$d was not carried" >> "$LOG"; continue; }
    RESUME=""; [ -f "$T/table.json" ] && RESUME="--resume"
    OMP_NUM_THREADS=${THREADS:-1} timeout -s INT "$TABLE_SECONDS" python3 -m bpetopics images table \
        --data-root .gpu/data --out "$T" $OPTS ${SHORTLIST:+--shortlist $SHORTLIST} --datasets "$ds" \
        --models "$model" --device "$DEVICE" $RESUME $TF32 --no-progress > "$OUT/piece-$ds-$model.txt" 2>&1 &
done
wait
for f in "$OUT"/piece-*.txt; do
    [ -e "$f" ] || continue
    { echo "== ${f#$OUT/piece-}"; grep -v -e '^|' -e 'epoch [0-9]*/[0-9]*: ' "$f"; } >> "$LOG"; rm -f "$f"
done
# every piece finished: the table is merged here and returned (table.tgz: table1.md, .csv,
# history.json, the figures), so the runs need not come back for it
if [ -n "$PIECES" ] && bash "$0" merge > "$OUT/merge.txt" 2>&1; then
    tar -czf "$OUT/table.tgz" -C ".gpu/$TAG" --exclude runs --exclude table.json . && echo "merged: table.tgz" >> "$LOG"
    grep '^|' "$OUT/merge.txt" >> "$LOG"
else
    echo "not merged: $(tail -n 1 "$OUT/merge.txt" 2>/dev/null)" >> "$LOG"
fi
rm -f "$OUT/merge.txt"
# the records first, then the BPE runs, so that a return cut at 64 MiB loses VAE runs
P=$(basename "$PARTS")
( cd .gpu && { find "$P" -maxdepth 2 -type f; find "$P"/*/runs -maxdepth 1 -type f
               find "$P"/*/runs -mindepth 1 -maxdepth 1 -type d -name '*bpe*'
               find "$P"/*/runs -mindepth 1 -maxdepth 1 -type d ! -name '*bpe*'; } | tar -c -T - ) \
    | gzip -1 | split -b 15m - "$OUT/$P.tgz."
for f in "$OUT/$P".tgz.a[e-z]; do
    [ -e "$f" ] && { echo "dropped $(basename "$f"): the archive is cut after 60 MiB" >> "$LOG"; rm -f "$f"; }
done
ls -la "$OUT" >> "$LOG"
grep -E '^== |: (MSE|NLL) |Error|error|finished|skipping|smoke|dropped|merged' "$LOG" | tail -n 80
