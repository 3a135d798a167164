"""Collocations: planted adjacent pairs are found, ranked by PMI, cut by count and documents."""

import numpy as np

from bpetopics.text.collocations import find_collocations


def _texts(seed=0):
    rng = np.random.default_rng(seed)
    filler = [f"w{i}" for i in range(30)]
    docs = []
    for n in range(60):
        doc = list(rng.choice(filler, size=20))
        if n % 2 == 0:
            doc[5:7] = ["space", "shuttle"]
        if n % 3 == 0:
            doc[10:12] = ["hockey", "team"]
        docs.append(doc)
    return docs, sorted(set(filler) | {"space", "shuttle", "hockey", "team"})


def test_planted_pairs_are_the_best_collocations():
    texts, vocabulary = _texts()
    found = find_collocations(texts, vocabulary, min_count=5, min_docs=5)
    names = found.names(vocabulary)
    assert set(names[:2]) == {"space shuttle", "hockey team"}
    assert np.all(np.diff(found.pmi) <= 0)
    row = names.index("space shuttle")
    assert found.counts[row] == 30
    assert found.documents[:, row].nnz == 30 and found.documents[0, row] and not found.documents[1, row]


def test_the_cuts_leave_nothing_on_a_tiny_corpus():
    texts, vocabulary = _texts()
    assert len(find_collocations(texts[:3], vocabulary, min_count=10, min_docs=5)) == 0
    assert len(find_collocations([[], ["space"]], vocabulary)) == 0
