"""What `compare` prepares: held-out documents for a corpus without a test split, and
the settings block naming every model's configuration."""

import pytest

from bpetopics.experiments.text_setup import comparison_data, describe_comparison

SETTINGS = {"vocab_size": 300, "min_df": 2, "max_df": 0.5, "stopwords": "sklearn"}


def test_a_corpus_without_test_split_holds_out_a_seeded_fifth():
    data = comparison_data("lee", SETTINGS, seed=3)
    assert (data.train.n_docs, data.test.n_docs) == (240, 60)
    assert data.notes == ["lee has no test split: holding out 20% of the documents, drawn with seed 3"]
    again = comparison_data("lee", SETTINGS, seed=3)
    assert again.test.ids == data.test.ids and set(data.test.ids).isdisjoint(data.train.ids)
    described = describe_comparison("lee", SETTINGS, data, "corpus",
                                    ["PoissBPE", "LDA", "Tomotopy", "NMF", "ProdLDA"], 20,
                                    {"device": "cpu"}, {"passes": 2})
    assert described["held-out documents"] == "20% of the documents, drawn with seed 3"
    assert described["coherence reference"].startswith("the whole corpus's texts")
    assert "passes=2" in described["LDA"] and "n_topics=20" in described["PoissBPE"]
    assert {"Tomotopy", "NMF", "ProdLDA"} <= set(described)


def test_test_size_is_the_held_out_share_and_is_said_so():
    data = comparison_data("lee", {**SETTINGS, "test_size": 0.3, "random_state": 1}, seed=3)
    assert (data.train.n_docs, data.test.n_docs) == (210, 90) and data.notes == []
    assert data.heldout == "30% of the documents, held out by test_size with seed 1"


def test_passages_are_held_out_with_their_whole_documents():
    """With --passages and no test split, the held-out share is drawn from whole
    documents before the split, as test_size draws it: no document on both sides."""
    data = comparison_data("lee", {**SETTINGS, "passages": "sentences"}, seed=3)
    documents = {name: {i.split("#")[0] for i in split.ids} for name, split in (("train", data.train),
                                                                             ("test", data.test))}
    assert (len(documents["train"]), len(documents["test"])) == (240, 60)
    assert documents["train"].isdisjoint(documents["test"]) and data.test.n_docs > 60
    assert data.notes[0] == ("lee has no test split: holding out 20% of its documents, drawn with seed 3, "
                             "with their passages")
    assert data.heldout == "20% of the documents, held out by test_size with seed 3"


def test_too_small_a_corpus_is_one_line(tmp_path):
    for i in range(2):
        (tmp_path / f"d{i}.txt").write_text("space shuttle orbit launch\n")
    with pytest.raises(ValueError, match="too few to hold out"):
        comparison_data(tmp_path, {**SETTINGS, "min_df": 1, "max_df": 1.0})
