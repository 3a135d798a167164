"""Corpora larger than memory (issue #15): build time, build memory, training memory.

Writes an N-document JSONL corpus by resampling 20 Newsgroups documents (train and test,
raw, with replacement, seeded), then prints a markdown table of:

* the sharded corpus build (``bpetopics corpus --format sharded``'s library call) with
  1 and with 2 worker processes: wall seconds, CPU seconds (the process and its
  workers), peak resident memory of the main process and of the largest worker;
* one training epoch of PoissBPE (defaults, CPU, one torch thread) read from the shards
  at a small size (the first ``--small`` documents, built as their own corpus) and at N:
  wall and CPU seconds, seconds per million non-zeros, peak resident memory, and the
  ratio of the two peaks (issue #15 asks for at most 1.5x from 100 k to 1 M documents);
* data-parallel training at N: ``bpetopics train --nproc P`` on the sharded corpus for
  P = 1 and 2 (``--processes``), one torch thread a process, ``--process-epochs`` epochs
  of ``--process-batch`` documents a step; the last epoch's wall seconds (history.csv,
  rank 0's clock: the first epoch pays for start-up) and the speed-up (issue #15 asks
  for >= 1.7x with 2 processes on the 2 cores here);
* the final encoding of every training document from that model's checkpoint, as
  ``bpetopics train`` does it for a sharded corpus (block by block, sparse code shards:
  ``runs/sharded_codes.write_codes``) against the in-memory way (``transform`` into a
  dense N x K array, then the N x T mixtures, as ``save_run`` does for a corpus in
  memory): CPU seconds and the peak memory each adds over the loaded model and corpus.

Each measurement runs in a fresh subprocess. Peak memory of a process: ``VmHWM`` of
/proc/self/status (``ru_maxrss`` of a subprocess starts at its parent's size when it
forked, which hid these peaks under the parent's); of the build's workers (forked by
the build): ``ru_maxrss`` of its children; the encoding's peak is measured from the size
before it (``clear_refs``).

Run: ``python benchmarks/bench_stream.py [--docs 1000000] [--small 100000] [--workdir DIR]
[--parts build,train,processes,encode]`` (offline data: SCIKIT_LEARN_DATA, NLTK_DATA as in
docs/getting-started.md). Disk: about 2 KB per document for the JSONL, plus the shards. ``--docs 20000
--small 5000`` is a quick check; ``--parts processes`` (or ``train,encode``) reuses the
shards an earlier run built in the work directory.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path


def _mib(kib: int) -> float:
    return kib / 1024   # ru_maxrss is in KiB on Linux


def _status_mib(field: str) -> float:
    """``VmHWM`` (peak) or ``VmRSS`` (now) of this process from /proc/self/status, MiB.
    Unlike ``ru_maxrss``, which a child started by ``subprocess`` inherits from the
    parent's size at fork, these belong to the process's own memory map."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _reset_peak() -> None:
    """Start ``VmHWM`` again from the current size (Linux >= 4.0: clear_refs 5)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


def write_jsonl(path: Path, n_docs: int, seed: int = 0) -> None:
    """N documents drawn with replacement from 20 Newsgroups (train + test), one JSON
    object a line: text, id, label (its newsgroup)."""
    import numpy as np
    from sklearn.datasets import fetch_20newsgroups

    bunch = fetch_20newsgroups(subset="all", remove=(), shuffle=False)
    rng = np.random.default_rng(seed)
    tmp = path.with_suffix(".partial")
    with open(tmp, "w", encoding="utf-8") as f:
        for begin in range(0, n_docs, 100_000):
            picks = rng.integers(len(bunch.data), size=min(100_000, n_docs - begin))
            f.write("".join(json.dumps({"text": bunch.data[j], "id": f"d{begin + i}",
                                        "label": bunch.target_names[bunch.target[j]]}) + "\n"
                            for i, j in enumerate(picks)))
    tmp.replace(path)


# ------------------------------------------------------------------ child processes
def child_build(source: str, out: str, jobs: int) -> dict:
    from bpetopics.text import TextPipeline
    from bpetopics.text.streaming import build_sharded

    wall, cpu = time.perf_counter(), time.process_time()
    manifest = build_sharded(source, out, TextPipeline(), jobs=jobs, label_field="label", id_field="id",
                             overwrite=True)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu + kids.ru_utime + kids.ru_stime,
            "cpu_main": time.process_time() - cpu, "peak_main": _status_mib("VmHWM"), "peak_worker": _mib(kids.ru_maxrss),
            "docs": manifest["n_docs"], "nnz": manifest["nnz"]}


def child_train(corpus: str, checkpoint: str) -> dict:
    import torch

    from bpetopics import PoissBPE
    from bpetopics.runs import save_checkpoint
    from bpetopics.text.sharded import open_sharded

    torch.set_num_threads(1)
    counts = open_sharded(corpus).counts
    after_open = _status_mib("VmHWM")
    wall, cpu = time.perf_counter(), time.process_time()
    model = PoissBPE(epochs=1, device="cpu", progress=False).fit(counts, encode=False)   # encoding: below
    result = {"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu,
              "peak": _status_mib("VmHWM"), "after_open": after_open,
              "docs": counts.shape[0], "nnz": counts.nnz, "epoch_seconds": model.history_[-1]["seconds"]}
    save_checkpoint(checkpoint, model)
    return result


def child_encode(corpus: str, checkpoint: str, how: str) -> dict:
    """Encode every document of ``corpus`` with the checkpoint's model: ``sharded`` (the
    code shards a sharded run writes) or ``dense`` (transform + mixtures in memory)."""
    import tempfile

    import numpy as np
    import torch

    from bpetopics.runs import load_checkpoint
    from bpetopics.runs.sharded_codes import write_codes
    from bpetopics.text.sharded import open_sharded

    torch.set_num_threads(1)
    counts = open_sharded(corpus).counts
    model, _ = load_checkpoint(checkpoint, device="cpu")
    model.transform(counts[np.arange(min(64, counts.shape[0]))])   # first-call set-up out of the measure
    base = _status_mib("VmRSS")
    _reset_peak()
    cpu = time.process_time()
    with tempfile.TemporaryDirectory(dir=Path(checkpoint).parent) as folder:
        if how == "sharded":
            _, distinct = write_codes(folder, model, counts)
            bits = float(distinct.documents @ distinct.codes.sum(1)) / distinct.n_docs
        else:
            codes = model.transform(counts)
            mixtures = model.code_topic(codes).astype(np.float32)      # what save_run keeps
            assert mixtures.shape[0] == codes.shape[0]
            bits = float(codes.sum(1).mean())
    peak = _status_mib("VmHWM")
    return {"cpu": time.process_time() - cpu, "base": base, "peak": peak, "added": peak - base, "bits": bits}


def train_processes(corpus: Path, nproc: int, epochs: int, batch_size: int) -> dict:
    """``bpetopics train --nproc P`` (one torch thread a process) on a sharded corpus:
    the last epoch's wall seconds from the run's history.csv (rank 0's clock)."""
    import csv
    import os
    import tempfile

    env = dict(os.environ, OMP_NUM_THREADS="1")
    with tempfile.TemporaryDirectory(dir=corpus.parent) as folder:
        out = Path(folder) / "run"
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "bpetopics", "train", str(corpus), "--epochs", str(epochs),
                               "--batch-size", str(batch_size), "--nproc", str(nproc), "--out", str(out)],
                              capture_output=True, text=True, env=env)
        if done.returncode != 0:
            raise SystemExit(f"bpetopics train --nproc {nproc} failed:\n{done.stderr}")
        with open(out / "history.csv") as f:
            epochs_s = [float(row["seconds"]) for row in csv.DictReader(f)]
    return {"epochs": epochs_s, "command": time.perf_counter() - start}


def _run_child(*args) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", *map(str, args)], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"child {args} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=1_000_000, help="N, documents of the large corpus")
    parser.add_argument("--small", type=int, default=100_000, help="documents of the small training corpus")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/bpetopics-bench-stream"))
    parser.add_argument("--jobs", default="1,2", help="worker counts of the build to time (comma-separated)")
    parser.add_argument("--parts", default="build,train,processes,encode",
                        help="what to measure (comma-separated); without build, the shards of an earlier run are used")
    parser.add_argument("--processes", default="1,2", help="process counts of the data-parallel epochs")
    parser.add_argument("--process-epochs", type=int, default=2)
    parser.add_argument("--process-batch", type=int, default=4096, help="documents a step of the data-parallel epochs")
    parser.add_argument("--repeats", type=int, default=3,
                        help="times the process counts are measured, alternated (the host's noise moves single runs)")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, *rest = args.child
        result = (child_build(rest[0], rest[1], int(rest[2])) if kind == "build" else
                  child_train(rest[0], rest[1]) if kind == "train" else child_encode(*rest))
        print(json.dumps(result))
        return

    work = args.workdir
    parts = set(args.parts.split(","))
    work.mkdir(parents=True, exist_ok=True)
    big, small = work / f"docs-{args.docs}.jsonl", work / f"docs-{args.small}.jsonl"
    builds = {}
    if "build" in parts:
        for path, n in ((big, args.docs), (small, args.small)):
            if not path.exists():
                start = time.perf_counter()
                write_jsonl(path, n)
                print(f"wrote {path} ({path.stat().st_size / 2**20:,.0f} MiB) in {time.perf_counter() - start:.0f} s",
                      file=sys.stderr)
        builds = {jobs: _run_child("build", big, work / f"sharded-{args.docs}", jobs)
                  for jobs in map(int, args.jobs.split(","))}
        _run_child("build", small, work / f"sharded-{args.small}", 1)
    for n in (args.small, args.docs):
        if not (work / f"sharded-{n}").exists():
            raise SystemExit(f"no sharded corpus {work / f'sharded-{n}'}: run with --parts build first")
    trains = {n: _run_child("train", work / f"sharded-{n}", work / f"model-{n}.safetensors")
              for n in (args.small, args.docs)} if parts & {"train", "encode"} else {}
    processes = [{p: train_processes(work / f"sharded-{args.docs}", p, args.process_epochs, args.process_batch)
                  for p in map(int, args.processes.split(","))}
                 for _ in range(args.repeats)] if "processes" in parts else []
    encodes = {(n, how): _run_child("encode", work / f"sharded-{n}", work / f"model-{n}.safetensors", how)
               for n in (args.small, args.docs) for how in ("sharded", "dense")} if "encode" in parts else {}

    if builds:
        print_builds(builds, args.docs)
    if trains:
        print_trains(trains, args.docs, args.small)
    if processes:
        print_processes(processes, args)
    if encodes:
        print_encodes(encodes)


def print_builds(builds: dict, n_docs: int) -> None:
    first = next(iter(builds.values()))
    print(f"## Sharded corpus build, {n_docs:,} documents resampled from 20 Newsgroups "
          f"({first['docs']:,} kept, {first['nnz']:,} non-zeros)\n")
    print("| jobs | wall s | CPU s (all) | CPU s (main process) | docs/s (wall) | peak RSS main MiB | "
          "peak RSS worker MiB |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for jobs, b in builds.items():
        worker = f"{b['peak_worker']:.0f}" if jobs > 1 else "-"
        print(f"| {jobs} | {b['wall']:.1f} | {b['cpu']:.1f} | {b['cpu_main']:.1f} | {n_docs / b['wall']:,.0f} | "
              f"{b['peak_main']:.0f} | {worker} |")
    if 1 in builds and 2 in builds:
        print(f"\nspeed-up with 2 jobs (wall): {builds[1]['wall'] / builds[2]['wall']:.2f}x (only meaningful on "
              "idle cores; the main process's CPU share bounds it)")
    print()


def print_trains(trains: dict, n_docs: int, n_small: int) -> None:
    print("## One training epoch from the shards (PoissBPE defaults, CPU, 1 torch thread)\n")
    print("| documents | non-zeros | wall s | CPU s | us per non-zero | RSS after open MiB | peak RSS MiB |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for n, t in trains.items():
        print(f"| {t['docs']:,} | {t['nnz']:,} | {t['wall']:.1f} | {t['cpu']:.1f} | {1e6 * t['cpu'] / t['nnz']:.2f} | "
              f"{t['after_open']:.0f} | {t['peak']:.0f} |")
    ratio = trains[n_docs]["peak"] / trains[n_small]["peak"]
    print(f"\npeak memory of training, {n_docs:,} vs {n_small:,} documents: {ratio:.2f}x "
          "(the epoch alone; the final encoding is measured below)\n")


def print_processes(repeats: list, args) -> None:
    import os
    import statistics

    transport = "gloo" if os.environ.get("BPETOPICS_DIST_SUM", "").lower() == "gloo" else "shared memory"
    print(f"## Data-parallel training on the {args.docs:,}-document shards (`bpetopics train --nproc P "
          f"--batch-size {args.process_batch} --epochs {args.process_epochs}`, 1 torch thread a process, "
          f"the step's sums through {transport}; {len(repeats)} round(s), the process counts alternated)\n")
    print("| round | processes | " + " | ".join(f"epoch {e + 1} wall s" for e in range(args.process_epochs)) +
          " | speed-up, last epoch | command wall s (with start-up and the final encoding) |")
    print("|---:|---:|" + "---:|" * args.process_epochs + "---:|---:|")
    speedups = {}
    for i, processes in enumerate(repeats):
        one = processes.get(1)
        for p, r in processes.items():
            speed = ""
            if one is not None and p != 1:
                speedups.setdefault(p, []).append(one["epochs"][-1] / r["epochs"][-1])
                speed = f"{speedups[p][-1]:.2f}x"
            print(f"| {i + 1} | {p} | " + " | ".join(f"{s:.1f}" for s in r["epochs"]) +
                  f" | {speed} | {r['command']:.1f} |")
    for p, values in speedups.items():
        print(f"\nspeed-up with {p} processes, last epoch: median **{statistics.median(values):.2f}x** "
              f"(range {min(values):.2f}-{max(values):.2f}x)")
    print(f"\nload average (1 min) after: {os.getloadavg()[0]:.2f} (above 0: other work shared the cores)\n")


def print_encodes(encodes: dict) -> None:
    print("## The final encoding of every document (from the epoch's checkpoint; 1 torch thread)\n")
    print("| documents | how | CPU s | RSS before MiB | peak RSS MiB | added MiB | mean active bits |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    for (n, how), e in encodes.items():
        label = "code shards (sharded run)" if how == "sharded" else "dense N x K + N x T (in memory)"
        print(f"| {n:,} | {label} | {e['cpu']:.1f} | {e['base']:.0f} | {e['peak']:.0f} | {e['added']:.0f} | "
              f"{e['bits']:.2f} |")


if __name__ == "__main__":
    main()
