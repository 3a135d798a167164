import networkx as nx
import numpy as np
import pytest
from PIL import Image

from bpetopics.viz import coactivation_graph, draw_graph, graph_layout

from .conftest import FakeDecoder, block_topics, make_codes


def two_group_graph(seed=0):
    """20 topics: 0..7 co-occur, 8..15 co-occur, 16..19 only ever alone."""
    rng = np.random.default_rng(seed)
    dec = FakeDecoder(20, np.arange(20), strength=5.0)
    bit_sets = []
    for _ in range(300):
        g = rng.integers(0, 3)
        if g == 0:
            bit_sets.append(tuple(rng.choice(8, rng.integers(1, 4), replace=False)))
        elif g == 1:
            bit_sets.append(tuple(8 + rng.choice(8, rng.integers(1, 3), replace=False)))
        else:
            bit_sets.append((16 + int(rng.integers(0, 4)),))
    codes = make_codes(bit_sets, 20)
    tw, vocab = block_topics(20)
    return coactivation_graph(dec.code_topic(codes), tw, vocab, codes=codes,
                              doc_lengths=rng.integers(10, 100, len(codes)))


def _bbox(pos, nodes):
    xy = np.array([pos[v] for v in nodes])
    return xy.min(axis=0), xy.max(axis=0)


def test_layout_keeps_groups_apart_and_is_seeded():
    G = two_group_graph()
    pos = graph_layout(G, seed=0)
    assert set(pos) == set(G.nodes)
    (a_lo, a_hi), (b_lo, b_hi) = _bbox(pos, range(8)), _bbox(pos, range(8, 16))
    # the two groups' bounding boxes do not overlap
    assert a_hi[0] < b_lo[0] or b_hi[0] < a_lo[0] or a_hi[1] < b_lo[1] or b_hi[1] < a_lo[1]
    # isolated topics sit in a row below both groups
    iso_y = [pos[v][1] for v in range(16, 20)]
    assert max(iso_y) < min(a_lo[1], b_lo[1])
    assert len(set(iso_y)) == 1
    # nodes are not on top of each other
    xy = np.array(list(pos.values()))
    d = np.sqrt(((xy[:, None] - xy[None]) ** 2).sum(-1)) + np.eye(len(xy)) * 1e9
    assert d.min() > 0.5
    assert graph_layout(G, seed=0) == pos


def test_min_weight_prunes_edges_into_isolates():
    G = two_group_graph()
    heaviest = max(d["weight"] for *_, d in G.edges(data=True))
    pos = graph_layout(G, min_weight=heaviest + 1)
    assert len({p[1] for p in pos.values()}) <= 3  # all nodes are isolates: rows only


def test_draw_graph_writes_png(tmp_path):
    G = two_group_graph()
    out = draw_graph(G, tmp_path / "fig" / "graph.png", min_weight=2, seed=0, title="two groups")
    assert out.exists() and out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with Image.open(out) as im:
        assert im.width > 600 and im.height > 400
    assert [p.name for p in out.parent.iterdir()] == ["graph.png"]  # no temp file left


def test_draw_graph_small_and_edgeless(tmp_path):
    tw, vocab = block_topics(3)
    G = coactivation_graph(np.eye(3), tw, vocab)
    assert G.number_of_edges() == 0
    assert draw_graph(G, tmp_path / "g.png").exists()
    with pytest.raises(ValueError):
        draw_graph(nx.Graph(), tmp_path / "empty.png")
