"""The pipelined schedule (pipelined_steps.py): each code is the greedy pursuit's for the
theta one step before; the model does not depend on the threads; an error in a step
abandons the pursuit handed ahead. The pursuit it hands ahead, from CSR rows, is tested
in compiled/test_rows_pursuit.py."""

import copy

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from bpetopics import PoissBPE
from bpetopics.models.poissbpe import pipelined_steps
from bpetopics.models.poissbpe.compiled import kernels
from bpetopics.models.poissbpe.compiled import rows_pursuit
from bpetopics.models.poissbpe.compiled.rows_pursuit import RowsPursuit
from tests.models.poissbpe.compiled.test_rows_pursuit import helper_starts_on
from tests.models.poissbpe.test_mixture_prior import reference_prior_pursuit

pytestmark = pytest.mark.skipif(not kernels.available("cpu"), reason="numba is not installed")


def _corpus(seed=0, n_docs=600, n_words=120, n_topics=4):
    rng = np.random.default_rng(seed)
    topics = rng.dirichlet(np.full(n_words, 0.1), n_topics)
    mix = rng.dirichlet(np.full(n_topics, 0.3), n_docs)
    return sp.csr_matrix(np.stack([rng.multinomial(rng.integers(20, 80), p) for p in mix @ topics]))


def _fit(X, threads, pipeline, **params):
    count = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        params = {"epochs": 3, **params}
        return PoissBPE(n_topics=4, n_bits=16, batch_size=32, pipeline=pipeline, random_state=0,
                        device="cpu", progress=False, **params).fit(X)
    finally:
        torch.set_num_threads(count)


def test_pipelined_training_is_the_same_on_one_thread_and_two():
    X = _corpus()
    one, two = _fit(X, 1, True), _fit(X, 2, True)
    assert np.array_equal(one.topic_word_, two.topic_word_)
    assert np.array_equal(one.codes_, two.codes_)
    assert [h["objective"] for h in one.history_] == [h["objective"] for h in two.history_]
    assert not np.array_equal(one.topic_word_, _fit(X, 1, False).topic_word_)   # a schedule of its own


@pytest.mark.parametrize("pipeline", [False, True])
def test_both_schedules_take_the_one_steps_parts(pipeline):
    """Every minibatch's update is the model's _update, whose q(pi) and theta steps are the
    model's own; the pipelined schedule pursues only each epoch's first minibatch with
    _pursue (the rest ahead), the steps in order every minibatch."""
    X = _corpus(n_docs=160)
    model = PoissBPE(n_topics=4, n_bits=10, epochs=2, batch_size=40, pipeline=pipeline, random_state=0,
                     device="cpu", progress=False)
    calls = {"_pursue": 0, "_update": 0, "_prior_step": 0, "_theta_step": 0}

    def counting(name):
        real = getattr(PoissBPE, name)

        def part(self, *args, **kwargs):
            calls[name] += 1
            return real(self, *args, **kwargs)
        return part.__get__(model)

    for name in calls:
        setattr(model, name, counting(name))
    model.fit(X, encode=False)
    steps = 2 * model._steps_per_epoch()
    assert calls["_update"] == calls["_prior_step"] == calls["_theta_step"] == steps == model.step_
    assert calls["_pursue"] == (2 if pipeline else steps)


def test_topic_checks_sharing_their_pursuit_with_the_helper_change_nothing(monkeypatch):
    """The end-of-epoch topic checks pursue their sample with the helper thread on two
    threads (every pursuit shared here, however small): the same model as on one."""
    from bpetopics.models.poissbpe.compiled import fused_pursuit

    monkeypatch.setattr(fused_pursuit, "MIN_PARALLEL_WORK", 0)
    calls, real = [], rows_pursuit.pursue
    monkeypatch.setattr(rows_pursuit, "pursue", lambda X, theta, threads=1: calls.append(threads) or real(X, theta, threads))
    X = _corpus(seed=3)
    one = _fit(X, 1, True, epochs=5)
    assert calls and set(calls) == {1}
    calls.clear()
    two = _fit(X, 2, True, epochs=5)
    assert calls and set(calls) == {2}                       # the checks' pursuits, shared
    assert np.array_equal(one.topic_word_, two.topic_word_)
    assert [h["objective"] for h in one.history_] == [h["objective"] for h in two.history_]


def test_each_pipelined_code_is_the_pursuit_under_the_theta_one_step_before():
    """Record, at each theta step b, the model's theta and q(pi) (those the pursuit of
    minibatch b + 1 reads); then minibatch b + 1's codes must be the reference pursuit's
    under them (of the score with the mixtures' entropy prior, the default). The first
    minibatch of each epoch is pursued with the current theta."""
    X = _corpus(n_docs=200)
    model = PoissBPE(n_topics=4, n_bits=10, epochs=2, batch_size=50, pipeline=True, random_state=0,
                     device="cpu", progress=False)
    seen = []
    real_step = PoissBPE._theta_step

    def recording_step(self, X_batch, batch, codes, params, weight):
        seen.append((batch, codes.clone(), copy.deepcopy(self.decoder_), params.clone(),
                     self.prior_.bit_log_odds().clone(), self.step_))
        return real_step(self, X_batch, batch, codes, params, weight)

    model._theta_step = recording_step.__get__(model)
    model.fit(X, encode=False)
    steps = model._steps_per_epoch()
    assert len(seen) == 2 * steps
    lik = model.likelihood_
    checked = 0
    for (_, _, decoder, params, log_odds, step), (batch, codes, *_rest) in zip(seen, seen[1:]):
        if (step + 1) % steps == 0:              # the next minibatch starts an epoch: not stale
            continue
        log_odds = (model.prior_weight(step + 1) * log_odds).float()
        expected = reference_prior_pursuit(decoder, _Frozen(lik, params), batch, log_odds,
                                           model.mixture_entropy_in_use())
        assert torch.equal(codes, expected), step
        checked += 1
    assert checked == 2 * (steps - 1)


class _Frozen:
    """The likelihood with its topics fixed at ``beta`` (the reference pursuit reads
    ``data_term``)."""

    def __init__(self, likelihood, beta):
        self.likelihood, self.beta = likelihood, beta

    def data_term(self, out, batch, beta=None):
        return self.likelihood.data_term(out, batch, self.beta)


def test_pipeline_is_checked():
    with pytest.raises(ValueError, match="pipeline"):
        PoissBPE(pipeline="yes").fit(_corpus(n_docs=20))


def test_an_error_in_a_pipelined_step_abandons_the_pursuit_handed_ahead(monkeypatch):
    model = PoissBPE(n_topics=4, n_bits=8, epochs=1, batch_size=30, random_state=0, device="cpu",
                     progress=False)
    handed = []
    real_ahead = pipelined_steps._ahead
    monkeypatch.setattr(pipelined_steps, "_ahead", lambda *a: handed.append(real_ahead(*a)) or handed[-1])

    def failing_step(*args):
        raise FloatingPointError("diverged")

    model._theta_step = failing_step
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with pytest.raises(FloatingPointError, match="diverged"):
            model.fit(_corpus(n_docs=120))
    finally:
        torch.set_num_threads(threads)
    assert handed and handed[-1].state[rows_pursuit._GO] == -1


def test_an_error_after_the_next_pursuit_is_handed_abandons_it_too(monkeypatch):
    """An error (a Ctrl-C, say) between handing the pursuit after the next to the helper
    and finishing the current one: both are abandoned, and the helper is free again
    (a helper left waiting would spin for ever and abort the process at exit)."""
    model = PoissBPE(n_topics=4, n_bits=8, epochs=1, batch_size=30, random_state=0, device="cpu",
                     progress=False)
    handed = []
    real_ahead = pipelined_steps._ahead
    monkeypatch.setattr(pipelined_steps, "_ahead", lambda *a: handed.append(real_ahead(*a)) or handed[-1])
    joins = []
    real_join = RowsPursuit.join

    def join_then_interrupt(self):
        joins.append(self)
        if len(joins) == 2:
            raise KeyboardInterrupt
        real_join(self)

    monkeypatch.setattr(RowsPursuit, "join", join_then_interrupt)
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with pytest.raises(KeyboardInterrupt):
            model.fit(_corpus(n_docs=150))
    finally:
        torch.set_num_threads(threads)
    n_shares = pipelined_steps.SHARES
    assert len(handed) == 3
    for pursuit in handed:
        assert (pursuit.state[rows_pursuit._GO] == -1
                or pursuit.state[rows_pursuit._DONE_SHARES] == n_shares), pursuit.state
    assert handed[-1].state[rows_pursuit._GO] == -1               # the one handed just before
    after = RowsPursuit(_corpus(n_docs=30), handed[0].theta, n_shares=2)
    rows_pursuit.helper().hand(after)
    assert helper_starts_on(after)                                        # the helper is free again
    after.finish()
