/* The per-question explorer of the chunkeval HTML report (reporting/explorer.py
   describes the data). Everything from the data is put in the page with
   textContent / createTextNode, never as HTML: questions and documents are
   untrusted text. */
(function () {
  "use strict";
  var holder = document.getElementById("chunkeval-explorer-data");
  var root = document.getElementById("explorer");
  if (!holder || !root) { return; }
  var D = JSON.parse(holder.textContent);
  var STATUS = ["hit", "partial", "miss", "n/a"];
  var PAGE = 100;
  var segs = {};
  D.texts.forEach(function (t) {
    (segs[t[0]] = segs[t[0]] || []).push([t[1], t[2]]);
  });
  var byQ = D.configs.map(function (c) {
    var m = {};
    c.rows.forEach(function (r) { m[r[0]] = r; });
    return m;
  });
  var hasBefore = D.configs.some(function (c) {
    return c.rows.some(function (r) { return r[6] !== null; });
  });

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    return e;
  }
  function pct(v) { return v === null ? "-" : (100 * v).toFixed(1) + "%"; }
  function triples(flat) {
    var out = [];
    for (var i = 0; i + 2 < flat.length; i += 3) {
      out.push([flat[i], flat[i + 1], flat[i + 2]]);
    }
    return out;
  }
  function swatch(c) {
    var s = el("span", "swatch");
    if (/^#[0-9a-f]{6}$/.test(D.configs[c].color)) {
      s.style.background = D.configs[c].color;
    }
    return s;
  }
  function change(row) {
    if (row[6] > 0 && row[2] === 0) { return "Retrieved before, missed now"; }
    if (row[6] === 0 && row[2] > 0) { return "Missed before, retrieved now"; }
    return "Changed since the baseline";
  }
  function badge(row) {
    var st = row ? row[1] : 3;
    return el("span", "ex-badge ex-" + STATUS[st].replace("/", ""),
      row ? STATUS[st] : "not run");
  }

  /* The text of [s, e) in document d: pieces [s, e, text or null (not kept)]. */
  function pieces(d, s, e) {
    var list = segs[d] || [], out = [], pos = s;
    var lo = 0, hi = list.length;
    while (lo < hi) {  // first segment ending after s
      var mid = (lo + hi) >> 1;
      if (list[mid][0] + list[mid][1].length <= s) { lo = mid + 1; } else { hi = mid; }
    }
    for (var i = lo; i < list.length && pos < e; i++) {
      var a = list[i][0], b = a + list[i][1].length;
      if (a > pos) { out.push([pos, Math.min(a, e), null]); pos = Math.min(a, e); }
      if (pos >= e) { break; }
      var end = Math.min(b, e);
      out.push([pos, end, list[i][1].slice(pos - a, end - a)]);
      pos = end;
    }
    if (pos < e) { out.push([pos, e, null]); }
    return out;
  }
  function covered(spans, s, e) {
    for (var i = 0; i < spans.length; i++) {
      if (spans[i][0] <= s && spans[i][1] >= e) { return true; }
    }
    return false;
  }
  /* [s, e) of document d, excerpts marked (retrieved or not), retrieved text
     outside them underlined; text not kept in the page shown as a gap. */
  function passage(d, s, e, excerpts, retrieved) {
    var box = el("div", "ex-text");
    box.setAttribute("data-doc", D.docs[d]);
    box.setAttribute("data-start", String(s));
    box.setAttribute("data-end", String(e));
    var cuts = [s, e];
    excerpts.concat(retrieved).forEach(function (p) {
      if (p[0] > s && p[0] < e) { cuts.push(p[0]); }
      if (p[1] > s && p[1] < e) { cuts.push(p[1]); }
    });
    cuts.sort(function (x, y) { return x - y; });
    for (var i = 0; i + 1 < cuts.length; i++) {
      var a = cuts[i], b = cuts[i + 1];
      if (a === b) { continue; }
      var ex = covered(excerpts, a, b), rt = covered(retrieved, a, b);
      pieces(d, a, b).forEach(function (p) {
        if (p[2] === null) {
          box.appendChild(el("span", "ex-gap", " [\u2026 " + (p[1] - p[0]) +
            " characters \u2026] "));
          return;
        }
        var node = ex ? el("mark", rt ? "ex got" : "ex lost", p[2])
          : rt ? el("span", "rt", p[2]) : document.createTextNode(p[2]);
        box.appendChild(node);
      });
    }
    return box;
  }
  function inDoc(spans, d) {
    return spans.filter(function (p) { return p[0] === d; })
      .map(function (p) { return [p[1], p[2]]; });
  }
  function overlap(spans, s, e) {
    var n = 0;
    spans.forEach(function (p) {
      n += Math.max(0, Math.min(p[1], e) - Math.max(p[0], s));
    });
    return n;
  }

  function column(c, qi) {
    var q = D.questions[qi], row = byQ[c][qi];
    // scored at the copies of the excerpt texts this configuration reached
    var excerpts = triples(row && row[7] ? row[7] : q[3]);
    var col = el("div", "ex-col");
    var head = el("h4");
    head.appendChild(swatch(c));
    head.appendChild(document.createTextNode(D.configs[c].label + " "));
    head.appendChild(badge(row));
    col.appendChild(head);
    if (!row) {
      col.appendChild(el("p", "note", "This configuration has no result for it."));
      return col;
    }
    col.appendChild(el("p", "ex-metrics", "recall " + pct(row[2]) + " \u00b7 precision " +
      pct(row[3]) + " \u00b7 IoU " + pct(row[4])));
    if (row[6] !== null) {
      var delta = row[2] === null ? null : row[2] - row[6];
      col.appendChild(el("p", "ex-change" + (delta < 0 ? " worse" : delta > 0 ? " better" : ""),
        change(row) + ": recall " + pct(row[6]) + " in the baseline, " + pct(row[2]) +
        " now" + (delta === null ? "" : " (" + (delta >= 0 ? "+" : "") +
        (100 * delta).toFixed(1) + " points)")));
    }
    if (row[7]) {
      col.appendChild(el("p", "note", "Identical text is interchangeable: excerpts " +
        "shown at the copies of their text this configuration reached (the stored " +
        "spans are in the JSON report)."));
    }
    var retrieved = triples(row[5]);
    col.appendChild(el("h5", null, "Excerpts in their document"));
    if (!excerpts.length) { col.appendChild(el("p", "note", "No excerpts.")); }
    var done = {};
    excerpts.forEach(function (x) {
      var d = x[0], key = d + ":" + x[1];
      if (done[key]) { return; }
      // one window for the excerpts of a document whose context overlaps
      var mine = inDoc(excerpts, d).sort(function (u, v) { return u[0] - v[0]; });
      var s = x[1] - D.context, e = x[2] + D.context;
      mine.forEach(function (m) {
        if (m[0] - D.context <= e && m[1] + D.context >= s) {
          s = Math.min(s, m[0] - D.context); e = Math.max(e, m[1] + D.context);
          done[d + ":" + m[0]] = true;
        }
      });
      var win = el("div", "ex-window");
      win.appendChild(el("div", "ex-where", D.docs[d]));
      win.appendChild(passage(d, Math.max(0, s), e, mine, inDoc(retrieved, d)));
      col.appendChild(win);
    });
    col.appendChild(el("h5", null, "Retrieved, in rank order"));
    var list = el("ol", "ex-chunks");
    retrieved.forEach(function (r) {
      var li = el("li"), mine = inDoc(excerpts, r[0]);
      var got = overlap(mine, r[1], r[2]);
      li.className = got > 0 ? "relevant" : "";
      var total = overlap(mine, 0, Infinity);
      li.appendChild(el("div", "ex-where", D.docs[r[0]] + " \u00b7 characters " + r[1] +
        "\u2013" + r[2] + " \u00b7 " + (got > 0 ? "covers " + got + " of " + total +
        " excerpt characters" : "no excerpt")));
      var text = passage(r[0], r[1], r[2], mine, [[r[1], r[2]]]);
      text.className += " in-chunk";  // all of it was retrieved: no underline
      li.appendChild(text);
      list.appendChild(li);
    });
    if (!retrieved.length) { col.appendChild(el("p", "note", "Nothing retrieved.")); }
    col.appendChild(list);
    return col;
  }

  /* --- controls, list and detail ------------------------------------------- */
  function select(label, options, id) {
    var wrap = el("label", null, label + " ");
    var s = el("select");
    s.id = id;
    options.forEach(function (o) {
      var opt = el("option", null, o[1]);
      opt.value = o[0];
      s.appendChild(opt);
    });
    wrap.appendChild(s);
    return [wrap, s];
  }
  var configs = D.configs.map(function (c, i) { return [String(i), c.label]; });
  var statusOptions = [["", "any"], ["0", "hit"], ["1", "partial"], ["2", "miss"],
    ["3", "n/a"], ["diff", "differs from the compared"]];
  if (hasBefore) { statusOptions.push(["changed", "changed since the baseline"]); }
  var docCounts = {};
  D.questions.forEach(function (q) { docCounts[q[2]] = (docCounts[q[2]] || 0) + 1; });
  var docOptions = [["", "all"]].concat(Object.keys(docCounts).map(function (d) {
    return [d, D.docs[+d] + " (" + docCounts[d] + ")"];
  }));
  var bar = el("div", "ex-controls");
  var selA = select("Configuration", configs, "ex-a");
  var selB = select("Compare with", [["", "none"]].concat(configs), "ex-b");
  var selDoc = select("Document", docOptions, "ex-doc");
  var selStatus = select("Status", statusOptions, "ex-status");
  var search = el("input");
  search.type = "search";
  search.placeholder = "Search questions";
  search.id = "ex-search";
  [selA[0], selB[0], selDoc[0], selStatus[0], search].forEach(function (x) {
    bar.appendChild(x);
  });
  var count = el("p", "note ex-count");
  var panes = el("div", "ex-panes");
  var listPane = el("div", "ex-list");
  var table = el("table");
  var thead = el("thead"), tr = el("tr");
  ["Question", "Document", "Status", ""].forEach(function (h) { tr.appendChild(el("th", null, h)); });
  thead.appendChild(tr);
  table.appendChild(thead);
  var tbody = el("tbody");
  table.appendChild(tbody);
  var more = el("button", "ex-more");
  more.type = "button";
  listPane.appendChild(table);
  listPane.appendChild(more);
  var detail = el("div", "ex-detail");
  detail.id = "ex-detail";
  detail.appendChild(el("p", "note", "Pick a question."));
  panes.appendChild(listPane);
  panes.appendChild(detail);
  root.appendChild(bar);
  root.appendChild(count);
  root.appendChild(panes);

  var matches = [], shown = 0, current = null;
  function chosen() {
    return [+selA[1].value, selB[1].value === "" ? null : +selB[1].value];
  }
  function filter() {
    var ab = chosen(), a = ab[0], b = ab[1], want = selStatus[1].value;
    var doc = selDoc[1].value, text = search.value.toLowerCase();
    matches = [];
    D.questions.forEach(function (q, qi) {
      var ra = byQ[a][qi], rb = b === null ? null : byQ[b][qi];
      if (!ra && !rb) { return; }
      if (doc !== "" && String(q[2]) !== doc) { return; }
      if (text && q[1].toLowerCase().indexOf(text) < 0 && q[0].toLowerCase().indexOf(text) < 0) { return; }
      if (want === "diff") {
        if (b === null || (ra ? ra[1] : -1) === (rb ? rb[1] : -1)) { return; }
      } else if (want === "changed") {
        if (!ra || ra[6] === null || ra[6] === ra[2]) { return; }
      } else if (want !== "" && (!ra || String(ra[1]) !== want)) { return; }
      matches.push(qi);
    });
    while (tbody.firstChild) { tbody.removeChild(tbody.firstChild); }
    shown = 0;
    showMore();
  }
  function showMore() {
    var ab = chosen();
    var end = Math.min(matches.length, shown + PAGE);
    for (; shown < end; shown++) {
      var qi = matches[shown], q = D.questions[qi];
      var row = el("tr");
      row.setAttribute("data-q", String(qi));
      row.tabIndex = 0;  // reachable with the keyboard; Enter opens it
      if (qi === current) { row.className = "current"; }
      row.appendChild(el("td", "ex-q", q[1]));
      row.appendChild(el("td", "ex-doc", D.docs[q[2]]));
      var cell = el("td");
      var ra = byQ[ab[0]][qi];
      cell.appendChild(badge(ra));
      if (ra && ra[6] !== null && ra[6] !== ra[2]) {
        cell.appendChild(el("span", "ex-flip", ra[6] > ra[2] ? " \u25bc" : " \u25b2"));
        cell.lastChild.title = change(ra);
      }
      row.appendChild(cell);
      cell = el("td");
      if (ab[1] !== null) { cell.appendChild(badge(byQ[ab[1]][qi])); }
      row.appendChild(cell);
      tbody.appendChild(row);
    }
    count.textContent = matches.length + " of " + D.questions.length + " questions" +
      (shown < matches.length ? " (showing " + shown + ")" : "");
    more.textContent = "Show " + Math.min(PAGE, matches.length - shown) + " more";
    more.hidden = shown >= matches.length;
  }
  function open(qi) {
    current = qi;
    var q = D.questions[qi], ab = chosen();
    while (detail.firstChild) { detail.removeChild(detail.firstChild); }
    detail.appendChild(el("h3", "ex-question", q[1]));
    detail.appendChild(el("p", "note", q[0] + " \u00b7 " + D.docs[q[2]]));
    var cols = el("div", "ex-cols" + (ab[1] === null ? "" : " two"));
    cols.appendChild(column(ab[0], qi));
    if (ab[1] !== null) { cols.appendChild(column(ab[1], qi)); }
    detail.appendChild(cols);
    Array.prototype.forEach.call(tbody.rows, function (r) {
      r.className = r.getAttribute("data-q") === String(qi) ? "current" : "";
    });
  }
  function state() {
    var ab = chosen(), parts = ["a=" + ab[0]];
    if (ab[1] !== null) { parts.push("b=" + ab[1]); }
    if (selDoc[1].value !== "") { parts.push("doc=" + selDoc[1].value); }
    if (selStatus[1].value !== "") { parts.push("status=" + selStatus[1].value); }
    if (current !== null) { parts.push("q=" + encodeURIComponent(D.questions[current][0])); }
    history.replaceState(null, "", "#" + parts.join("&"));
  }
  function fromHash() {
    var h = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (kv) {
      var i = kv.indexOf("=");
      try {
        if (i > 0) { h[kv.slice(0, i)] = decodeURIComponent(kv.slice(i + 1)); }
      } catch (e) { /* a mangled link: ignore that part */ }
    });
    function pick(s, value) {
      var known = Array.prototype.some.call(s.options, function (o) {
        return o.value === value;
      });
      if (value !== undefined && known) { s.value = value; }
    }
    pick(selA[1], h.a);
    pick(selB[1], h.b);
    pick(selDoc[1], h.doc);
    pick(selStatus[1], h.status);
    if (h.q === undefined && h.a === undefined) {
      var changed = firstChanged();
      if (changed !== null) { selA[1].value = String(changed[0]); }
    }
    filter();
    if (h.q !== undefined) {
      for (var qi = 0; qi < D.questions.length; qi++) {
        if (D.questions[qi][0] === h.q) {
          open(qi);
          root.scrollIntoView();  // a link to a question shows it
          return;
        }
      }
    }
    var first = h.q === undefined ? toOpen() : null;
    if (first !== null) { open(first); }
  }
  /* The first configuration with a question whose recall changed since the
     baseline, and that question: [config, question] or null. */
  function firstChanged() {
    for (var c = 0; c < D.configs.length; c++) {
      for (var qi = 0; qi < D.questions.length; qi++) {
        var r = byQ[c][qi];
        if (r && r[6] !== null && r[6] !== r[2]) { return [c, qi]; }
      }
    }
    return null;
  }
  /* What the explorer opens on: the first listed question that changed since
     the baseline, else the listed question of lowest recall (the worst). */
  function toOpen() {
    var a = chosen()[0], worst = null, low = Infinity;
    for (var i = 0; i < matches.length; i++) {
      var r = byQ[a][matches[i]];
      if (!r) { continue; }
      if (r[6] !== null && r[6] !== r[2]) { return matches[i]; }
      if (r[2] !== null && r[2] < low) { low = r[2]; worst = matches[i]; }
    }
    return worst !== null ? worst : (matches.length ? matches[0] : null);
  }
  tbody.addEventListener("click", function (ev) {
    var tr = ev.target.closest("tr");
    if (!tr) { return; }
    open(+tr.getAttribute("data-q"));
    state();
  });
  tbody.addEventListener("keydown", function (ev) {
    var tr = ev.target.closest("tr");
    if (!tr || ev.key !== "Enter") { return; }
    open(+tr.getAttribute("data-q"));
    state();
  });
  more.addEventListener("click", showMore);
  [selA[1], selB[1], selDoc[1], selStatus[1]].forEach(function (s) {
    s.addEventListener("change", function () {
      filter();
      if (current !== null) { open(current); }
      state();
    });
  });
  search.addEventListener("input", filter);
  // the address keeps the view: configurations, filters and the open question
  window.addEventListener("hashchange", fromHash);
  fromHash();
  // for tests and the docs' screenshot: when the explorer was ready, and where
  root.setAttribute("data-ready-ms", performance.now().toFixed(0));
  root.setAttribute("data-top",
    String(Math.round(root.getBoundingClientRect().top + window.scrollY)));
})();
