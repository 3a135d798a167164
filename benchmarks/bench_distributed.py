"""Data-parallel training (issue #15): epoch time with 1 and with P processes.

Trains PoissBPE (defaults, CPU, one torch thread a process) on 20 Newsgroups (train
split, default vocabulary) and, unless ``--quick``, on a larger corpus resampled from its
rows (``--scale`` times the documents, seeded), each with 1 process and with
``--nproc`` processes sharing every minibatch (``bpetopics.runs.distributed``: the
step's sums through shared memory, or through gloo with ``BPETOPICS_DIST_SUM=gloo`` in
the environment), and prints a markdown table per corpus:

* epoch wall seconds (median of the epochs after the first, which pays for start-up),
  per rank; the speed-up is 1 process's over P processes' (issue #15 asks for >= 1.7x
  on 2 cores);
* CPU seconds per epoch of each process (``time.process_time``): the work a process
  does; with P processes, P x that over 1 process's is the work duplicated (the theta
  step's softmax and Adam run on every rank) or added (all-reduce), and
  1-process CPU / the largest rank's CPU is the speed-up idle cores would give when
  the all-reduces do not wait;
* the machine's load average before and after, as a note: on a machine shared with other
  work, wall-clock speed-ups are pessimistic and CPU times are the figures to compare.

Run: ``python benchmarks/bench_distributed.py [--quick] [--nproc 2] [--epochs 4]
[--scale 4] [--out results/distributed/table.md]`` (offline data: SCIKIT_LEARN_DATA,
NLTK_DATA as in docs/getting-started.md). ``--quick``: 20 Newsgroups only, 3 epochs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def rank_epochs(counts_path: str, epochs: int, batch_size: int, out_dir: str) -> None:
    """One process (of 1, or a rank of P): train, and write each epoch's wall and CPU
    seconds to out_dir/rankR.json."""
    import scipy.sparse as sp

    from bpetopics import PoissBPE
    from bpetopics.runs.distributed import close_group, distributed_fit, init_group, world_from_env

    X = sp.load_npz(counts_path)
    marks = []
    model = PoissBPE(epochs=epochs, batch_size=batch_size, device="cpu", progress=False,
                     callback=lambda m, info: marks.append(time.process_time()))
    world = world_from_env()
    start = time.process_time()
    if world is None:
        model.fit(X)
        rank = 0
    else:
        group = init_group("cpu")
        rank = group.rank
        distributed_fit(model, X, group)
        close_group()
    cpu = [b - a for a, b in zip([start] + marks[:-1], marks)]
    Path(out_dir, f"rank{rank}.json").write_text(json.dumps(
        {"wall": [h["seconds"] for h in model.history_], "cpu": cpu, "nnz": int(X.nnz), "docs": X.shape[0]}))


def measure(counts_path: Path, nproc: int, epochs: int, batch_size: int) -> list[dict]:
    """Per rank: {"wall": [...], "cpu": [...]} for each epoch (fresh processes)."""
    from bpetopics.runs.launch import launch

    with tempfile.TemporaryDirectory() as out:
        outcome = launch(rank_epochs, (str(counts_path), epochs, batch_size, out), nproc, threads=1)
        if not outcome.ok:
            raise SystemExit(f"{nproc} process(es) failed: {outcome.error()}")
        return [json.loads(Path(out, f"rank{r}.json").read_text()) for r in range(nproc)]


def steady(values: list[float]) -> float:
    """The median after the first epoch (start-up: numba's cache, torch's first Adam)."""
    return statistics.median(values[1:] if len(values) > 1 else values)


def table(name: str, ranks_by_p: dict, nproc: int) -> str:
    one = ranks_by_p[1][0]
    many = ranks_by_p[nproc]
    wall1, cpu1 = steady(one["wall"]), steady(one["cpu"])
    wallp = max(steady(r["wall"]) for r in many)
    cpup = [steady(r["cpu"]) for r in many]
    rows = [f"### {name}: {one['docs']:,} documents, {one['nnz']:,} non-zeros\n",
            "| processes | epoch wall s | CPU s per epoch, each process | CPU s per epoch, all | "
            "us CPU per non-zero (all) |", "|---:|---:|---|---:|---:|",
            f"| 1 | {wall1:.2f} | {cpu1:.2f} | {cpu1:.2f} | {1e6 * cpu1 / one['nnz']:.2f} |",
            f"| {nproc} | {wallp:.2f} | {' / '.join(f'{c:.2f}' for c in cpup)} | {sum(cpup):.2f} | "
            f"{1e6 * sum(cpup) / one['nnz']:.2f} |", "",
            f"- speed-up, wall clock: **{wall1 / wallp:.2f}x** (goal >= 1.7x on 2 idle cores)",
            f"- speed-up the CPU times allow (1-process CPU / largest rank's CPU): **{cpu1 / max(cpup):.2f}x**",
            f"- work with {nproc} processes over 1 process: {sum(cpup) / cpu1:.2f}x (1.00x: nothing duplicated)", ""]
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="20 Newsgroups only, 3 epochs")
    parser.add_argument("--nproc", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--batch-sizes", default="64,512",
                        help="comma-separated minibatch sizes (64: PoissBPE's default)")
    parser.add_argument("--scale", type=int, default=4, help="the resampled corpus has this many times the documents")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "bpetopics-bench-distributed")
    parser.add_argument("--out", type=Path, default=None, help="also write the tables to this markdown file")
    args = parser.parse_args()
    epochs = 3 if args.quick else args.epochs

    import numpy as np
    import scipy.sparse as sp

    from bpetopics.text import prepare_corpus

    args.workdir.mkdir(parents=True, exist_ok=True)
    base = args.workdir / "20ng-train.npz"
    if not base.exists():
        sp.save_npz(base, prepare_corpus("20newsgroups")["train"].counts.tocsr())
    corpora = [("20 Newsgroups (train)", base)]
    if not args.quick:
        big = args.workdir / f"20ng-train-x{args.scale}.npz"
        if not big.exists():
            X = sp.load_npz(base)
            rows = np.random.default_rng(0).integers(X.shape[0], size=args.scale * X.shape[0])
            sp.save_npz(big, X[rows])
        corpora.append((f"20 Newsgroups rows resampled x{args.scale}", big))

    load_before = os.getloadavg()
    sections = []
    for name, path in corpora:
        for batch_size in (int(b) for b in args.batch_sizes.split(",")):
            results = {p: measure(path, p, epochs, batch_size) for p in (1, args.nproc)}
            sections.append(table(f"{name}, minibatch {batch_size}", results, args.nproc))
            print(sections[-1], flush=True)
    load_after = os.getloadavg()
    transport = "gloo" if os.environ.get("BPETOPICS_DIST_SUM", "").lower() == "gloo" else "shared memory"
    header = (f"## Data-parallel training: 1 vs {args.nproc} processes (PoissBPE defaults but the minibatch, CPU, 1 torch thread "
              f"a process, sums through {transport}; {epochs} epochs, median of epochs 2-{epochs})\n\n"
              f"Machine: {os.cpu_count()} cores; load average (1 min) {load_before[0]:.2f} before, "
              f"{load_after[0]:.2f} after. A load above 0 means other work shared the cores: the wall-clock "
              "speed-ups are then pessimistic; compare the CPU times.\n")
    print(header)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(header + "\n" + "\n".join(sections))


if __name__ == "__main__":
    main()
