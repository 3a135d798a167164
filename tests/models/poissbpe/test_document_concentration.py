"""The documents' prior weight a0 (models/poissbpe/document_concentration.py): picked by
document completion, only ever lowered from 10, for short texts alone, saved with the
model."""

import numpy as np
import pytest
import scipy.sparse as sp

from bpetopics import PoissBPE
from bpetopics.models.poissbpe.document_concentration import (CONCENTRATION, SHORT_TEXT_CONCENTRATIONS,
                                                               best_concentration)
from tests.models.poissbpe.test_model import planted_corpus


def two_topic_documents(n_docs=400, doc_len=6, seed=0):
    """Two topics on disjoint halves of 20 words; a document mixes them 0.7 / 0.3, the
    larger share on a topic of its own. Returns counts, topics and mixtures."""
    rng = np.random.default_rng(seed)
    topics = np.full((2, 20), 1e-4)
    topics[0, :10] = topics[1, 10:] = 0.1
    topics /= topics.sum(1, keepdims=True)
    mixtures = np.array([[0.7, 0.3], [0.3, 0.7]])[rng.integers(2, size=n_docs)]
    X = sp.csr_matrix(np.stack([rng.multinomial(doc_len, m @ topics) for m in mixtures]).astype(float))
    return X, topics, mixtures


def test_a_right_centre_wants_weight_and_a_wrong_one_none():
    """With each document's own mixture as the prior's centre the largest a0 completes it
    best (three tokens say less than the centre); with the other kind's mixture, a0 of a
    token or less (the tokens say more)."""
    X, topics, truth = two_topic_documents()
    right = best_concentration(X, topics, lambda obs: truth, SHORT_TEXT_CONCENTRATIONS)
    wrong = best_concentration(X, topics, lambda obs: truth[:, ::-1], SHORT_TEXT_CONCENTRATIONS)
    assert right == max(SHORT_TEXT_CONCENTRATIONS) and wrong <= 1.0
    # no document with two tokens: nothing to complete, the largest candidate
    single = sp.csr_matrix(np.eye(20)[:5])
    assert best_concentration(single, topics, lambda obs: None, (1.0, 3.0)) == 3.0


def short_texts(n_docs=600, seed=0):
    return planted_corpus(n_docs=n_docs, doc_len=3, seed=seed)[0]


def test_a_short_text_model_picks_its_concentration_and_keeps_it(monkeypatch):
    import bpetopics.models.poissbpe.document_concentration as module

    monkeypatch.setattr(module, "SHORT_TEXT_CONCENTRATIONS", (0.3, 1.0))    # 10 is not among them
    X = short_texts()
    model = PoissBPE(n_topics=6, epochs=4, random_state=0, device="cpu", progress=False).fit(X)
    assert model.short_texts() and model.document_concentration is None
    assert model.document_concentration_ in (0.3, 1.0)
    assert model.concentration_in_use() == model.document_concentration_
    state = model.state_dict()
    loaded = PoissBPE(n_topics=6, n_bits=model.code_length(), device="cpu", progress=False)
    loaded.load_state(state, *X.shape)
    assert loaded.concentration_in_use() == model.document_concentration_
    np.testing.assert_array_equal(loaded.doc_topic(X[:40]), model.doc_topic(X[:40]))
    # a model saved before models picked one uses 10
    loaded.load_state({k: v for k, v in state.items() if k != "document_concentration"}, *X.shape)
    assert loaded.document_concentration_ is None and loaded.concentration_in_use() == CONCENTRATION


@pytest.mark.parametrize("case", ["long documents", "given", "not counts"])
def test_other_models_keep_10_or_the_value_given(case):
    X = {"long documents": planted_corpus(n_docs=300)[0], "given": short_texts(),
         "not counts": short_texts() * 0.5}[case]
    given = 2.5 if case == "given" else None
    model = PoissBPE(n_topics=6, epochs=3, document_concentration=given, random_state=0, device="cpu",
                     progress=False).fit(X)
    expected = 2.5 if case == "given" else CONCENTRATION
    assert model.document_concentration_ == expected and model.concentration_in_use() == expected
