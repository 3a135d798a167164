"""Regenerate the golden outputs of ``bpetopics train`` (topics.csv, doc_codes.npz).

The run is the one the CLI tests train (tests/cli/conftest.py): the first 300 training
documents of the small 20 Newsgroups corpus (4 groups, 500 words), 5 topics, 8 bits,
2 epochs, CPU, seed 0, one thread; in_order/ holds the same run with ``--no-pipeline``
(the steps strictly in order). machine.json records the machine and library versions that
made them (:func:`arithmetic`). tests/test_behaviour_unchanged.py trains the same way and
compares: bit for bit where its arithmetic is this file's, within the documented
tolerances anywhere. Regenerate only when a change of the numbers is intended:

    SCIKIT_LEARN_DATA=... BPETOPICS_DATA=/path/to/shared/data python tests/data/golden/make_golden.py
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
CATEGORIES = ["comp.graphics", "rec.sport.hockey", "sci.space", "talk.politics.mideast"]
TRAIN_ARGS = ["--topics", "5", "--bits", "8", "--epochs", "2", "--device", "cpu", "--seed", "0", "--quiet"]
GOLDEN_FILES = ("topics.csv", "doc_codes.npz")


def shared_data() -> Path:
    env = os.environ.get("BPETOPICS_DATA")
    return Path(env) if env else REPO.parent / "shared" / "data"


def small_corpus(folder: Path, data: Path) -> Path:
    """Save the CLI tests' corpus (300 documents of newsgroups_small) to ``folder``."""
    from bpetopics.text import Corpus, prepare_corpus, save_splits

    c = prepare_corpus("20newsgroups", vocab_size=500, min_df=5, max_df=0.5,
                       stopwords=data / "stopwords" / "nltk_english.txt", data_home=data / "sklearn",
                       categories=CATEGORIES, max_docs=800, random_state=0, download_if_missing=False)["train"]
    n = 300
    small = Corpus(counts=c.counts[:n], vocabulary=c.vocabulary, texts=c.texts[:n], ids=c.ids[:n], split="train",
                   labels=c.labels[:n], label_names=c.label_names, pipeline=c.pipeline, source=c.source)
    return save_splits({"train": small}, folder)


def arithmetic() -> dict:
    """What decides the golden run's arithmetic: the machine (processor, torch's vector
    unit) and the versions of the libraries that compute (the thread count is fixed at
    one by :func:`train_run`)."""
    from importlib import metadata

    from bpetopics.bpe.machine import describe_machine

    machine = describe_machine()
    machine.pop("cores")
    return {**machine, **{name: metadata.version(name) for name in ("torch", "numba", "numpy")}}


def train_run(workdir: Path, data: Path, extra=()) -> Path:
    """Run ``bpetopics train`` on the small corpus (with the options ``extra``); return
    the run folder."""
    import torch
    from click.testing import CliRunner

    from bpetopics.cli import main

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # one thread: the same float summation order on every machine
    try:
        corpus = small_corpus(workdir / "ng300", data)
        out = workdir / ("run" + "".join(extra))
        result = CliRunner().invoke(main, ["train", str(corpus), "--out", str(out), *TRAIN_ARGS, *extra])
    finally:
        torch.set_num_threads(threads)
    if result.exit_code != 0:
        raise RuntimeError(result.output)
    return out


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    for extra, folder in (((), HERE), (("--no-pipeline",), HERE / "in_order")):
        with tempfile.TemporaryDirectory() as tmp:
            run = train_run(Path(tmp), shared_data(), extra)
            for name in GOLDEN_FILES:
                shutil.copyfile(run / name, folder / name)
        print(f"wrote {', '.join(GOLDEN_FILES)} to {folder}")
    (HERE / "machine.json").write_text(json.dumps(arithmetic(), indent=2) + "\n")
