import numpy as np

from bpetopics.evaluation import classification_accuracy


def test_separable_mixtures_are_classified():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, size=300)
    # each class puts most of its mass on its own topic
    mix = rng.dirichlet(np.ones(5), size=300) * 0.3
    mix[np.arange(300), y] += 0.7
    acc = classification_accuracy(mix[:200], y[:200], mix[200:], y[200:], seed=0)
    assert acc == 1.0


def test_uninformative_features_near_chance_and_seeded():
    rng = np.random.default_rng(1)
    X = rng.dirichlet(np.ones(5), size=600)
    y = rng.integers(0, 2, size=600)
    acc = classification_accuracy(X[:400], y[:400], X[400:], y[400:], seed=0)
    assert 0.35 < acc < 0.65
    assert acc == classification_accuracy(X[:400], y[:400], X[400:], y[400:], seed=0)
