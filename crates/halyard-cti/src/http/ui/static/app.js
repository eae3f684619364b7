// The dashboard's live parts: the feed and the plots read the node's server-sent event
// stream (/api/v1/events), the community table and the delivery plot re-read
// /api/v1/community, the object page draws its relationship graph with Cytoscape.js and the
// plots are drawn with uPlot. Everything that comes from the node is put in the page as text
// (textContent), never parsed as HTML.
(function () {
  "use strict";

  var page = document.body.getAttribute("data-page");
  var FEED_ROWS_MAX = 200;
  var PLOT_SECONDS = 120;
  var LATENCY_WINDOW_S = 10;
  var PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b"];

  function cell(text, cls) {
    var td = document.createElement("td");
    td.textContent = text;
    if (cls) td.className = cls;
    return td;
  }

  function tlpBadge(tlp) {
    var span = document.createElement("span");
    span.className = "tlp tlp-" + String(tlp).toLowerCase().replace("+", "-");
    span.textContent = "TLP:" + String(tlp).toUpperCase();
    return span;
  }

  function isoOfNs(ns) {
    return new Date(ns / 1e6).toISOString();
  }

  function liveState(text, ok) {
    var s = document.getElementById("live-state");
    if (!s) return;
    s.textContent = text;
    s.className = "live-state " + (ok ? "ok" : "down");
  }

  // Opens the event stream; the browser reconnects by itself when it drops.
  function openEvents(onObject) {
    var es = new EventSource("/api/v1/events");
    es.addEventListener("open", function () { liveState("live", true); });
    es.addEventListener("error", function () { liveState("reconnecting…", false); });
    es.addEventListener("lagged", function (e) {
      liveState("live (" + e.data + " events skipped: too many at once)", true);
    });
    es.addEventListener("object", function (e) {
      var ev;
      try { ev = JSON.parse(e.data); } catch (err) { return; }
      onObject(ev);
    });
    return es;
  }

  function feed() {
    var body = document.getElementById("feed-rows");
    openEvents(function (ev) {
      var tr = document.createElement("tr");
      tr.className = "new";
      tr.appendChild(cell(isoOfNs(ev.stored_at_ns), "when"));
      tr.appendChild(cell(ev.type));
      var name = document.createElement("td");
      var a = document.createElement("a");
      a.href = "/ui/objects/" + encodeURIComponent(ev.id);
      a.textContent = ev.name || ev.id;
      name.appendChild(a);
      tr.appendChild(name);
      var marking = document.createElement("td");
      marking.appendChild(tlpBadge(ev.tlp));
      tr.appendChild(marking);
      tr.appendChild(cell(ev.sector || "local"));
      tr.appendChild(cell(ev.origin));
      body.insertBefore(tr, body.firstChild);
      while (body.rows.length > FEED_ROWS_MAX) body.deleteRow(body.rows.length - 1);
    });
  }

  function graph() {
    var box = document.getElementById("graph");
    if (!box) return;
    if (typeof window.cytoscape !== "function") {
      box.textContent = "The graph library is not installed in this build.";
      return;
    }
    var data = JSON.parse(box.getAttribute("data-graph"));
    var centre = document.getElementById("object-id").textContent;
    var elements = [];
    data.nodes.forEach(function (n) {
      elements.push({ data: { id: n.id, label: n.kind + "\n" + n.label.slice(0, 40), known: n.known ? 1 : 0, centre: n.id === centre ? 1 : 0 } });
    });
    data.edges.forEach(function (e) {
      elements.push({ data: { id: e.id, source: e.source, target: e.target, label: e.label } });
    });
    var cy = window.cytoscape({
      container: box,
      elements: elements,
      layout: { name: data.nodes.length > 2 ? "cose" : "grid", animate: false },
      maxZoom: 2.5,
      minZoom: 0.2,
      style: [
        { selector: "node", style: { "label": "data(label)", "text-wrap": "wrap", "font-size": 9, "background-color": "#6c8ebf", "text-valign": "bottom", "width": 18, "height": 18 } },
        { selector: "node[centre = 1]", style: { "background-color": "#d62728", "width": 26, "height": 26 } },
        { selector: "node[known = 0]", style: { "background-color": "#bbbbbb" } },
        { selector: "edge", style: { "label": "data(label)", "font-size": 8, "curve-style": "bezier", "target-arrow-shape": "triangle", "width": 1.5, "line-color": "#999", "target-arrow-color": "#999" } }
      ]
    });
    cy.on("tap", "node", function (e) {
      var id = e.target.id();
      if (id !== centre) window.location.href = "/ui/objects/" + encodeURIComponent(id);
    });
    box.setAttribute("data-drawn", String(cy.nodes().length));
  }

  function fetchCommunity(then) {
    fetch("/api/v1/community", { credentials: "same-origin", headers: { "Accept": "application/json" } })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (c) { if (c) then(c); })
      .catch(function () {});
  }

  function community() {
    var body = document.getElementById("member-rows");
    function draw(c) {
      while (body.firstChild) body.removeChild(body.firstChild);
      if (c.members.length === 0) {
        var tr = document.createElement("tr");
        var td = cell("No other member discovered yet.", "hint");
        td.colSpan = 6;
        tr.appendChild(td);
        body.appendChild(tr);
      }
      c.members.forEach(function (m) {
        var tr = document.createElement("tr");
        tr.appendChild(cell(m.organisation));
        tr.appendChild(cell(m.sectors.join(", ")));
        tr.appendChild(cell(m.liveliness + (m.liveliness === "alive" ? " (lease " + Math.round(m.lease_secs) + " s)" : ""), "live-" + m.liveliness));
        tr.appendChild(cell(m.security));
        tr.appendChild(cell(m.durability_service ? "present" : "—"));
        var d = m.delivery.map(function (x) { return x.sector + ": " + x.acknowledged + " of " + x.owed; });
        tr.appendChild(cell(d.length ? d.join("; ") : "—"));
        body.appendChild(tr);
      });
    }
    setInterval(function () { fetchCommunity(draw); }, 3000);
  }

  function quantile(sorted, q) {
    if (sorted.length === 0) return null;
    var i = Math.min(sorted.length - 1, Math.floor(q * sorted.length));
    return sorted[i];
  }

  function plots() {
    var holder = document.getElementById("plots");
    var sectors = (holder.getAttribute("data-sectors") || "").split(",").filter(Boolean);
    if (typeof window.uPlot !== "function") {
      holder.textContent = "The plotting library is not installed in this build.";
      return;
    }
    var counts = {};       // second -> sector -> objects stored
    var latencies = [];    // [second, sector, ms] of received objects
    var delivery = {};     // second -> sector -> percent
    var events = 0;
    openEvents(function (ev) {
      events += 1;
      holder.setAttribute("data-events", String(events));
      var s = Math.floor(ev.stored_at_ns / 1e9);
      var sector = ev.sector || "local";
      counts[s] = counts[s] || {};
      counts[s][sector] = (counts[s][sector] || 0) + 1;
      if (ev.received && ev.shared_at_ns > 0) {
        latencies.push([s, sector, (ev.stored_at_ns - ev.shared_at_ns) / 1e6]);
      }
    });
    function width() { return Math.max(320, Math.min(900, holder.clientWidth - 20)); }
    function chart(id, series) {
      var opts = { width: width(), height: 220, scales: { x: { time: true } }, series: [{}].concat(series), legend: { live: false } };
      var empty = [[]].concat(series.map(function () { return []; }));
      return new window.uPlot(opts, empty, document.getElementById(id));
    }
    var colour = function (i) { return PALETTE[i % PALETTE.length]; };
    var rate = chart("plot-rate", sectors.map(function (s, i) { return { label: s, stroke: colour(i) }; }));
    var latencySeries = [];
    sectors.forEach(function (s, i) {
      latencySeries.push({ label: s + " p50", stroke: colour(i) });
      latencySeries.push({ label: s + " p99", stroke: colour(i), dash: [5, 5] });
    });
    var latency = chart("plot-latency", latencySeries);
    var deliveryPlot = chart("plot-delivery", sectors.map(function (s, i) { return { label: s, stroke: colour(i) }; }));
    function redraw() {
      var now = Math.floor(Date.now() / 1000);
      var xs = [];
      for (var t = now - PLOT_SECONDS; t < now; t++) xs.push(t);
      latencies = latencies.filter(function (l) { return l[0] > now - PLOT_SECONDS - LATENCY_WINDOW_S; });
      rate.setData([xs].concat(sectors.map(function (s) {
        return xs.map(function (t) { return (counts[t] && counts[t][s]) || 0; });
      })));
      var lat = [xs];
      sectors.forEach(function (s) {
        var p50 = [], p99 = [];
        xs.forEach(function (t) {
          var w = latencies.filter(function (l) { return l[1] === s && l[0] > t - LATENCY_WINDOW_S && l[0] <= t; })
            .map(function (l) { return l[2]; }).sort(function (a, b) { return a - b; });
          p50.push(quantile(w, 0.5));
          p99.push(quantile(w, 0.99));
        });
        lat.push(p50, p99);
      });
      latency.setData(lat);
      deliveryPlot.setData([xs].concat(sectors.map(function (s) {
        return xs.map(function (t) { return delivery[t] && delivery[t][s] !== undefined ? delivery[t][s] : null; });
      })));
      Object.keys(counts).forEach(function (k) { if (k < now - PLOT_SECONDS) delete counts[k]; });
      Object.keys(delivery).forEach(function (k) { if (k < now - PLOT_SECONDS) delete delivery[k]; });
    }
    setInterval(redraw, 1000);
    setInterval(function () {
      fetchCommunity(function (c) {
        var now = Math.floor(Date.now() / 1000);
        var row = {};
        sectors.forEach(function (s) {
          var ack = 0, owed = 0;
          c.members.forEach(function (m) {
            if (m.liveliness !== "alive") return;
            m.delivery.forEach(function (d) { if (d.sector === s) { ack += d.acknowledged; owed += d.owed; } });
          });
          row[s] = owed === 0 ? 100 : (100 * ack) / owed;
        });
        delivery[now] = row;
      });
    }, 2000);
  }

  if (page === "feed") feed();
  if (page === "search" && document.getElementById("graph")) graph();
  if (page === "community") community();
  if (page === "plots") plots();
})();
