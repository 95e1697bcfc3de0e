// The reader pages' controls, offline (file:// or any static host, no
// server, no CDN): filters of the regressions table (form.filters: each
// <select data-filter="F"> keeps the rows whose data-F matches) and the
// model grid's sort buttons (data-sort="domain|name|change"). The page's
// hash presets both: regressions.html#state=open, models.html#sort=change.
(function () {
  "use strict";
  function applyFilters(form) {
    var table = document.getElementById(form.getAttribute("data-filters-for"));
    if (!table) return;
    var selects = form.querySelectorAll("select[data-filter]");
    var rows = table.tBodies[0].rows, shown = 0;
    for (var i = 0; i < rows.length; i++) {
      var keep = true;
      for (var j = 0; j < selects.length; j++) {
        var want = selects[j].value;
        if (want && rows[i].getAttribute("data-" + selects[j].getAttribute("data-filter")) !== want) keep = false;
      }
      rows[i].hidden = !keep;
      if (keep) shown++;
    }
    var out = form.querySelector("output");
    if (out) out.textContent = shown + " of " + rows.length + " shown";
  }
  function sortRows(table, key) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    function val(r, k) { return r.getAttribute("data-" + k) || ""; }
    rows.sort(function (a, b) {
      if (key === "change") {
        // Largest change (worst) first; rows without one last.
        var x = val(a, "change"), y = val(b, "change");
        if (x === "" || y === "") return (x === "") - (y === "");
        return parseFloat(y) - parseFloat(x);
      }
      var primary = val(a, key).localeCompare(val(b, key));
      return primary !== 0 ? primary : val(a, "name").localeCompare(val(b, "name"));
    });
    rows.forEach(function (r) { body.appendChild(r); });
    table.setAttribute("data-sorted-by", key);
  }
  // "#state=open&platform=x" or "#sort=change": a filtered or sorted view
  // one can link to.
  function hashParams() {
    var out = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (kv) {
      var i = kv.indexOf("=");
      if (i > 0) out[decodeURIComponent(kv.slice(0, i))] = decodeURIComponent(kv.slice(i + 1));
    });
    return out;
  }
  function init() {
    var wanted = hashParams();
    document.querySelectorAll("form.filters").forEach(function (form) {
      form.querySelectorAll("select[data-filter]").forEach(function (select) {
        var want = wanted[select.getAttribute("data-filter")];
        if (want !== undefined) select.value = want;
      });
      form.addEventListener("change", function () { applyFilters(form); });
      applyFilters(form);
    });
    document.querySelectorAll("[data-sort-for]").forEach(function (bar) {
      var table = document.getElementById(bar.getAttribute("data-sort-for"));
      if (!table) return;
      bar.querySelectorAll("button[data-sort]").forEach(function (button) {
        button.addEventListener("click", function () { sortRows(table, button.getAttribute("data-sort")); });
      });
      if (wanted.sort) sortRows(table, wanted.sort);
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
