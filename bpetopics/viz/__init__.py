"""Visualisation from plain arrays: the topic co-activation graph, the bit view, the
graph drawing, the pyLDAvis page, topic shares over time and per class. Plots are free
functions, not model methods.

pyLDAvis and matplotlib are imported lazily, inside the functions that need them.
"""

from .draw import draw_graph, graph_layout
from .graph import (
    DEFAULT_MASS,
    DEFAULT_THRESHOLD,
    activation_matrix,
    bit_table,
    bit_topics,
    coactivation_graph,
    top_word_lists,
    topic_labels,
    write_graph,
)
from .ldavis import ldavis_data, ldavis_html, prepare_ldavis, topic_coordinates, write_ldavis_html
from .over_time import plot_topics_over_time, plot_topics_per_class

__all__ = [
    "DEFAULT_MASS",
    "DEFAULT_THRESHOLD",
    "activation_matrix",
    "bit_table",
    "bit_topics",
    "coactivation_graph",
    "draw_graph",
    "graph_layout",
    "ldavis_data",
    "ldavis_html",
    "plot_topics_over_time",
    "plot_topics_per_class",
    "prepare_ldavis",
    "top_word_lists",
    "topic_coordinates",
    "topic_labels",
    "write_graph",
    "write_ldavis_html",
]
