/* bpetopics explorer: topics, their co-activation graph, documents with their codes
   and nearest neighbours, search, topics over time. Plain DOM and SVG, no library, no
   network; every text from the data goes in through textContent. */
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("explorer-data").textContent);
  var SVG = "http://www.w3.org/2000/svg";
  var state = { topic: null };

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in (attrs || {})) e.setAttribute(k, attrs[k]);
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function svg(tag, attrs) {
    var e = document.createElementNS(SVG, tag);
    for (var k in (attrs || {})) e.setAttribute(k, attrs[k]);
    return e;
  }
  function pct(x) { return x === null || x === undefined ? "-" : (100 * x).toFixed(1) + "%"; }
  function bar(value, max) {
    var box = el("div", { "class": "barbox" });
    var b = el("div", { "class": "bar" });
    b.style.width = Math.max(0, Math.min(100, 100 * value / (max || 1))) + "%";
    box.appendChild(b);
    return box;
  }
  function topicName(t) { return t + ": " + D.topics[t].label; }

  // ---------------------------------------------------------------- the layout
  var header = el("header");
  header.appendChild(el("h1", null, "Topics of " + D.run));
  var search = el("input", { id: "search", type: "search", placeholder: "Search words: topics and documents" });
  header.appendChild(search);
  header.appendChild(el("span", { "class": "notes", id: "notes" },
    D.n_documents.toLocaleString() + " documents, " + D.topics.length + " topics, " + D.n_bits + "-bit codes. " +
    D.notes.join(" ")));
  document.body.appendChild(header);
  var main = el("main");
  var left = el("section", { id: "topics-panel" });
  left.appendChild(el("h2", null, "Topics"));
  var list = el("ol", { id: "topic-list" });
  left.appendChild(list);
  var middle = el("section", { id: "graph-panel" });
  middle.appendChild(el("h2", null, "Co-activation graph"));
  var graph = svg("svg", { id: "graph" });
  middle.appendChild(graph);
  middle.appendChild(el("p", { "class": "hint" }, "drag to pan, wheel to zoom, click a topic"));
  var right = el("section", { id: "detail-panel" });
  var detail = el("div", { id: "detail" });
  right.appendChild(detail);
  main.appendChild(left); main.appendChild(middle); main.appendChild(right);
  document.body.appendChild(main);

  // ---------------------------------------------------------------- topics
  var maxShare = Math.max.apply(null, D.topics.map(function (t) { return t.share || 0; }));
  D.topics.forEach(function (t) {
    var li = el("li", { "class": "topic", "data-topic": t.topic, title: t.words.map(function (w) { return w[0]; }).join(" ") });
    li.appendChild(el("span", { "class": "num" }, t.topic));
    var name = el("div");
    name.appendChild(el("div", null, t.label));
    name.appendChild(bar(t.share || 0, maxShare));
    li.appendChild(name);
    li.appendChild(el("span", { "class": "share" }, pct(t.share)));
    li.addEventListener("click", function () { showTopic(t.topic); });
    list.appendChild(li);
  });

  // ---------------------------------------------------------------- graph
  var S = 100;   // pixels per layout unit at zoom 1
  var xs = D.topics.map(function (t) { return S * t.xy[0]; }), ys = D.topics.map(function (t) { return -S * t.xy[1]; });
  var pad = 1.2 * S, minX = Math.min.apply(null, xs) - pad, minY = Math.min.apply(null, ys) - pad;
  var view = { x: minX, y: minY, w: Math.max.apply(null, xs) + pad - minX, h: Math.max.apply(null, ys) + pad - minY };
  function setView() { graph.setAttribute("viewBox", [view.x, view.y, view.w, view.h].join(" ")); }
  setView();
  graph.setAttribute("preserveAspectRatio", "xMidYMid meet");
  var maxW = Math.max.apply(null, D.edges.map(function (e) { return e[2]; }).concat([1]));
  var edgeLayer = svg("g"), nodeLayer = svg("g");
  D.edges.forEach(function (e) {
    var line = svg("line", { "class": "edge", x1: xs[e[0]], y1: ys[e[0]], x2: xs[e[1]], y2: ys[e[1]],
      "stroke-width": 1 + 9 * Math.sqrt(e[2] / maxW) });
    var tip = svg("title"); tip.textContent = topicName(e[0]) + " + " + topicName(e[1]) + ": " + e[2] + " documents";
    line.appendChild(tip);
    edgeLayer.appendChild(line);
  });
  var nodes = D.topics.map(function (t, i) {
    var g = svg("g", { "class": "node", "data-topic": t.topic, transform: "translate(" + xs[i] + "," + ys[i] + ")" });
    var radius = 8 + 30 * Math.sqrt((t.share || 0) / (maxShare || 1));
    g.appendChild(svg("circle", { r: radius }));
    var label = svg("text", { y: -radius - 4, "text-anchor": "middle" });
    label.textContent = t.label;
    g.appendChild(label);
    var tip = svg("title"); tip.textContent = topicName(t.topic) + " (" + pct(t.share) + ")";
    g.appendChild(tip);
    g.addEventListener("click", function (ev) { ev.stopPropagation(); showTopic(t.topic); });
    nodeLayer.appendChild(g);
    return g;
  });
  graph.appendChild(edgeLayer); graph.appendChild(nodeLayer);
  var drag = null;
  graph.addEventListener("mousedown", function (ev) {
    drag = { x: ev.clientX, y: ev.clientY, vx: view.x, vy: view.y }; graph.classList.add("dragging");
  });
  window.addEventListener("mouseup", function () { drag = null; graph.classList.remove("dragging"); });
  window.addEventListener("mousemove", function (ev) {
    if (!drag) return;
    var r = graph.getBoundingClientRect(), s = Math.max(view.w / r.width, view.h / r.height);
    view.x = drag.vx - (ev.clientX - drag.x) * s; view.y = drag.vy - (ev.clientY - drag.y) * s; setView();
  });
  graph.addEventListener("wheel", function (ev) {
    ev.preventDefault();
    var f = ev.deltaY > 0 ? 1.15 : 1 / 1.15, r = graph.getBoundingClientRect();
    var px = view.x + view.w * (ev.clientX - r.left) / r.width, py = view.y + view.h * (ev.clientY - r.top) / r.height;
    view.x = px - (px - view.x) * f; view.y = py - (py - view.y) * f; view.w *= f; view.h *= f; setView();
  }, { passive: false });

  // ---------------------------------------------------------------- documents
  function docItem(i, extra) {
    var d = D.documents[i];
    var li = el("li", { "class": "doc", "data-doc": i });
    var meta = [d.id];
    if (d.label !== undefined) meta.push(d.label);
    if (d.time !== undefined) meta.push(d.time);
    if (extra) meta.push(extra);
    li.appendChild(el("div", { "class": "meta" }, meta.join(" · ")));
    li.appendChild(el("div", { "class": "text" }, d.text || "(no text)"));
    li.addEventListener("click", function () { showDocument(i); });
    return li;
  }
  function selectTopic(t) {
    state.topic = t;
    Array.prototype.forEach.call(list.children, function (li) { li.classList.toggle("selected", +li.dataset.topic === t); });
    nodes.forEach(function (g, i) { g.classList.toggle("selected", i === t); });
    drawTime();
  }
  function showTopic(t) {
    selectTopic(t);
    var topic = D.topics[t];
    detail.textContent = "";
    detail.appendChild(el("h2", null, "Topic " + t));
    detail.appendChild(el("h3", null, topic.label + " (" + pct(topic.share) + " of the tokens)"));
    var words = el("div", { "class": "words" });
    var top = topic.words.length ? topic.words[0][1] : 1;
    topic.words.forEach(function (w) { words.appendChild(el("span", null, w[0])); words.appendChild(bar(w[1], top)); });
    detail.appendChild(words);
    var docs = D.topic_documents[t];
    detail.appendChild(el("h2", null, "Documents, most of this topic first (" + docs.length + ")"));
    var ul = el("ul", { "class": "topic-docs" });
    docs.forEach(function (i) {
      var share = D.documents[i].topics.filter(function (p) { return p[0] === t; });
      ul.appendChild(docItem(i, share.length ? pct(share[0][1]) + " topic " + t : null));
    });
    detail.appendChild(ul);
  }
  function showDocument(i) {
    var d = D.documents[i];
    selectTopic(d.topics.length ? d.topics[0][0] : null);
    detail.textContent = "";
    detail.appendChild(el("h2", null, "Document"));
    detail.appendChild(el("h3", null, d.id));
    if (d.label !== undefined) detail.appendChild(el("div", null, "label: " + d.label));
    if (d.time !== undefined) detail.appendChild(el("div", null, "time: " + d.time));
    detail.appendChild(el("h2", null, "Code (" + d.bits.length + " of " + D.n_bits + " bits on)"));
    var code = el("div", { "class": "code", title: "bits on: " + d.bits.join(", ") });
    var on = {}; d.bits.forEach(function (b) { on[b] = true; });
    for (var k = 0; k < D.n_bits; k++) code.appendChild(el("span", on[k] ? { "class": "on", title: "bit " + k } : { title: "bit " + k }));
    detail.appendChild(code);
    detail.appendChild(el("h2", null, "Topics"));
    var words = el("div", { "class": "words" });
    d.topics.forEach(function (p) {
      var name = el("span", { "class": "link", "data-topic": p[0] }, topicName(p[0]) + " " + pct(p[1]));
      name.addEventListener("click", function () { showTopic(p[0]); });
      words.appendChild(name); words.appendChild(bar(p[1], 1));
    });
    detail.appendChild(words);
    detail.appendChild(el("h2", null, "Words"));
    detail.appendChild(el("p", null, d.text || "(no text)"));
    detail.appendChild(el("h2", null, "Nearest codes (Hamming distance)"));
    var ul = el("ul", { "class": "neighbours" });
    d.near.forEach(function (n) { ul.appendChild(docItem(n[0], "distance " + n[1])); });
    detail.appendChild(ul);
    if (d.similar) {
      detail.appendChild(el("h2", null, "Similar documents (topics and words)"));
      var sim = el("ul", { "class": "neighbours" });
      d.similar.forEach(function (n) { sim.appendChild(docItem(n[0], "similarity " + n[1].toFixed(2))); });
      detail.appendChild(sim);
    }
  }

  // ---------------------------------------------------------------- search
  function words(text) { return text.toLowerCase().split(/[^\p{L}\p{N}_]+/u).filter(Boolean); }
  function runSearch() {
    var q = words(search.value);
    if (!q.length) { if (state.topic !== null) showTopic(state.topic); else intro(); return; }
    var topics = D.topics.map(function (t) {
      var score = 0, seen = 0;
      q.forEach(function (w) {
        var hit = t.words.filter(function (p) { return p[0].toLowerCase().indexOf(w) === 0; });
        if (hit.length) { seen++; score += hit[0][1]; }
      });
      return { t: t.topic, score: seen === q.length ? score : 0 };
    }).filter(function (s) { return s.score > 0; }).sort(function (a, b) { return b.score - a.score; });
    var docs = [];
    for (var i = 0; i < D.documents.length && docs.length < 100; i++) {
      var d = D.documents[i];     // its snippet, its other vocabulary words and its id
      var text = " " + (d.text + " " + (d.words || "") + " " + d.id).toLowerCase();
      if (q.every(function (w) { return text.indexOf(" " + w) >= 0; })) docs.push(i);
    }
    detail.textContent = "";
    var box = el("div", { id: "search-results" });
    box.appendChild(el("h2", null, "Topics with “" + q.join(" ") + "” among their top words (" + topics.length + ")"));
    var tl = el("ol");
    topics.forEach(function (s) {
      var li = el("li", { "class": "topic", "data-topic": s.t });
      li.appendChild(el("span", { "class": "num" }, s.t));
      li.appendChild(el("div", null, D.topics[s.t].label + ": " + D.topics[s.t].words.map(function (w) { return w[0]; }).join(" ")));
      li.appendChild(el("span", { "class": "share" }, pct(s.score)));
      li.addEventListener("click", function () { showTopic(s.t); });
      tl.appendChild(li);
    });
    box.appendChild(tl);
    box.appendChild(el("h2", null, "Documents with these words (" + (docs.length === 100 ? "first 100" : docs.length) + ")"));
    var dl = el("ul");
    docs.forEach(function (i) { dl.appendChild(docItem(i)); });
    box.appendChild(dl);
    detail.appendChild(box);
  }
  search.addEventListener("input", runSearch);

  // ---------------------------------------------------------------- over time
  var timePanel = null, timeSvg = null;
  if (D.over_time) {
    timePanel = el("section", { id: "time-panel" });
    timePanel.appendChild(el("h2", null, "Topics over time (mean share per span; click a topic to highlight it)"));
    timeSvg = svg("svg", { id: "time", viewBox: "0 0 1000 190", preserveAspectRatio: "none" });
    timePanel.appendChild(timeSvg);
    document.body.appendChild(timePanel);
  }
  function drawTime() {
    if (!timeSvg) return;
    var T = D.over_time, n = T.starts.length, W = 1000, H = 170, L = 40;
    timeSvg.textContent = "";
    var max = 0;
    T.share.forEach(function (row) { row.forEach(function (v) { if (v !== null && v > max) max = v; }); });
    function x(j) { return L + (W - L - 10) * (n > 1 ? j / (n - 1) : 0.5); }
    function y(v) { return 10 + (H - 10) * (1 - v / (max || 1)); }
    timeSvg.appendChild(svg("line", { "class": "axis", x1: L, y1: H, x2: W - 10, y2: H }));
    var order = T.share.map(function (_, t) { return t; }).sort(function (a, b) { return (a === state.topic) - (b === state.topic); });
    order.forEach(function (t) {
      var pts = [];
      T.share[t].forEach(function (v, j) { if (v !== null) pts.push(x(j) + "," + y(v)); });
      var line = svg("polyline", { "class": "line" + (t === state.topic ? " selected" : ""), points: pts.join(" "), "data-topic": t });
      var tip = svg("title"); tip.textContent = topicName(t); line.appendChild(tip);
      timeSvg.appendChild(line);
    });
    var step = Math.max(1, Math.ceil(n / 8));
    for (var j = 0; j < n; j += step) {
      var tick = svg("text", { "class": "tick", x: x(j), y: H + 14, "text-anchor": "middle" });
      tick.textContent = T.starts[j] + " (" + T.documents[j] + ")";
      timeSvg.appendChild(tick);
    }
    var top = svg("text", { "class": "tick", x: 2, y: 14 }); top.textContent = pct(max); timeSvg.appendChild(top);
  }

  function intro() {
    detail.textContent = "";
    detail.appendChild(el("h2", null, "Explore"));
    detail.appendChild(el("p", null, "Click a topic (in the list or the graph) for its words and documents, a document " +
      "for its code, topics and nearest codes; search words to find topics and documents."));
    detail.appendChild(el("h2", null, "Documents"));
    var ul = el("ul");
    D.documents.slice(0, 30).forEach(function (_, i) { ul.appendChild(docItem(i)); });
    detail.appendChild(ul);
  }
  // a link may open a view: #topic=3, #doc=12 or #search=space+launch
  var hash = /^#(topic|doc|search)=(.*)$/.exec(window.location.hash || "");
  var n = hash ? parseInt(hash[2], 10) : NaN;
  if (hash && hash[1] === "topic" && n >= 0 && n < D.topics.length) showTopic(n);
  else if (hash && hash[1] === "doc" && n >= 0 && n < D.documents.length) showDocument(n);
  else if (hash && hash[1] === "search") { search.value = decodeURIComponent(hash[2].replace(/\+/g, " ")); runSearch(); }
  else intro();
  drawTime();
  document.documentElement.setAttribute("data-explorer-ready", "1");
})();
