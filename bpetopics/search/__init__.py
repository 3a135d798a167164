"""Document search: by binary codes, and by topic mixtures among the documents sharing a bit.

* :class:`CodeIndex` (:mod:`bpetopics.search.codes`): codes bit-packed, nearest by Hamming
  distance; :func:`rerank` and :func:`cosine_nearest` order by the cosine of mixtures.
* :class:`TopicWordIndex` (:mod:`bpetopics.search.words`): what
  ``TopicModel.similar_documents`` and ``bpetopics similar`` search by default, every
  document scored by the cosine of its topic mixture and that of its TF-IDF vector,
  blended.
* :class:`MixtureIndex` (:mod:`bpetopics.search.mixtures`): the search by topics alone
  (``word_weight=0``), the documents sharing an active bit with the query ranked by the
  exact cosine of their mixtures, in one compiled loop (:mod:`bpetopics.search.compiled`).

docs/results/search.md measures them.
"""

from bpetopics.search.codes import QUERY_CHUNK_CELLS, CodeIndex, cosine_nearest, normalized, pack_codes, rerank
from bpetopics.search.mixtures import MixtureIndex, compile_search_loops, unit_mixtures
from bpetopics.search.words import WORD_WEIGHT, TopicWordIndex, WordVectors

__all__ = ["CodeIndex", "MixtureIndex", "QUERY_CHUNK_CELLS", "TopicWordIndex", "WORD_WEIGHT", "WordVectors",
           "compile_search_loops", "cosine_nearest", "normalized", "pack_codes", "rerank", "unit_mixtures"]
