"""Topic labels: the planted collocation of each topic, the top two words without texts,
and labels.json's record read back (errors in one line)."""

import numpy as np
import pytest

from bpetopics.labels import (TOP_WORDS, fallback_label, label_topics, labels_record, merge_labels,
                              parse_label_assignment, parse_labels_record)

VOCABULARY = sorted(["space", "shuttle", "orbit", "nasa", "hockey", "team", "goal", "season"])


def _planted(seed=0):
    """Two topics, each with a collocation: 'space shuttle' and 'hockey team'."""
    rng = np.random.default_rng(seed)
    texts = []
    for n in range(80):
        words = ["space", "orbit", "nasa"] if n % 2 == 0 else ["hockey", "goal", "season"]
        doc = list(rng.choice(words, size=12))
        doc[3:5] = ["space", "shuttle"] if n % 2 == 0 else ["hockey", "team"]
        texts.append(doc)
    topic_word = np.full((2, len(VOCABULARY)), 1e-3)
    for t, words in enumerate((["space", "shuttle", "orbit", "nasa"], ["hockey", "team", "goal", "season"])):
        for rank, w in enumerate(words):
            topic_word[t, VOCABULARY.index(w)] = 0.4 - 0.05 * rank
    return texts, topic_word / topic_word.sum(1, keepdims=True)


def test_each_topic_gets_its_planted_collocation():
    texts, topic_word = _planted()
    assert label_topics(topic_word, VOCABULARY, texts, min_count=5) == ["space shuttle", "hockey team"]


def test_without_texts_or_candidates_the_label_is_the_top_two_words():
    texts, topic_word = _planted()
    assert label_topics(topic_word, VOCABULARY) == ["space, shuttle", "hockey, team"]
    assert label_topics(topic_word, VOCABULARY, texts[:2]) == ["space, shuttle", "hockey, team"]
    assert fallback_label(topic_word[1], VOCABULARY) == "hockey, team"


def test_the_record_round_trips_and_labels_by_hand_win():
    record = labels_record(["a b", "c d"], {1: "sport"})
    automatic, manual = parse_labels_record(record, 2)
    assert automatic == ["a b", "c d"] and manual == {1: "sport"}
    assert merge_labels(automatic, manual) == ["a b", "sport"]


@pytest.mark.parametrize("record, fragment", [({"format": "x"}, "not a topic labels file"),
                                              (labels_record(["a"]), "one per topic"),
                                              (labels_record(["a", "b"], {5: "x"}), "outside 0..1")])
def test_a_bad_record_is_one_error(record, fragment):
    with pytest.raises(ValueError, match=fragment):
        parse_labels_record(record, 2)


def test_label_assignments_parse():
    assert parse_label_assignment('3="space flight"') == (3, "space flight")
    for bad in ("3", "x=space", "3="):
        with pytest.raises(ValueError, match="TOPIC=LABEL"):
            parse_label_assignment(bad)





def test_a_label_is_made_of_two_of_its_topics_top_words():
    """A rare pair has a large lift p(w | k) / p(w): "islamic jihad", in 10 of 2,000
    documents, with "jihad" 25th of the sports topic's words and "islamic" 36th, outscores
    "match team", and would name the topic by words it hardly holds."""
    fillers = [f"filler{i:03d}" for i in range(400)]            # too many to pair up often
    vocabulary = ["match", "team", "islamic", "jihad", "said"] + fillers
    rng = np.random.default_rng(0)
    texts = [["match", "team", "match", "team", "said"] + list(rng.choice(fillers, size=40))
             for _ in range(2000)]
    for doc in texts[:10]:
        doc += ["said", "islamic", "jihad"]
    order = ["match", "team"] + fillers[:22] + ["jihad"] + fillers[22:33] + ["islamic"] + fillers[33:] + ["said"]
    topic_word = np.zeros((1, len(vocabulary)))
    for rank, word in enumerate(order):
        topic_word[0, vocabulary.index(word)] = 0.9 ** rank
    topic_word /= topic_word.sum()
    assert label_topics(topic_word, vocabulary, texts, min_count=10, min_docs=10) == ["match team"]


def test_both_words_of_a_label_are_among_the_ten_words_shown():
    """A pair of the topic's 1st and 12th words, of high lift, loses to the pair of its
    1st and 2nd words: a label names words shown beside it (``TOP_WORDS`` = 10)."""
    fillers = [f"filler{i:03d}" for i in range(400)]
    vocabulary = ["communist", "space", "outer", "alliance"] + fillers
    rng = np.random.default_rng(1)
    texts = [["communist", "alliance", "communist", "alliance"] + list(rng.choice(fillers, size=40))
             for _ in range(2000)]
    for doc in texts[:12]:
        doc += ["outer", "space", "outer", "space"]
    order = ["communist", "alliance"] + fillers[:9] + ["outer", "space"] + fillers[9:]
    topic_word = np.zeros((1, len(vocabulary)))
    for rank, word in enumerate(order):
        topic_word[0, vocabulary.index(word)] = 0.8 ** rank
    topic_word /= topic_word.sum()
    assert TOP_WORDS == 10
    assert label_topics(topic_word, vocabulary, texts, min_count=10, min_docs=10) == ["communist alliance"]
