"""Guided topics: seed words per topic as PoissBPE's start and prior (written-out gradient
equal to autograd's), through TopicModel's words and train's --seed-topics file."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from bpetopics.models import PoissBPE
from bpetopics.models.poissbpe.topic_seeds import seed_logit_grad
from bpetopics.seed_topics import read_seed_topics, seed_word_ids, seed_words_for

SEEDS = [["graphics", "image"], ["hockey", "team"], ["space", "nasa"], ["israel", "armenian"]]
TINY = dict(n_topics=4, n_bits=8, epochs=5, device="cpu", progress=False, random_state=0)


def test_the_seed_gradient_is_autograds():
    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(3, 7, dtype=torch.float64, generator=gen, requires_grad=True)
    seeds = torch.zeros(3, 7, dtype=torch.float64)
    seeds[0, [1, 4]] = 1.0
    seeds[2, 6] = 1.0
    beta = torch.softmax(logits, dim=1).t()
    (-0.3 * (torch.log(beta.t()) * seeds).sum()).backward()
    np.testing.assert_allclose(seed_logit_grad(beta.detach(), seeds, 0.3).numpy(), logits.grad.numpy(), atol=1e-12)


def test_seeded_topics_form_around_their_seeds(newsgroups_small):
    train = newsgroups_small["train"]
    ids, unknown = seed_word_ids(SEEDS, train.vocabulary)
    assert not unknown
    model = PoissBPE(**TINY, seed_words=ids).fit(train.counts)
    assert model.has_seed_words() and not model._compiled_theta(model.likelihood_.topic_logits)
    top = model.top_words(train.vocabulary, 10)
    for t, words in enumerate(SEEDS):
        assert set(words) <= set(top[t]), (t, top[t])
    np.testing.assert_allclose(model.topic_word_.sum(1), 1.0, atol=1e-6)


def test_the_seed_prior_lowers_the_loss_of_seed_words(newsgroups_small):
    """The same start and data: the seeded prior's gradient raises seed words' weight."""
    train = newsgroups_small["train"]
    ids, _ = seed_word_ids(SEEDS, train.vocabulary)
    weak = PoissBPE(**TINY, seed_words=ids, seed_strength=0.0).fit(train.counts)
    strong = PoissBPE(**TINY, seed_words=ids, seed_strength=0.05).fit(train.counts)
    for t, words in enumerate(ids):
        assert strong.topic_word_[t, words].sum() > weak.topic_word_[t, words].sum()


def test_bad_seed_words_are_refused(newsgroups_small):
    counts = newsgroups_small["train"].counts[:50]
    for seeds, fragment in (([[0], [1], [2], [3], [4]], "has 5 topics but the model 4"),
                            ([["space"]], "lists of word ids"), ([[10 ** 6]], "outside the vocabulary")):
        with pytest.raises(ValueError, match=fragment):
            PoissBPE(**TINY, seed_words=seeds).fit(counts)


def test_seed_files_and_words(tmp_path):
    path = tmp_path / "seeds.txt"
    path.write_text("# four groups\nSpace, nasa\n\nhockey team  zzzz\n", encoding="utf-8")
    assert read_seed_topics(path) == [["space", "nasa"], ["hockey", "team", "zzzz"]]
    notes = []
    assert seed_words_for(read_seed_topics(path), ["hockey", "nasa", "space", "team"], notes.append) == [[1, 2], [0, 3]]
    assert notes == ["Note: seed words not in the vocabulary (dropped): zzzz"]
    with pytest.raises(ValueError, match="seed topic 1 \\(line 2\\)"):
        seed_words_for([["space"], ["zzzz"]], ["space"], notes.append)
    with pytest.raises(ValueError, match="does not exist"):
        read_seed_topics(tmp_path / "missing.txt")
    (tmp_path / "empty.txt").write_text("\n# nothing\n")
    with pytest.raises(ValueError, match="holds no seed word"):
        read_seed_topics(tmp_path / "empty.txt")


def test_topic_model_maps_seed_words_through_its_vocabulary():
    from bpetopics import TopicModel
    from tests.test_topic_model import FAST, planted_texts

    texts, _ = planted_texts()
    with pytest.warns(UserWarning, match="dropped\\): qqqq"):
        model = TopicModel(n_topics=3, seed_topics=[["hockey", "qqqq"], ["pixel"], ["moon"]], **FAST).fit(texts)
    vocabulary = model.vocabulary_
    assert model.model_.seed_words == [[vocabulary.index("hockey")], [vocabulary.index("pixel")],
                                       [vocabulary.index("moon")]]
    assert "hockey" in [w for w, _ in model.get_topic(0, 6)]
    assert "pixel" in [w for w, _ in model.get_topic(1, 6)]
    assert "moon" in [w for w, _ in model.get_topic(2, 6)]


def test_refitting_without_seeds_uses_the_compiled_step_again(newsgroups_small):
    counts = newsgroups_small["train"].counts[:100]
    model = PoissBPE(**dict(TINY, epochs=1), seed_words=[[0]]).fit(counts)
    assert not model._compiled_theta(model.likelihood_.topic_logits)
    model.set_params(seed_words=None).fit(counts)
    assert model._compiled_theta(model.likelihood_.topic_logits)
