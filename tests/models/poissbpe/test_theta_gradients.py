"""The theta step's written-out gradients (core/poisson.py, core/topic_prior.py) equal
autograd's of the losses they differentiate, in float64."""

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from bpetopics import PoissBPE
from bpetopics.bpe.decoder import CodeDecoder
from bpetopics.models.poissbpe.packed import PackedCounts
from bpetopics.models.poissbpe.poisson import PoissonLikelihood
from bpetopics.models.poissbpe.topic_prior import topic_overlap, topic_overlap_grad


def poisson_case(seed, hidden=(), n_docs=9, n_words=40, n_topics=5, n_bits=8):
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    decoder = CodeDecoder(n_bits, n_topics, hidden).double()
    lik = PoissonLikelihood(n_words, n_topics).double()
    with torch.no_grad():
        lik.topic_logits.copy_(2 * torch.randn(n_topics, n_words, generator=gen, dtype=torch.float64))
        for p in decoder.parameters():
            p.mul_(3)
    counts = np.random.default_rng(seed).poisson(0.5, size=(n_docs, n_words))
    counts[2] = 0                              # an empty document contributes nothing
    X = sp.csr_matrix(counts)
    batch = PackedCounts.from_csr(X, "cpu", dtype=torch.float64)
    codes = (torch.rand(n_docs, n_bits, generator=gen) < 0.3).double()
    return decoder, lik, batch, codes


def grads(*modules):
    return [p.grad.clone() for m in modules for p in m.parameters()]


def zero(*modules):
    for m in modules:
        for p in m.parameters():
            p.grad = None


@pytest.mark.parametrize("hidden", [(), (7,)])
@pytest.mark.parametrize("normaliser", [None, 1.0])
def test_poisson_theta_backward_equals_autograd(hidden, normaliser):
    decoder, lik, batch, codes = poisson_case(0, hidden)
    lik.theta_loss(decoder(codes), batch, normaliser=normaliser).backward()
    expected = grads(decoder, lik)
    zero(decoder, lik)
    lik.theta_backward(decoder(codes), batch, lik.minibatch_params(), normaliser=normaliser)
    for ours, ref in zip(grads(decoder, lik), expected):
        assert torch.allclose(ours, ref, rtol=1e-10, atol=1e-12)
    assert expected[-1].abs().max() > 1e-3           # the topics do get a gradient


@pytest.mark.parametrize("n_topics", [5, 21])
@pytest.mark.parametrize("normaliser", [None, 1.0])
def test_compiled_data_gradient_equals_the_torch_path_in_float32(n_topics, normaliser,
                                                                   monkeypatch):
    """theta_backward's one-pass compiled data gradient (float32, CPU) gives the torch
    path's gradients to float32 rounding, and autograd's of the loss."""
    from bpetopics.models.poissbpe.compiled import fused_gradient, kernels

    if kernels.numba is None:
        pytest.skip("numba is not installed")
    decoder, lik, batch, codes = poisson_case(2, n_topics=n_topics, n_docs=30, n_words=60)
    decoder, lik, codes = decoder.float(), lik.float(), codes.float()
    batch = PackedCounts(batch.indptr, batch.cols, batch.vals.float(), batch.rows)
    runs = []
    for compiled in (True, False):
        monkeypatch.setattr(fused_gradient, "usable", lambda mix, on=compiled: on)
        zero(decoder, lik)
        lik.theta_backward(decoder(codes), batch, lik.minibatch_params(), normaliser=normaliser)
        runs.append(grads(decoder, lik))
    zero(decoder, lik)
    lik.theta_loss(decoder(codes), batch, normaliser=normaliser).backward()
    for ours, torch_path, ref in zip(*runs, grads(decoder, lik)):
        scale = ref.abs().max()
        assert torch.allclose(ours, torch_path, rtol=1e-5, atol=1e-6 * scale)
        assert torch.allclose(ours, ref, rtol=1e-4, atol=1e-5 * scale)
    assert runs[0][-1].abs().max() > 1e-3


def test_theta_loss_reaches_the_topics_even_given_detached_params():
    decoder, lik, batch, codes = poisson_case(1)
    lik.theta_loss(decoder(codes), batch, lik.minibatch_params()).backward()
    assert lik.topic_logits.grad is not None and lik.topic_logits.grad.abs().max() > 1e-3


@pytest.mark.parametrize("weighted", [False, True])
def test_topic_overlap_grad_equals_autograd(weighted):
    gen = torch.Generator().manual_seed(2)
    logits = torch.randn(6, 30, generator=gen, dtype=torch.float64, requires_grad=True)
    usage = torch.rand(6, generator=gen, dtype=torch.float64) if weighted else None
    beta = torch.softmax(logits, 1).t()                       # (W, T), as the likelihood gives it
    value = topic_overlap(beta, usage)
    (expected,) = torch.autograd.grad(value, beta)
    ours_value, ours, inner = topic_overlap_grad(beta.detach(), usage)
    assert float(ours_value) == pytest.approx(float(value.detach()), rel=1e-12)
    assert torch.allclose(ours, expected.t(), rtol=1e-10, atol=1e-14)
    assert torch.allclose(inner, (ours * beta.detach().t()).sum(1), rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("sparse", [False, True])
def test_softmax_chain_into_the_logits_equals_autograd(sparse):
    _, lik, _, _ = poisson_case(3)
    gen = torch.Generator().manual_seed(3)
    words = torch.tensor([1, 4, 5, 17, 39])
    grad = torch.randn(5, words.numel() if sparse else 40, generator=gen, dtype=torch.float64)
    dense = torch.zeros(5, 40, dtype=torch.float64)
    if sparse:
        dense[:, words] = grad
    else:
        dense = grad
    (lik.topic_word().t() * dense).sum().backward()
    expected = lik.topic_logits.grad.clone()
    lik.topic_logits.grad = None
    lik.add_topic_word_grad(grad.clone(), lik.minibatch_params(), words if sparse else None)
    assert torch.allclose(lik.topic_logits.grad, expected, rtol=1e-10, atol=1e-14)
    lik.add_topic_word_grad(grad.clone(), lik.minibatch_params(), words if sparse else None)
    assert torch.allclose(lik.topic_logits.grad, 2 * expected, rtol=1e-10, atol=1e-14)  # accumulates


@pytest.mark.parametrize("repulsion, smoothing", [(0.05, 0.1), (0.05, 0.0), (0.0, 0.1), (0.05, -0.5)])
def test_a_poissbpe_step_gets_autograds_gradient_of_loss_plus_prior(repulsion, smoothing):
    """Both topic priors' written-out gradients (chained through the softmax together, or
    either alone) and the data term's equal autograd's of the loss plus the penalty."""
    X = sp.csr_matrix(np.random.default_rng(4).poisson(0.4, size=(30, 25)))
    model = PoissBPE(n_topics=4, n_bits=6, epochs=1, topic_repulsion=repulsion,
                     topic_smoothing=smoothing, device="cpu", progress=False).fit(X)
    batch = model.likelihood_.batch(X[:16], "cpu")
    codes = torch.as_tensor(model.codes_[:16]).float()
    params = model.likelihood_.minibatch_params()
    modules = (model.decoder_, model.likelihood_)
    zero(*modules)
    out = model.decoder_(codes)
    (model.likelihood_.theta_loss(out, batch) + model._theta_penalty(out)).backward()
    expected = grads(*modules)
    zero(*modules)
    out = model.decoder_(codes)
    model.likelihood_.theta_backward(out, batch, params)
    model._penalty_backward(out, params)
    for ours, ref in zip(grads(*modules), expected):
        assert torch.allclose(ours, ref, rtol=1e-4, atol=1e-7)


def test_topic_logits_are_saved_word_by_topic_and_load_back():
    _, lik, _, _ = poisson_case(5)
    state = lik.state_dict()
    assert state["topic_logits"].shape == (40, 5) and state["topic_logits"].is_contiguous()
    other = PoissonLikelihood(40, 5).double()
    other.load_state_dict(state)
    assert torch.equal(other.topic_logits, lik.topic_logits)
    assert torch.allclose(lik.topic_word().sum(0), torch.ones(5, dtype=torch.float64))


def test_a_linear_decoders_written_out_step_is_autograds_bit_for_bit():
    """PoissBPE's theta step with a linear decoder (linear_forward, theta_gradient,
    set_linear_grad) gives the values and gradients autograd gives, float32."""
    decoder, lik, batch, codes = poisson_case(4)
    decoder, lik = decoder.float(), lik.float()
    batch = PackedCounts(batch.indptr, batch.cols, batch.vals.float(), batch.rows)
    z = codes.float()
    out = decoder(z)
    lik.theta_backward(out, batch)
    expected = grads(decoder, lik)
    zero(decoder, lik)
    fast = decoder.linear_forward(z)
    decoder.set_linear_grad(z, lik.theta_gradient(fast, batch))
    assert torch.equal(fast, out.detach()) and not fast.requires_grad
    assert all(torch.equal(a, b) for a, b in zip(grads(decoder, lik), expected))


def test_topic_rows_gather_the_batch_words_rows_of_beta():
    _, lik, batch, _ = poisson_case(5)
    beta = lik.float().minibatch_params()                           # (W, T), a transposed view
    words, _ = batch.vocabulary(beta.shape[0])
    rows = batch.topic_rows(beta)
    assert rows.is_contiguous() and torch.equal(rows, beta[words])
    assert batch.topic_rows(beta) is rows                             # once per beta


@pytest.mark.parametrize("repulsion, smoothing", [(0.3, 1e-4), (0.0, 1e-4), (0.3, 0.0), (0.0, 0.0), (0.3, -5e-5)])
def test_the_compiled_theta_gradients_are_the_torch_paths(repulsion, smoothing):
    """core/fused_theta.py: the decoder's and the topic logits' gradients of a step (data
    term, diversity prior, Dirichlet prior) as the torch operations give them, float32."""
    from bpetopics.models.poissbpe.compiled import fused_theta

    decoder, lik, batch, codes = poisson_case(7, n_docs=30, n_words=60, n_topics=6, n_bits=10)
    decoder, lik = decoder.float(), lik.float()
    batch = PackedCounts(batch.indptr, batch.cols, batch.vals.float(), batch.rows)
    model = PoissBPE(n_topics=6, topic_repulsion=1.0, topic_smoothing=1.0)
    model.likelihood_, model.n_tokens_ = lik, 1.0
    z = codes.float()
    beta = lik.minibatch_params()
    out = decoder.linear_forward(z)
    decoder.set_linear_grad(z, lik.theta_gradient(out, batch, beta))
    if repulsion:
        _, grad, inner = topic_overlap_grad(beta, lik.link(out).mean(0), scale=repulsion)
        lik.add_topic_word_grad(grad, beta, inner=inner - smoothing * beta.shape[0])
    else:
        lik.topic_logits.grad.add_(smoothing * (beta.t() * beta.shape[0] - 1))
    if repulsion:
        lik.topic_logits.grad.sub_(smoothing)
    expected = grads(decoder, lik)
    zero(decoder, lik)
    fused_theta.set_gradients(decoder, lik, batch, codes.bool(), beta, repulsion, smoothing)
    for got, want in zip(grads(decoder, lik), expected):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-6)


def _fitted_for_shared_steps(seed, n_topics, extra):
    """A PoissBPE fitted one epoch on seeded noise counts (80 x 50), and its topics; skips
    without numba (the compiled paths under test need it)."""
    from bpetopics.models.poissbpe.compiled import kernels

    if not kernels.available(torch.device("cpu")):
        pytest.skip("numba is not installed")
    rng = np.random.default_rng(seed)
    X = sp.csr_matrix(rng.poisson(0.3, size=(80, 50)) + (rng.random((80, 50)) < 0.02))
    X = X[np.asarray(X.sum(1)).ravel() > 0]
    model = PoissBPE(n_topics=n_topics, n_bits=12, epochs=1, batch_size=16, random_state=0, progress=False,
                     **extra).fit(X)
    return model, X, model.likelihood_.minibatch_params()


@pytest.mark.parametrize("extra", [{}, {"mixture_entropy": 0.3}, {"topic_repulsion": 0.0}])
def test_a_shares_compiled_gradients_are_the_torch_paths(extra):
    """Processes sharing a step: one share's gradients of its summed loss and its summed
    mixtures (step_paths.py, compiled) as the shared estimator's torch path gives them."""
    from bpetopics.bpe.training_step import TrainingStep

    model, X, params = _fitted_for_shared_steps(4, 5, extra)
    batch, _, _ = model._pursue(X[:21], params, model.prior_weight())
    assert isinstance(batch, PackedCounts)
    codes = torch.rand(21, model.code_length(), generator=torch.Generator().manual_seed(1)) < 0.3
    model_params = model._parameters()
    usage = TrainingStep._share_gradients(model, batch, codes, params)
    expected = [p.grad.clone() for p in model_params]
    got_usage = model._share_gradients(batch, codes, params)
    assert (usage is None) == (got_usage is None) == (not model.topic_repulsion)
    if usage is not None:
        np.testing.assert_allclose(got_usage.numpy(), usage.numpy(), rtol=1e-5)
    for p, want in zip(model_params, expected):
        assert want.abs().max() > 0
        np.testing.assert_allclose(p.grad.numpy(), want.numpy(), rtol=1e-4, atol=1e-5 * float(want.abs().max()))


@pytest.mark.parametrize("extra", [{}, {"topic_repulsion": 0.0}, {"topic_smoothing": 0.0}])
def test_a_shared_steps_compiled_prior_gradients_are_the_torch_paths(extra):
    """Processes sharing a step add the topics' priors once, to the summed gradients:
    step_paths.py's compiled call as the shared estimator's torch path."""
    from bpetopics.bpe.training_step import TrainingStep

    model, _, params = _fitted_for_shared_steps(5, 6, extra)
    usage = torch.softmax(torch.randn(6, generator=torch.Generator().manual_seed(2)), 0)
    usage = usage if model.topic_repulsion else None
    logits = model.likelihood_.topic_logits
    start = torch.zeros(logits.shape)          # a summed data term (zero: rounding stays the priors')
    logits.grad = start.clone()
    TrainingStep._shared_penalty_backward(model, params, usage)
    want = logits.grad.clone()
    logits.grad = start.clone()
    model._shared_penalty_backward(params, usage)
    added = (want - start).abs().max()
    assert added > 0                                     # the priors do add a gradient
    np.testing.assert_allclose((logits.grad - start).numpy(), (want - start).numpy(), rtol=1e-3,
                               atol=1e-4 * float(added))
