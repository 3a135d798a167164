"""The training job as library calls (what `bpetopics train` runs, callable from a
notebook): start, checkpoint every epoch, interrupt, resume, finish atomically."""

import json

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from bpetopics.runs import RunError, load_run
from bpetopics.runs.job import (CORPUS_DIR, JOB_FILE, checkpoint_epoch, finish_job, read_job, resume_job, run_job,
                                start_job, train_run)
from bpetopics.text import Corpus

PARAMS = dict(n_topics=3, n_bits=6, epochs=3, batch_size=20, device="cpu", progress=False, random_state=2)


def planted(tokens: int) -> Corpus:
    """60 documents of ``tokens`` tokens each from 3 planted topics over 25 words."""
    rng = np.random.default_rng(0)
    topics = rng.dirichlet(np.full(25, 0.1), size=3)
    counts = np.stack([rng.multinomial(tokens, topics[rng.integers(3)]) for _ in range(60)])
    return Corpus(counts=sp.csr_matrix(counts), vocabulary=[f"w{j}" for j in range(25)],
                  texts=[[] for _ in range(60)], ids=[f"d{i}" for i in range(60)])


@pytest.fixture(scope="module")
def corpus():
    return planted(30)


class Stop(Exception):
    pass


@pytest.mark.parametrize("tokens", [30, 3])
def test_interrupted_job_resumes_to_the_same_run(tokens, tmp_path):
    """Documents of 30 tokens, and of 3 (a topic check every epoch: the resumed model
    must know its documents' length again)."""
    corpus = planted(tokens)
    whole = train_run(tmp_path / "whole", dict(PARAMS), corpus, {"source": "planted"})

    job = start_job(tmp_path / "cut", dict(PARAMS), corpus, {"source": "planted"})
    assert (job.partial / JOB_FILE).is_file() and (job.partial / CORPUS_DIR).is_dir()
    assert read_job(tmp_path / "cut")["params"]["n_topics"] == 3

    def stop_after_first(model, info):
        if model.epoch_ == 1:
            raise Stop

    with pytest.raises(Stop):
        run_job(job, stop_after_first)
    assert checkpoint_epoch(job) == 1 and not (tmp_path / "cut").exists()
    with pytest.raises(RunError, match="interrupted training"):
        start_job(tmp_path / "cut", dict(PARAMS), corpus, {"source": "planted"})

    resumed = resume_job(tmp_path / "cut")
    assert resumed.model.epoch_ == 1
    run_job(resumed)
    finish_job(resumed)
    assert not resumed.partial.exists()
    a, b = load_run(whole), load_run(tmp_path / "cut")
    sa, sb = a.model.state_dict(), b.model.state_dict()
    assert sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)
    assert (a.model.codes_ == b.model.codes_).all()
    assert json.loads((tmp_path / "cut" / "config.json").read_text())["corpus"]["source"] == "planted"


def test_a_finished_run_is_refused_and_nothing_to_resume_is_one_line(corpus, tmp_path):
    train_run(tmp_path / "r", dict(PARAMS, epochs=1), corpus, {})
    with pytest.raises(RunError, match="already holds a finished run"):
        start_job(tmp_path / "r", dict(PARAMS), corpus, {})
    with pytest.raises(RunError, match="nothing to resume"):
        resume_job(tmp_path / "other")


def test_a_job_being_trained_by_another_process_is_refused_untouched(corpus, tmp_path):
    """The library's job takes the lock on RUN.partial, not only the CLI: a second
    caller on the same run stops at once and leaves the first one's files alone."""
    import os
    import socket

    from bpetopics.runs.lock import LOCK_FILE

    job = start_job(tmp_path / "r", dict(PARAMS, epochs=1), corpus, {"source": "planted"})
    assert (job.partial / LOCK_FILE).is_file()
    # make the lock another live process's (our parent's), as a second `train` would see it
    owner = {"pid": os.getppid(), "host": socket.gethostname(), "started": 0}
    (job.partial / LOCK_FILE).write_text(json.dumps(owner))
    before = sorted(p.name for p in job.partial.iterdir())
    for attempt in (lambda: start_job(tmp_path / "r", dict(PARAMS), corpus, {}, overwrite=True),
                    lambda: resume_job(tmp_path / "r")):
        with pytest.raises(RunError, match=f"being trained by process {os.getppid()}"):
            attempt()
    assert sorted(p.name for p in job.partial.iterdir()) == before
    (job.partial / LOCK_FILE).unlink()
    run_job(job)
    finish_job(job)
    assert load_run(tmp_path / "r").model.epoch_ == 1 and not job.partial.exists()
