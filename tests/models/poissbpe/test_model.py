"""PoissBPE end to end on documents sampled from a known PoissBPE."""

import numpy as np
import pytest
import scipy.sparse as sp
import torch
from scipy.optimize import linear_sum_assignment

from bpetopics import PoissBPE


def hoyer(codes):
    k, s = codes.shape[1], codes.sum(1)
    return np.where(s == 0, 1.0, (np.sqrt(k) - np.sqrt(s)) / (np.sqrt(k) - 1)).mean()


def planted_corpus(n_docs=1500, n_topics=6, n_words=120, n_bits=8, doc_len=80, seed=0):
    """Topics own disjoint blocks of words; bit k < T raises topic k, so a code with
    bits {j, k} mixes topics j and k half and half; codes have 1 or 2 bits."""
    rng = np.random.default_rng(seed)
    beta = np.full((n_topics, n_words), 0.02 / n_words)
    block = n_words // n_topics
    for t in range(n_topics):
        beta[t, t * block:(t + 1) * block] += rng.dirichlet(np.ones(block)) * 0.98
    beta /= beta.sum(1, keepdims=True)
    codes = np.zeros((n_docs, n_bits), dtype=np.uint8)
    first = rng.integers(n_topics, size=n_docs)
    codes[np.arange(n_docs), first] = 1
    two = rng.random(n_docs) < 0.4
    second = (first + rng.integers(1, n_topics, size=n_docs)) % n_topics
    codes[np.where(two)[0], second[two]] = 1
    logits = 8.0 * codes[:, :n_topics]
    mix = np.exp(logits - logits.max(1, keepdims=True))
    mix /= mix.sum(1, keepdims=True)
    counts = np.stack([rng.multinomial(doc_len, m @ beta) for m in mix])
    return sp.csr_matrix(counts), beta, codes


@pytest.fixture(scope="module")
def planted_fit():
    X, beta, codes = planted_corpus()
    model = PoissBPE(n_topics=6, n_bits=8, random_state=0, device="cpu", progress=False).fit(X)
    return model, X, beta, codes


def planted_match(beta, fitted):
    """Cosine of each planted topic to its fitted match (Hungarian method), shape (T,)."""
    cos = (beta / np.linalg.norm(beta, axis=1, keepdims=True)) @ \
          (fitted / np.linalg.norm(fitted, axis=1, keepdims=True)).T
    rows, cols = linear_sum_assignment(-cos)
    return cos[rows, cols]


def test_recovers_planted_topics(planted_fit):
    model, X, beta, _ = planted_fit
    assert planted_match(beta, model.topic_word_).min() >= 0.9
    assert len(np.unique(model.doc_topic(X).argmax(1))) == 6     # every topic is used


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_recovers_planted_topics_whatever_the_seed(seed):
    """Issue #14: recovery depended on the seed (minimum cosine 0.3 to 0.5 for some);
    split moves (core/topic_split.py) leave such local optima. Seed s draws the corpus
    and seeds the model; seeds 2 and 3 each failed one way before (docs/defaults.md)."""
    X, beta, _ = planted_corpus(seed=seed)
    model = PoissBPE(n_topics=6, n_bits=8, random_state=seed, device="cpu", progress=False).fit(X)
    assert planted_match(beta, model.topic_word_).min() >= 0.9
    assert len(np.unique(model.doc_topic(X).argmax(1))) == 6     # no topic is unused


def test_codes_are_as_sparse_as_the_planted_ones(planted_fit):
    """Planted: 1.43 bits per code, Hoyer 0.903. With the default epochs (84 here) the
    codes drift towards one bit late in training (seeds 0-7: 1.03 to 1.45 bits before
    split moves, 0.98 to 1.86 with them; docs/defaults.md), so the lower bound is 0.9 bits."""
    model, _, _, codes = planted_fit
    assert abs(hoyer(model.codes_) - hoyer(codes)) < 0.1
    assert 0.9 < model.codes_.sum(1).mean() < 2.0
    assert len(np.unique(model.codes_, axis=0)) >= 10


def test_objective_rises_over_epochs_without_nan(planted_fit):
    model, *_ = planted_fit
    objective = np.array([h["objective"] for h in model.history_])
    assert np.isfinite(objective).all()
    assert objective[-5:].mean() > objective[:3].mean()


def test_fitted_model_api(planted_fit):
    model, X, _, _ = planted_fit
    topic_word = model.topic_word_
    assert topic_word.shape == (6, 120)
    np.testing.assert_allclose(topic_word.sum(1), 1.0, rtol=1e-6)
    codes = model.transform(X[:50])
    assert codes.dtype == np.uint8 and codes.shape == (50, 8)
    np.testing.assert_array_equal(codes, model.codes_[:50])
    mix = model.doc_topic(X[:50])
    np.testing.assert_allclose(mix.sum(1), 1.0, rtol=1e-5)
    words = model.top_words([f"w{i}" for i in range(120)], n=5)
    assert len(words) == 6 and all(len(w) == 5 for w in words)
    assert 1 < model.perplexity(X[:200]) < 120


def test_same_seed_same_model():
    X, _, _ = planted_corpus(n_docs=300)
    fit = lambda: PoissBPE(n_topics=6, n_bits=8, epochs=2, random_state=3, device="cpu",
                           progress=False).fit(X)
    a, b = fit(), fit()
    np.testing.assert_array_equal(a.topic_word_, b.topic_word_)
    np.testing.assert_array_equal(a.codes_, b.codes_)


def test_bad_input_is_refused_with_a_clear_message():
    X, _, _ = planted_corpus(n_docs=50)
    with pytest.raises(ValueError, match="n_topics"):
        PoissBPE(n_topics=0).fit(X)
    with pytest.raises(ValueError, match="n_bits"):
        PoissBPE(n_bits=0).fit(X)
    with pytest.raises(ValueError, match="negative"):
        PoissBPE().fit(-X)
    model = PoissBPE(n_topics=3, n_bits=4, epochs=1, progress=False, device="cpu").fit(X)
    with pytest.raises(ValueError, match="vocabulary"):
        model.transform(X[:, :10])
    with pytest.raises(ValueError, match="CUDA|unknown device"):
        PoissBPE(device="tpu").fit(X)


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_counts_that_are_not_finite_are_refused_dense_or_sparse(value):
    """A matrix of NaN used to fit and return a model; fit and transform refuse any count
    that is not a finite number, dense or sparse, with one ValueError."""
    X, _, _ = planted_corpus(n_docs=50)
    dense = X.toarray().astype(float)
    dense[7, 3] = value
    for bad in (np.full((20, 30), value), dense, sp.csr_matrix(dense)):
        with pytest.raises(ValueError, match="NaN or infinite|negative") as err:
            PoissBPE(n_topics=3, n_bits=4, epochs=1, progress=False, device="cpu").fit(bad)
        assert "\n" not in str(err.value)
    model = PoissBPE(n_topics=3, n_bits=4, epochs=1, progress=False, device="cpu").fit(X)
    with pytest.raises(ValueError, match="NaN or infinite|negative"):
        model.transform(sp.csr_matrix(dense))
    with pytest.raises(ValueError, match="word counts"):
        model.fit(np.array([["a"] * X.shape[1]]))


def test_dead_and_duplicated_topics_are_restarted():
    """Make topic 1 a copy of topic 0 and silence topic 2 in the decoder: the end-of-epoch
    check restarts both (each takes half of a topic worth splitting), leaves a healthy
    model alone, and five more epochs recover every planted topic."""
    X, beta, _ = planted_corpus()
    # seed 3: a fit whose check moves nothing (after fits with seeds 0-2 the check moves two
    # topics although all six planted ones are recovered, cosine >= 0.994)
    model = PoissBPE(n_topics=6, n_bits=8, random_state=3, device="cpu", progress=False).fit(X)
    model.epoch_ = 1
    assert model._end_of_epoch(X)["restarted_topics"] == 0
    with torch.no_grad():
        model.likelihood_.topic_logits[1] = model.likelihood_.topic_logits[0]
        model.decoder_.first.bias[2] = -50.0
        model.decoder_.first.weight[2] = -50.0
    before = model.topic_word_.copy()
    assert planted_match(beta, before).min() < 0.5
    assert model._end_of_epoch(X)["restarted_topics"] >= 2
    after = model.topic_word_
    # one of the two copies restarts (which one depends on the documents they serve)
    assert not (np.allclose(before[0], after[0]) and np.allclose(before[1], after[1]))
    assert not np.allclose(before[2], after[2])
    assert model.decoder_.first.bias[2] > -50.0
    model.set_params(epochs=model.epoch_ + 5).continue_fit(X)
    assert planted_match(beta, model.topic_word_).min() >= 0.9
    assert len(np.unique(model.doc_topic(X).argmax(1))) == 6


def test_the_check_samples_fifty_documents_a_topic():
    """The end-of-epoch check pursues max(1,000, 50 T) sampled documents (all when fewer):
    with 1,000 at T = 200 a topic that leads 0.5% of the documents leads none of the sample
    one check in 150, and 40% of the topics were restarted over and over."""
    X, _, _ = planted_corpus(n_docs=1600, n_topics=6)
    seen = []

    class Spied(PoissBPE):
        def _check_codes(self, X_sample, beta):
            seen.append(X_sample.shape[0])
            return super()._check_codes(X_sample, beta)

    Spied(n_topics=24, n_bits=8, epochs=2, device="cpu", progress=False).fit(X)
    Spied(n_topics=30, n_bits=8, epochs=2, device="cpu", progress=False).fit(X)
    Spied(n_topics=40, n_bits=8, epochs=2, initial_topics=40, device="cpu", progress=False).fit(X)
    assert seen == [1200, 1500, 1600]


def test_split_moves_off_restart_from_badly_explained_documents():
    """split_moves=False keeps the restart of before issue #14: the dead topic starts from
    the documents explained worst and takes the most used topic's decoder row."""
    X, _, _ = planted_corpus(n_docs=300)
    # without the mixtures' entropy prior: with it, two epochs still share one spread
    # mixture among most documents (the topics part later), and most topics restart
    model = PoissBPE(n_topics=6, n_bits=8, epochs=2, split_moves=False, mixture_entropy=0, random_state=0,
                     device="cpu", progress=False).fit(X)
    model.epoch_ = 1
    with torch.no_grad():
        model.decoder_.first.bias[2] = -50.0
        model.decoder_.first.weight[2] = -50.0
    weight = model.decoder_.first.weight.detach().clone()
    restarted = model._end_of_epoch(X)["restarted_topics"]
    after = model.decoder_.first.weight.detach()
    changed = np.flatnonzero((after != weight).any(1).numpy())
    assert 2 in changed and len(changed) == restarted
    # each restarted row is a copy of a kept topic's row; no bit's column was rewritten
    kept = [t for t in range(6) if t not in changed]
    assert all(any(torch.equal(after[t], after[d]) for d in kept) for t in changed)


def test_default_epochs_give_small_corpora_enough_steps():
    """epochs=None: at least 2,000 minibatch steps, 15 to 30 epochs (15 epochs of a
    300-document corpus are 75 steps, and its topics stay half-trained; past 30 its codes
    overfit)."""
    model = PoissBPE(n_topics=3, n_bits=4, device="cpu", progress=False)
    assert model.epochs is None
    for n_docs, expected in [(11_227, 15), (8_000, 16), (3_000, 30), (300, 30)]:
        model._build(n_docs, 50)
        assert model.total_epochs() == expected, n_docs
    model.set_params(epochs=7)
    assert model.total_epochs() == 7
    X, _, _ = planted_corpus(n_docs=130)
    fitted = PoissBPE(n_topics=3, n_bits=4, batch_size=64, device="cpu", progress=False).fit(X)
    assert fitted.epoch_ == 30 and len(fitted.history_) == 30   # 3 steps an epoch


def test_the_diversity_prior_pushes_no_topic_harder_above_60_topics_and_weakens_above_100():
    """Up to T = 60 the cosines are summed over all pairs, so each topic's push grows with
    its T - 1 partners; above, the push a topic gets stays what 59 partners give, and
    above T = 100 it falls as 100 / T."""
    from bpetopics.models.poissbpe.topic_prior import topic_overlap

    def push(n_topics):
        """Mean norm over topics of the penalty's gradient, for topics alike in overlap."""
        rng = np.random.default_rng(0)
        beta = torch.tensor(rng.dirichlet(np.full(500, 0.1), n_topics).T, requires_grad=True)
        model = PoissBPE(n_topics=n_topics)
        (model._penalty_weight() * topic_overlap(beta, torch.ones(n_topics))).backward()
        return float(beta.grad.norm(dim=0).mean())

    assert PoissBPE(n_topics=20)._penalty_weight() == pytest.approx(0.0004 * 20 * 19)
    assert PoissBPE(n_topics=50)._penalty_weight() == pytest.approx(0.0004 * 50 * 49)
    assert PoissBPE(n_topics=100)._penalty_weight() == pytest.approx(0.0004 * 100 * 59)
    assert PoissBPE(n_topics=200)._penalty_weight() == pytest.approx(0.0004 * 100 * 59)
    assert push(20) < 0.6 * push(50)                              # fewer partners, less push
    assert push(100) == pytest.approx(push(60), rel=0.2)          # the full sum: 1.7x
    for many in (150, 200):                                       # 100 / T of T = 60's push
        assert push(many) == pytest.approx(push(60) * 100 / many, rel=0.2)


def test_doc_topic_posterior_mean_predicts_held_out_words_better(planted_fit):
    """doc_topic's default averages f over the code's one-bit neighbourhood (weights
    exp L): on new planted documents it completes them better than f at the code alone."""
    from bpetopics.evaluation.perplexity import completion_perplexity

    model, X, _, _ = planted_fit
    new, _, _ = planted_corpus(n_docs=400, doc_len=20, seed=1)
    np.testing.assert_allclose(model.doc_topic(new[:50], posterior="map"),
                               model.code_topic(model.transform(new[:50])))

    class Predictor:                       # completion_perplexity's model protocol
        def __init__(self, posterior):
            self.topic_word_, self.posterior = model.topic_word_, posterior

        def doc_topic(self, A):
            return model.doc_topic(A, posterior=self.posterior)

    local, map_ = (completion_perplexity(Predictor(p), new, seed=0).perplexity for p in ("local", "map"))
    assert local < 0.99 * map_, (local, map_)
    with pytest.raises(ValueError, match="'local' or 'map'"):
        model.doc_topic(new[:5], posterior="mean")
    with pytest.raises(ValueError, match=r"codes must be \(5, 8\)"):
        model.posterior_topic(new[:5], model.transform(new[:4]))


def test_soft_codes_recover_the_planted_topics_and_train_in_one_process_only():
    """soft_codes=3: the theta step fits each document's three most probable nearby codes,
    weighted; the planted topics are found as with the pursued codes alone. Soft codes
    move the topics more slowly: 60 epochs (at the default 30, seed 0 leaves one of the
    six topics at cosine 0.53, seeds 1-3 find all six)."""
    X, beta, _ = planted_corpus(n_docs=600)
    model = PoissBPE(n_topics=6, n_bits=8, soft_codes=3, epochs=60, random_state=0, device="cpu",
                     progress=False).fit(X)
    assert planted_match(beta, model.topic_word_).min() > 0.9

    class TwoProcesses:
        size = 2

    other = PoissBPE(n_topics=6, n_bits=8, soft_codes=3, epochs=1, device="cpu", progress=False)
    other.step_group = TwoProcesses()
    with pytest.raises(ValueError, match="one process only"):
        other.fit(X)


def test_the_cooldown_trains_the_last_epochs_at_a_fifth_of_the_learning_rate():
    """lr / 5 in the last cooldown_epochs epochs, at most a fifth of them (a 4-epoch run
    keeps lr throughout); a function of the epoch alone, as a resumed run needs."""
    def rates(**params):
        model = PoissBPE(n_topics=4, lr=0.05, progress=False, **params)
        out = []
        for epoch in range(model.epochs):
            model.epoch_ = epoch
            out.append(round(model._learning_rate(), 6))
        return out

    assert rates(epochs=15) == [0.05] * 13 + [0.01] * 2
    assert rates(epochs=15, cooldown_epochs=0) == [0.05] * 15
    assert rates(epochs=15, cooldown_epochs=4) == [0.05] * 12 + [0.01] * 3      # a fifth of 15
    assert rates(epochs=4) == [0.05] * 4
    X, _, _ = planted_corpus(n_docs=200)
    model = PoissBPE(n_topics=6, n_bits=8, epochs=10, random_state=0, device="cpu", progress=False).fit(X)
    assert model.optimizer_.param_groups[0]["lr"] == pytest.approx(0.01)


def test_doc_topic_with_all_pairs_is_the_posterior_mean_over_the_two_flip_ball(planted_fit):
    """With as many pair flips as bits (K = 8), doc_topic's 'local' neighbourhood is every code
    within two flips of the pursued one: its mixture is the exp-L-weighted mean of f over
    that ball, scored code by code; fewer pairs give another mixture."""
    from itertools import combinations

    model, _, _, _ = planted_fit
    new, _, _ = planted_corpus(n_docs=400, doc_len=20, seed=1)
    new = sp.csr_matrix(new[:10])
    codes = torch.as_tensor(model.transform(new)).float()                      # (10, 8)
    n_bits = codes.shape[1]
    flips = [()] + [(a,) for a in range(n_bits)] + list(combinations(range(n_bits), 2))
    ball = codes[:, None, :].repeat(1, len(flips), 1)                          # (10, 37, 8)
    for c, bits in enumerate(flips):
        for b in bits:
            ball[:, c, b] = 1 - ball[:, c, b]
    batch = model.likelihood_.batch(new, model.device_)
    log_odds = model.prior_.bit_log_odds().float()
    with torch.no_grad():
        scores = torch.stack([model.likelihood_.data_term(model.decoder_(ball[:, c]), batch)
                              + ball[:, c] @ log_odds for c in range(len(flips))], 1)
        if model.max_bits is not None:
            scores[ball.sum(2) > model.max_bits] = -np.inf
        mixes = torch.softmax(model.decoder_(ball), -1)                         # (10, 37, T)
        expected = (torch.softmax(scores.double(), 1)[..., None] * mixes.double()).sum(1)
    np.testing.assert_allclose(model.doc_topic(new, posterior="local", pair_flips=n_bits), expected.numpy(),
                               rtol=1e-3, atol=1e-5)
    assert np.abs(model.doc_topic(new, posterior="local", pair_flips=2) - expected.numpy()).max() > 1e-4


def test_codes_and_mixtures_do_not_depend_on_the_encoding_batch(planted_fit):
    """transform pursues ENCODE_BATCH_SIZE documents together by default (4,096 for
    PoissBPE); any batch size gives the same codes, scores and mixtures."""
    model, X, _, _ = planted_fit
    assert PoissBPE.ENCODE_BATCH_SIZE == 4096
    codes = model.transform(X)
    np.testing.assert_array_equal(model.transform(X, batch_size=37), codes)
    assert model.score(X, batch_size=37) == pytest.approx(model.score(X), rel=1e-6)
    np.testing.assert_allclose(model.doc_topic(X[:300], batch_size=37), model.doc_topic(X[:300]),
                               rtol=1e-5, atol=1e-7)
