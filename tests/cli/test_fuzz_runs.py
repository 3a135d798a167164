"""Fuzzing the run loader (issue #11): each file of a small saved run deleted, emptied,
cut, bit-flipped, replaced by noise, or (JSON) given values of the wrong type. Loading
either works or raises RunError with one line; the commands that read runs end with one
line and exit code 2, never a traceback. Seeded; a few hundred cases in seconds."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

pytestmark = pytest.mark.slow  # end-to-end: in `make test`, left out by `make test-quick`
from click.testing import CliRunner

from bpetopics.cli import main
from bpetopics.runs import RunError, load_checkpoint, load_run, save_checkpoint
from tests.cli.conftest import one_line_error

JUNK = [None, -1, 0, 1e308, "x", "", [], [1, "a"], {}, {"a": None}, True]


def _json_mutation(obj, rng):
    """``obj`` with one value somewhere inside replaced by a junk value (or a key removed)."""
    if isinstance(obj, dict) and obj:
        key = list(obj)[int(rng.integers(len(obj)))]
        if rng.random() < 0.15:
            return {k: v for k, v in obj.items() if k != key}
        if rng.random() < 0.5 and isinstance(obj[key], (dict, list)) and obj[key]:
            return {**obj, key: _json_mutation(obj[key], rng)}
        return {**obj, key: JUNK[int(rng.integers(len(JUNK)))]}
    if isinstance(obj, list) and obj:
        i = int(rng.integers(len(obj)))
        out = list(obj)
        out[i] = _json_mutation(obj[i], rng) if rng.random() < 0.5 else JUNK[int(rng.integers(len(JUNK)))]
        return out
    return JUNK[int(rng.integers(len(JUNK)))]


def _damage(path, rng) -> str:
    data = path.read_bytes()
    kind = ["delete", "empty", "cut", "flip", "noise", "json", "json", "json"][int(rng.integers(8))]
    if kind == "json" and path.suffix != ".json":
        kind = "flip"
    if kind == "delete":
        path.unlink()
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "cut":
        path.write_bytes(data[: int(rng.integers(0, max(1, len(data))))])
    elif kind == "flip":
        arr = np.frombuffer(data, dtype=np.uint8).copy()
        idx = rng.integers(0, len(arr), size=int(rng.integers(1, 10)))
        arr[idx] ^= rng.integers(1, 256, size=len(idx), dtype=np.uint8)
        path.write_bytes(arr.tobytes())
    elif kind == "noise":
        path.write_bytes(rng.integers(0, 256, size=int(rng.integers(0, 2000)), dtype=np.uint8).tobytes())
    else:
        path.write_text(json.dumps(_json_mutation(json.loads(data), rng)), encoding="utf-8")
    return kind


def _load_everything(path):
    run = load_run(path, device="cpu")
    run.doc_topics()
    if run.has_counts():
        run.counts()
    return run


@pytest.mark.parametrize("seed", range(4))
def test_damaged_runs_load_or_raise_run_error(trained_run, tmp_path, seed):
    source = trained_run[0]
    files = sorted(p.name for p in source.iterdir())
    rng = np.random.default_rng(seed)
    for case in range(60):
        run = tmp_path / f"r{case}"
        shutil.copytree(source, run)
        name = files[case % len(files)]
        kind = _damage(run / name, rng)
        try:
            _load_everything(run)
        except RunError as exc:
            assert "\n" not in str(exc) and str(exc), (name, kind, str(exc))
        shutil.rmtree(run)


def test_damaged_checkpoints_load_or_raise_run_error(trained_run, tmp_path):
    model = load_run(trained_run[0], device="cpu").model
    good = save_checkpoint(tmp_path / "good.safetensors", model)
    rng = np.random.default_rng(0)
    for case in range(60):
        path = tmp_path / f"c{case}.safetensors"
        shutil.copy(good, path)
        _damage(path, rng)
        try:
            load_checkpoint(path, device="cpu")
        except RunError as exc:
            assert "\n" not in str(exc), str(exc)


@pytest.mark.parametrize("command", [["topics"], ["info"], ["evaluate", "--no-gensim"],
                                     ["graph", "--out", "{tmp}/g.png"], ["ldavis", "--out", "{tmp}/t.html"],
                                     ["encode", "{tmp}/doc.txt", "--out", "{tmp}/codes.json"]])
def test_commands_on_damaged_runs_end_with_one_line(trained_run, tmp_path, command):
    source = trained_run[0]
    files = sorted(p.name for p in source.iterdir())
    rng = np.random.default_rng(len(command[0]))
    runner = CliRunner()
    (tmp_path / "doc.txt").write_text("The shuttle launch and the hockey game.")
    per_file = 2 if command[0] in ("graph", "ldavis") else 5  # the slow ones: fewer cases
    for case in range(per_file * len(files)):
        run = tmp_path / "run"
        shutil.copytree(source, run)
        _damage(run / files[case % len(files)], rng)
        args = [command[0], str(run), *[a.format(tmp=tmp_path) for a in command[1:]]]
        result = runner.invoke(main, args)
        if result.exit_code != 0:
            one_line_error(result)
        shutil.rmtree(run)
        for p in tmp_path.iterdir():
            if p.name not in ("doc.txt",):
                p.unlink() if p.is_file() else shutil.rmtree(p)


def test_an_npy_header_numpy_cannot_parse_is_a_run_error(trained_run, tmp_path):
    """numpy reads a .npy header with ast.literal_eval: a garbled one raises SyntaxError
    or tokenize.TokenError, which loading turns into RunError like any damage."""
    import struct
    import zipfile

    run = tmp_path / "run"
    shutil.copytree(trained_run[0], run)
    header = b"{{{{{{{{{{'descr': '<f4', 'fortra"
    header += b" " * (-(len(header) + 11) % 64) + b"\n"
    npy = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + b"\x00" * 16
    with zipfile.ZipFile(run / "doc_topics.npz", "w") as zf:
        zf.writestr("doc_topic.npy", npy)
        zf.writestr("ids.npy", npy)
    with pytest.raises(RunError, match="doc_topics.npz is damaged|is damaged"):
        _load_everything(run)
