"""Drawing the topic co-activation graph with matplotlib (headless, no pyplot state).

The layout keeps each connected group of topics together: every connected component
(after pruning edges lighter than ``min_weight``) gets its own seeded, weighted spring
layout, scaled by its size, and the components are packed in rows, largest first;
topics with no edge sit in a row underneath. Node area is proportional to the topic's
probability, edge width to the number of documents whose code activates both topics.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import networkx as nx
import numpy as np

from bpetopics.files import atomic_path

__all__ = ["graph_layout", "draw_graph"]

_GAP = 1.4  # space between packed components, in layout units
_ISOLATE_STEP = 1.7  # horizontal step between topics without edges
_UNIT_IN = 1.35  # inches per layout unit in the figure


def _pruned(G: nx.Graph, min_weight: float) -> nx.Graph:
    H = nx.Graph()
    H.add_nodes_from(G.nodes(data=True))
    H.add_edges_from(
        (u, v, d) for u, v, d in G.edges(data=True) if d.get("weight", 1) >= min_weight
    )
    return H


def _component_layout(H: nx.Graph, nodes: list, seed: int) -> np.ndarray:
    """Seeded spring layout of one component, centred, with ~1 unit between neighbours."""
    n = len(nodes)
    if n == 1:
        return np.zeros((1, 2))
    sub = nx.Graph()
    sub.add_nodes_from(nodes)
    # log-compressed weights: raw counts span orders of magnitude and would collapse
    # heavy pairs onto each other
    sub.add_edges_from(
        (u, v, {"w": 1.0 + math.log1p(d.get("weight", 1))}) for u, v, d in H.subgraph(nodes).edges(data=True)
    )
    if n == 2:
        xy = np.array([[-0.5, 0.0], [0.5, 0.0]])
    else:
        pos = nx.spring_layout(sub, weight="w", seed=seed, iterations=200)
        xy = np.array([pos[v] for v in nodes], dtype=np.float64)
        xy -= xy.mean(axis=0)
        radius = np.sqrt((xy**2).sum(axis=1)).max()
        xy *= 0.75 * math.sqrt(n) / max(radius, 1e-9)
        # push apart until the closest pair is >= 1 unit (labels need room)
        d = np.sqrt(((xy[:, None] - xy[None]) ** 2).sum(-1)) + np.eye(n) * 1e9
        if d.min() < 1.0:
            xy *= min(1.0 / max(d.min(), 1e-9), 3.0)
    return xy


def graph_layout(G: nx.Graph, min_weight: float = 1, seed: int = 0) -> dict:
    """Positions {node: (x, y)} keeping connected groups together (see module docstring).

    Components of the graph pruned to edges with ``weight >= min_weight`` are laid out
    separately (spring layout seeded with ``seed``, log-weighted) and packed in rows,
    largest first, with a gap between their bounding boxes; nodes without edges go in a
    row (wrapped) below. Deterministic for a given graph and seed.
    """
    H = _pruned(G, min_weight)
    comps = [sorted(c) for c in nx.connected_components(H)]
    groups = sorted((c for c in comps if len(c) > 1), key=lambda c: (-len(c), c[0]))
    isolates = sorted(c[0] for c in comps if len(c) == 1)

    blocks = []  # (nodes, xy shifted so its bbox starts at 0, width, height)
    for c in groups:
        xy = _component_layout(H, c, seed)
        xy = xy - xy.min(axis=0)
        w, h = xy.max(axis=0)
        blocks.append((c, xy, w, h))

    total_area = sum((w + _GAP) * (h + _GAP) for _, _, w, h in blocks)
    n_iso = len(isolates)
    row_width = max(
        [w for _, _, w, _ in blocks] + [math.sqrt(total_area) * 1.4, min(n_iso, 8) * _ISOLATE_STEP, 1.0]
    )

    pos: dict = {}
    x0, y_top, row_h = 0.0, 0.0, 0.0
    for c, xy, w, h in blocks:
        if x0 > 0 and x0 + w > row_width:
            y_top -= row_h + _GAP
            x0, row_h = 0.0, 0.0
        for v, (x, y) in zip(c, xy):
            pos[v] = (x0 + x, y_top - (h - y))
        x0 += w + _GAP
        row_h = max(row_h, h)
    y = y_top - row_h - (_GAP if blocks else 0.0)
    per_row = max(1, int(row_width // _ISOLATE_STEP) + 1)
    for i, v in enumerate(isolates):
        r, k = divmod(i, per_row)
        pos[v] = (k * _ISOLATE_STEP, y - r * 1.2)
    return pos


def draw_graph(
    G: nx.Graph,
    path: str | os.PathLike,
    min_weight: float = 1,
    seed: int = 0,
    title: str | None = None,
    dpi: int = 120,
) -> Path:
    """Draw the co-activation graph ``G`` (from :func:`bpetopics.viz.coactivation_graph`)
    to a PNG at ``path`` (written atomically) and return the path.

    Node area is proportional to the node's ``probability`` attribute, edge width to the
    edge's ``weight`` (documents whose code activates both topics); edges with
    ``weight < min_weight`` are dropped, and nodes are coloured by connected group of the
    pruned graph (grey: no edge). Each node shows its topic number inside and its
    ``label`` (top 3 words) below, on a white box. The layout is :func:`graph_layout`.
    """
    from matplotlib.collections import LineCollection
    from matplotlib.figure import Figure

    nodes = list(G.nodes())
    if not nodes:
        raise ValueError("the graph has no nodes")
    H = _pruned(G, min_weight)
    pos = graph_layout(G, min_weight=min_weight, seed=seed)
    xy = np.array([pos[v] for v in nodes], dtype=np.float64)
    prob = np.array([float(G.nodes[v].get("probability", 1.0 / len(nodes))) for v in nodes])
    sizes = 80.0 + 1500.0 * prob / max(prob.max(), 1e-12)  # points^2, area ∝ probability
    radius_pt = np.sqrt(sizes / np.pi)

    comp_of = {}
    groups = sorted((sorted(c) for c in nx.connected_components(H) if len(c) > 1), key=lambda c: (-len(c), c[0]))
    for i, c in enumerate(groups):
        for v in c:
            comp_of[v] = i
    palette = [
        "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
        "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#86bcb6",
    ]
    colors = [palette[comp_of[v] % len(palette)] if v in comp_of else "#bab0ac" for v in nodes]

    (xmin, ymin), (xmax, ymax) = xy.min(axis=0), xy.max(axis=0)
    width_u, height_u = xmax - xmin + 2.0, ymax - ymin + 2.2
    fig_w = float(np.clip(width_u * _UNIT_IN, 6.0, 26.0))
    fig_h = float(np.clip(height_u * _UNIT_IN + (0.6 if title else 0.3), 4.0, 26.0))
    fig = Figure(figsize=(fig_w, fig_h), dpi=dpi)
    ax = fig.add_axes((0.0, 0.0, 1.0, 0.93 if title else 0.96))
    ax.set_axis_off()
    ax.set_xlim(xmin - 1.0, xmax + 1.0)
    ax.set_ylim(ymin - 1.2, ymax + 1.0)

    # light edges first so heavy ones stay visible; fainter when there are many edges
    edges = sorted(((u, v, d.get("weight", 1)) for u, v, d in H.edges(data=True)), key=lambda e: e[2])
    if edges:
        wmax = max(w for _, _, w in edges)
        segs = [(pos[u], pos[v]) for u, v, _ in edges]
        widths = [0.8 + 6.0 * w / wmax for _, _, w in edges]
        alpha = float(np.clip(0.45 * math.sqrt(60.0 / len(edges)), 0.15, 0.45))
        ax.add_collection(LineCollection(segs, linewidths=widths, colors="#555555", alpha=alpha, zorder=1))

    ax.scatter(xy[:, 0], xy[:, 1], s=sizes, c=colors, edgecolors="white", linewidths=1.2, zorder=2)
    for i, v in enumerate(nodes):
        d = G.nodes[v]
        ax.annotate(
            str(d.get("topic", v)), xy[i], ha="center", va="center", fontsize=7,
            color="black", zorder=3,
        )
        ax.annotate(
            str(d.get("label", v)), xy[i], xytext=(0, -(radius_pt[i] + 3)), textcoords="offset points",
            ha="center", va="top", fontsize=8, zorder=4,
            bbox=dict(boxstyle="round,pad=0.2", fc="white", ec="#cccccc", lw=0.5, alpha=0.9),
        )
    caption = (
        f"node area ∝ topic probability · edge width ∝ documents whose code activates both topics"
        f" · edges of fewer than {min_weight:g} documents hidden"
    )
    fig.text(0.5, 0.005, caption, ha="center", va="bottom", fontsize=7, color="#555555")
    if title:
        fig.suptitle(title, fontsize=11, y=0.99)

    path = Path(path)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=dpi)
    return path
