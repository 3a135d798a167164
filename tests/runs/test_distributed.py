"""Data-parallel training (issue #15, runs/distributed.py): 2 processes (gloo, CPU) give
the model 1 process gives with the same global minibatch and seed; each rank's share of
the minibatches partitions them; a process that dies stops the others with one line."""

from __future__ import annotations

import os

import numpy as np
import pytest

pytestmark = pytest.mark.slow  # end-to-end: in `make test`, left out by `make test-quick`
import scipy.sparse as sp
import torch

from bpetopics.bpe.batches import InMemoryBatches
from bpetopics.models import PoissBPE
from bpetopics.runs.distributed import RankBatches
from bpetopics.runs.launch import launch

PARAMS = dict(n_topics=4, n_bits=8, epochs=3, batch_size=24, device="cpu", progress=False,
              random_state=3)


def planted(n_docs=150, n_words=60, seed=0):
    """Documents drawn from 4 planted topics (each 15 words), 5-40 tokens each."""
    rng = np.random.default_rng(seed)
    topics = np.full((4, n_words), 0.05)
    for t in range(4):
        topics[t, t * 15:(t + 1) * 15] += 3
    topics /= topics.sum(1, keepdims=True)
    rows = [rng.multinomial(int(rng.integers(5, 40)), topics[rng.integers(4)] * 0.7 + topics[rng.integers(4)] * 0.3)
            for _ in range(n_docs)]
    return sp.csr_matrix(np.array(rows))


def _train_rank(X_path, out_dir, settings, kill_rank=None):
    """One rank: a distributed fit for each parameter set of ``settings``, then its
    weights and codes to out_dir/rankR_I.npz (I: the set)."""
    from bpetopics.runs.distributed import close_group, distributed_fit, init_group

    group = init_group("cpu")
    X = sp.load_npz(X_path)
    callback = None
    if kill_rank == group.rank:
        def callback(model, info):
            if info["epoch"] == 1:
                os.kill(os.getpid(), 9)
    for i, params in enumerate(settings):
        model = PoissBPE(**params, callback=callback)
        distributed_fit(model, X, group)
        state = {k: v.numpy() for k, v in model.state_dict().items()}
        np.savez(os.path.join(out_dir, f"rank{group.rank}_{i}.npz"), codes=model.codes_, **state)
    close_group()


def _one_process(X, **extra):
    """One process's fit, its steps in order (``pipeline=False``), as processes sharing
    each step take them."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)          # as each launched process
    try:
        return PoissBPE(**PARAMS, **{"pipeline": False, **extra}).fit(X)
    finally:
        torch.set_num_threads(threads)


@pytest.mark.parametrize("n_rows,batch,size", [(150, 24, 2), (101, 24, 3), (7, 4, 3), (5, 8, 4)])
def test_rank_shares_partition_every_minibatch(n_rows, batch, size):
    X = sp.csr_matrix(np.arange(n_rows, dtype=np.int64)[:, None] + 1)
    whole = [b.toarray().ravel() for b in InMemoryBatches(X, batch, 5, 2)]
    shares = [list(RankBatches(X, batch, 5, 2, r, size, block_rows=batch * 2)) for r in range(size)]
    assert all(len(s) == len(whole) for s in shares)
    for b, rows in enumerate(whole):
        joined = np.concatenate([shares[r][b].toarray().ravel() for r in range(size)])
        assert np.array_equal(joined, rows)       # the rank parts, in rank order, are the minibatch
        sizes = [shares[r][b].shape[0] for r in range(size)]
        assert max(sizes) - min(sizes) <= 1


#: The defaults but split moves (linear decoder, diversity prior, topic restarts), a hidden
#: layer without the prior, the defaults, 2 topics grown into 4 after epoch 1, and the
#: mixtures' entropy prior (its share of each process's tokens summed across them). Split moves are decisions on thresholds
#: (a split's gain against a topic's loss), so the float differences between one and two
#: processes' gradient sums can make a move in one and not the other: with them the two
#: ranks must still agree bit for bit, but not with one process.
SETTINGS = [{"split_moves": False}, {"hidden": (6,), "topic_repulsion": 0.0, "split_moves": False}, {},
            {"split_moves": False, "initial_topics": 2}, {"split_moves": False, "mixture_entropy": 0.3}]


def test_two_processes_train_the_model_one_process_trains(tmp_path):
    X = planted(n_docs=145)      # the last minibatch has 1 row: rank 0's share of it is empty
    sp.save_npz(tmp_path / "X.npz", X)
    settings = [{**PARAMS, **extra} for extra in SETTINGS]
    outcome = launch(_train_rank, (str(tmp_path / "X.npz"), str(tmp_path), settings), nproc=2, threads=1)
    assert outcome.ok, outcome.error()
    for i, extra in enumerate(SETTINGS):
        one = _one_process(X, **extra)
        ranks = [np.load(tmp_path / f"rank{r}_{i}.npz") for r in range(2)]
        for name, value in one.state_dict().items():
            value = value.numpy()
            # both ranks hold the same model, bit for bit (the all-reduce gives both the same sums)
            assert np.array_equal(ranks[0][name], ranks[1][name]), name
            if not one.split_moves:
                np.testing.assert_allclose(ranks[0][name], value, rtol=2e-4, atol=2e-5, err_msg=name)
        # the codes, each row encoded by one rank and assembled by a sum, are on every rank
        assert np.array_equal(ranks[0]["codes"], ranks[1]["codes"])
        if not one.split_moves:
            assert (ranks[0]["codes"] != one.codes_).mean() < 0.01
        assert int(ranks[0]["prior.t"]) == one.step_ == 3 * 7


def test_a_killed_process_stops_the_job_with_one_line(tmp_path):
    X = planted()
    sp.save_npz(tmp_path / "X.npz", X)
    outcome = launch(_train_rank, (str(tmp_path / "X.npz"), str(tmp_path), [PARAMS], 1), nproc=2, threads=1)
    assert not outcome.ok
    assert outcome.exitcodes[1] == -9 and outcome.exitcodes[0] != 0
    assert outcome.error() == "training process 1 of 2 was killed (SIGKILL)"
    assert "lost contact" in outcome.messages[0]          # rank 0 stopped at its next collective
    assert not (tmp_path / "rank0_0.npz").exists()


def test_the_launcher_names_the_cause_of_a_failure():
    from bpetopics.runs.launch import Outcome

    lost = "rank 0 of 2 lost contact with the other training processes (Connection closed by peer)"
    assert Outcome([0, 0]).ok and Outcome([0, 0]).error() == ""
    # a killed process is the cause, whatever the others said after it
    assert Outcome([2, -9], {0: lost}, [1, 0]).error() == "training process 1 of 2 was killed (SIGKILL)"
    # rank 0's own error (its setup failed; the other stopped first, with nothing to say)
    assert Outcome([2, 2], {0: "corpus source 'x' does not exist"}, [1, 0]).error() == \
        "corpus source 'x' does not exist"
    # an error is preferred to the lost connections it caused
    assert Outcome([2, 2], {0: lost, 1: "training process 1: MemoryError: x"}, [0, 1]).error() == \
        "training process 1: MemoryError: x"
    assert Outcome([0, 3], {}, [1]).error() == "training process 1 of 2 stopped with exit code 3"
