"""Document search: by binary codes, and by topic mixtures among the documents sharing a bit.

* :class:`CodeIndex` (:mod:`bpetopics.search.codes`): codes bit-packed, nearest by Hamming
  distance; :func:`rerank` and :func:`cosine_nearest` order by the cosine of mixtures.
* :class:`MixtureIndex` (:mod:`bpetopics.search.mixtures`): what
  ``TopicModel.similar_documents`` and ``bpetopics similar`` search by default, the
  documents sharing an active bit with the query ranked by the exact cosine of their
  mixtures, in one compiled loop (:mod:`bpetopics.search.compiled`).

docs/results/search.md measures them.
"""

from bpetopics.search.codes import QUERY_CHUNK_CELLS, CodeIndex, cosine_nearest, normalized, pack_codes, rerank
from bpetopics.search.mixtures import MixtureIndex, compile_search_loops, unit_mixtures

__all__ = ["CodeIndex", "MixtureIndex", "QUERY_CHUNK_CELLS", "compile_search_loops", "cosine_nearest", "normalized",
           "pack_codes", "rerank", "unit_mixtures"]
