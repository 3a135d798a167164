"""PoissBPE's Dirichlet prior on the topics (``topic_smoothing``): its written-out
gradient, the default's growth as the corpus shrinks, and the sparse prior below 0 with
its floor on the logits."""

import numpy as np
import pytest
import torch

from bpetopics import PoissBPE
from bpetopics.models.poissbpe.topic_priors import LOGIT_FLOOR
from tests.models.poissbpe.test_model import planted_corpus


def test_topic_smoothing_is_the_gradient_of_a_dirichlet_prior_and_smooths_the_topics():
    """The written-out gradient equals autograd's of -(eta / N_tok) sum ln beta, and a fit
    with a strong prior (eta W T = 14,400 pseudo-counts against ~24,000 tokens) lifts the
    near-zero topic-word probabilities of a fit without it."""
    X, _, _ = planted_corpus(n_docs=300)
    model = PoissBPE(n_topics=6, n_bits=8, epochs=20, topic_repulsion=0.0, topic_smoothing=20.0,
                     random_state=0, device="cpu", progress=False).fit(X)
    assert model.n_tokens_ == pytest.approx(float(X.sum()))
    lik = model.likelihood_
    lik.topic_logits.grad = None
    model._penalty_backward(None)
    written = lik.topic_logits.grad.clone()
    lik.topic_logits.grad = None
    penalty = -(20.0 / float(X.sum())) * torch.log(torch.softmax(lik.topic_logits, dim=1)).sum()
    penalty.backward()
    torch.testing.assert_close(written, lik.topic_logits.grad, rtol=1e-4, atol=1e-9)
    plain = PoissBPE(n_topics=6, n_bits=8, epochs=20, topic_repulsion=0.0, random_state=0,
                     device="cpu", progress=False).fit(X)
    assert model.topic_word_.min() > 3 * plain.topic_word_.min()


def test_negative_topic_smoothing_is_a_sparse_prior():
    """eta in (-1, 0), a Dirichlet concentration below 1: the same fit's topics put less
    of their mass outside their top words, and their written-out gradient is still
    autograd's; -1 and below is no Dirichlet and is refused in one line."""
    X, _, _ = planted_corpus(n_docs=300)
    # 24 epochs: the last topic check (epoch 19) leaves the prior five epochs to thin a
    # restarted topic's tail (seeds 0-3: 0.46-0.65 of the tail without it)
    fits = {eta: PoissBPE(n_topics=6, n_bits=8, epochs=24, topic_repulsion=0.0, topic_smoothing=eta,
                          random_state=0, device="cpu", progress=False).fit(X) for eta in (0.0, -0.5)}

    def tail_mass(model):
        return np.sort(model.topic_word_, axis=1)[:, :-20].sum(1).mean()    # all but the top 20 of 120

    assert tail_mass(fits[-0.5]) < 0.8 * tail_mass(fits[0.0])
    assert np.isfinite(fits[-0.5].topic_word_).all()
    model = fits[-0.5]
    lik = model.likelihood_
    lik.topic_logits.grad = None
    model._penalty_backward(None)
    written = lik.topic_logits.grad.clone()
    lik.topic_logits.grad = None
    (0.5 / float(X.sum()) * torch.log(torch.softmax(lik.topic_logits, dim=1)).sum()).backward()
    torch.testing.assert_close(written, lik.topic_logits.grad, rtol=1e-4, atol=1e-9)
    # its logits stay within LOGIT_FLOOR nats of their row's log-normaliser (no subnormal topics)
    with torch.no_grad():
        lik.topic_logits[:, 0] -= 100.0
    model.optimizer_.zero_grad()
    model._adam_step()
    logits = lik.topic_logits.detach()
    assert (torch.logsumexp(logits, 1) - logits.min(1).values).max() <= LOGIT_FLOOR + 1e-4
    for bad in (-1.0, -2.0):
        with pytest.raises(ValueError, match=r"topic_smoothing must be a number > -1"):
            PoissBPE(topic_smoothing=bad).fit(X)


def test_the_default_dirichlet_prior_grows_as_the_corpus_shrinks():
    """topic_smoothing=None: eta 0.1 from 80,000 tokens on, 0.1 x 80,000 / N_tok below,
    at most 1; a number given is used as it is."""
    from bpetopics.models.poissbpe.topic_priors import smoothing_for

    assert smoothing_for(670_109) == smoothing_for(80_000) == 0.1
    assert smoothing_for(40_000) == pytest.approx(0.2)
    assert smoothing_for(17_747) == pytest.approx(0.4508, abs=1e-4)
    assert smoothing_for(5_000) == smoothing_for(0) == 1.0
    X, _, _ = planted_corpus(n_docs=200, doc_len=20)                  # 4,000 tokens
    model = PoissBPE(n_topics=6, n_bits=8, epochs=1, device="cpu", progress=False).fit(X)
    assert model.n_tokens_ == X.sum()
    assert model._topic_smoothing() == 1.0
    assert model._smoothing_strength() == pytest.approx(1.0 / X.sum())
    fixed = PoissBPE(n_topics=6, n_bits=8, epochs=1, topic_smoothing=0.1, device="cpu", progress=False).fit(X)
    assert fixed._smoothing_strength() == pytest.approx(0.1 / X.sum())


def test_the_default_dirichlet_prior_keeps_100_topics_pseudo_counts_above_100_topics():
    """topic_smoothing=None: eta times min(1, 100 / T), so the pseudo-counts of all topics
    together stop growing at T = 100; a number given is used as it is."""
    for n_topics, eta in ((20, 0.1), (100, 0.1), (200, 0.05), (400, 0.025)):
        model = PoissBPE(n_topics=n_topics)
        model.n_tokens_ = 1e6
        assert model._topic_smoothing() == pytest.approx(eta)
        assert model._topic_smoothing() * n_topics == pytest.approx(0.1 * min(n_topics, 100))
    assert PoissBPE(n_topics=200, topic_smoothing=0.1)._topic_smoothing() == 0.1
