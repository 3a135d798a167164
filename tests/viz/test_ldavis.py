import json
import re
import warnings

import numpy as np
import pytest

from bpetopics.viz import ldavis_data, ldavis_html, prepare_ldavis, topic_coordinates, write_ldavis_html

from .conftest import LDA_T, ldavis_inputs


def _page_data(html: str) -> dict:
    m = re.search(r"var (\w+)_data = (\{.*\});\n", html)
    assert m, "data variable not found"
    return json.loads(m.group(2).replace("<\\/", "</"))


def test_ldavis_data_normalises_and_drops_empty_documents():
    tw, dt, lengths, vocab, tf = ldavis_inputs()
    dt = dt * 3.0
    dt[2] = 0.0          # empty mixture
    lengths[5] = 0       # empty document
    dt[7, 0] = np.nan    # broken row
    tw = tw * 7.0
    tw[1, :4] = 0.0      # exact zeros would give log(0) in pyLDAvis
    d = ldavis_data(tw, dt.astype(np.float32), lengths, vocab, tf)
    assert set(d) == {"topic_term_dists", "doc_topic_dists", "doc_lengths", "vocab", "term_frequency"}
    assert d["topic_term_dists"].dtype == np.float64 and d["doc_topic_dists"].dtype == np.float64
    np.testing.assert_allclose(d["topic_term_dists"].sum(axis=1), 1.0)
    np.testing.assert_allclose(d["doc_topic_dists"].sum(axis=1), 1.0)
    assert d["topic_term_dists"].min() > 0
    assert d["doc_topic_dists"].shape[0] == len(d["doc_lengths"]) == len(lengths) - 3
    assert d["vocab"] == vocab and d["term_frequency"].shape == (len(vocab),)
    # term_frequency=None: the model's expected counts
    d2 = ldavis_data(tw, dt, lengths, vocab, None)
    assert d2["term_frequency"].sum() == pytest.approx(d2["doc_lengths"].sum())
    with pytest.raises(ValueError):
        ldavis_data(tw[:, :-1], dt, lengths, vocab, tf)


def test_page_is_self_contained_and_holds_the_data(ldavis_page):
    html = ldavis_page.read_text(encoding="utf-8")
    # no script or stylesheet is fetched from anywhere: d3 and LDAvis are inlined
    assert not re.search(r"<script[^>]*\ssrc=", html)
    assert not re.search(r"<link[^>]*\shref=", html)
    assert "d3js.org v5" in html and "LDAvis = function" in html
    assert html.count("</script>") == 3  # the escaped vocabulary word did not close a script
    data = _page_data(html)
    assert len(data["mdsDat"]["topics"]) == LDA_T
    assert data["topic.order"] == list(range(1, LDA_T + 1))  # our topic t is LDAvis topic t + 1
    terms = set(data["tinfo"]["Term"])
    assert {"t0a", "t1a", "t4a"} <= terms
    # topic 1's most probable word is t0a (sort_topics=False keeps our order)
    cat = np.array(data["tinfo"]["Category"])
    logprob = np.array(data["tinfo"]["logprob"])
    term = np.array(data["tinfo"]["Term"])
    assert term[cat == "Topic1"][np.argmax(logprob[cat == "Topic1"])] == "t0a"
    assert "<title>test topics</title>" in html


def test_same_seed_same_file(tmp_path):
    tw, dt, lengths, vocab, tf = ldavis_inputs()
    a = write_ldavis_html(tw, dt, lengths, vocab, tf, tmp_path / "a.html", seed=3, lambda_step=0.25)
    b = write_ldavis_html(tw, dt, lengths, vocab, tf, tmp_path / "b.html", seed=3, lambda_step=0.25)
    assert a.read_bytes() == b.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.html", "b.html"]


def test_topic_coordinates_without_deprecated_sklearn_calls():
    tw, *_ = ldavis_inputs()
    tw = tw + np.random.default_rng(1).random(tw.shape) * 0.01
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        warnings.simplefilter("error", DeprecationWarning)
        for mds in ("pcoa", "mmds", "tsne"):
            xy = topic_coordinates(tw, mds=mds, seed=0)
            assert xy.shape == (LDA_T, 2) and np.all(np.isfinite(xy))
            np.testing.assert_allclose(topic_coordinates(tw, mds=mds, seed=0), xy)
    # PCoA preserves the Jensen-Shannon geometry: distinct topics get distinct points
    xy = topic_coordinates(tw)
    d = np.sqrt(((xy[:, None] - xy[None]) ** 2).sum(-1)) + np.eye(LDA_T)
    assert d.min() > 1e-3
    with pytest.raises(ValueError):
        topic_coordinates(tw, mds="umap")


def test_prepare_accepts_a_callable_mds_and_visid():
    tw, dt, lengths, vocab, tf = ldavis_inputs()
    fixed = np.arange(2 * LDA_T, dtype=float).reshape(LDA_T, 2)
    prepared = prepare_ldavis(tw, dt, lengths, vocab, tf, mds=lambda d: fixed, lambda_step=0.5)
    np.testing.assert_allclose(prepared.topic_coordinates[["x", "y"]].to_numpy(), fixed)
    html = ldavis_html(prepared, visid="my-vis")
    assert '<div id="my-vis"' in html and 'new LDAvis("#my-vis"' in html
    with pytest.raises(ValueError):
        ldavis_html(prepared, visid="bad id")
