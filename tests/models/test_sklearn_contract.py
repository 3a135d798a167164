"""PoissBPE is a scikit-learn estimator: clone, Pipeline and GridSearchCV work."""

import numpy as np
import pytest
from sklearn.base import BaseEstimator, clone
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline

from bpetopics import BernBPE, GaussBPE, PoissBPE
from bpetopics.bpe.params import check_params

FAST = dict(n_bits=8, epochs=2, batch_size=64, device="cpu", progress=False, random_state=0)


def _planted_texts(n_docs=240, seed=0):
    """Documents drawn from three planted topics with disjoint vocabularies."""
    rng = np.random.default_rng(seed)
    words = [[f"{name}{i}" for i in range(15)] for name in ("space", "hockey", "graphics")]
    return [" ".join(rng.choice(words[rng.integers(3)], size=30)) for _ in range(n_docs)]


def test_clone_gives_an_unfitted_copy_with_the_same_parameters():
    model = clone(PoissBPE(n_topics=7))
    assert isinstance(model, BaseEstimator)
    assert model.n_topics == 7 and not hasattr(model, "decoder_")
    assert clone(GaussBPE(n_bits=12, sigma=0.2)).get_params()["sigma"] == 0.2
    assert clone(BernBPE(n_bits=12)).n_bits == 12


def test_get_and_set_params():
    model = PoissBPE(n_topics=4)
    assert model.get_params(deep=True) == model.get_params(deep=False)
    assert model.set_params(n_topics=9, lr=0.1) is model and (model.n_topics, model.lr) == (9, 0.1)
    with pytest.raises(ValueError, match="invalid parameter 'topics'"):
        model.set_params(topics=3)


def test_parameters_after_the_first_are_keyword_only():
    with pytest.raises(TypeError):
        PoissBPE(5, 8)
    with pytest.raises(TypeError):
        GaussBPE(100, (256,))


def test_text_and_image_estimators_share_parameter_names():
    shared = {"n_bits", "hidden", "activation", "alpha", "gamma", "tau", "kappa", "epochs", "batch_size", "lr",
              "max_bits", "flat_start", "prior_ramp_epochs", "random_state", "device", "progress", "callback"}
    for cls in (PoissBPE, GaussBPE, BernBPE):
        assert shared <= set(cls().get_params())


def test_rules_are_the_estimators_own():
    with pytest.raises(ValueError, match="n_topics must be a positive integer; got 0"):
        PoissBPE(n_topics=0).validate()
    with pytest.raises(ValueError, match="--topics must be a positive integer"):
        check_params({"n_topics": -3}, PoissBPE._parameter_rules, label=lambda n: "--topics")
    with pytest.raises(ValueError, match="sigma must be positive"):
        GaussBPE(sigma=0).validate()
    PoissBPE().validate()


def test_pipeline_of_count_vectorizer_and_poissbpe(tmp_path):
    texts = _planted_texts()
    pipe = Pipeline([("bow", CountVectorizer()), ("bpe", PoissBPE(n_topics=3, **FAST))])
    codes = pipe.fit_transform(texts)
    assert codes.shape == (240, 8) and codes.dtype == np.uint8
    np.testing.assert_array_equal(pipe.transform(texts[:10]), codes[:10])
    assert np.isfinite(pipe.score(texts[:20]))


def test_grid_search_over_n_topics_uses_the_models_score():
    X = CountVectorizer().fit_transform(_planted_texts())
    search = GridSearchCV(PoissBPE(**FAST), {"n_topics": [3, 5]}, cv=2).fit(X)
    assert search.best_params_["n_topics"] in (3, 5)
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()
    assert search.best_estimator_.n_topics == search.best_params_["n_topics"]


def test_a_pipeline_names_its_features_and_the_vectorizer_gives_the_words():
    pipe = Pipeline([("bow", CountVectorizer()), ("bpe", PoissBPE(n_topics=3, **FAST))]).fit(_planted_texts())
    assert pipe.get_feature_names_out().tolist() == [f"poissbpe{k}" for k in range(8)]
    words = pipe[:-1].get_feature_names_out()
    top = pipe[-1].top_words(words, 5)
    assert len(top) == 3 and all(w in set(words) for row in top for w in row)
    with pytest.raises(RuntimeError, match="not fitted"):
        PoissBPE().get_feature_names_out()
