"""pyLDAvis export from plain arrays, as one self-contained HTML page.

:func:`ldavis_data` turns the topic contract's arrays into the keyword arguments of
``pyLDAvis.prepare``; :func:`prepare_ldavis` runs it; :func:`ldavis_html` renders a page
that inlines d3, LDAvis' JavaScript and CSS (the copies shipped in the pyLDAvis package's
``js`` folder) and the data, so it opens offline; :func:`write_ldavis_html` does all three
and writes the page atomically.

Compatibility notes (pyLDAvis 3.4.x, checked with pandas 3.1.1, scikit-learn 1.9.1):

* ``pyLDAvis.save_html`` / ``prepared_data_to_html`` always emit ``<script src=...>`` tags
  (by default d3 from d3js.org and LDAvis from cdn.jsdelivr.net), so the page does not
  work offline. :func:`ldavis_html` therefore builds the page itself from
  ``PreparedData.to_json()`` and the package's own JS/CSS files (same markup as
  pyLDAvis' "simple" template).
* ``mds="mmds"`` in pyLDAvis calls ``sklearn.manifold.MDS(dissimilarity="precomputed")``,
  deprecated in scikit-learn 1.8 and removed in 1.10 (FutureWarning on 1.9), and fixes
  ``random_state=0``. The MDS functions here (:func:`topic_coordinates`) are our own:
  Jensen-Shannon divergence between topics (as pyLDAvis), then classical PCoA
  (deterministic, with a sign convention), metric MDS (``metric="precomputed"`` on new
  scikit-learn, ``dissimilarity=`` on old) or t-SNE, seeded with ``seed``; they are
  passed to ``pyLDAvis.prepare`` as a callable.
* ``pyLDAvis.prepare`` uses ``n_jobs=-1`` (all cores) by default; here ``n_jobs=1``.
* ``pyLDAvis.prepare`` takes logs of topic-word probabilities and topic proportions: an
  exact zero gives -inf/NaN relevances and saliencies. :func:`ldavis_data` floors both at
  ``eps`` (1e-12) and renormalises, which changes nothing visible.
* pyLDAvis validates that every doc-topic row sums to 1; :func:`ldavis_data` normalises
  rows and drops documents whose row is all zero / non-finite or whose length is 0
  (they carry no tokens, so the visualisation is unchanged).

Topic numbering: with ``sort_topics=False`` (the default here) LDAvis topic ``t + 1`` is
our topic ``t`` (node ``t`` of the co-activation graph); pyLDAvis' own default sorts
topics by size.
"""

from __future__ import annotations

import html
import inspect
import logging
import os
import random
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from bpetopics.files import write_text_atomic

__all__ = ["ldavis_data", "topic_coordinates", "prepare_ldavis", "ldavis_html", "write_ldavis_html"]

log = logging.getLogger(__name__)

_EPS = 1e-12
_MDS = ("pcoa", "mmds", "tsne")


def ldavis_data(
    topic_word: np.ndarray,
    doc_topic: np.ndarray,
    doc_lengths: np.ndarray,
    vocabulary: Sequence[str],
    term_frequency: np.ndarray | None = None,
    eps: float = _EPS,
) -> dict:
    """Keyword arguments for ``pyLDAvis.prepare``: clean float64 arrays.

    ``topic_word`` (T x W) and ``doc_topic`` (N x T) rows are normalised to sum to 1
    (topic rows floored at ``eps`` first); documents with an all-zero or non-finite
    ``doc_topic`` row, or with ``doc_lengths`` <= 0, are dropped (logged). If
    ``term_frequency`` is None it is taken as the expected counts
    sum_n L_n [f_n^T topic_word] (pyLDAvis recomputes the bar widths this way anyway).

    Returns a dict with keys ``topic_term_dists``, ``doc_topic_dists``, ``doc_lengths``,
    ``vocab``, ``term_frequency``.
    """
    tw = np.asarray(topic_word, dtype=np.float64)
    dt = np.asarray(doc_topic, dtype=np.float64)
    lengths = np.asarray(doc_lengths, dtype=np.float64).reshape(-1)
    vocab = [str(w) for w in vocabulary]
    if tw.ndim != 2 or dt.ndim != 2:
        raise ValueError(f"topic_word and doc_topic must be 2-D, got {tw.shape} and {dt.shape}")
    n_topics, n_words = tw.shape
    if dt.shape[1] != n_topics:
        raise ValueError(f"doc_topic has {dt.shape[1]} columns, topic_word has {n_topics} rows")
    if len(vocab) != n_words:
        raise ValueError(f"vocabulary has {len(vocab)} words, topic_word has {n_words} columns")
    if lengths.shape[0] != dt.shape[0]:
        raise ValueError(f"doc_lengths has {lengths.shape[0]} entries, doc_topic has {dt.shape[0]} rows")
    if not np.all(np.isfinite(tw)) or np.any(tw < 0):
        raise ValueError("topic_word must be finite and non-negative")
    row = tw.sum(axis=1)
    if np.any(row <= 0):
        raise ValueError(f"topic_word rows {np.flatnonzero(row <= 0).tolist()} are all zero")
    tw = tw / row[:, None]
    tw = np.maximum(tw, eps)
    tw /= tw.sum(axis=1, keepdims=True)

    with np.errstate(invalid="ignore"):
        dsum = dt.sum(axis=1)
    keep = np.isfinite(dsum) & (dsum > 0) & np.all(dt >= 0, axis=1) & np.isfinite(lengths) & (lengths > 0)
    if not np.any(keep):
        raise ValueError("no document has a non-zero doc_topic row and a positive length")
    if not np.all(keep):
        log.info("ldavis_data: dropping %d of %d documents (empty mixture or length 0)", (~keep).sum(), len(keep))
    dt = dt[keep] / dsum[keep][:, None]
    lengths = lengths[keep]
    # a topic no document uses has proportion 0 and log(0) in pyLDAvis: floor it
    dt = np.maximum(dt, eps)
    dt /= dt.sum(axis=1, keepdims=True)

    if term_frequency is None:
        tf = (lengths @ dt) @ tw
    else:
        tf = np.asarray(term_frequency, dtype=np.float64).reshape(-1)
        if tf.shape[0] != n_words:
            raise ValueError(f"term_frequency has {tf.shape[0]} entries, vocabulary has {n_words}")
    return {
        "topic_term_dists": tw,
        "doc_topic_dists": dt,
        "doc_lengths": lengths,
        "vocab": vocab,
        "term_frequency": tf,
    }


def _js_divergence_matrix(dists: np.ndarray) -> np.ndarray:
    """Pairwise Jensen-Shannon divergences (natural log) between rows, as pyLDAvis uses."""
    p = np.asarray(dists, dtype=np.float64)
    p = p / p.sum(axis=1, keepdims=True)
    logp = np.log(np.where(p > 0, p, 1.0))
    n = p.shape[0]
    out = np.zeros((n, n))
    for i in range(n):  # one row at a time keeps memory at T x W
        m = 0.5 * (p[i] + p)
        logm = np.log(np.where(m > 0, m, 1.0))
        kl_i = (p[i] * (logp[i] - logm)).sum(axis=1)
        kl_o = (p * (logp - logm)).sum(axis=1)
        out[i] = 0.5 * (kl_i + kl_o)
    out = np.maximum(0.5 * (out + out.T), 0.0)
    np.fill_diagonal(out, 0.0)
    return out


def _pcoa(dist: np.ndarray) -> np.ndarray:
    """Classical MDS (principal coordinates) in 2-D, with a fixed sign per axis."""
    n = dist.shape[0]
    h = np.eye(n) - 1.0 / n
    b = -0.5 * h @ (dist**2) @ h
    vals, vecs = np.linalg.eigh(b)
    idx = np.argsort(vals)[::-1][:2]
    vals, vecs = np.maximum(vals[idx], 0.0), vecs[:, idx]
    if vecs.shape[1] < 2:  # T = 1
        vecs = np.pad(vecs, ((0, 0), (0, 2 - vecs.shape[1])))
        vals = np.pad(vals, (0, 2 - vals.shape[0]))
    # sign convention: the largest-magnitude coordinate of each axis is positive
    signs = np.sign(vecs[np.abs(vecs).argmax(axis=0), np.arange(2)])
    signs[signs == 0] = 1.0
    return vecs * signs * np.sqrt(vals)


def topic_coordinates(topic_word: np.ndarray, mds: str = "pcoa", seed: int = 0) -> np.ndarray:
    """2-D coordinates of the topics for LDAvis' left panel (T x 2).

    Distances are Jensen-Shannon divergences between the topics' word distributions
    (as in pyLDAvis); ``mds`` is ``"pcoa"`` (classical scaling, deterministic),
    ``"mmds"`` (metric MDS, scikit-learn, seeded) or ``"tsne"`` (seeded).
    """
    dist = _js_divergence_matrix(topic_word)
    n = dist.shape[0]
    kind = mds.lower()
    if kind == "pcoa" or n < 3:
        return _pcoa(dist)
    if kind == "mmds":
        from sklearn.manifold import MDS

        params = inspect.signature(MDS).parameters
        if "metric_mds" in params:  # scikit-learn >= 1.8: `metric` is the dissimilarity
            model = MDS(n_components=2, metric="precomputed", metric_mds=True, init="random",
                        n_init=4, random_state=seed)
        else:
            model = MDS(n_components=2, dissimilarity="precomputed", random_state=seed)
        return model.fit_transform(dist)
    if kind == "tsne":
        from sklearn.manifold import TSNE

        model = TSNE(n_components=2, metric="precomputed", init="random", random_state=seed,
                     perplexity=float(min(n - 1, 30)))
        return model.fit_transform(dist)
    raise ValueError(f"mds must be 'pcoa', 'mmds' or 'tsne', got {mds!r}")


def prepare_ldavis(
    topic_word: np.ndarray,
    doc_topic: np.ndarray,
    doc_lengths: np.ndarray,
    vocabulary: Sequence[str],
    term_frequency: np.ndarray | None = None,
    seed: int = 0,
    mds: str | Callable = "pcoa",
    R: int = 30,
    n_jobs: int = 1,
    sort_topics: bool = False,
    lambda_step: float = 0.01,
):
    """``pyLDAvis.prepare`` on :func:`ldavis_data`, with our seeded MDS; returns its
    ``PreparedData``. ``mds`` may also be a callable (T x W -> T x 2).

    pyLDAvis ranks the top ``R`` terms of every topic at each of the 1/``lambda_step``
    relevance weights with pandas, so the time grows as T / ``lambda_step``: 0.05 or 0.1
    instead of the default 0.01 is 5 to 10 times fewer steps and only coarsens the slider.
    """
    import pyLDAvis

    data = ldavis_data(topic_word, doc_topic, doc_lengths, vocabulary, term_frequency)
    if callable(mds):
        mds_fn = mds
    else:
        if str(mds).lower() not in _MDS:
            raise ValueError(f"mds must be one of {_MDS} or a callable, got {mds!r}")
        mds_fn = lambda dists: topic_coordinates(dists, mds=mds, seed=seed)  # noqa: E731
    return pyLDAvis.prepare(
        **data, R=int(min(R, len(data["vocab"]))), mds=mds_fn, n_jobs=n_jobs,
        sort_topics=sort_topics, lambda_step=lambda_step,
    )


def _read_asset(path: str) -> str:
    text = Path(path).read_text(encoding="utf-8")
    # nothing in the inlined files may close the <script>/<style> element early
    return text.replace("</script", "<\\/script").replace("</style", "<\\/style")


def _labels_table(labels: Sequence[str]) -> str:
    """The topics' labels as an HTML table under the plot (LDAvis names topics by number)."""
    rows = "\n".join(f"<tr><td>{t}</td><td>{html.escape(str(label))}</td></tr>"
                     for t, label in enumerate(labels, 1))
    return ('<table id="topic-labels" style="font-family:sans-serif;font-size:13px;margin:8px">\n'
            "<caption style=\"text-align:left\">Topic labels</caption>\n"
            "<tr><th>topic</th><th>label</th></tr>\n" + rows + "\n</table>")


def ldavis_html(prepared, title: str = "LDAvis", visid: str | None = None, seed: int = 0,
                labels: Sequence[str] | None = None) -> str:
    """A self-contained HTML page for a ``PreparedData``: d3, LDAvis JS/CSS and the data
    are inlined (no network access needed). The visualisation lives in ``<div id=visid>``
    (default ``ldavis_<8 hex digits from seed>``); ``labels`` (one per topic, topic t + 1
    of the plot being ``labels[t]``) are listed in a table under it."""
    from pyLDAvis import urls

    if visid is None:
        visid = "ldavis_%08x" % random.Random(seed).getrandbits(32)
    if not visid.replace("_", "").replace("-", "").isalnum():
        raise ValueError("visid must be letters, digits, '_' or '-'")
    d3 = _read_asset(urls.D3_LOCAL)
    ldavis = _read_asset(urls.LDAVIS_LOCAL)
    css = _read_asset(urls.LDAVIS_CSS_LOCAL)
    data = prepared.to_json()
    # JSON is valid JS; escape "</" and "<!--" so no string in it can end the script element
    data = data.replace("</", "<\\/").replace("<!--", "<\\u0021--")
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{html.escape(title)}</title>
<style>
{css}
</style>
<script type="text/javascript">
{d3}
</script>
<script type="text/javascript">
{ldavis}
</script>
</head>
<body>
<div id="{visid}" style="background-color:white;"></div>
{"" if labels is None else _labels_table(labels)}
<script type="text/javascript">
var {visid.replace("-", "_")}_data = {data};
new LDAvis("#{visid}", {visid.replace("-", "_")}_data);
</script>
</body>
</html>
"""


def write_ldavis_html(
    topic_word: np.ndarray,
    doc_topic: np.ndarray,
    doc_lengths: np.ndarray,
    vocabulary: Sequence[str],
    term_frequency: np.ndarray | None,
    path: str | os.PathLike,
    seed: int = 0,
    mds: str | Callable = "pcoa",
    R: int = 30,
    n_jobs: int = 1,
    sort_topics: bool = False,
    lambda_step: float = 0.01,
    title: str = "LDAvis",
    labels: Sequence[str] | None = None,
) -> Path:
    """Prepare the LDAvis data and write the self-contained page to ``path`` (atomically).

    Same inputs as :func:`ldavis_data`; ``seed`` seeds the MDS (for "mmds"/"tsne") and the
    div id, so the same inputs give the same file; ``labels`` as :func:`ldavis_html`.
    Returns the path.
    """
    if labels is not None and len(labels) != np.asarray(topic_word).shape[0]:
        raise ValueError(f"give one label per topic: {len(labels)} labels for "
                         f"{np.asarray(topic_word).shape[0]} topics")
    prepared = prepare_ldavis(
        topic_word, doc_topic, doc_lengths, vocabulary, term_frequency,
        seed=seed, mds=mds, R=R, n_jobs=n_jobs, sort_topics=sort_topics,
        lambda_step=lambda_step,
    )
    return write_text_atomic(path, ldavis_html(prepared, title=title, seed=seed, labels=labels))

