import itertools

import networkx as nx
import numpy as np
import pandas as pd
import pytest

from bpetopics.viz import (
    activation_matrix,
    bit_table,
    bit_topics,
    coactivation_graph,
    topic_labels,
    write_graph,
)

from .conftest import FakeDecoder, block_topics, make_codes


def _reference_weights(doc_topic, threshold):
    """Slow, obvious reference: loop over documents and topic pairs."""
    T = doc_topic.shape[1]
    w = {}
    for row in doc_topic:
        on = [t for t in range(T) if row[t] / row.sum() >= threshold]
        for s, t in itertools.combinations(on, 2):
            w[(s, t)] = w.get((s, t), 0) + 1
    return w


def _weights(G):
    return {(min(u, v), max(u, v)): d["weight"] for u, v, d in G.edges(data=True)}


def test_known_codes_give_known_edges_and_weights(known):
    dec, codes, tw, vocab = known
    G = coactivation_graph(dec.code_topic(codes), tw, vocab, codes=codes)
    assert sorted(G.nodes) == list(range(12))
    # documents: {0,1} x3, {0,1,2} x2, {3} x4, {4,5} x1, {} x2
    assert _weights(G) == {(0, 1): 5, (0, 2): 2, (1, 2): 2, (4, 5): 1}
    # topic 3 is only ever active alone; topics 6..11 are never raised: no edges
    for t in [3] + list(range(6, 12)):
        assert G.degree(t) == 0
    assert [G.nodes[t]["n_docs"] for t in range(6)] == [5, 5, 2, 4, 1, 1]
    assert G.graph["n_documents"] == len(codes) and G.graph["rule"] == "threshold"


def test_per_code_counting_equals_per_document_counting_and_reference():
    rng = np.random.default_rng(0)
    dec = FakeDecoder(15, rng.integers(0, 15, size=10), strength=4.0)
    codes = (rng.random((400, 10)) < 0.15).astype(np.uint8)
    f = dec.code_topic(codes)
    tw, vocab = block_topics(15)
    G_codes = coactivation_graph(f, tw, vocab, codes=codes)
    G_docs = coactivation_graph(f, tw, vocab)
    assert _weights(G_codes) == _weights(G_docs) == _reference_weights(f, 0.1)
    assert len(_weights(G_codes)) > 5  # the example does exercise edges
    assert nx.get_node_attributes(G_codes, "n_docs") == nx.get_node_attributes(G_docs, "n_docs")


def test_node_attributes_are_scalars_with_length_weighted_probability(known):
    dec, codes, tw, vocab = known
    f = dec.code_topic(codes)
    lengths = np.arange(1, len(codes) + 1, dtype=float)
    G = coactivation_graph(f, tw, vocab, codes=codes, doc_lengths=lengths, top_n=3)
    expected = lengths @ f / lengths.sum()
    for t in range(12):
        d = G.nodes[t]
        assert d["top_words"] == f"t{t}a t{t}b t{t}c"
        assert d["label"] == f"t{t}a t{t}b t{t}c"
        assert d["probability"] == pytest.approx(expected[t])
        assert all(isinstance(v, (int, float, str)) for v in d.values())
    assert sum(nx.get_node_attributes(G, "probability").values()) == pytest.approx(1.0)
    # without lengths: the plain mean
    G2 = coactivation_graph(f, tw, vocab)
    assert G2.nodes[3]["probability"] == pytest.approx(f[:, 3].mean())
    # 10 top words by default, label keeps 3
    assert len(G2.nodes[0]["top_words"].split()) == 10
    assert G2.nodes[0]["label"] == " ".join(topic_labels(tw, vocab)[0].split()[:3])


def test_codes_inconsistent_with_doc_topic_are_rejected(known):
    dec, codes, tw, vocab = known
    f = dec.code_topic(codes)
    f[1] = f[1][::-1]  # doc 1 shares its code with doc 0 but now has another mixture
    with pytest.raises(ValueError, match="same code"):
        coactivation_graph(f, tw, vocab, codes=codes)


def test_activation_rules_on_hand_examples():
    f = np.array([
        [0.5, 0.3, 0.2, 0.0],
        [0.9, 0.05, 0.05, 0.0],
        [0.25, 0.25, 0.25, 0.25],
        [0.0, 0.0, 0.0, 0.0],
        [2.0, 6.0, 1.0, 1.0],  # un-normalised: 0.2, 0.6, 0.1, 0.1
    ])
    top = activation_matrix(f, rule="top_mass", mass=0.8)
    assert top.tolist() == [
        [True, True, False, False],   # 0.5 + 0.3 reaches 0.8
        [True, False, False, False],
        [True, True, True, True],     # 0.75 < 0.8 needs the fourth
        [False, False, False, False],
        [True, True, False, False],   # 0.6 + 0.2
    ]
    thr = activation_matrix(f, rule="threshold", threshold=0.1)
    assert thr.tolist() == [
        [True, True, True, False],
        [True, False, False, False],
        [True, True, True, True],
        [False, False, False, False],
        [True, True, True, True],
    ]
    with pytest.raises(ValueError):
        activation_matrix(f, rule="nope")


def test_top_mass_rule_in_graph(known):
    dec, codes, tw, vocab = known
    G = coactivation_graph(dec.code_topic(codes), tw, vocab, codes=codes, rule="top_mass", mass=0.8)
    assert G.graph["mass"] == 0.8
    # the empty code (uniform over 12) now activates ~10 topics: every pair among them gets +2
    assert G.number_of_edges() > 20


def test_graphml_and_gexf_round_trip(known, tmp_path):
    dec, codes, tw, vocab = known
    G = coactivation_graph(dec.code_topic(codes), tw, vocab, codes=codes, doc_lengths=np.full(len(codes), 7))
    graphml, gexf = write_graph(G, tmp_path / "sub" / "graph")
    assert graphml.name == "graph.graphml" and gexf.name == "graph.gexf"
    assert sorted(p.name for p in graphml.parent.iterdir()) == ["graph.gexf", "graph.graphml"]  # no temp files
    for H in (nx.read_graphml(graphml, node_type=int), nx.read_gexf(gexf, node_type=int)):
        assert sorted(H.nodes) == sorted(G.nodes)
        assert _weights(H) == _weights(G)
        for t in G.nodes:
            assert H.nodes[t]["top_words"] == G.nodes[t]["top_words"]
            assert H.nodes[t]["label"] == G.nodes[t]["label"]
            assert float(H.nodes[t]["probability"]) == pytest.approx(G.nodes[t]["probability"])
    G.nodes[0]["extra"] = ["a", "b"]  # non-scalar attributes are flattened, not refused
    write_graph(G, tmp_path / "graph2.graphml")
    assert nx.read_graphml(tmp_path / "graph2.graphml", node_type=int).nodes[0]["extra"] == "a b"


def test_bit_topics_finds_the_topic_each_bit_raises():
    bit_topic = np.array([3, 0, 7, 7, 5, 1])
    dec = FakeDecoder(8, bit_topic, strength=3.0, bias=np.linspace(0, 1, 8))
    delta = bit_topics(dec.code_topic, 6)
    assert delta.shape == (6, 8)
    assert delta.argmax(axis=1).tolist() == bit_topic.tolist()
    np.testing.assert_allclose(delta.sum(axis=1), 0.0, atol=1e-12)  # mass moves, total stays 1
    zero = dec.code_topic(np.zeros((1, 6), np.uint8))[0]
    e0 = dec.code_topic(make_codes([(0,)], 6))[0]
    np.testing.assert_allclose(delta[0], e0 - zero)
    # in the context of a base code, bit k's effect is f(base + e_k) - f(base - e_k)
    base = make_codes([(2, 4)], 6)[0]
    d2 = bit_topics(dec.code_topic, 6, base_code=base)
    np.testing.assert_allclose(d2[4], dec.code_topic(make_codes([(2, 4)], 6))[0] - dec.code_topic(make_codes([(2,)], 6))[0])
    assert d2.argmax(axis=1).tolist() == bit_topic.tolist()


def test_bit_table_usage_and_labels():
    bit_topic = np.array([2, 0, 1])
    dec = FakeDecoder(4, bit_topic, strength=5.0)
    tw, vocab = block_topics(4)
    codes = make_codes([(0,), (0, 1), (), (0,)], 3)
    table = bit_table(dec.code_topic, 3, codes=codes, topic_word=tw, vocabulary=vocab, n_raised=2)
    assert isinstance(table, pd.DataFrame)
    assert list(table.columns) == ["bit", "usage", "n_docs", "topic_1", "raise_1", "label_1", "topic_2", "raise_2", "label_2"]
    assert table["usage"].tolist() == [0.75, 0.25, 0.0]
    assert table["n_docs"].tolist() == [3, 1, 0]
    assert table["topic_1"].tolist() == [2, 0, 1]
    assert table["label_1"].tolist() == ["t2a t2b t2c", "t0a t0b t0c", "t1a t1b t1c"]
    assert (table["raise_1"] > 0.5).all() and (table["raise_2"] < 0).all()
    no_codes = bit_table(dec.code_topic, 3)
    assert no_codes["usage"].isna().all() and no_codes["label_1"].tolist()[0] == "topic 2"
