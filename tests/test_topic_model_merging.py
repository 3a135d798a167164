"""TopicModel.merge_topics and reduce_topics: mixtures, top topics and labels follow the
merge, and the saved run (read by the command line) keeps it."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from bpetopics import TopicModel
from bpetopics.cli import main
from tests.test_topic_model import FAST, planted_texts


def test_merge_carries_mixtures_labels_and_the_run_folder(tmp_path):
    texts, _ = planted_texts()
    model = TopicModel(n_topics=3, **FAST).fit(texts + ["a b c"])
    model.set_topic_labels({2: "kept by hand"})
    before = model.probabilities_.copy()
    report = model.merge_topics([[0, 1]])
    assert report.n_topics_after == 2 and "3 -> 2 topics" in str(report)
    np.testing.assert_allclose(model.probabilities_[:, 0], before[:, 0] + before[:, 1], atol=1e-6)
    np.testing.assert_allclose(model.probabilities_[:-1].sum(1), 1.0, atol=1e-5)
    assert model.topics_[-1] == -1 and set(model.topics_[:-1]) <= {0, 1}
    assert model.topic_labels_[1] == "kept by hand" and len(model.topic_labels_) == 2
    info = model.get_topic_info()
    assert info["Topic"].tolist() == [-1, 0, 1] and info["Count"].sum() == len(texts) + 1
    _, probs = model.transform(texts[:5])
    assert probs.shape == (5, 2)
    np.testing.assert_allclose(probs.sum(1), 1.0, atol=1e-5)

    model.save(tmp_path / "run")
    loaded = TopicModel.load(tmp_path / "run")
    np.testing.assert_allclose(loaded.model_.topic_word_, model.model_.topic_word_, atol=1e-7)
    assert loaded.topic_labels_ == model.topic_labels_
    result = CliRunner().invoke(main, ["topics", str(tmp_path / "run"), "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert [r["topic"] for r in rows] == [0, 1] and rows[1]["label"] == "kept by hand"


def test_reduce_topics_reports_the_likelihood_change():
    texts, _ = planted_texts()
    model = TopicModel(n_topics=4, **FAST).fit(texts)
    report = model.reduce_topics(3)
    assert model.model_.topic_word_.shape[0] == 3 and len(report.groups) == 1
    assert np.isfinite(report.log_likelihood_before) and np.isfinite(report.log_likelihood_after)
    with pytest.raises(ValueError, match="n_topics must be"):
        model.reduce_topics(5)
