// serve's page at `/`: the store's figures, live; a text looked up with the shared sentences
// of each match marked; a cluster browser; the report. It calls the JSON API (`/v1/...`) with
// the server's token rules: when the server asks for a token, the page asks the user for it and
// keeps it for this tab only (sessionStorage).
"use strict";
(function () {
  var R = fpdbRender, el = R.el;
  var $ = function (id) { return document.getElementById(id); };
  var token = sessionStorage.getItem("fpdb-token") || "";

  function status(text) { $("status").textContent = text || ""; }

  // A call to the API: JSON in and out; a 401 shows the token field.
  function api(path, body) {
    var headers = { "Accept": "application/json" };
    if (token) headers["Authorization"] = "Bearer " + token;
    var init = { headers: headers };
    if (body !== undefined) {
      init.method = "POST";
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    return fetch(path, init).then(function (r) {
      return r.json().catch(function () { return {}; }).then(function (j) {
        if (r.status === 401) {
          $("token-row").hidden = false;
          throw new Error("this server needs a bearer token");
        }
        if (!r.ok) throw new Error(j.error || ("HTTP " + r.status));
        status("");
        return j;
      });
    });
  }

  function fail(where) {
    return function (e) { where.textContent = ""; where.appendChild(el("p", { class: "error", text: e.message })); };
  }

  $("token").value = token;
  $("token-save").addEventListener("click", function () {
    token = $("token").value.trim();
    sessionStorage.setItem("fpdb-token", token);
    $("token-row").hidden = true;
    refreshFigures();
    refreshReport();
  });

  // Live figures, every 5 s.
  function refreshFigures() {
    return api("/v1/stats").then(function (s) {
      var f = $("figures");
      f.textContent = "";
      f.appendChild(R.figures(s));
      $("live-note").textContent = "Updated " + new Date().toLocaleTimeString() + " (every 5 s).";
    }).catch(function (e) { status(e.message); });
  }
  refreshFigures();
  setInterval(refreshFigures, 5000);

  // The report (cluster sizes, days, hosts, largest clusters).
  function refreshReport() {
    $("report-note").textContent = "making the report…";
    return api("/v1/report").then(function (r) {
      R.report(r, $("report"), openCluster, true);
      $("report-note").textContent = "Report made " + new Date(r.generated * 1000).toLocaleString() + ".";
    }).catch(function (e) { $("report-note").textContent = e.message; });
  }
  $("refresh-report").addEventListener("click", refreshReport);
  refreshReport();

  // A pasted text against the store.
  function find() {
    var text = $("paste").value;
    var out = $("answer");
    if (!text.trim()) { out.textContent = "Paste a text first."; return; }
    out.textContent = "looking up…";
    api("/v1/query", { text: text, sentences: true }).then(function (a) {
      out.textContent = "";
      var verdict = a.duplicate
        ? "Near-duplicate: similar_id " + a.similar_id + (a.duplicate_of ? " (original: " + a.duplicate_of + ")" : "")
        : "No stored document matches: it would start a new cluster.";
      out.appendChild(el("p", { class: "verdict", id: "verdict", text: verdict }));
      if (a.composite_of && a.composite_of.length) {
        out.appendChild(el("p", { class: "note", text: "A composite of " + a.composite_of.join(", ") + "." }));
      }
      // One card per matched document: its algorithms and scores, and the text's sentences
      // with the ones it holds marked.
      var ids = [];
      a.matches.forEach(function (m) { if (ids.indexOf(m.id) < 0) ids.push(m.id); });
      ids.forEach(function (id) {
        var card = el("div", { class: "match", "data-id": id }, [el("h3", { text: id })]);
        var how = a.matches.filter(function (m) { return m.id === id; }).map(function (m) {
          return m.algo + " " + Number(m.score).toFixed(3) + (m.overlap !== undefined ? " (overlap " + Number(m.overlap).toFixed(2) + ")" : "");
        }).join(", ");
        card.appendChild(el("p", { class: "note", text: how }));
        var list = el("ol", { class: "sentences" });
        var shared = 0;
        (a.sentences || []).forEach(function (s) {
          var li = el("li", { class: s.counted ? "" : "short" });
          if (s.shared.indexOf(id) >= 0) { li.appendChild(el("mark", { text: s.text })); shared++; }
          else li.textContent = s.text;
          list.appendChild(li);
        });
        card.appendChild(el("p", { class: "note", text: shared + " of " + (a.sentences || []).filter(function (s) { return s.counted; }).length + " counted sentences shared (marked); grey ones are too short to count." }));
        card.appendChild(list);
        if (a.similar_id !== null && a.similar_id !== undefined) {
          var b = el("button", { class: "plain", text: "open its cluster" });
          b.addEventListener("click", function () { openCluster(a.similar_id); });
          card.appendChild(b);
        }
        out.appendChild(card);
      });
    }).catch(fail(out));
  }
  $("find").addEventListener("click", find);

  // The cluster browser.
  function openCluster(id) {
    $("cluster-id").value = id;
    var out = $("cluster");
    out.textContent = "opening…";
    api("/v1/clusters/" + encodeURIComponent(String(id).trim()) + "/members?limit=200").then(function (c) {
      out.textContent = "";
      out.appendChild(el("p", { class: "verdict", id: "cluster-title", text: R.clusterSummary(c) }));
      out.appendChild(R.clusterTable(c));
      if (c.truncated) out.appendChild(el("p", { class: "note", text: "The first " + c.members.length + " of " + R.num(c.size) + " members." }));
      $("browser").scrollIntoView();
    }).catch(fail(out));
  }
  $("open-cluster").addEventListener("click", function () { openCluster($("cluster-id").value); });
  $("cluster-id").addEventListener("keydown", function (e) { if (e.key === "Enter") openCluster($("cluster-id").value); });
})();
