"""The command line checks its arguments before importing heavy libraries: a refusal
(or ``--help``) in a fresh process leaves torch, numba, gensim, scikit-learn, pandas and
matplotlib unimported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import TINY

HEAVY = ("torch", "numba", "gensim", "sklearn", "pandas", "matplotlib")
REPO = Path(__file__).resolve().parents[2]

#: Runs the command line in this process as ``bpetopics`` would, then prints, on the
#: last line, the exit code and which of HEAVY were imported.
_PROBE = """
import json, sys
from bpetopics.cli import main
try:
    main(sys.argv[1:], prog_name="bpetopics")
    code = 0
except SystemExit as exc:
    code = exc.code
print(json.dumps({"code": code, "heavy": [m for m in %r if m in sys.modules]}))
""" % (HEAVY,)


def _probe(*args) -> tuple[dict, str]:
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", _PROBE, *map(str, args)], capture_output=True, text=True,
                          env=env, cwd=REPO, timeout=120)
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


@pytest.mark.parametrize("args", [["--help"], ["train", "--help"], ["corpus", "--help"], ["over-time", "--help"],
                                  ["explore", "--help"], ["search", "--help"], ["similar", "--help"],
                                  ["update", "--help"]])
def test_help_imports_no_heavy_library(args):
    found, _ = _probe(*args)
    assert found == {"code": 0, "heavy": []}


def test_train_into_a_finished_run_is_refused_without_torch(trained_run, saved_corpus):
    run, _ = trained_run
    found, err = _probe("train", saved_corpus, "--out", run, *TINY)
    assert found == {"code": 2, "heavy": []}, err
    assert "already holds a finished run" in err


def test_refusals_of_other_commands_import_no_heavy_library(trained_run, tmp_path):
    run, _ = trained_run
    existing = tmp_path / "graph.png"
    existing.write_bytes(b"x")
    existing.with_suffix(".csv").write_bytes(b"x")
    for args, fragment in ((["graph", run, "--out", existing], "already exists"),
                           (["ldavis", run, "--out", tmp_path], "is a folder"),
                           (["evaluate", run, "--out", tmp_path], "is a folder"),
                           (["over-time", run, "--out", existing.with_suffix(".txt")], "must be a .csv table or a .png plot"),
                           (["over-time", run, "--out", existing.with_suffix(".csv")], "already exists"),
                           (["explore", run, "--out", tmp_path], "is a folder"),
                           (["images", "train", "mnist", "--model", "gaussbpe", "--out", run],
                            "already holds a finished run"),
                           (["search", run, " "], "the query is empty"),
                           (["similar", run], "give a DOC"),
                           (["topics", run, "--set-label", "x"], "TOPIC=LABEL"),
                           (["update", run, tmp_path, "--out", run], "is the run being updated"),
                           (["train", run, "--out", tmp_path / "new", "--seed-topics", tmp_path / "no.txt"],
                            "does not exist"),
                           (["update", tmp_path, tmp_path, "--out", tmp_path / "new"], "is not a finished run"),
                           (["update", run, tmp_path, "--out", run.parent], "is not a run folder")):
        found, err = _probe(*args)
        assert found == {"code": 2, "heavy": []}, (args, err)
        assert fragment in err, err
