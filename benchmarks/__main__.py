"""One runner for every benchmark: ``python -m benchmarks NAME [--quick] [ARGS...]``.

Prints a header first (the machine in words, its cores, the library versions, the thread
counts, the date), then runs ``benchmarks/bench_NAME.py`` (or another script of this
folder named NAME) as ``python benchmarks/bench_NAME.py ARGS`` would. ``--quick`` runs a
small version that only checks the benchmark works (its figures mean little):
the benchmark's own ``--quick`` where it has one, else the small sizes of :data:`QUICK`.
``python -m benchmarks --list`` lists the benchmarks.
"""

import datetime
import os
import platform
import runpy
import sys
from pathlib import Path

from bpetopics.bpe.machine import cpu_model

HERE = Path(__file__).resolve().parent

#: Arguments that make each benchmark small enough to check that it starts and finishes
#: (on top of the ones given; a benchmark with its own ``--quick`` gets that instead).
QUICK = {
    "speed": ["--tomotopy-iterations", "20"],
    "two_threads": ["--repeats", "1"],
    "topic_use": ["--topics", "20", "--seeds", "0"],
    "pipeline_quality": ["--corpora", "lee:20", "--seeds", "0"],
    "split_moves": ["--topics", "20", "--epochs", "1"],
    "pursuit": ["--epochs", "1"],
    "device": ["--docs", "1000", "--epochs", "1"],
    "stream": ["--docs", "5000", "--small", "2000", "--parts", "build", "--repeats", "1"],
    "coherence": ["--max-docs", "500", "--passes", "1"],
    "image_pursuit": ["--images", "300", "--vae-epochs", "1"],
    "image_epochs": ["--train", "300", "--test", "100", "--epochs", "1", "--report", "1"],
    "gauss_gap": ["--train", "300", "--test", "100"],
    "bernbpe_epochs": ["--train", "300", "--test", "100", "--epochs", "1"],
    "co_runners": ["--max-docs", "300", "--repeats", "1"],
    "generalisation": ["--corpus", "lee", "--topics", "10", "--seeds", "0"],
    "document_mixture": ["--cells", "lee:10", "--concentrations", "10", "--seeds", "0"],
}


def scripts() -> dict:
    """Benchmark names -> script paths: ``bench_X.py`` is X, the other scripts by their stem."""
    found = {}
    for path in sorted(HERE.glob("*.py")):
        if path.name.startswith("_"):
            continue
        found[path.stem[len("bench_"):] if path.stem.startswith("bench_") else path.stem] = path
    return found


def header() -> str:
    """The machine and the software a benchmark ran on, in words."""
    lines = [f"machine: {cpu_model()} ({platform.machine()}), {os.cpu_count()} logical cores, "
             f"{platform.system()} {platform.release()}, Python {platform.python_version()}"]
    versions = []
    for name in ("torch", "numba", "numpy"):
        try:
            versions.append(f"{name} {__import__(name).__version__}")
        except ImportError:
            versions.append(f"{name} not installed")
    lines.append("versions: " + ", ".join(versions))
    threads = [f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}"]
    try:
        import torch

        threads.append(f"torch {torch.get_num_threads()}")
        if torch.cuda.is_available():
            lines.append(f"GPU: {torch.cuda.get_device_name(0)}, CUDA {torch.version.cuda}")
    except ImportError:
        pass
    try:
        import numba

        threads.append(f"numba {numba.get_num_threads()}")
    except ImportError:
        pass
    lines.append("threads: " + ", ".join(threads))
    lines.append("date: " + datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))
    return "\n".join(lines)


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    known = scripts()
    if not argv or argv[0] in ("-h", "--help", "--list"):
        print("usage: python -m benchmarks NAME [--quick] [ARGS...]   (ARGS: the benchmark's own; NAME --help)")
        print("benchmarks: " + ", ".join(known))
        return 0
    name, args = argv[0], argv[1:]
    if name not in known:
        print(f"Error: no benchmark named {name!r}; choose one of: {', '.join(known)}", file=sys.stderr)
        return 2
    path = known[name]
    if "--quick" in args and "--quick" not in path.read_text(encoding="utf-8"):
        if name not in QUICK:
            print(f"Error: {name} has no quick version; run it without --quick", file=sys.stderr)
            return 2
        args = [a for a in args if a != "--quick"] + QUICK[name]
    if "-h" not in args and "--help" not in args:
        print(header(), flush=True)
        print(f"benchmark: {name} {' '.join(args)}".rstrip() + "\n", flush=True)
    sys.argv = [str(path), *args]
    sys.path.insert(0, str(path.parent))
    try:
        runpy.run_path(str(path), run_name="__main__")
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
