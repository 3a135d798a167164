"""Split moves: a topic that merges two themes is worth splitting, a pure one is not."""

import numpy as np
import pytest
import scipy.sparse as sp

from bpetopics.models.poissbpe.topic_split import deletion_losses, explained_counts, split_gains
from bpetopics.models.poissbpe.two_means import POWER_TOLERANCE, two_means


def three_blocks(n_per_block=100, block=20, doc_len=60, seed=0):
    """Documents of three themes on disjoint blocks of words (A, B, C), in that order."""
    rng = np.random.default_rng(seed)
    themes = np.zeros((3, 3 * block))
    for b in range(3):
        themes[b, b * block:(b + 1) * block] = rng.dirichlet(np.ones(block))
    counts = np.vstack([rng.multinomial(doc_len, themes[b], size=n_per_block) for b in range(3)])
    return sp.csr_matrix(counts), themes


def test_explained_counts_share_each_count_among_topics():
    X, themes = three_blocks()
    beta = np.stack([themes[0], themes[1], themes[2]], axis=1)         # (W, T)
    mix = np.full((X.shape[0], 3), 1 / 3)
    shared = explained_counts(X, beta, mix)
    np.testing.assert_allclose(shared.sum(1), X.data)
    # disjoint themes: each count goes wholly to its block's topic
    np.testing.assert_allclose(shared.max(1), X.data)


def test_two_means_separates_two_themes():
    X, _ = three_blocks()
    second = two_means(X[:200])                      # themes A then B
    assert len(set(second[:100])) == 1 and len(set(second[100:])) == 1
    assert second[0] != second[100]


def test_a_merged_topic_gains_ln2_per_token_a_pure_one_little():
    """Topic 0 is (A + B) / 2 and explains the A and B documents, topic 1 is C: splitting
    topic 0 gains about ln 2 per token (each half doubles its words' probability)."""
    X, themes = three_blocks()
    beta = np.stack([(themes[0] + themes[1]) / 2, themes[2]], axis=1)
    mix = np.zeros((300, 2))
    mix[:200, 0] = 1
    mix[200:, 1] = 1
    gains, halves = split_gains(X, beta, mix)
    tokens = halves.sum((1, 2))
    np.testing.assert_allclose(tokens, [200 * 60, 100 * 60])
    assert abs(gains[0] / tokens[0] - np.log(2)) < 0.02
    assert gains[1] / tokens[1] < 0.02
    # the halves are the two themes
    halves_unit = halves[0] / np.linalg.norm(halves[0], axis=1, keepdims=True)
    themes_unit = themes[:2] / np.linalg.norm(themes[:2], axis=1, keepdims=True)
    assert np.sort((halves_unit @ themes_unit.T).max(1)).min() > 0.95


def test_deletion_loss_is_zero_for_an_unused_or_twin_topic_and_large_for_a_needed_one():
    X, themes = three_blocks()
    # topics: A, A again (its twin), B, C (unused); A documents split A's weight between twins
    beta = np.stack([themes[0], themes[0], themes[1], themes[2]], axis=1) * 0.99 + 0.01 / 60
    mix = np.zeros((300, 4))
    mix[:100, :2] = 0.5
    mix[100:200, 2] = 1
    mix[200:, 2] = 1                                 # C documents badly explained by B
    losses = deletion_losses(X, beta, mix)
    assert losses[3] == 0                            # never used
    assert abs(losses[0]) < 1e-6 and abs(losses[1]) < 1e-6   # the twin takes over
    assert losses[2] > 100 * 60                      # B's documents lose more than a nat a token


def random_rows(seed):
    """150 sparse non-negative rows of 400 columns without a planted structure: the power
    iteration needs many rounds on them."""
    R = sp.random(150, 400, density=0.03, random_state=seed, format="csr")
    R.data = np.abs(R.data) * 5
    return R


@pytest.mark.parametrize("tolerance", [POWER_TOLERANCE, 1e-6])
def test_the_compiled_two_means_splits_as_the_scipy_steps(tolerance):
    """With numba, two_means runs compiled; the halves are those of the scipy steps (on
    these matrices exactly; summing in another order could move a boundary document)."""
    from bpetopics.models.poissbpe.compiled import kernels

    if kernels.numba is None:
        pytest.skip("numba is not installed")
    matrices = [three_blocks()[0][:200]] + [random_rows(seed) for seed in range(8)]
    compiled = [two_means(R, tolerance=tolerance) for R in matrices]
    with kernels.backend_in_use("torch"):                 # the scipy steps
        reference = [two_means(R, tolerance=tolerance) for R in matrices]
    for fast, slow in zip(compiled, reference):
        np.testing.assert_array_equal(fast, slow)


def test_the_power_iterations_tolerance_keeps_the_halves():
    """Stopping the power iteration at POWER_TOLERANCE rather than 1e-6 gives the same
    halves (the k-means rounds settle the boundary), while a single round (a tolerance
    above 2, more than a unit vector can move) gives other halves: the start matters."""
    for seed in range(8):
        R = random_rows(seed)
        settled = two_means(R, tolerance=1e-6)
        np.testing.assert_array_equal(two_means(R), settled)
        one_round = two_means(R, tolerance=2.5)
        moved = (one_round != settled).sum()
        assert min(moved, len(settled) - moved) > 10       # whichever half is "second"


def test_the_compiled_deletion_losses_are_the_numpy_steps():
    """With numba, deletion_losses runs in one compiled pass; its losses are the numpy
    steps' up to the summing order."""
    import scipy.sparse as sp

    from bpetopics.models.poissbpe.compiled import kernels

    if kernels.numba is None:
        pytest.skip("numba is not installed")
    rng = np.random.default_rng(3)
    X = sp.random(120, 300, density=0.05, random_state=3, format="csr")
    X.data = np.ceil(X.data * 4)
    beta = rng.random((300, 7)) ** 4
    beta /= beta.sum(0)
    mix = rng.dirichlet(np.full(7, 0.2), 120)
    mix[0] = np.eye(7)[2]                         # a document wholly one topic: the even fallback
    compiled = deletion_losses(X, beta, mix)
    with kernels.backend_in_use("torch"):                 # the numpy steps
        expected = deletion_losses(X, beta, mix)
    assert (expected > 0).all()
    np.testing.assert_allclose(compiled, expected, rtol=1e-12)


def test_the_compiled_split_gains_are_the_scipy_steps():
    """With numba, split_gains' loop over topics runs compiled: the same halves and gains
    as the scipy steps, including a topic that explains too few rows to split."""
    from bpetopics.models.poissbpe.compiled import kernels

    if kernels.numba is None:
        pytest.skip("numba is not installed")
    X, themes = three_blocks()
    rng = np.random.default_rng(5)
    beta = np.stack([(themes[0] + themes[1]) / 2, themes[2], np.full(60, 1 / 60)], axis=1)
    mix = rng.dirichlet(np.ones(3), 300)
    mix[:, 2] = 1e-9                               # topic 2 explains next to nothing
    mix /= mix.sum(1, keepdims=True)
    gains, halves = split_gains(X, beta, mix)
    with kernels.backend_in_use("torch"):                 # the scipy steps
        want_gains, want_halves = split_gains(X, beta, mix)
    assert gains[-1] == want_gains[-1] == 0 and (gains[:-1] > 0).all()
    np.testing.assert_allclose(halves, want_halves, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gains, want_gains, rtol=1e-9)


def test_a_topic_to_restart_takes_a_half_even_when_no_split_beats_the_noise():
    """Three topics that each explain documents of one word distribution (every split
    gains less than the noise correction) and a dead fourth: the dead topic takes half of
    the best split anyway (a topic that serves no document is worth less than any split)."""
    from bpetopics.models.poissbpe.topic_split import plan_moves

    block, n = 20, 30
    rows = []
    for b in range(3):
        for i in range(n):                 # 3 of each block word, every other one swaps a token
            row = np.zeros(3 * block)
            row[b * block:(b + 1) * block] = 3
            row[b * block] += i % 2
            row[b * block + 1] -= i % 2
            rows.append(row)
    X = sp.csr_matrix(np.array(rows))
    beta = np.zeros((3 * block, 4))
    for b in range(3):
        beta[b * block:(b + 1) * block, b] = 1 / block
    beta[:, 3] = 1 / (3 * block)
    mix = np.full((3 * n, 4), 1e-9)
    for b in range(3):
        mix[b * n:(b + 1) * n, b] = 1
    mix /= mix.sum(1, keepdims=True)
    moves, _ = plan_moves(X, beta, mix, [3], min_gain=0.1, similarity=0.7)
    assert len(moves) == 1 and moves[0][2] == 3 and moves[0][0] in (0, 1, 2) and moves[0][3]
