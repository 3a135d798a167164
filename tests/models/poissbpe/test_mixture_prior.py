"""PoissBPE's entropy prior on the mixtures (``mixture_entropy``,
bpetopics/models/poissbpe/mixture_prior.py): its gradient is autograd's on every theta
path, every pursuit path scores it as the per-document reference does, and on documents
that share a background topic it recovers that topic where maximum likelihood folds it
into every other."""

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from bpetopics import PoissBPE
from bpetopics.bpe.pursuit import greedy_pursuit
from bpetopics.models.poissbpe.compiled import kernels, rows_pursuit
from bpetopics.models.poissbpe.mixture_prior import entropy_for, entropy_gradient, token_shares
from bpetopics.models.poissbpe.packed import PackedCounts, PaddedCounts
from bpetopics.models.poissbpe.table_pursuit import table_pursuit
from tests.models.poissbpe.test_model import planted_match
from tests.models.poissbpe.test_table_pursuit import path, text_case, zipf_corpus  # noqa: F401 (fixture)
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


def prior_score(decoder, lik, batch, codes, log_odds, strength):
    """Each code's full score: data term + its bits' log-odds + epsilon L_n H(f(z_n))."""
    with torch.no_grad():
        out = decoder(codes.float())
        entropy = torch.special.entr(torch.softmax(out, dim=-1)).sum(-1)
        return lik.data_term(out, batch) + codes.float() @ log_odds + strength * batch.totals() * entropy


def reference_prior_pursuit(decoder, lik, batch, log_odds, strength):
    """The greedy pursuit of the prior's score, one document and one bit at a time."""
    n_bits = log_odds.shape[0]
    codes = torch.zeros(len(batch), n_bits, dtype=torch.bool)
    for n in range(len(batch)):
        one = batch.take(torch.tensor([n]))
        best = prior_score(decoder, lik, one, codes[n:n + 1], log_odds, strength)[0]
        while True:
            trials = codes[n].repeat(n_bits, 1)
            trials[torch.arange(n_bits), torch.arange(n_bits)] = True
            scores = prior_score(decoder, lik, one.take(torch.zeros(n_bits, dtype=torch.long)), trials,
                                 log_odds, strength)
            scores[codes[n]] = -torch.inf
            value, bit = scores.max(0)
            if not value > best:
                break
            codes[n, bit], best = True, value
    return codes


@pytest.mark.parametrize("hidden", [(), (16,)])
def test_every_pursuit_path_scores_the_prior_as_the_reference(path, hidden):
    """The fused loop (every bit scored, or bounded first), the step-by-step kernels and
    torch pick the codes of the per-document pursuit of data + log-odds + epsilon L_n H,
    and return that score; the prior changes the codes (it is scored at all)."""
    decoder, lik = text_case(5, hidden=hidden)
    X = zipf_corpus(40, 300, seed=5)
    batch = lik.batch(X, "cpu")
    log_odds = -torch.rand(12, generator=torch.Generator().manual_seed(5))
    codes, score = table_pursuit(decoder, lik, batch, log_odds, return_score=True, mixture_entropy=0.3)
    assert torch.equal(codes, reference_prior_pursuit(decoder, lik, batch, log_odds, 0.3))
    torch.testing.assert_close(score, prior_score(decoder, lik, batch, codes, log_odds, 0.3), rtol=1e-5, atol=1e-3)
    plain = table_pursuit(decoder, lik, batch, log_odds)
    assert (codes != plain).any(1).sum() >= 5
    assert torch.equal(greedy_pursuit(decoder, lik, batch, log_odds, mixture_entropy=0.3), codes)
    with pytest.raises(ValueError, match="packed batches only"):
        greedy_pursuit(decoder, lik, PaddedCounts.from_csr(X, "cpu"), log_odds, mixture_entropy=0.3)


@pytest.mark.skipif(not kernels.available("cpu"), reason="numba is not installed")
def test_training_rows_pursuit_scores_the_prior_as_the_table_pursuit():
    """The pursuit of a training step (from CSR rows, the first codes' entropies computed
    with the first step's table) picks the table pursuit's codes, with the same scores."""
    decoder, lik = text_case(9)
    X = zipf_corpus(60, 300, seed=9)
    log_odds = -torch.rand(12, generator=torch.Generator().manual_seed(9))
    beta = lik.topic_word()
    codes, score = table_pursuit(decoder, lik, lik.batch(X, "cpu"), log_odds, return_score=True,
                                 mixture_entropy=0.3)
    theta = rows_pursuit.ThetaCopy(decoder, log_odds, beta, 12, mixture_entropy=0.3)
    _, rows_codes, rows_score = rows_pursuit.pursue(X, theta)
    assert torch.equal(rows_codes, codes)
    torch.testing.assert_close(rows_score, score, rtol=1e-5, atol=1e-3)


@pytest.mark.skipif(not kernels.available("cpu"), reason="numba is not installed")
def test_candidates_whose_softmax_underflows_take_the_direct_entropy():
    """Weight +80 on topic 0 for half the bits and -80 for the others: once a code holds
    one of the first, the others' factored softmax sums to ~1e-35 (not a normal float),
    and their entropies are computed directly: still the reference's codes."""
    decoder, lik = text_case(3)
    with torch.no_grad():
        decoder.first.weight[0, :6] = 80.0
        decoder.first.weight[0, 6:] = -80.0
    X = zipf_corpus(60, 300, 3)
    log_odds = torch.full((12,), 0.5)                     # bits are cheap: codes grow long
    theta = rows_pursuit.ThetaCopy(decoder, log_odds, lik.minibatch_params(), 12, mixture_entropy=0.3)
    codes = rows_pursuit.pursue(X, theta)[1]
    assert torch.equal(codes, reference_prior_pursuit(decoder, lik, lik.batch(X, "cpu"), log_odds, 0.3))
    assert (codes[:, :6].any(1) & codes[:, 6:].any(1)).any()   # both kinds in one code


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
    spread, the background comes back as a topic of its own and the themes with it."""
    X, beta = background_corpus(seed)
    fits = {eps: PoissBPE(n_topics=6, n_bits=8, mixture_entropy=eps, random_state=seed, device="cpu",
                          progress=False).fit(X) for eps in (0.0, 0.3)}
    plain, spread = (planted_match(beta, fits[eps].topic_word_) for eps in (0.0, 0.3))
    assert plain[0] < 0.8
    assert spread[0] >= 0.99
    assert spread.min() >= 0.9
    assert fits[0.3].doc_topic(X).max(1).mean() < fits[0.0].doc_topic(X).max(1).mean() - 0.15


def test_none_is_five_documents_a_topic_and_at_most_0_2():
    """``mixture_entropy=None``: epsilon = min(0.2, 5 T / N), resolved at fit for the
    corpus's N (the default; asked before fit, a one-line error); an explicit value, 0 (no
    prior) included, is used as given, and a negative one refused."""
    assert entropy_for(20, 11_227) == pytest.approx(100 / 11_227)
    assert entropy_for(200, 2_000) == 0.2 and entropy_for(50, 1_250) == pytest.approx(0.2)
    X, _ = background_corpus(0, n_docs=300)
    fitted = PoissBPE(n_topics=6, n_bits=8, epochs=1, mixture_entropy=None, random_state=0, device="cpu",
                      progress=False).fit(X)
    assert fitted.mixture_entropy_in_use() == pytest.approx(30 / 300)
    assert PoissBPE().mixture_entropy is None and PoissBPE(mixture_entropy=0).mixture_entropy_in_use() == 0.0
    assert PoissBPE(mixture_entropy=0.3).mixture_entropy_in_use() == 0.3
    with pytest.raises(RuntimeError, match="fit this PoissBPE first") as err:   # N unknown yet
        PoissBPE().mixture_entropy_in_use()
    assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match="mixture_entropy"):
        PoissBPE(n_topics=6, mixture_entropy=-0.1, progress=False).fit(X)
