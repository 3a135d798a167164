import numpy as np
import pytest

from bpetopics.baselines import LDABaseline
from bpetopics.evaluation import evaluate_topic_model


def test_evaluate_topic_model_on_20newsgroups(news3):
    d = news3
    model = LDABaseline(n_topics=6, passes=2, random_state=0).fit(d["X_train"])
    codes = (np.random.default_rng(0).random((d["X_test"].shape[0], 16)) < 0.1).astype(np.uint8)
    res = evaluate_topic_model(
        model, d["X_train"], d["X_test"], d["test_texts"], d["vocabulary"],
        train_labels=d["y_train"], test_labels=d["y_test"], codes=codes, top_n=10, seed=0,
    )
    assert res["n_topics"] == 6
    assert res["npmi"] == pytest.approx(res["gensim_c_npmi"], abs=1e-6)
    assert res["npmi_nonfinite"] == res["gensim_c_npmi_nonfinite"] == 0
    assert len(res["npmi_per_topic"]) == 6 and len(res["top_words"]) == 6
    assert 0 < res["diversity"] <= 1
    assert 1 < res["perplexity"] < len(d["vocabulary"])
    assert res["perplexity_documents"] + res["perplexity_skipped"] == d["X_test"].shape[0]
    assert res["accuracy"] > 0.5  # three well separated newsgroups
    assert 0 <= res["unused_topics"] < 1
    assert res["infer_docs_per_second"] > 0 and res["fit_seconds"] > 0
    assert 0 < res["code_mean_hoyer"] <= 1 and res["code_mean_active"] > 0


def test_evaluate_without_labels_or_gensim(news3):
    d = news3
    model = LDABaseline(n_topics=3, passes=1, random_state=0).fit(d["X_train"])
    res = evaluate_topic_model(
        model, d["X_train"], d["X_test"], d["test_texts"], d["vocabulary"], gensim_measures=()
    )
    assert res["accuracy"] is None
    assert not any(k.startswith("gensim_") or k.startswith("code_") for k in res)
