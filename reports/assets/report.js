// Filters (KIP, clause status, only non-pass) and the per-cell drill-down.  No network, no libraries.
(function () {
  var kip = document.getElementById("kip"), onlyBad = document.getElementById("onlybad");
  var boxes = Array.prototype.slice.call(document.querySelectorAll('#filters input[name="status"]'));
  function apply() {
    var statuses = boxes.filter(function (b) { return b.checked; }).map(function (b) { return b.value; });
    var shown = 0;
    document.querySelectorAll("tr.clause").forEach(function (tr) {
      var ok = (!kip.value || tr.dataset.kip === kip.value) && statuses.indexOf(tr.dataset.status) >= 0 &&
        (!onlyBad.checked || tr.querySelector(".v-fail,.v-error,.v-unknown"));
      tr.hidden = !ok; if (ok) shown++;
    });
    document.querySelectorAll("tbody[data-kip]").forEach(function (tb) {
      tb.hidden = !tb.querySelector("tr.clause:not([hidden])");
    });
    document.getElementById("shown").textContent = shown + " clauses shown";
    document.body.dataset.shown = shown;
  }
  function open(cell) {
    var t = document.getElementById(cell.dataset.detail), d = document.getElementById("detail");
    d.replaceChildren(t.content.cloneNode(true)); d.hidden = false;
    document.querySelectorAll(".cell.sel").forEach(function (c) { c.classList.remove("sel"); });
    cell.classList.add("sel");
  }
  var matrix = document.getElementById("matrix");
  matrix.addEventListener("click", function (e) { var c = e.target.closest("td.cell[data-detail]"); if (c) open(c); });
  matrix.addEventListener("keydown", function (e) {
    var c = e.target.closest("td.cell[data-detail]"); if (c && (e.key === "Enter" || e.key === " ")) open(c);
  });
  [kip, onlyBad].concat(boxes).forEach(function (x) { x.addEventListener("change", apply); });
  // A link can preselect filters: index.html#kip=KIP-937&bad (CI comments, the README screenshot).
  var hash = new URLSearchParams(location.hash.slice(1));
  if (hash.get("kip")) kip.value = hash.get("kip");
  if (hash.has("bad")) onlyBad.checked = true;
  apply();
  // Open the first failure (else the first cell) so the page never starts with an empty panel.
  var first = ["td.v-fail", "td.v-error", "td.v-unknown", "td.cell"].map(function (s) {
    return document.querySelector("tr.clause:not([hidden]) " + s + "[data-detail]");
  }).filter(Boolean)[0];
  if (first) open(first);
  document.body.dataset.cells = document.querySelectorAll("td.cell[data-detail]").length;
  document.body.dataset.ready = "1";
})();
