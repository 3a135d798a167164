"""``benchmarks/table1_gpu.sh``, the one command that trains the whole Table 1 on a GPU
machine (docs/results/images.md), run here on the CPU at the tiny budget: a script broken
by a change elsewhere would otherwise be found only on a GPU, whose time is scarce."""

import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "table1_gpu.sh"


@pytest.mark.slow
def test_table1_gpu_script_trains_pieces_merges_them_and_packs_them(shared_data, tmp_path):
    """Two pieces in processes of their own, the merged table returned in table.tgz, the
    pieces' records and runs in parts that unpack (what ``prepare`` does with them)."""
    if shutil.which("bash") is None or shutil.which("timeout") is None:
        pytest.skip("needs bash and timeout")
    work, out = tmp_path / "checkout", tmp_path / "out"
    (work / ".gpu" / "data").mkdir(parents=True)
    (work / ".gpu" / "data" / "mnist").symlink_to(shared_data / "mnist")
    env = {**os.environ, "BUDGET": "tiny", "BPE_EPOCHS": "1", "VAE_EPOCHS": "1", "DEVICE": "cpu",
           "TOTAL_SECONDS": "400", "OMP_NUM_THREADS": "1", "OUT": str(out),
           "PIECES": "binary_mnist:bernbpe binary_mnist:gsvae",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    out.mkdir()
    done = subprocess.run(["bash", str(SCRIPT), "run"], cwd=work, env=env, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    log = (out / "log.txt").read_text()
    assert "== smoke test" in log and "merged: table.tgz" in log and "Traceback" not in log
    with tarfile.open(out / "table.tgz") as tar:
        table = tar.extractfile("./table1.md").read().decode()
    assert "| binarised MNIST | BernBPE | NLL |" in table and "| binarised MNIST | GS-VAE | NLL |" in table
    assert "device cpu; " in table
    parts = sorted(out.glob("table1-tiny-e1-parts.tgz.*"))
    assert parts
    unpacked = tmp_path / "unpacked"
    unpacked.mkdir()
    with open(tmp_path / "parts.tgz", "wb") as whole:
        for part in parts:
            whole.write(part.read_bytes())
    with tarfile.open(tmp_path / "parts.tgz") as tar:
        tar.extractall(unpacked, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    runs = unpacked / "table1-tiny-e1-parts" / "binary_mnist-bernbpe" / "runs"
    assert (runs / "binary_mnist-bernbpe.json").is_file() and (runs / "binary_mnist-bernbpe" / "config.json").is_file()
