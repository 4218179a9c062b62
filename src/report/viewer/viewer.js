(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("kv-data").textContent);
  // Unpack the data: keys and values are written once (D.strings); an item leaves out
  // "never expires, alive, no flags"; a folded step's text is its block's.
  var S = D.strings;
  function unpack(it) {
    var full = it.length > 4;
    return [it[0], S[it[1]], S[it[2]], it[3], full ? it[4] : 0, full ? it[5] : null,
      full ? it[6] : false, full ? it[7] : 0];
  }
  D.initial = D.initial.map(unpack);
  D.steps.forEach(function (s) {
    s[4] = s[4].map(unpack);
    s[5] = s[5].map(function (g) { return [g[0], S[g[1]]]; });
  });
  D.lines.forEach(function (l) {
    if (typeof l === "number") return;
    for (var n = l[2]; n <= l[3]; n++) {
      D.steps[n - 1][2] = D.steps[l[2] - l[0] + ((n - l[2]) % l[0]) - 1][2];
    }
  });
  var root = document.getElementById("kv-viewer");
  var N = D.steps.length;
  var lanes = D.clients.length;

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }
  function secs(ms) {
    var s = Math.floor(ms / 1000), r = ms % 1000;
    return s + "." + ("00" + r).slice(-3) + " s";
  }
  function group(n) {
    return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  }
  function itemKey(it) { return it[0] + "\u0000" + it[1]; }
  function keyName(shard, key) { return D.shards > 1 ? key + " @S" + shard : key; }

  // The stores step by step: what each step's store lane says, and the stores at a step.
  var laneText = [""];
  (function () {
    var have = {};
    D.initial.forEach(function (it) { have[itemKey(it)] = it; });
    D.steps.forEach(function (s) {
      var parts = [];
      s[5].forEach(function (g) {
        parts.push("\u2212 " + keyName(g[0], g[1]));
        delete have[g[0] + "\u0000" + g[1]];
      });
      s[4].forEach(function (it) {
        var k = itemKey(it), before = have[k];
        var name = keyName(it[0], it[1]);
        if (it[6] && !(before && before[6])) parts.push(name + " expired");
        else if (!before) parts.push("+ " + name + " = " + it[2]);
        else if (before[2] !== it[2]) parts.push(name + " = " + it[2]);
        else parts.push(name + " touched (cas " + it[3] + ")");
        have[k] = it;
      });
      laneText.push(parts.join(" · "));
    });
  })();

  function storeAt(k) {
    var have = {};
    D.initial.forEach(function (it) { have[itemKey(it)] = it; });
    for (var i = 0; i < k; i++) {
      var s = D.steps[i];
      s[5].forEach(function (g) { delete have[g[0] + "\u0000" + g[1]]; });
      s[4].forEach(function (it) { have[itemKey(it)] = it; });
    }
    return have;
  }

  // ---- the page's parts ----
  var bad = D.verdict !== "ok";
  var why = el("p", bad ? "kv-why" : "kv-why kv-whyok");
  why.id = "kv-reason";
  if (D.property) why.appendChild(el("b", null, D.property + ": "));
  why.appendChild(document.createTextNode(D.reason));
  if (!D.bare) {
    var head = el("h1", "kv-title");
    head.appendChild(el("span", bad ? "kv-bad" : "kv-ok",
      D.verdict === "violation" ? "violation: " + D.property : D.verdict));
    head.appendChild(document.createTextNode(" in "));
    head.appendChild(el("b", null, D.target));
    head.appendChild(document.createTextNode(" (scenario " + D.scenario + ")"));
    root.appendChild(head);
    D.knobs.forEach(function (k) { root.appendChild(el("p", "kv-knobs", k)); });
    root.appendChild(why);
  }
  var controls = el("div", "kv-controls");
  function button(label, title, f) {
    var b = el("button", "kv-btn", label);
    b.type = "button";
    b.title = title;
    b.addEventListener("click", f);
    controls.appendChild(b);
    return b;
  }
  button("|\u25c0", "first step (Home)", function () { go(0); });
  button("\u25c0", "previous step (\u2190)", function () { go(cur - 1); });
  var slider = el("input", "kv-slider");
  slider.type = "range";
  slider.min = "0";
  slider.max = String(N);
  slider.id = "kv-slider";
  slider.setAttribute("aria-label", "step");
  controls.appendChild(slider);
  button("\u25b6", "next step (\u2192)", function () { go(cur + 1); });
  button("\u25b6|", "last step (End)", function () { go(N); });
  var now = el("span", "kv-now");
  now.id = "kv-now";
  controls.appendChild(now);
  root.appendChild(controls);
  root.appendChild(el("p", "kv-hint",
    "Step with \u2190 \u2192 (Home, End: first, last) or the slider; click a row to go to it. " +
    "Step 0 is the start, after the model's setup. Red: the operations the verdict is about."));

  var grid = el("div", "kv-grid");
  root.appendChild(grid);
  var left = el("div", "kv-timeline");
  grid.appendChild(left);
  var right = el("div", "kv-side");
  grid.appendChild(right);

  // The timeline: a lane per client, one for the store, one for faults.
  var table = el("table", "kv-lanes");
  table.id = "kv-timeline";
  var hr = el("tr");
  ["step", "time"].forEach(function (h) { hr.appendChild(el("th", "kv-num", h)); });
  D.clients.forEach(function (c) { hr.appendChild(el("th", "kv-client", "C" + c)); });
  hr.appendChild(el("th", "kv-store", "store"));
  hr.appendChild(el("th", "kv-fault", "faults"));
  var thead = el("thead");
  thead.appendChild(hr);
  table.appendChild(thead);
  var tbody = el("tbody");
  table.appendChild(tbody);
  left.appendChild(table);
  var rowOf = {};
  var repeats = [];

  function stepRow(n) {
    var tr = el("tr", "kv-step");
    tr.setAttribute("data-step", String(n));
    tr.appendChild(el("td", "kv-num", String(n)));
    if (n === 0) {
      tr.appendChild(el("td", "kv-time", secs(0)));
      var su = el("td", "kv-setup", D.setup.length ? "setup: " + D.setup.join(" \u00b7 ") : "start");
      su.colSpan = lanes;
      tr.appendChild(su);
      tr.appendChild(el("td", "kv-store",
        D.no_store ? D.no_store : (D.initial.length ? D.initial.length + " item(s) after setup" : "empty")));
      tr.appendChild(el("td", "kv-fault"));
    } else {
      var s = D.steps[n - 1];
      tr.appendChild(el("td", "kv-time", secs(s[0])));
      D.clients.forEach(function (c) {
        tr.appendChild(el("td", "kv-client", s[1] === c ? s[2] : ""));
      });
      tr.appendChild(el("td", "kv-store", laneText[n]));
      tr.appendChild(el("td", "kv-fault", s[1] < 0 ? s[2] : ""));
      if (s[3] !== null && D.ops[s[3]] && D.ops[s[3]].hot) tr.className += " kv-hot";
    }
    tr.addEventListener("click", function () { go(n); });
    rowOf[n] = tr;
    return tr;
  }
  tbody.appendChild(stepRow(0));
  D.lines.forEach(function (l) {
    if (typeof l === "number") {
      tbody.appendChild(stepRow(l));
    } else {
      var tr = el("tr", "kv-repeat");
      tr.appendChild(el("td"));
      tr.appendChild(el("td"));
      var td = el("td", "kv-summary", l[4]);
      td.colSpan = lanes + 2;
      tr.appendChild(td);
      var rep = { period: l[0], first: l[2], last: l[3], tr: tr, td: td, text: l[4] };
      tr.addEventListener("click", function () { go(rep.first); });
      repeats.push(rep);
      tbody.appendChild(tr);
    }
  });

  // The side panel: the step, each client's operation, the stores.
  var at = el("h2", "kv-at");
  right.appendChild(at);
  right.appendChild(el("h3", null, "Operations in flight"));
  var flight = el("table", "kv-flight");
  flight.id = "kv-flight";
  right.appendChild(flight);
  right.appendChild(el("h3", null, "Store"));
  var storeBox = el("div", "kv-storebox");
  right.appendChild(storeBox);
  var store = el("table", "kv-items");
  store.id = "kv-store";
  storeBox.appendChild(store);
  if (D.representation) {
    var rep = el("div", "kv-repr");
    rep.id = "kv-repr";
    rep.appendChild(el("b", null, "What the keys and values mean: "));
    rep.appendChild(document.createTextNode(D.representation));
    storeBox.appendChild(rep);
  }
  var hotOps = D.ops.map(function (o, i) { return [o, i]; }).filter(function (p) { return p[0].hot; });
  if (hotOps.length) {
    right.appendChild(el("h3", null, "The operations the verdict is about"));
    var ul = el("ul", "kv-hotops");
    ul.id = "kv-hotops";
    hotOps.forEach(function (p) {
      var o = p[0];
      var li = el("li", "kv-bad");
      var a = el("button", "kv-link", "C" + o.c + " " + o.l);
      a.type = "button";
      a.title = "go to its invocation (step " + o.a + ")";
      a.addEventListener("click", function () { go(o.a); });
      li.appendChild(a);
      li.appendChild(document.createTextNode(
        " steps " + o.a + "\u2013" + (o.b === null ? "(never returned)" : o.b)));
      ul.appendChild(li);
    });
    right.appendChild(ul);
  }
  if (D.token && !D.bare) {
    root.appendChild(el("h3", null, "Replay"));
    root.appendChild(el("pre", "kv-token", "kvsim replay " + D.token));
  }

  function cell(tr, text, cls) {
    var td = el("td", cls, text);
    tr.appendChild(td);
    return td;
  }

  function renderFlight(k) {
    flight.textContent = "";
    D.clients.forEach(function (c) {
      var tr = el("tr");
      cell(tr, "C" + c, "kv-num");
      var mine = D.ops.filter(function (o) { return o.c === c; });
      var live = mine.filter(function (o) { return o.a <= k && k >= 1 && (o.b === null || o.b >= k); });
      var o = live.length ? live[live.length - 1] : null;
      if (o) {
        var td = cell(tr, o.b === k ? "returned: " + o.l : o.l + " (since step " + o.a + ")", o.hot ? "kv-bad" : "");
        if (o.b === k) td.className += " kv-done";
      } else {
        var before = mine.filter(function (x) { return x.a <= k && k >= 1; }).length;
        cell(tr, before === 0 ? "not started" : before === mine.length ? "done" : "between operations", "kv-idle");
      }
      flight.appendChild(tr);
    });
  }

  function renderStore(k) {
    store.textContent = "";
    if (D.no_store) {
      var p = el("tr");
      cell(p, D.no_store, "kv-idle");
      store.appendChild(p);
      return;
    }
    var have = storeAt(k);
    var changed = {}, gone = [];
    if (k >= 1) {
      D.steps[k - 1][4].forEach(function (it) { changed[itemKey(it)] = true; });
      gone = D.steps[k - 1][5];
    }
    var hr = el("tr");
    ["key", "value", "cas", "expires"].forEach(function (h) { hr.appendChild(el("th", null, h)); });
    store.appendChild(hr);
    var keys = Object.keys(have).sort();
    if (!keys.length && !gone.length) {
      var e = el("tr");
      var td = cell(e, "empty", "kv-idle");
      td.colSpan = 4;
      store.appendChild(e);
    }
    keys.forEach(function (key) {
      var it = have[key];
      var tr = el("tr", changed[key] ? "kv-chg" : "");
      if (it[6]) tr.className += " kv-dead";
      cell(tr, keyName(it[0], it[1]), "kv-key");
      cell(tr, it[2] + (it[7] ? " (flags " + it[7] + ")" : ""), "kv-val");
      cell(tr, String(it[3]), "kv-num");
      cell(tr, it[5] === null ? "never" : secs(it[5]) + (it[6] ? " (expired)" : ""), "");
      store.appendChild(tr);
    });
    gone.forEach(function (g) {
      var tr = el("tr", "kv-gone");
      cell(tr, keyName(g[0], g[1]), "kv-key");
      var td = cell(tr, "removed at this step", "kv-idle");
      td.colSpan = 3;
      store.appendChild(tr);
    });
  }

  var cur = -1;
  var marked = [];
  function go(k) {
    k = Math.max(0, Math.min(N, k | 0));
    cur = k;
    slider.value = String(k);
    marked.forEach(function (m) {
      m.classList.remove("kv-cur");
      m.classList.remove("kv-echo");
      m.removeAttribute("aria-current");
    });
    marked = [];
    var time = k >= 1 ? secs(D.steps[k - 1][0]) : "start";
    now.textContent = "step " + group(k) + " of " + group(N) + " \u00b7 " + time;
    var row = rowOf[k], folded = null;
    if (!row) {
      repeats.forEach(function (r) { if (k >= r.first && k <= r.last) folded = r; });
    }
    if (row) {
      row.classList.add("kv-cur");
      row.setAttribute("aria-current", "step");
      marked.push(row);
    } else if (folded) {
      var same = folded.first - folded.period + ((k - folded.first) % folded.period);
      folded.tr.classList.add("kv-cur");
      folded.tr.setAttribute("aria-current", "step");
      folded.td.textContent = "step " + group(k) + " (" + D.steps[k - 1][2] + ") is folded here, as step " +
        group(same) + " above: " + folded.text;
      marked.push(folded.tr);
      if (rowOf[same]) { rowOf[same].classList.add("kv-echo"); marked.push(rowOf[same]); }
    }
    repeats.forEach(function (r) { if (r !== folded) r.td.textContent = r.text; });
    at.textContent = k === 0 ? "At the start (step 0 of " + group(N) + ")"
      : "At step " + group(k) + " of " + group(N) + " (" + time + "): " + D.steps[k - 1][2];
    renderFlight(k);
    renderStore(k);
    var target = row || (folded && folded.tr);
    if (target && left.scrollHeight > left.clientHeight) {
      var top = target.offsetTop - left.clientHeight / 2;
      left.scrollTop = Math.max(0, top);
    }
    try {
      if (location.hash !== "#step=" + k) history.replaceState(null, "", "#step=" + k);
    } catch (e) { /* a page opened from a file may refuse; the step still shows */ }
  }

  function fromHash() {
    var m = /step=(\d+)/.exec(location.hash || "");
    return m ? parseInt(m[1], 10) : 0;
  }
  slider.addEventListener("input", function () { go(parseInt(slider.value, 10)); });
  window.addEventListener("hashchange", function () { if (fromHash() !== cur) go(fromHash()); });
  document.addEventListener("keydown", function (e) {
    if (e.target === slider || e.altKey || e.ctrlKey || e.metaKey) return;
    var t = e.target && e.target.tagName;
    if (t === "INPUT" || t === "TEXTAREA") return;
    var k = { ArrowLeft: cur - 1, ArrowRight: cur + 1, Home: 0, End: N }[e.key];
    if (k === undefined) return;
    e.preventDefault();
    go(k);
  });
  go(fromHash());
})();
