// fpdb's report drawn in the page: figures, the cluster-size histogram, duplicates per day,
// hosts copying hosts, the largest clusters. Shared by `fpdb report`'s file and serve's page.
// Every text from the store (ids, titles, URLs: what crawled pages said) goes in through
// textContent or an attribute, never as markup; a URL is a link only when it is http(s).
"use strict";
var fpdbRender = (function () {
  var SVG = "http://www.w3.org/2000/svg";

  function el(tag, attrs, children) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) {
      if (k === "text") e.textContent = attrs[k];
      else if (k === "class") e.className = attrs[k];
      else e.setAttribute(k, attrs[k]);
    }
    (children || []).forEach(function (c) { if (c) e.appendChild(c); });
    return e;
  }

  function svg(tag, attrs) {
    var e = document.createElementNS(SVG, tag);
    for (var k in attrs || {}) {
      if (k === "text") e.textContent = attrs[k];
      else e.setAttribute(k, attrs[k]);
    }
    return e;
  }

  function num(n) { return Number(n).toLocaleString("en-US"); }

  function bytes(n) {
    var units = ["B", "KiB", "MiB", "GiB", "TiB"], i = 0;
    while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
    return (i === 0 ? n : n.toFixed(1)) + " " + units[i];
  }

  function pct(x) { return (100 * x).toFixed(1) + "%"; }

  function time(secs) {
    if (secs === undefined || secs === null) return "";
    return new Date(secs * 1000).toISOString().replace("T", " ").replace(/\.000Z$/, " UTC");
  }

  // A link for http(s) URLs, else the URL as text.
  function urlCell(url) {
    var td = el("td", { class: "url" });
    if (!url) return td;
    if (/^https?:\/\//i.test(url)) {
      td.appendChild(el("a", { href: url, rel: "noopener noreferrer nofollow", target: "_blank", text: url }));
    } else {
      td.textContent = url;
    }
    return td;
  }

  function section(title, note) {
    var s = el("section", {}, [el("h2", { text: title })]);
    if (note) s.appendChild(el("p", { class: "note", text: note }));
    return s;
  }

  function figure(label, value, id) {
    var v = el("div", { class: "value", text: value });
    if (id) v.id = id;
    return el("div", { class: "figure" }, [v, el("div", { class: "label", text: label })]);
  }

  // The store's figures (a report or /v1/stats: both have documents, clusters, duplicates).
  function figures(d) {
    var share = d.documents ? d.duplicates / d.documents : 0;
    return el("div", { class: "figures" }, [
      figure("documents", num(d.documents), "fig-documents"),
      figure("clusters", num(d.clusters), "fig-clusters"),
      figure("duplicates", num(d.duplicates), "fig-duplicates"),
      figure("duplicate share", pct(share), "fig-share"),
      figure("store size", bytes(d.disk_bytes), "fig-disk"),
    ]);
  }

  // Bars on a log scale: `rows` of {label, value, cls, tip}; y is log10(1 + value).
  function logBars(rows, opts) {
    var w = 560, h = 240, left = 60, bottom = 44, top = 12;
    var plotH = h - bottom - top, plotW = w - left - 8;
    var max = rows.reduce(function (m, r) { return Math.max(m, r.value); }, 1);
    var decades = Math.max(1, Math.ceil(Math.log10(max + 1)));
    var s = svg("svg", { class: "chart " + (opts.cls || ""), viewBox: "0 0 " + w + " " + h, role: "img", "aria-label": opts.label });
    for (var i = 0; i <= decades; i++) {
      var y = top + plotH - (plotH * i) / decades;
      s.appendChild(svg("line", { class: "axis", x1: left, x2: w - 8, y1: y, y2: y }));
      s.appendChild(svg("text", { x: left - 6, y: y + 4, "text-anchor": "end", text: num(Math.pow(10, i)) }));
    }
    var groups = opts.groups || rows.length;
    var slot = plotW / Math.max(1, groups);
    var bw = Math.max(2, slot * 0.7 / (opts.perGroup || 1));
    rows.forEach(function (r, i) {
      var g = opts.perGroup ? Math.floor(i / opts.perGroup) : i;
      var k = opts.perGroup ? i % opts.perGroup : 0;
      var bh = (plotH * Math.log10(1 + r.value)) / decades;
      var x = left + g * slot + slot * 0.15 + k * bw;
      var rect = svg("rect", { class: "bar " + (r.cls || ""), x: x.toFixed(1), y: (top + plotH - bh).toFixed(1), width: bw.toFixed(1), height: Math.max(0, bh).toFixed(1), "data-value": r.value });
      rect.appendChild(svg("title", { text: r.tip }));
      s.appendChild(rect);
      if (r.label !== undefined && (!opts.every || g % opts.every === 0)) {
        s.appendChild(svg("text", { x: (left + g * slot + slot / 2).toFixed(1), y: h - bottom + 14, "text-anchor": "middle", text: r.label }));
      }
    });
    s.appendChild(svg("text", { x: left, y: h - 6, text: opts.xTitle }));
    return s;
  }

  function sizes(report) {
    var s = section("Cluster sizes", "Clusters per size class (powers of two), on a log scale; hover a bar for its counts.");
    if (!report.cluster_sizes.length) {
      s.appendChild(el("p", { class: "note", text: "The store holds no document." }));
      return s;
    }
    var rows = report.cluster_sizes.map(function (c) {
      var label = c.from === c.to ? String(c.from) : num(c.from) + "–" + num(c.to);
      return { label: label, value: c.clusters, tip: num(c.clusters) + " clusters of " + label + " documents (" + num(c.documents) + " documents)" };
    });
    var chart = logBars(rows, { label: "clusters per size class, log scale", xTitle: "documents per cluster", cls: "sizes" });
    chart.id = "size-histogram";
    s.appendChild(chart);
    return s;
  }

  function days(report) {
    var s = section("Duplicates per day", "Documents by the day they were published (a page's own date, else the day an archive fetched it, else the day they were ingested; UTC), and of them the duplicates: members that are not their cluster's original; log scale, last 60 days.");
    var list = report.days.slice(-60);
    if (!list.length) {
      s.appendChild(el("p", { class: "note", text: "No document yet." }));
      return s;
    }
    var rows = [];
    list.forEach(function (d) {
      var share = d.documents ? d.duplicates / d.documents : 0;
      var tip = d.day + ": " + num(d.documents) + " documents, " + num(d.duplicates) + " duplicates (" + pct(share) + ")";
      rows.push({ label: d.day.slice(5), value: d.documents, cls: "all", tip: tip });
      rows.push({ value: d.duplicates, cls: "dup", tip: tip });
    });
    var chart = logBars(rows, { label: "documents and duplicates per day, log scale", xTitle: "day published (documents, duplicates)", perGroup: 2, groups: list.length, every: Math.ceil(list.length / 12) });
    chart.id = "days-chart";
    s.appendChild(chart);
    var t = el("table", {}, [el("tr", {}, [el("th", { text: "day" }), el("th", { class: "num", text: "documents" }), el("th", { class: "num", text: "duplicates" }), el("th", { class: "num", text: "share" })])]);
    list.slice(-7).reverse().forEach(function (d) {
      t.appendChild(el("tr", {}, [el("td", { text: d.day }), el("td", { class: "num", text: num(d.documents) }), el("td", { class: "num", text: num(d.duplicates) }), el("td", { class: "num", text: pct(d.documents ? d.duplicates / d.documents : 0) })]));
    });
    s.appendChild(t);
    return s;
  }

  // A count of the host tables: exact, or the range the true count lies in.
  function pages(c, h) {
    return h.exact ? num(c) : num(c) + "–" + num(c + h.max_undercount);
  }

  function hosts(report) {
    var h = report.hosts;
    var s = section("Hosts copying hosts",
      num(h.documents_with_host) + " documents name a host; " + num(h.across_hosts) + " duplicates match a page of another host, " +
      num(h.within_host) + " one of their own host. The copy is the later page (by publication time, else ingest time)." +
      (h.exact ? "" : " More distinct pairs came than the tables hold: each count is a range (a count is low by at most " +
        num(h.max_undercount) + "), and any pair above that many pages is listed."));
    if (!h.pairs.length) {
      s.appendChild(el("p", { class: "note", text: "No near-duplicates across hosts." }));
      return s;
    }
    var pairs = el("table", { id: "host-pairs" }, [el("tr", {}, [el("th", { text: "copy's host" }), el("th", { text: "source's host" }), el("th", { class: "num", text: "pages" })])]);
    h.pairs.forEach(function (p) {
      pairs.appendChild(el("tr", {}, [el("td", { text: p.copy }), el("td", { text: p.source }), el("td", { class: "num", text: pages(p.pages, h) })]));
    });
    var copying = el("table", {}, [el("tr", {}, [el("th", { text: "host" }), el("th", { class: "num", text: "pages copied from other hosts" })])]);
    h.copying.forEach(function (c) {
      copying.appendChild(el("tr", {}, [el("td", { text: c.host }), el("td", { class: "num", text: pages(c.pages, h) })]));
    });
    s.appendChild(el("div", { class: "charts" }, [pairs, copying]));
    return s;
  }

  function links(m) {
    return m.links.map(function (l) {
      return l.id + " (" + l.algo + " " + Number(l.score).toFixed(2) + (l.overlap !== undefined ? ", overlap " + Number(l.overlap).toFixed(2) : "") + ")";
    }).join("; ");
  }

  // A cluster's members: id, title, URL, times, what linked each.
  function clusterTable(c) {
    var t = el("table", { class: "members" }, [el("tr", {}, [el("th", { text: "id" }), el("th", { text: "title" }), el("th", { text: "url" }), el("th", { text: "published / ingested" }), el("th", { text: "linked by" })])]);
    c.members.forEach(function (m) {
      var id = el("td", { class: "id", text: m.id });
      if (m.original) id.appendChild(el("span", { class: "tag orig", text: "original" }));
      t.appendChild(el("tr", { class: "member" }, [
        id,
        el("td", { text: m.title || "" }),
        urlCell(m.url),
        el("td", { text: (m.published !== undefined ? time(m.published) + " / " : "") + time(m.ingested) }),
        el("td", { text: m.links.length ? links(m) : "started the cluster" }),
      ]));
    });
    return t;
  }

  function clusterSummary(c) {
    return "similar_id " + c.similar_id + " — " + num(c.size) + " documents — original " + c.original;
  }

  function largest(report, open) {
    var s = section("Largest clusters", "Their first members in ingest order (and the original), with what linked each.");
    if (!report.largest.length) {
      s.appendChild(el("p", { class: "note", text: "No cluster yet." }));
      return s;
    }
    report.largest.forEach(function (c) {
      var d = el("details", { class: "cluster", "data-similar-id": c.similar_id }, [el("summary", { text: clusterSummary(c) })]);
      d.appendChild(clusterTable(c));
      if (c.truncated) d.appendChild(el("p", { class: "note", text: "… and " + num(c.size - c.members.length) + " more." }));
      if (open) {
        var b = el("button", { class: "plain", text: "open in the cluster browser" });
        b.addEventListener("click", function () { open(c.similar_id); });
        d.appendChild(b);
      }
      s.appendChild(d);
    });
    return s;
  }

  // The whole report into `root`: the figures first (unless `live` figures are shown
  // elsewhere), then the charts and tables; `open(similar_id)`, if given, opens a cluster.
  function report(r, root, open, live) {
    root.textContent = "";
    if (!live) {
      var f = section("Store");
      f.appendChild(figures(r));
      f.appendChild(el("p", { class: "note", text: "Report made " + time(r.generated) + "." }));
      root.appendChild(f);
    }
    root.appendChild(el("div", { class: "charts" }, [sizes(r), days(r)]));
    root.appendChild(hosts(r));
    root.appendChild(largest(r, open));
  }

  return { el: el, figures: figures, report: report, clusterTable: clusterTable, clusterSummary: clusterSummary, num: num, bytes: bytes, pct: pct };
})();
