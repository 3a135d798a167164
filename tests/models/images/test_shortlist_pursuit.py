"""The shortlist pursuit (images): a first-order estimate ranks the bits, a shortlist of
them is scored exactly. With the whole code as its shortlist it is the greedy pursuit; with
a short one every accepted bit still raises the exact score, and the pursuit stops only
where no single bit would."""

import numpy as np
import pytest
import torch

from bpetopics.models.images import shortlist_pursuit as sl
from bpetopics.models.images.dense_pursuit import dense_pursuit
from bpetopics.bpe.pursuit import greedy_pursuit

from tests.bpe.conftest import make_case


@pytest.fixture(params=["gauss", "bernoulli"])
def image_kind(request):
    return request.param


def _exact_score(decoder, lik, batch, codes, log_odds):
    with torch.no_grad():
        return lik.data_term(decoder(codes.float()), batch) + codes.float() @ log_odds


@pytest.mark.parametrize("hidden", [(), (16,), (16, 24)])
def test_a_shortlist_of_every_bit_is_the_greedy_pursuit(image_kind, hidden):
    decoder, lik, batch = make_case(image_kind, n_points=30, n_bits=10, seed=7, hidden=hidden)
    log_odds = -torch.rand(10, generator=torch.Generator().manual_seed(7)) * 0.5
    exact = dense_pursuit(decoder, lik, batch, log_odds)
    codes, score = sl.shortlist_pursuit(decoder, lik, batch, log_odds, shortlist=10, return_score=True)
    assert torch.equal(codes, exact)
    assert (codes.sum(1) >= 2).float().mean() > 0.2              # later steps were taken
    torch.testing.assert_close(score, _exact_score(decoder, lik, batch, codes, log_odds),
                               rtol=1e-5, atol=1e-3)
    # greedy_pursuit sends dense batches here when given a shortlist shorter than K
    assert torch.equal(greedy_pursuit(decoder, lik, batch, log_odds, shortlist=10), exact)
    short = sl.shortlist_pursuit(decoder, lik, batch, log_odds, shortlist=3)
    assert torch.equal(greedy_pursuit(decoder, lik, batch, log_odds, shortlist=3), short)


@pytest.mark.parametrize("exact_stop", [False, True])
def test_a_short_list_raises_the_exact_score_with_every_bit(image_kind, exact_stop, monkeypatch):
    decoder, lik, batch = make_case(image_kind, n_points=40, n_bits=24, seed=3, hidden=(16, 16))
    log_odds = torch.full((24,), -0.1)
    widths = []
    score_picks = sl._score_picks
    monkeypatch.setattr(sl, "_score_picks", lambda *a: widths.append(a[5].shape[1]) or score_picks(*a))
    codes, score = sl.shortlist_pursuit(decoder, lik, batch, log_odds, shortlist=2, return_score=True,
                                        exact_stop=exact_stop)
    # widening: the stuck images' next lists are the estimate's bits 2-4 and 4-8 (2 and 4 bits),
    # 8-16 (8), then the exact step (2 x 16 >= 24) over the ranks not scored yet, 16-24 (8;
    # without the lists 2-24: 22); Bernoulli's exact step is the screened one over all 24
    rest = {8} if image_kind == "gauss" and exact_stop else set()
    assert set(widths) == ({2, 4, 8} if exact_stop else {2}) | rest
    true = _exact_score(decoder, lik, batch, codes, log_odds)
    torch.testing.assert_close(score, true, rtol=1e-5, atol=1e-3)
    # the score of each code's own greedy path: removing its bits in any order lowers it
    # at least somewhere, so compare with the empty code: every bit was a gain
    empty = _exact_score(decoder, lik, batch, torch.zeros_like(codes), log_odds)
    has_bits = codes.any(1)
    assert has_bits.float().mean() > 0.5
    assert (true[has_bits] > empty[has_bits]).all()
    # one more bit: with exact_stop no image could still gain (the greedy stopping rule)
    with torch.no_grad():
        more = torch.stack([_exact_score(decoder, lik, batch, codes | _bit(codes, j), log_odds)
                            for j in range(24)], 1)
        more[codes] = -torch.inf
    can_gain = (more.max(1).values > true + 1e-4)
    if exact_stop:
        assert not can_gain.any()
    else:                   # a 2-bit shortlist of 24 bits misses some gains, and stops
        assert can_gain.any()


def _bit(codes, j):
    one = torch.zeros_like(codes)
    one[:, j] = True
    return one


def test_the_estimate_is_the_first_order_gain():
    """With every bit's weights scaled by eps, the estimate over eps tends to the
    directional derivative of the data term (a smooth decoder: tanh)."""
    from bpetopics.bpe.decoder import CodeDecoder
    from bpetopics.models.images.likelihoods import GaussianLikelihood

    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    decoder = CodeDecoder(6, 10, (8, 8), activation="tanh")
    lik = GaussianLikelihood(sigma=0.5, c=2.0)
    batch = lik.batch(rng.random((5, 10)), "cpu")
    codes = torch.tensor(rng.random((5, 6)) < 0.5)
    eps = 1e-3
    with torch.no_grad():
        decoder.first.weight.mul_(eps)
    gain = sl.first_order_gain(decoder, lik, batch.x, codes)
    with torch.no_grad():
        base = lik.data_term(decoder(codes.float()), batch)
        shifted = torch.stack([lik.data_term(decoder.forward_from_first(
            decoder.first_layer(codes.float()) + decoder.bit_columns[j]), batch) for j in range(6)], 1)
    torch.testing.assert_close(gain / eps, (shifted - base[:, None]) / eps, rtol=2e-2, atol=2e-3)


def test_the_image_models_take_a_shortlist(shared_data):
    from bpetopics.images import load_mnist
    from bpetopics.models import GaussBPE

    X = load_mnist("train", shared_data, limit=120, random_state=0)[0]
    common = dict(n_bits=40, gamma=10, epochs=1, batch_size=32, random_state=0, device="cpu",
                  progress=False)
    exact = GaussBPE(**common).fit(X)
    short = GaussBPE(shortlist=4, exact_stop=False, **common).fit(X)
    assert short.codes_.sum(1).mean() >= 1
    assert (short.codes_ != exact.codes_).any()                 # the shortlist was used
    with pytest.raises(ValueError, match="shortlist"):
        GaussBPE(shortlist=0).fit(X)


def test_the_fast_stop_epochs_warm_up_and_then_stop_exactly(shared_data, monkeypatch):
    """fast_stop_epochs=2 of 3: the training steps of epochs 1-2 stop at once, those of
    epoch 3 and every encoding (the training images' codes_, transform) take the exact
    stop (None: no training step does); the same model trained with exact_stop=False and switched to the exact stop
    after epoch 2 (the way docs/defaults.md's figures were first measured) is the same model."""
    from bpetopics.bpe import encoding, training_step
    from bpetopics.images import load_mnist
    from bpetopics.models import GaussBPE

    X = load_mnist("train", shared_data, limit=96, random_state=0)[0]
    common = dict(n_bits=40, gamma=10, epochs=3, batch_size=32, random_state=0, device="cpu",
                  progress=False, shortlist=4)
    calls = []

    def recorder(where, inner):
        def pursue(*args, **kwargs):
            calls.append((where, kwargs.get("exact_stop")))
            return inner(*args, **kwargs)
        return pursue

    monkeypatch.setattr(training_step, "greedy_pursuit", recorder("train", training_step.greedy_pursuit))
    monkeypatch.setattr(encoding, "greedy_pursuit", recorder("encode", encoding.greedy_pursuit))
    warm = GaussBPE(fast_stop_epochs=2, **common).fit(X)
    assert calls == [("train", False)] * 6 + [("train", True)] * 3 + [("encode", True)]
    assert warm.exact_stop is True and warm.fast_stop_epochs == 2

    def switch(m, info):
        if m.epoch_ == 2:
            m.set_params(exact_stop=True)

    switched = GaussBPE(exact_stop=False, callback=switch, **common).fit(X)
    assert np.array_equal(warm.codes_, switched.codes_)
    assert all(torch.equal(a, b) for a, b in zip(warm.decoder_.parameters(), switched.decoder_.parameters()))
    calls.clear()                       # None: every training epoch stops at once, encoding exactly
    GaussBPE(fast_stop_epochs=None, **common).fit(X)
    assert calls == [("train", False)] * 9 + [("encode", True)]
    with pytest.raises(ValueError, match="fast_stop_epochs"):
        GaussBPE(fast_stop_epochs=-1).fit(X)


def test_the_compiled_relu_estimate_equals_torch(monkeypatch):
    from bpetopics.models.images.compiled import relu_moves

    if not relu_moves.available("cpu"):
        pytest.skip("numba is not installed")
    decoder, lik, batch = make_case("gauss", n_points=9, n_bits=13, seed=5, hidden=(16, 24))
    codes = torch.tensor(np.random.default_rng(5).random((9, 13)) < 0.3)
    compiled = sl.first_order_gain(decoder, lik, batch.x, codes)
    monkeypatch.setattr(relu_moves, "available", lambda device: False)
    torch.testing.assert_close(compiled, sl.first_order_gain(decoder, lik, batch.x, codes),
                               rtol=1e-4, atol=1e-4)


def test_without_the_screening_the_bernoulli_stop_gives_the_same_codes(monkeypatch):
    """On a GPU BernBPE's exact stop scores the bits left instead of screening all K
    (``_screens`` is False there); faked here on the CPU: the same codes, and no bit can
    still gain at the end."""
    decoder, lik, batch = make_case("bernoulli", n_points=60, n_bits=40, seed=5, hidden=(16, 16))
    log_odds = torch.full((40,), -0.2)
    screened = sl.shortlist_pursuit(decoder, lik, batch, log_odds, shortlist=4)
    monkeypatch.setattr(sl, "_screens", lambda likelihood, device: False)
    codes, score = sl.shortlist_pursuit(decoder, lik, batch, log_odds, shortlist=4, return_score=True)
    assert torch.equal(codes, screened) and codes.sum(1).float().mean() > 1
    with torch.no_grad():
        more = torch.stack([_exact_score(decoder, lik, batch, codes | _bit(codes, j), log_odds)
                            for j in range(40)], 1)
        more[codes] = -torch.inf
    assert not (more.max(1).values > score + 1e-4).any()
