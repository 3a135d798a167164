"""The topic logits' Adam step and the next topics in one pass (compiled/topic_step.py,
compiled/vector_math.py): what the gradient's last pass, ``torch.optim.Adam`` and torch's
softmax give, to float rounding, and what a PoissBPE epoch does with it."""

import copy

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from bpetopics import PoissBPE
from bpetopics.models.poissbpe.compiled import fused_theta, kernels, topic_step
from bpetopics.bpe.adam import Adam
from bpetopics.models.poissbpe.packed import PackedCounts

pytestmark = pytest.mark.skipif(kernels.numba is None, reason="numba is not installed")


def test_expf_is_exp_to_float_rounding():
    from numba import njit

    from bpetopics.models.poissbpe.compiled.vector_math import EXP_CEILING, EXP_FLOOR, expf

    @njit
    def apply(x):
        out = np.empty_like(x)
        for i in range(x.shape[0]):
            out[i] = expf(x[i])
        return out

    x = np.concatenate([np.linspace(EXP_FLOOR, EXP_CEILING, 20001, dtype=np.float32),
                        np.random.default_rng(0).normal(0, 5, 5000).astype(np.float32),
                        np.float32([0.0, -0.0, 1e-8, -1e-8, np.log(2.0), -np.log(2.0)])])
    want = np.exp(x.astype(np.float64))
    assert np.max(np.abs(apply(x) / want - 1)) < 3e-7
    assert apply(np.float32([0.0]))[0] == 1.0
    below = apply(np.float32([-88.0, -200.0, -np.inf]))           # floored, not 0 or NaN
    np.testing.assert_allclose(below, np.exp(np.float64(EXP_FLOOR)), rtol=1e-6)
    above = apply(np.float32([89.0, 500.0, np.inf]))              # capped, not inf or garbage
    np.testing.assert_allclose(above, np.exp(np.float64(EXP_CEILING)), rtol=1e-6)


def _case(seed, n_topics=6, n_words=300, n_batch_words=40):
    rng = np.random.default_rng(seed)
    logits = rng.normal(0, 2, (n_topics, n_words)).astype(np.float32)
    beta_t = torch.softmax(torch.from_numpy(logits), 1).numpy()
    words = np.sort(rng.choice(n_words, n_batch_words, replace=False))
    beta_u = np.ascontiguousarray(beta_t[:, words].T)
    d_beta_u = rng.normal(0, 50, (n_batch_words, n_topics)).astype(np.float32)
    usage = rng.dirichlet(np.ones(n_topics)).astype(np.float32)
    return logits, beta_t, words, beta_u, d_beta_u, usage


@pytest.mark.parametrize("repulsion, smoothing", [(0.3, 1e-3), (0.0, 1e-3), (0.3, 0.0), (0.3, -5e-4)])
def test_one_pass_is_the_gradient_then_torch_adam_then_softmax(repulsion, smoothing):
    """Three steps from the same state: the logits, Adam's moments and step, the next
    topics and the softmax shift (the new rows' log-normaliser) agree with the gradient
    written out (fused_theta's pass 3), torch.optim.Adam and torch.softmax."""
    logits, beta_t, words, beta_u, d_beta_u, usage = _case(1)
    ours = torch.nn.Parameter(torch.from_numpy(logits.copy()))
    ref = torch.nn.Parameter(torch.from_numpy(logits.copy()))
    ours_opt = Adam([ours], lr=0.05)
    ref_opt = torch.optim.Adam([ref], lr=0.05)
    shift = topic_step.row_shift(ours)
    ours_beta, ref_beta = beta_t, beta_t
    for _ in range(3):
        grad = np.empty_like(logits)                                  # the reference
        fused_theta._topic_logits_grad(ref_beta, usage, np.float32(repulsion), np.float32(smoothing),
                                       words, np.ascontiguousarray(ref_beta[:, words].T), d_beta_u, grad)
        ref.grad = torch.from_numpy(grad)
        ref_opt.step()
        ref_beta = torch.softmax(ref.detach(), 1).numpy()

        v = np.empty(logits.shape[1], dtype=np.float32)               # ours
        data = np.empty((logits.shape[0], len(words)), dtype=np.float32)
        terms = fused_theta._topic_terms(ours_beta, usage, np.float32(repulsion), np.float32(smoothing),
                                         words, np.ascontiguousarray(ours_beta[:, words].T), d_beta_u, v, data)
        ours_beta = topic_step.adam_and_topics(ours, ours_opt, ours_beta, (v, *terms), smoothing,
                                               words, data, shift).t().numpy()
        assert ours_beta.flags.c_contiguous and ours_beta.shape == logits.shape
        np.testing.assert_allclose(ours.detach().numpy(), ref.detach().numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(ours_beta, ref_beta, rtol=2e-5, atol=1e-9)
        np.testing.assert_allclose(ours_beta.sum(1), 1.0, rtol=1e-5)
        np.testing.assert_allclose(shift, torch.logsumexp(ours.detach().double(), 1).numpy(), atol=1e-5)
    state, ref_state = ours_opt.state[ours], ref_opt.state[ref]
    assert float(state["step"]) == float(ref_state["step"]) == 3.0
    for key in ("exp_avg", "exp_avg_sq"):
        want = ref_state[key].numpy()                                 # (their gradients differ by rounding)
        np.testing.assert_allclose(state[key].numpy(), want, rtol=1e-5, atol=1e-5 * np.abs(want).max())
    assert np.abs(ours.detach().numpy() - logits).max() > 0.1        # the step did move them


@pytest.mark.parametrize("offset", [-300.0, -30.0, 30.0, 300.0])
def test_a_shift_far_from_the_row_falls_back_to_its_maximum(offset):
    """The row's exponentials sum far from 1 (or overflow): it is taken again shifted by
    its maximum."""
    logits, beta_t, words, beta_u, d_beta_u, usage = _case(2)
    param = torch.nn.Parameter(torch.from_numpy(logits.copy()))
    shift = topic_step.row_shift(param) + np.float32(offset)
    v = np.empty(logits.shape[1], dtype=np.float32)
    data = np.empty((logits.shape[0], len(words)), dtype=np.float32)
    terms = fused_theta._topic_terms(beta_t, usage, np.float32(0.3), np.float32(1e-3), words, beta_u,
                                     d_beta_u, v, data)
    beta = topic_step.adam_and_topics(param, Adam([param], lr=0.05), beta_t, (v, *terms), 1e-3,
                                      words, data, shift)
    np.testing.assert_allclose(beta.t().numpy(), torch.softmax(param.detach(), 1).numpy(), rtol=2e-5, atol=1e-9)
    np.testing.assert_allclose(shift, torch.logsumexp(param.detach().double(), 1).numpy(), atol=1e-5)


def _model_and_batch():
    rng = np.random.default_rng(3)
    X = sp.csr_matrix(rng.poisson(0.3, (120, 80)).astype(np.float64))
    model = PoissBPE(n_topics=5, n_bits=12, epochs=2, batch_size=40, random_state=0,
                     device="cpu", progress=False).fit(X, encode=False)
    return model, X


def test_a_theta_step_within_an_epoch_is_the_reference_step():
    """PoissBPE._theta_step within an epoch (the one pass, its topics kept for the next
    minibatch) and outside one (the gradient written out, Adam, softmax): the same step
    to float rounding, and the next topics are what minibatch_params gives."""
    model, X = _model_and_batch()
    assert model.likelihood_.next_topics is None and model._softmax_shift is None
    reference = copy.deepcopy(model)
    X_batch = X[:40]
    for m in (model, reference):
        params = m.likelihood_.minibatch_params()
        batch, codes, _ = m._pursue(X_batch, params, m.prior_weight())
        assert isinstance(batch, PackedCounts)
        if m is model:                        # as _epoch_steps sets them up
            m._softmax_shift = topic_step.row_shift(m.likelihood_.topic_logits)
            m._epoch_constants = m._theta_constants()
        m._theta_step(X_batch, batch, codes, params, m.prior_weight())
    assert model.likelihood_.topic_logits.grad is None
    assert all(p.grad is None for p in model.decoder_.parameters())  # nothing written out
    np.testing.assert_allclose(model.likelihood_.topic_logits.detach().numpy(),
                               reference.likelihood_.topic_logits.detach().numpy(), rtol=1e-5, atol=1e-6)
    for p, q in zip(model.decoder_.parameters(), reference.decoder_.parameters()):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
    handed = model.likelihood_.minibatch_params()
    np.testing.assert_allclose(handed.numpy(), reference.likelihood_.minibatch_params().numpy(),
                               rtol=2e-5, atol=1e-9)
    assert model.likelihood_.next_topics is None                      # taken once
    assert model.step_ == reference.step_
    state = model.optimizer_.state_dict()["state"]
    assert all(float(s["step"]) == float(model.step_) for s in state.values())


def test_an_epoch_leaves_no_topics_or_shift_behind_and_training_follows_the_reference():
    """After an epoch nothing is handed on (the end-of-epoch checks may change the
    logits); a fit with the one pass ends near the torch backend's fit (float rounding
    only; the steps in order on both sides: the pipelined schedule needs the compiled
    pursuit)."""
    model, X = _model_and_batch()
    assert model.likelihood_.next_topics is None and model._softmax_shift is None
    params = dict(n_topics=5, n_bits=12, epochs=2, batch_size=40, random_state=0, device="cpu",
                  progress=False, pipeline=False)
    model = PoissBPE(**params).fit(X, encode=False)
    reference = PoissBPE(backend="torch", **params).fit(X, encode=False)
    assert np.abs(model.topic_word_ - reference.topic_word_).max() < 1e-3
    assert abs(model.history_[-1]["objective"] - reference.history_[-1]["objective"]) < 1e-3 * abs(
        reference.history_[-1]["objective"])


def test_where_the_compiled_passes_do_not_serve_no_shift_is_taken(monkeypatch):
    """On a device or dtype the compiled passes do not serve (CUDA: no numpy view of the
    logits), an epoch takes no softmax shift and the theta step is the reference's."""
    X = sp.csr_matrix(np.random.default_rng(4).poisson(0.3, (60, 40)).astype(np.float64))
    shifts = []
    monkeypatch.setattr(fused_theta, "usable", lambda decoder, beta: False)
    monkeypatch.setattr(topic_step, "row_shift", lambda logits: shifts.append(1))
    model = PoissBPE(n_topics=4, n_bits=8, epochs=2, batch_size=30, random_state=0, device="cpu",
                     progress=False).fit(X, encode=False)
    assert shifts == [] and model.epoch_ == 2 and model._softmax_shift is None
    assert np.isfinite(model.topic_word_).all()


def test_the_floor_keeps_each_logit_within_its_nats_of_the_row_shift():
    """A sparse Dirichlet prior's floor: after the step no logit lies more than ``floor``
    below the shift it was taken with, the logits above it are the unfloored step's, and
    the next topics are the floored logits' softmax."""
    logits, beta_t, words, beta_u, d_beta_u, usage = _case(3)
    logits[:, ::3] -= 40.0                                            # a third of each row far below
    beta_t = torch.softmax(torch.from_numpy(logits), 1).numpy()
    results = {}
    for floor in (float("inf"), 20.0):
        param = torch.nn.Parameter(torch.from_numpy(logits.copy()))
        shift = topic_step.row_shift(param)
        before = shift.copy()
        v = np.empty(logits.shape[1], dtype=np.float32)
        data = np.empty((logits.shape[0], len(words)), dtype=np.float32)
        terms = fused_theta._topic_terms(beta_t, usage, np.float32(0.3), np.float32(-1e-3), words,
                                         np.ascontiguousarray(beta_t[:, words].T), d_beta_u, v, data)
        beta = topic_step.adam_and_topics(param, Adam([param], lr=0.05), beta_t, (v, *terms), -1e-3,
                                          words, data, shift, floor)
        results[floor] = (param.detach().numpy().copy(), beta.t().numpy(), before)
    free, _, _ = results[float("inf")]
    floored, beta, before = results[20.0]
    lowest = before[:, None] - 20.0
    assert (free < lowest).any() and (floored >= lowest - 1e-5).all()
    np.testing.assert_array_equal(floored, np.maximum(free, lowest.astype(np.float32)))
    np.testing.assert_allclose(beta, torch.softmax(torch.from_numpy(floored), 1).numpy(), rtol=2e-5, atol=1e-12)
