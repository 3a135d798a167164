"""What compiling the CPU kernels costs a first run: ``python -m benchmarks compile``.

Three cases, each in fresh processes with an empty numba cache of its own
(``NUMBA_CACHE_DIR``), so nothing compiled before counts:

- ``bpetopics compile`` alone (what ``make venv`` runs after installing);
- ``make demo``'s training (``bpetopics train 20newsgroups``) after it: the compiling
  left to a new user's first run, and the training itself;
- the same training with a cold cache and no ``bpetopics compile`` first.

For each: CPU seconds of the process (user + system, children included), and the wall
seconds the run's history records as ``compile_seconds`` apart from its epochs. Needs
20 Newsgroups offline ($SCIKIT_LEARN_DATA); ``--quick`` trains the CLI tests' small
corpus instead (4 groups, 5 topics, 2 epochs).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path


def run(args, cache: Path) -> float:
    """Run ``bpetopics ARGS`` with numba's cache in ``cache``; its CPU seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    subprocess.run([sys.executable, "-m", "bpetopics", *args], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def history_seconds(run_folder: Path) -> tuple[float, float]:
    """(training seconds, compiling seconds) from a run's history."""
    history = json.loads((run_folder / "config.json").read_text())["training"]["history"]
    return (sum(h.get("seconds", 0.0) for h in history), sum(h.get("compile_seconds", 0.0) for h in history))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="the small corpus instead of 20 Newsgroups")
    options = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        corpus = ["20newsgroups"]
        if options.quick:
            corpus = [str(tmp / "small")]
            run(["corpus", "20newsgroups", "--out", corpus[0], "--categories",
                 "comp.graphics,rec.sport.hockey,sci.space,talk.politics.mideast", "--max-docs", "800",
                 "--vocab-size", "500", "-q"], tmp / "cache-corpus")
        train = ["train", *corpus, "--quiet"] + (["--topics", "5", "--epochs", "2"] if options.quick else [])
        rows = []
        warm = tmp / "cache-warm"
        rows.append(("bpetopics compile (cold cache)", run(["compile", "--quiet"], warm), None, None))
        cpu = run([*train, "--out", str(tmp / "after")], warm)
        rows.append(("train after bpetopics compile", cpu, *history_seconds(tmp / "after")))
        cpu = run([*train, "--out", str(tmp / "cold")], tmp / "cache-cold")
        rows.append(("train, cold cache", cpu, *history_seconds(tmp / "cold")))
    print(f"{'case':<34} {'CPU s':>7} {'training s':>11} {'compiling s':>12}")
    for name, cpu, train_s, compile_s in rows:
        cells = [f"{v:>11.1f}" if v is not None else f"{'':>11}" for v in (train_s, compile_s)]
        print(f"{name:<34} {cpu:>7.1f} {cells[0]} {cells[1]:>12}")


if __name__ == "__main__":
    main()
