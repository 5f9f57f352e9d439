// The report's behaviour, no network and no libraries: filters (KIP, clause status, only non-pass), a clause's
// text on a click of its name, the per-cell drill-down and the implementation x profile grid on demand.
// Details live in a side file (window.KTC.details) loaded with a <script> tag on the first click: a page
// opened from file:// may not fetch().
(function () {
  var K = window.KTC, $ = function (id) { return document.getElementById(id); };
  var NAME = {p: "pass", f: "fail", e: "error", u: "unknown", s: "unsupported"};
  var SYMBOL = {p: "✓", f: "✗", e: "!", u: "?", s: "–"};
  var kip = $("kip"), onlyBad = $("onlybad"), cross = $("cross"), panel = $("detail"), waiting = null;
  var boxes = Array.prototype.slice.call(document.querySelectorAll('#filters input[name="status"]'));
  function esc(s) {
    return String(s).replace(/[&<>"]/g, function (c) { return {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c]; });
  }
  function table() { return cross.checked ? $("crosstable") : $("own"); }
  function apply() {
    var statuses = boxes.filter(function (b) { return b.checked; }).map(function (b) { return b.value; });
    var shown = 0;
    table().querySelectorAll("tr.clause").forEach(function (tr) {
      var ok = (!kip.value || tr.dataset.kip === kip.value) && statuses.indexOf(tr.dataset.status) >= 0 &&
        (!onlyBad.checked || tr.querySelector(".v-fail,.v-error,.v-unknown"));
      tr.hidden = !ok; if (ok) shown++;
      var quote = tr.nextElementSibling;
      if (!ok && quote && quote.classList.contains("quote")) quote.hidden = true;
    });
    table().querySelectorAll("tbody[data-kip]").forEach(function (tb) {
      tb.hidden = !tb.querySelector("tr.clause:not([hidden])");
    });
    $("shown").textContent = shown + " clauses shown";
    document.body.dataset.shown = shown;
  }
  function crossTable() {  // every implementation x profile, built once from the compact grid
    var g = K.grid, at = {};
    g.cells.forEach(function (c, i) { (at[c[0]] = at[c[0]] || {})[c[1]] = [c[2], c[3], i]; });
    var head = g.columns.map(function (c) { return "<th class=col>" + esc(c[0]) + "<br><small>" + esc(c[1]) + "</small></th>"; });
    var rows = g.clauses.map(function (cid, n) {
      var own = document.querySelector('#own tr.clause[data-clause="' + CSS.escape(cid) + '"]');
      var cells = g.columns.map(function (_, col) {
        var c = (at[n] || {})[col];
        return c ? '<td class="cell v-' + NAME[c[0]] + (c[1] ? " expected" : "") + '" data-rows="' + c[2] +
          '" tabindex="0">' + SYMBOL[c[0]] + "</td>" : '<td class="cell v-none">·</td>';
      });
      return '<tr class="clause" data-kip="' + esc(own.dataset.kip) + '" data-status="' + esc(own.dataset.status) +
        '"><th>' + esc(cid) + "</th>" + cells.join("") + "</tr>";
    });
    $("crosswrap").innerHTML = '<table id="crosstable"><thead><tr><th>clause</th>' + head.join("") +
      "</tr></thead><tbody>" + rows.join("") + "</tbody></table>";
  }
  function showCross() {
    if (cross.checked && !$("crosstable")) crossTable();
    $("own").hidden = cross.checked; $("crosswrap").hidden = !cross.checked;
    document.querySelector("p.how").hidden = cross.checked;
    apply();
  }
  function withDetails(done) {  // the side file, loaded once; clicks made while it loads wait for it
    if (window.KTC_DETAILS) return done();
    if (waiting) { waiting.push(done); return; }
    waiting = [done];
    var s = document.createElement("script");
    s.src = K.details;
    s.onload = function () { waiting.forEach(function (f) { f(); }); waiting = null; };
    s.onerror = function () {
      panel.hidden = false; waiting = null;
      panel.textContent = "The details file " + K.details + " is not next to this page: copy it along with the page.";
    };
    document.body.appendChild(s);
  }
  function rowHtml(i) {
    var D = window.KTC_DETAILS, d = D.rows[i], facts = [["examples", d.examples], ["duration", d.duration],
      ["seed", d.seed], ["signature", d.signature], ["reason", d.reason]];
    var tests = (d.tests || []).map(function (t) { return "<li><code>" + esc(D.tests[t]) + "</code></li>"; });
    return "<h3>" + esc(d.implementation) + " " + esc(d.version || "") + " / " + esc(d.profile) + ': <span class="v-' +
      esc(d.verdict) + '">' + esc(d.label || d.verdict) + "</span></h3>" + (d.expected_html || "") + (d.counterexample || "") +
      "<dl>" + facts.filter(function (f) { return f[1] !== undefined; }).map(function (f) {
        return "<dt>" + f[0] + "</dt><dd>" + esc(f[1]) + "</dd>";
      }).join("") + "</dl><details><summary>" + tests.length + " tests</summary><ul>" + tests.join("") + "</ul></details>";
  }
  function open(cell) {
    var rows = cell.dataset.rows.split(" ");
    document.querySelectorAll(".cell.sel").forEach(function (c) { c.classList.remove("sel"); });
    cell.classList.add("sel");
    withDetails(function () {
      var clause = window.KTC_DETAILS.rows[rows[0]].clause;
      var quote = document.querySelector('tr.quote[data-clause="' + CSS.escape(clause) + '"] td');
      panel.innerHTML = "<h2>" + esc(clause) + "</h2>" + (quote ? quote.innerHTML : "") + rows.map(rowHtml).join("<hr>");
      panel.hidden = false;
      document.body.dataset.opened = clause;
    });
  }
  document.querySelector("main").addEventListener("click", function (e) {
    var button = e.target.closest("button.expand");
    if (button) { var q = button.closest("tr").nextElementSibling; q.hidden = !q.hidden; return; }
    var c = e.target.closest("td.cell[data-rows]"); if (c) open(c);
  });
  document.querySelector("main").addEventListener("keydown", function (e) {
    var c = e.target.closest("td.cell[data-rows]"); if (c && (e.key === "Enter" || e.key === " ")) open(c);
  });
  [kip, onlyBad].concat(boxes).forEach(function (x) { x.addEventListener("change", apply); });
  cross.addEventListener("change", showCross);
  // A link can preselect filters: index.html#kip=KIP-937&bad&cross (CI comments, the README screenshot).
  var hash = new URLSearchParams(location.hash.slice(1));
  if (hash.get("kip")) kip.value = hash.get("kip");
  if (hash.has("bad")) onlyBad.checked = true;
  if (hash.has("cross")) cross.checked = true;
  showCross();
  // Open the first unexpected failure, else the first failure (known deviations too), else nothing.
  var first = ["td.v-fail:not(.expected)", "td.v-error:not(.expected)", "td.v-fail", "td.v-error"].map(function (s) {
    return table().querySelector("tr.clause:not([hidden]) " + s + "[data-rows]");
  }).filter(Boolean)[0];
  if (first) open(first);
  document.body.dataset.targets = document.querySelectorAll("#own thead th.tgt").length;
  document.body.dataset.cells = document.querySelectorAll("#own td.cell[data-rows]").length;
  document.body.dataset.ready = "1";
})();
