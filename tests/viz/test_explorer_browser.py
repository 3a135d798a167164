"""The explorer page in headless Chromium: it loads offline without a JavaScript error,
a click on a topic lists its documents, a click on a document shows its code, nearest
codes and similar documents, and a search finds topics and documents, by the words of
their snippets or by their other words."""

import json
import re
from html import unescape

import numpy as np
import pytest

from bpetopics.runs.explorer import hamming_neighbours
from bpetopics.viz.explorer import explorer_html, write_explorer_html

from .browser import needs_chromium, page_errors, render
from .conftest import block_topics

T, K, N = 4, 8, 40


@pytest.fixture
def explorer_data():
    """Explorer data by hand: 4 block topics, document i about topic i % 4 with bit i % 4
    on, words of its topic; a word that would end a script element if not escaped."""
    tw, vocab = block_topics(T)
    vocab[-1] = "</script><b>tag"
    codes = np.zeros((N, K), dtype=np.uint8)
    codes[np.arange(N), np.arange(N) % T] = 1
    codes[np.arange(N), 4 + np.arange(N) % 3] = 1
    near, dist = hamming_neighbours(codes)
    topics = [{"topic": t, "label": f"t{t}a t{t}b", "share": 0.25, "documents": 10,
               "words": [[vocab[t * 3 + j], round(float(tw[t, t * 3 + j]), 4)] for j in range(3)] + [[vocab[-1], 0.001]],
               "xy": [float(np.cos(t)), float(np.sin(t))]} for t in range(T)]
    documents = [{"id": f"doc{i}", "bits": np.flatnonzero(codes[i]).tolist(),
                  "topics": [[i % T, 0.9], [(i + 1) % T, 0.05]], "near": [[int(j), int(d)] for j, d in zip(near[i], dist[i])],
                  "similar": [[j, 0.9] for j in range(i % T, N, T) if j != i][:3],
                  "text": f"t{i % T}a t{i % T}b words of document {i}", "words": f"beyond{i % 5} later",
                  "time": f"2020-{1 + i % 12:02d}-01"}
                 for i in range(N)]
    return {"run": "handmade", "n_documents": N, "n_bits": K, "topics": topics,
            "edges": [[0, 1, 5], [1, 2, 2]], "edge_min_weight": 1, "documents": documents,
            "topic_documents": [[i for i in range(N) if i % T == t] for t in range(T)],
            "over_time": {"starts": ["2020-01-01", "2020-07-01"], "documents": [20, 20],
                          "share": [[0.3, 0.2], [0.2, 0.3], [0.25, None], [0.25, 0.25]]},
            "notes": ["a note"]}


def test_page_holds_the_data_and_no_closing_script_tag(explorer_data):
    page = explorer_html(explorer_data)
    assert page.count("</script>") == 2            # the data's and the code's, nothing from the data
    payload = re.search(r'<script type="application/json" id="explorer-data">(.*?)</script>', page, re.S).group(1)
    assert json.loads(payload) == explorer_data
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "") and "https://" not in page


# After the page's own script: click topic 1 in the list, node 2 in the graph, the first
# document of topic 2, then search; record what the page shows on <html>.
DRIVE = """<script>
(function(){
  var out = {};
  document.querySelector('#topic-list li[data-topic="1"]').click();
  out.topicTitle = document.querySelector('#detail h2').textContent;
  out.topicDocs = Array.prototype.map.call(document.querySelectorAll('#detail .topic-docs .doc .meta'),
                                           function(e){ return e.textContent.split(' · ')[0]; });
  document.querySelector('#graph .node[data-topic="2"]').dispatchEvent(new MouseEvent('click', {bubbles: true}));
  out.nodeSelected = document.querySelector('#graph .node.selected').getAttribute('data-topic');
  out.listSelected = document.querySelector('#topic-list li.selected').getAttribute('data-topic');
  document.querySelector('#detail .topic-docs .doc').click();
  out.docTitle = document.querySelector('#detail h3').textContent;
  out.bitsOn = document.querySelectorAll('#detail .code span.on').length;
  out.neighbours = document.querySelectorAll('#detail .neighbours .doc').length;
  out.similarity = Array.prototype.filter.call(document.querySelectorAll('#detail .neighbours .doc .meta'),
                                               function(e){ return e.textContent.indexOf('similarity 0.90') >= 0; }).length;
  var s = document.getElementById('search');
  s.value = 't3a'; s.dispatchEvent(new Event('input'));
  out.searchTopics = Array.prototype.map.call(document.querySelectorAll('#search-results .topic'),
                                              function(e){ return e.getAttribute('data-topic'); });
  out.searchDocs = document.querySelectorAll('#search-results .doc').length;
  s.value = 'beyond2 lat'; s.dispatchEvent(new Event('input'));
  out.otherWordDocs = document.querySelectorAll('#search-results .doc').length;
  s.value = 'zzznothing'; s.dispatchEvent(new Event('input'));
  out.nothing = document.querySelectorAll('#search-results .topic, #search-results .doc').length;
  out.timeLines = document.querySelectorAll('#time polyline').length;
  out.ready = document.documentElement.getAttribute('data-explorer-ready');
  document.documentElement.setAttribute('data-test', JSON.stringify(out));
})();
</script>"""


@needs_chromium
def test_explorer_page_works_offline_in_a_browser(explorer_data, tmp_path):
    page = write_explorer_html(explorer_data, tmp_path / "explore.html")
    dom, stderr = render(page, tmp_path, after_body=DRIVE)
    assert page_errors(dom, stderr) == []
    found = json.loads(unescape(re.search(r'data-test="([^"]*)"', dom).group(1)))
    assert found["ready"] == "1"
    assert found["topicTitle"] == "Topic 1"
    assert sorted(found["topicDocs"]) == sorted(f"doc{i}" for i in range(N) if i % T == 1)
    assert found["nodeSelected"] == "2" and found["listSelected"] == "2"
    assert found["docTitle"] == "doc2" and found["bitsOn"] == 2 and found["neighbours"] == 5 + 3
    assert found["similarity"] == 3
    assert found["searchTopics"] == ["3"] and found["searchDocs"] == N // T
    assert found["otherWordDocs"] == N // 5             # words beyond the snippet, prefixes too
    assert found["nothing"] == 0
    assert found["timeLines"] == T


@needs_chromium
def test_the_drive_script_catches_a_page_that_fails(explorer_data, tmp_path):
    """The check itself works: an explorer whose data is broken reports an error."""
    page = tmp_path / "broken.html"
    page.write_text(explorer_html(explorer_data).replace('"topics":[', '"topics":[{"broken":', 1), encoding="utf-8")
    dom, stderr = render(page, tmp_path, after_body=DRIVE)
    assert page_errors(dom, stderr) != []
