"""PoissBPE's entropy prior on the mixtures (``mixture_entropy``,
bpetopics/models/poissbpe/mixture_prior.py): its gradient is autograd's on every theta
path, and on documents that share a background topic it recovers that topic where
maximum likelihood folds it into every other."""

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from bpetopics import PoissBPE
from bpetopics.models.poissbpe.mixture_prior import entropy_for, entropy_gradient, token_shares
from bpetopics.models.poissbpe.packed import PackedCounts, PaddedCounts
from tests.models.poissbpe.test_model import planted_match
from tests.models.poissbpe.test_theta_gradients import grads, poisson_case, zero


def entropy_loss(out, batch, strength, normaliser=None):
    """-epsilon sum_n (L_n / L_S) H(softmax(out_n)), written plainly."""
    mix = torch.softmax(out, dim=-1)
    entropy = -(mix * torch.log(mix)).sum(-1)
    lengths = batch.totals()
    total = lengths.sum() if normaliser is None else normaliser
    return -strength * (lengths * entropy).sum() / total


def test_entropy_gradient_is_autograds():
    _, _, batch, _ = poisson_case(3)
    out = (3 * torch.randn(len(batch), 5, generator=torch.Generator().manual_seed(3),
                           dtype=torch.float64)).requires_grad_()
    entropy_loss(out, batch, 0.3).backward()
    written = entropy_gradient(out, token_shares(batch), 0.3)
    torch.testing.assert_close(written, out.grad, rtol=1e-10, atol=1e-12)
    assert written.abs().max() > 1e-3
    assert torch.equal(written[2], torch.zeros(5, dtype=torch.float64))   # the empty document


def test_token_shares_of_packed_and_padded_batches_agree():
    X = sp.csr_matrix(np.random.default_rng(0).poisson(0.7, size=(6, 30)))
    packed = PackedCounts.from_csr(X, "cpu", dtype=torch.float64)
    padded = PaddedCounts.from_csr(X, "cpu", dtype=torch.float64)
    expected = torch.as_tensor(np.asarray(X.sum(1)).ravel() / X.sum(), dtype=torch.float64)
    torch.testing.assert_close(token_shares(packed), expected)
    torch.testing.assert_close(token_shares(padded), expected)


@pytest.mark.parametrize("hidden", [(), (7,)])
@pytest.mark.parametrize("normaliser", [None, 1.0])
def test_the_shared_theta_steps_add_the_prior_to_the_data_gradient(hidden, normaliser):
    """The shared estimator's hook (``_with_output_prior``: one process, or processes
    sharing a step with ``normaliser`` 1) gives the gradient of data term plus prior."""
    decoder, lik, batch, codes = poisson_case(1, hidden)
    model = PoissBPE(n_topics=5, mixture_entropy=0.4)
    (lik.theta_loss(decoder(codes), batch, normaliser=normaliser)
     + entropy_loss(decoder(codes), batch, 0.4, normaliser)).backward()
    expected = grads(decoder, lik)
    zero(decoder, lik)
    out = model._with_output_prior(decoder(codes), batch, normaliser)
    lik.theta_backward(out, batch, lik.minibatch_params(), normaliser=normaliser)
    for ours, ref in zip(grads(decoder, lik), expected):
        torch.testing.assert_close(ours, ref, rtol=1e-9, atol=1e-12)
    zero(decoder, lik)
    lik.theta_backward(decoder(codes), batch, lik.minibatch_params(), normaliser=normaliser)
    assert not torch.allclose(grads(decoder, lik)[0], expected[0])   # the prior moved it


def test_the_compiled_step_adds_the_torch_paths_prior():
    """fused_theta's pass 1 with the prior: the decoder's gradients as the linear torch
    path gives them (data term plus entropy prior), float32."""
    from bpetopics.models.poissbpe.compiled import fused_theta

    decoder, lik, batch, codes = poisson_case(7, n_docs=30, n_words=60, n_topics=6, n_bits=10)
    decoder, lik = decoder.float(), lik.float()
    batch = PackedCounts(batch.indptr, batch.cols, batch.vals.float(), batch.rows)
    z = codes.float()
    beta = lik.minibatch_params()
    out = decoder.linear_forward(z)
    decoder.set_linear_grad(z, lik.theta_gradient(out, batch, beta)
                            + entropy_gradient(out, token_shares(batch), 0.25))
    expected = grads(decoder)
    zero(decoder, lik)
    fused_theta.set_gradients(decoder, lik, batch, codes.bool(), beta, 0.0, 0.0, entropy=0.25)
    for got, want in zip(grads(decoder), expected):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-6)
    zero(decoder, lik)
    fused_theta.set_gradients(decoder, lik, batch, codes.bool(), beta, 0.0, 0.0)
    assert np.abs(grads(decoder)[0].numpy() - expected[0].numpy()).max() > 1e-3


def background_corpus(seed, n_docs=600, n_themes=5, n_words=120, doc_len=80, background=0.4):
    """Every document draws 40% of its words from one background topic (its own block of
    words) and the rest from one of five themes (blocks too)."""
    rng = np.random.default_rng(seed)
    n_topics = n_themes + 1
    beta = np.full((n_topics, n_words), 0.02 / n_words)
    block = n_words // n_topics
    for t in range(n_topics):
        beta[t, t * block:(t + 1) * block] += rng.dirichlet(np.ones(block)) * 0.98
    beta /= beta.sum(1, keepdims=True)
    mix = np.zeros((n_docs, n_topics))
    mix[:, 0] = background
    mix[np.arange(n_docs), 1 + rng.integers(n_themes, size=n_docs)] = 1 - background
    return sp.csr_matrix(np.stack([rng.multinomial(doc_len, m @ beta) for m in mix])), beta


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_prior_recovers_a_background_topic_that_maximum_likelihood_folds_in(seed):
    """Without the prior each document sits in one topic and the background's words fill
    every topic (the background's best match ~0.64 here); with it the documents' mixtures
    spread and all six planted topics are recovered, the background included."""
    X, beta = background_corpus(seed)
    fits = {eps: PoissBPE(n_topics=6, n_bits=8, mixture_entropy=eps, random_state=seed, device="cpu",
                          progress=False).fit(X) for eps in (0.0, 0.2)}
    plain, spread = (planted_match(beta, fits[eps].topic_word_) for eps in (0.0, 0.2))
    assert plain[0] < 0.8
    assert spread.min() >= 0.95
    assert fits[0.2].doc_topic(X).max(1).mean() < fits[0.0].doc_topic(X).max(1).mean() - 0.15


def test_none_is_five_documents_a_topic_and_at_most_0_2():
    """``mixture_entropy=None``: epsilon = min(0.2, 5 T / N), resolved at fit for the
    corpus's N; the default is no prior, an explicit value is used as given, and a
    negative one refused."""
    assert entropy_for(20, 11_227) == pytest.approx(100 / 11_227)
    assert entropy_for(200, 2_000) == 0.2 and entropy_for(50, 1_250) == pytest.approx(0.2)
    X, _ = background_corpus(0, n_docs=300)
    fitted = PoissBPE(n_topics=6, n_bits=8, epochs=1, mixture_entropy=None, random_state=0, device="cpu",
                      progress=False).fit(X)
    assert fitted.mixture_entropy_in_use() == pytest.approx(30 / 300)
    assert PoissBPE().mixture_entropy_in_use() == 0.0
    assert PoissBPE(mixture_entropy=0.3).mixture_entropy_in_use() == 0.3
    with pytest.raises(ValueError, match="mixture_entropy"):
        PoissBPE(n_topics=6, mixture_entropy=-0.1, progress=False).fit(X)
