"""TopicModel: raw texts in; the same topics as `bpetopics train`; topics, labels,
documents, search; saved as the run folder the command line reads and writes."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from bpetopics import TopicModel
from bpetopics.cli import main
from bpetopics.runs import load_run

FAST = dict(n_bits=8, epochs=30, batch_size=32, device="cpu", stopwords="none", min_df=1, max_df=1.0)
THEMES = {"space": ["space", "shuttle", "orbit", "nasa", "launch", "moon"],
          "hockey": ["hockey", "team", "goal", "season", "players", "league"],
          "graphics": ["graphics", "image", "pixel", "render", "color", "screen"]}


def planted_texts(n=150, seed=0):
    """Documents from three planted themes with disjoint words; returns (texts, themes)."""
    rng = np.random.default_rng(seed)
    names = list(THEMES)
    themes = rng.integers(3, size=n)
    return [" ".join(rng.choice(THEMES[names[t]], size=25)) for t in themes], themes


@pytest.fixture(scope="module")
def fitted():
    texts, themes = planted_texts()
    return TopicModel(n_topics=3, **FAST).fit(texts + ["a b c"]), texts, themes


def test_fit_transform_finds_the_planted_themes(fitted):
    model, texts, themes = fitted
    topics, probs = model.transform(texts)
    assert probs.shape == (150, 3) and np.allclose(probs.sum(1), 1, atol=1e-5)
    # each theme maps to one topic
    assert all(len(set(topics[themes == t])) == 1 for t in range(3))
    assert len(set(topics)) == 3
    np.testing.assert_array_equal(model.topics_[:150], topics)


def test_a_document_without_a_vocabulary_word_is_kept_as_topic_minus_one(fitted):
    model, _, _ = fitted
    assert model.topics_[-1] == -1 and not model.probabilities_[-1].any()
    assert len(model.topics_) == 151 and len(model.document_ids_) == 150
    topics, probs = model.transform(["nothing known here", "ab"])
    assert topics.tolist() == [-1, -1] and not probs.any()


def test_topic_info_counts_every_document(fitted):
    model, _, _ = fitted
    info = model.get_topic_info()
    assert list(info.columns) == ["Topic", "Count", "Label", "Name", "Representation"]
    assert info["Count"].sum() == 151 and info.iloc[0]["Topic"] == -1
    row = info[info["Topic"] == 0].iloc[0]
    assert row["Name"].startswith("0_") and row["Representation"][0] == model.get_topic(0)[0][0]
    words = [w for w, _ in model.get_topic(0, 6)]
    assert any(set(words) == set(theme) for theme in THEMES.values())
    with pytest.raises(ValueError, match="not one of the model's topics"):
        model.get_topic(3)


def test_document_info_of_a_series_keeps_its_index(fitted):
    import pandas as pd

    model, texts, _ = fitted
    info = model.get_document_info(pd.Series(texts[:4], index=["a", "b", "c", "d"]))
    assert info.index.tolist() == ["a", "b", "c", "d"] and (info["Words"] == 25).all()
    assert (info["Probability"] > 0.3).all()


def test_find_topics_and_similar_documents_follow_the_themes(fitted):
    model, texts, themes = fitted
    space_topic = model.transform(["space shuttle orbit"])[0][0]
    topics, weights = model.find_topics("shuttle launch to the moon", top_n=2)
    assert topics[0] == space_topic and weights[0] > weights[1]
    with pytest.raises(ValueError, match="no word of the query"):
        model.find_topics("nothing known")
    for pool in ("shared", 0, None):
        rows, _ = model.similar_documents(0, k=5, pool=pool)
        assert 0 not in rows and (themes[rows] == themes[0]).all()
    for weight in (0, 0.3, 1):
        rows, _ = model.similar_documents(0, k=5, word_weight=weight)
        assert 0 not in rows and (themes[rows] == themes[0]).all()
    with pytest.warns(DeprecationWarning, match="pool=1000"):
        rows, _ = model.similar_documents(0, k=5, pool=1000)
    assert 0 not in rows and (themes[rows] == themes[0]).all()
    for bad in (-1, "wide", True, 2.5):
        with pytest.raises(ValueError, match="pool must be"):
            model.similar_documents(0, k=5, pool=bad)
    for weight in (None, 0):
        rows, sims = model.similar_documents("hockey goal", k=5, word_weight=weight)
        assert (themes[rows] == list(THEMES).index("hockey")).all() and np.all(np.diff(sims) <= 1e-6)


def test_labels_by_hand_are_saved_and_the_cli_reads_the_run(fitted, tmp_path):
    model, texts, _ = fitted
    model.set_topic_labels({1: "my topic"})
    out = model.save(tmp_path / "run")
    result = CliRunner().invoke(main, ["topics", str(out), "--top", "3"])
    assert result.exit_code == 0 and "my topic" in result.output
    loaded = TopicModel.load(out)
    assert loaded.topic_labels_ == model.topic_labels_
    np.testing.assert_allclose(loaded.model_.topic_word_, model.model_.topic_word_, rtol=0, atol=0)
    np.testing.assert_array_equal(loaded.transform(texts[:20])[0], model.transform(texts[:20])[0])
    for query in (3, "hockey season goal"):               # the saved run searches as the fitted model did
        rows, scores = model.similar_documents(query, k=8)
        loaded_rows, loaded_scores = loaded.similar_documents(query, k=8)
        np.testing.assert_allclose(loaded_scores, scores, rtol=0, atol=1e-6)
        assert set(loaded_rows[loaded_scores < loaded_scores[-1] - 1e-6]) <= set(rows)
    with pytest.raises(ValueError, match="not one of the model's topics"):
        model.set_topic_labels({7: "x"})
    with pytest.raises(ValueError, match="already holds a finished run"):
        model.save(out)


def test_bad_input_is_one_error():
    with pytest.raises(ValueError, match="document 1 is a float"):
        TopicModel(**FAST).fit(["a b", float("nan")])
    with pytest.raises(ValueError, match="not one string"):
        TopicModel(**FAST).fit("one text")
    with pytest.raises(RuntimeError, match="not fitted"):
        TopicModel().transform(["x"])


def test_the_same_topics_as_bpetopics_train(shared_data, tmp_path):
    """TopicModel on 20 Newsgroups' raw texts = `bpetopics train 20newsgroups` with the
    same settings and seed (the same draw of documents)."""
    from bpetopics.text import load_20newsgroups

    categories = ["sci.space", "rec.sport.hockey"]
    stopwords = str(shared_data / "stopwords" / "nltk_english.txt")
    raw = load_20newsgroups(shared_data / "sklearn", subsets=("train",), categories=categories,
                            download_if_missing=False)["train"].sample(300, 0)
    model = TopicModel(n_topics=4, vocab_size=400, stopwords=stopwords, random_state=3, n_bits=8, epochs=2,
                       device="cpu").fit(raw.texts)
    out = tmp_path / "cli"
    result = CliRunner().invoke(main, [
        "train", "20newsgroups", "--categories", ",".join(categories), "--max-docs", "300",
        "--data-home", str(shared_data / "sklearn"), "--vocab-size", "400", "--stopwords", stopwords,
        "--seed", "3", "--topics", "4", "--bits", "8", "--epochs", "2", "--device", "cpu", "--quiet",
        "--out", str(out)])
    assert result.exit_code == 0, result.output
    run = load_run(out)
    assert run.vocabulary == model.vocabulary_
    np.testing.assert_allclose(model.model_.topic_word_, run.model.topic_word_, rtol=1e-6, atol=1e-9)
    np.testing.assert_array_equal(model.model_.codes_, run.model.codes_)
    assert TopicModel.load(out).topic_labels_ == model.topic_labels_


def test_representative_docs_are_the_topics_own_documents_heaviest_first(fitted, tmp_path):
    model, texts, themes = fitted
    table = model.get_representative_docs(n=4)
    assert list(table.columns) == ["Topic", "Rank", "Row", "Id", "Weight", "Document"]
    assert table["Topic"].tolist() == [t for t in range(3) for _ in range(4)]
    topics, _ = model.transform(texts)
    for t, rows in table.groupby("Topic"):
        assert rows["Rank"].tolist() == [1, 2, 3, 4]
        assert np.all(np.diff(np.round(rows["Weight"].to_numpy(), 2)) <= 0)        # heaviest first
        positions = [int(i) for i in rows["Id"]]                 # ids of a list: the texts' positions
        assert [texts[p] for p in positions] == rows["Document"].tolist()
        assert all(topics[p] == t for p in positions)            # documents of the topic's theme
        assert len({themes[p] for p in positions}) == 1
        assert [model.document_ids_[r] for r in rows["Row"]] == rows["Id"].tolist()
    one = model.get_representative_docs(topic=1, n=2)
    assert one["Topic"].tolist() == [1, 1] and one["Row"].tolist() == table[table.Topic == 1]["Row"].tolist()[:2]
    loaded = TopicModel.load(model.save(tmp_path / "run"))
    again = loaded.get_representative_docs(n=4)
    assert again["Id"].tolist() == table["Id"].tolist() and again["Document"].isna().all()
    np.testing.assert_allclose(again["Weight"], table["Weight"], atol=1e-5)
    for bad in (3, -1, True, "0"):
        with pytest.raises(ValueError, match="not one of the model's topics"):
            model.get_representative_docs(topic=bad)
    with pytest.raises(ValueError, match="positive int"):
        model.get_representative_docs(n=0)


def test_top_documents_breaks_ties_at_two_decimals_by_length_then_order():
    from bpetopics.runs.topics import top_documents

    weights = np.array([0.5, 0.996, 0.999, 1.0, 0.2, 0.994])
    lengths = np.array([9, 10, 30, 10, 99, 50])
    # 0.996, 0.999 and 1.0 show as 1.00: the longest of them first, then corpus order; 0.994 is 0.99
    assert top_documents(weights, lengths, 5).tolist() == [2, 1, 3, 5, 0]
    assert top_documents(weights, lengths, 10).tolist() == [2, 1, 3, 5, 0, 4]
