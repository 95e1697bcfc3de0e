// Renders every chart on the page: each <div class="vega-chart"> names the
// <script type="application/json"> that holds its Vega-Lite spec. A chart
// with data-source gets its data from the site's data files
// (window.TorchGaugeData, filled by <script src> so file:// works): the
// model page (models/<model>.html#build=<id>, reporter/model_page_data.h)
// draws its trend from history/ and its build's detail from
// builds/<id>/data/models.js. Text goes in through textContent only.
(function () {
  "use strict";
  var DATA = (window.TorchGaugeData = window.TorchGaugeData || {});
  var OPTIONS = { renderer: "svg", actions: { export: true, source: true, compiled: false, editor: false } };

  function embed(el, spec) {
    return vegaEmbed(el, spec, OPTIONS).catch(function (err) {
      el.textContent = "Chart failed to render: " + err;
      console.error(err);
    });
  }
  function specOf(id) {
    var source = document.getElementById(id);
    return source ? JSON.parse(source.textContent) : null;
  }
  function node(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }

  // ------------------------------------------------------------ model page

  var RUN_COLUMNS = ["Configuration", "Status", "Median (ms)", "Min (ms)", "Max (ms)", "CoV (%)",
                     "Throughput (samples/s)", "CPU peak (MiB)", "GPU peak (MiB)", "GFLOP/step", "TFLOP/s",
                     "Kernels/step", "% of peak", "TTFT / TPOT (ms)", "Instructions (M/step)",
                     "Est. cycles (M/step)"];
  var MEASUREMENT_COLUMNS = ["Configuration", "Processes", "Samples", "Warm-up", "Threads",
                             "Process medians (ms)", "Noise band (%)"];
  var KERNEL_COLUMNS = ["Configuration", "Kernel", "Total (ms)", "Count"];

  // A table; `cell(tr, value, column)` may fill a cell itself.
  function table(columns, rows, cell) {
    var t = node("table"), head = node("thead"), hr = node("tr"), body = node("tbody");
    columns.forEach(function (c) { hr.appendChild(node("th", c)); });
    head.appendChild(hr);
    rows.forEach(function (row) {
      var tr = node("tr");
      row.forEach(function (v, i) {
        if (!cell || !cell(tr, v, i, row)) tr.appendChild(node("td", v, i > 0 && /^[-\d.,—\s]+$/.test(v) ? "num" : ""));
      });
      body.appendChild(tr);
    });
    t.appendChild(head);
    t.appendChild(body);
    return t;
  }

  function ModelPage(root) {
    this.root = root;
    this.model = root.getAttribute("data-model");
    this.latest = root.getAttribute("data-latest");
    this.window = parseInt(root.getAttribute("data-window"), 10) || 30;
    this.faceted = root.getAttribute("data-faceted") === "1";
    this.builds = DATA["history/builds"] || { ids: [], t: [], pruned: [] };
    this.history = DATA["history/" + this.model] || { series: [] };
    this.views = [];
    this.shown = 0;
  }
  ModelPage.prototype.build = function () {
    var m = /(?:^#|&|#)build=([^&]+)/.exec(window.location.hash);
    return m ? decodeURIComponent(m[1]) : this.latest;
  };
  // The builds (indices, newest first) where the model has results.
  ModelPage.prototype.buildsWithModel = function () {
    var seen = {};
    this.history.series.concat(this.history.counted || []).forEach(function (s) {
      s.b.forEach(function (i) { seen[i] = true; });
    });
    return Object.keys(seen).map(Number).sort(function (a, b) { return b - a; });
  };
  ModelPage.prototype.isPruned = function (k) {
    return (this.builds.pruned || []).indexOf(k) >= 0;
  };
  ModelPage.prototype.show = function () {
    var self = this, build = this.build(), k = this.builds.ids.indexOf(build), token = ++this.shown;
    this.views.forEach(function (v) { v.finalize(); });
    this.views = [];
    this.showPicker(build, k);
    this.showTrend(k, "trend", this.history.series, "ms", "Median step time of ");
    this.showTrend(k, "counted", this.history.counted || [], "cycles", "Estimated cycles per step (millions) of ");
    var detail = document.getElementById("tg-model-detail");
    detail.textContent = "";
    if (k < 0) {
      detail.appendChild(node("p", "Build " + build + " is not on this site."));
      return;
    }
    if (this.isPruned(k)) {
      detail.appendChild(node("p", "Build " + build + " was pruned by the site's retention policy: its detail is " +
                                   "gone, its medians remain in the trend above."));
      return;
    }
    var key = "build/" + build + "/models";
    if (DATA[key]) return this.showDetail(build, DATA[key]);
    detail.appendChild(node("p", "Loading build " + build + "…"));
    var script = document.createElement("script");
    script.src = this.root.getAttribute("data-detail").replace("{build}", encodeURIComponent(build));
    script.onload = function () {
      if (token === self.shown) self.showDetail(build, DATA[key]);
    };
    script.onerror = function () {
      if (token !== self.shown) return;
      detail.textContent = "";
      detail.appendChild(node("p", "The detail of build " + build + " could not be loaded (" + script.src + ")."));
    };
    document.body.appendChild(script);
  };
  ModelPage.prototype.showPicker = function (build, k) {
    var self = this, p = this.root.querySelector(".tg-model-build");
    p.textContent = "";
    p.appendChild(document.createTextNode("Build: "));
    var select = node("select");
    select.setAttribute("aria-label", "Build");
    this.buildsWithModel().forEach(function (i) {
      var o = node("option", self.builds.ids[i] + (self.isPruned(i) ? " (pruned)" : ""));
      o.value = self.builds.ids[i];
      if (i === k) o.selected = true;
      select.appendChild(o);
    });
    select.addEventListener("change", function () { window.location.hash = "build=" + encodeURIComponent(select.value); });
    p.appendChild(select);
    if (k >= 0 && !this.isPruned(k)) {
      p.appendChild(document.createTextNode(" · "));
      var a = node("a", "build page");
      a.href = this.root.getAttribute("data-build-page").replace("{build}", encodeURIComponent(build));
      p.appendChild(a);
    }
  };
  // The trend of the last `window` builds up to build k: never a later one,
  // so a build's link shows what it showed when the build was published.
  // `series`: the history's timed series (values in s.ms) or counted ones
  // (values in s.cycles, millions of estimated cycles); the chart's spec
  // reads every value as "ms".
  ModelPage.prototype.trendRows = function (k, series, key) {
    var self = this, lo = Math.max(0, k - this.window + 1), rows = [], shown = {};
    series.forEach(function (s) {
      var noisy = {}, row = { build: [], t: [], ms: [], noisy: [] };
      (s.noisy || []).forEach(function (j) { noisy[j] = true; });
      s.b.forEach(function (i, j) {
        if (i < lo || i > k) return;
        row.build.push(self.builds.ids[i]);
        row.t.push(self.builds.t[i]);
        row.ms.push(s[key][j]);
        row.noisy.push(!!noisy[j]);
        shown[i] = true;
      });
      if (!row.build.length) return;
      row.series = self.faceted || !s.facet ? s.label : s.facet + " " + s.label;
      if (self.faceted) row.facet = s.facet;
      rows.push(row);
    });
    var ids = Object.keys(shown).map(Number).sort(function (a, b) { return a - b; });
    return { rows: rows, builds: ids.map(function (i) { return self.builds.ids[i]; }) };
  };
  ModelPage.prototype.showTrend = function (k, source, series, key, what) {
    var el = document.querySelector("div.vega-chart[data-source=" + source + "]");
    if (!el) return;
    var caption = el.parentNode.querySelector("figcaption");
    var trend = k >= 0 ? this.trendRows(k, series, key) : { rows: [], builds: [] };
    el.setAttribute("data-builds", trend.builds.join(" "));
    if (!trend.rows.length) {
      el.textContent = key === "ms" ? "No medians up to this build." : "No counted runs up to this build.";
      if (caption) caption.textContent = "";
      return;
    }
    if (caption) {
      caption.textContent = what + this.model + " in builds " + trend.builds[0] + " to " +
          trend.builds[trend.builds.length - 1] + " (" + trend.builds.length + " builds; at most the last " +
          this.window + " up to this page's build)";
    }
    var spec = specOf(el.getAttribute("data-spec")), self = this;
    spec.data.values = trend.rows;
    el.textContent = "";
    embed(el, spec).then(function (r) { if (r && r.view) self.views.push(r.view); });
  };
  ModelPage.prototype.showDetail = function (build, data) {
    var self = this, detail = document.getElementById("tg-model-detail"), m = data && data.models[this.model];
    detail.textContent = "";
    var identity = this.root.querySelector(".tg-model-identity");
    if (!m) {
      identity.textContent = "";
      detail.appendChild(node("p", this.model + " has no results in build " + build + "."));
      return;
    }
    identity.textContent = m.paper_name + " · domain " + m.domain + " · task " + m.task + " · reference " + m.reference;
    m.platforms.forEach(function (p) {
      detail.appendChild(node("h2", "Platform " + p.id + " (" + p.device + ") · build " + build));
      detail.appendChild(table(RUN_COLUMNS, p.runs.map(function (r) { return [r[0], r[1]].concat(r.slice(3)); })));
      self.markNoisy(detail.lastChild, p.runs);
      if (p.samples.length) self.showSamples(detail, p);
      if (p.measurement) {
        detail.appendChild(node("h3", "Measurement"));
        detail.appendChild(node("p", "Each run's samples are pooled from its worker processes. The noise band is the " +
            "spread of the processes' medians, scaled to five processes, as torchgauge-report compare reads it: " +
            "a change inside it is reported as noise."));
        detail.appendChild(table(MEASUREMENT_COLUMNS, p.measurement));
      }
      if (p.kernels) {
        detail.appendChild(node("h3", "Top kernels"));
        detail.appendChild(table(KERNEL_COLUMNS, p.kernels));
      }
    });
  };
  // A noisy run's status cell gets the site's badge, with the reason as its title.
  ModelPage.prototype.markNoisy = function (t, runs) {
    var trs = t.querySelectorAll("tbody tr");
    runs.forEach(function (r, i) {
      if (!r[2] || !trs[i]) return;
      var td = trs[i].children[1];
      td.appendChild(document.createTextNode(" "));
      var badge = node("span", "noisy", "noisy");
      badge.title = r[2];
      td.appendChild(badge);
    });
  };
  ModelPage.prototype.showSamples = function (detail, p) {
    var spec = specOf("spec-samples"), self = this, values = [];
    if (!spec) return;
    p.samples.forEach(function (s) { s.ms.forEach(function (v) { values.push({ config: s.config, ms: v }); }); });
    spec.title = { text: this.model + ": step time samples, " + p.id, anchor: "start" };
    spec.data = { values: values };
    var fig = node("figure", null, "chart"), el = node("div", null, "vega-chart");
    el.setAttribute("role", "img");
    el.setAttribute("aria-label", "Step time samples of " + this.model + " on " + p.id);
    fig.appendChild(el);
    fig.appendChild(node("figcaption", "Step time samples of " + this.model + " on " + p.id));
    detail.appendChild(fig);
    embed(el, spec).then(function (r) { if (r && r.view) self.views.push(r.view); });
  };

  // ------------------------------------------------------------ build page

  // A build page's runs table per platform (<div class="tg-runs">), from the
  // build's models.js: [config, status, noise reason, median, min, max, CoV,
  // throughput, CPU MiB, GPU MiB, GFLOP/step, TFLOP/s, kernels, % of peak,
  // TTFT / TPOT (ms) of a generative run, "" for the others, instructions
  // and estimated cycles (M/step) of a counted run].
  var BUILD_RUN_COLUMNS = ["Model", "Domain", "Configuration", "Median (ms)", "Throughput (samples/s)", "CoV (%)",
                           "CPU peak (MiB)", "GPU peak (MiB)", "TFLOP/s", "% of peak", "TTFT / TPOT (ms)",
                           "Est. cycles (M/step)", "Status"];
  var STATUS_COLUMN = BUILD_RUN_COLUMNS.indexOf("Status");
  function buildRuns(div) {
    var data = DATA[div.getAttribute("data-models-key")], platform = div.getAttribute("data-platform");
    if (!data) return;
    var rows = [], links = [], noisy = [];
    Object.keys(data.models).forEach(function (model) {
      var m = data.models[model];
      m.platforms.forEach(function (p) {
        if (p.id !== platform) return;
        p.runs.forEach(function (r) {
          rows.push([model, m.domain, r[0], r[3], r[7], r[6], r[8], r[9], r[11], r[13], r[14] || "", r[16] || "",
                     r[1]]);
          links.push(div.getAttribute("data-model-page").replace("{model}", encodeURIComponent(model)));
          noisy.push(r[2]);
        });
      });
    });
    var t = table(BUILD_RUN_COLUMNS, rows);
    var trs = t.querySelectorAll("tbody tr");
    rows.forEach(function (row, i) {
      var cell = trs[i].children[0], a = node("a", row[0]);
      a.href = links[i];
      cell.textContent = "";
      cell.appendChild(a);
      if (!noisy[i]) return;
      var status = trs[i].children[STATUS_COLUMN], badge = node("span", "noisy", "noisy");
      badge.title = noisy[i];
      status.appendChild(document.createTextNode(" "));
      status.appendChild(badge);
    });
    div.textContent = "";
    div.appendChild(t);
  }

  function renderAll() {
    document.querySelectorAll("div.tg-runs").forEach(buildRuns);
    if (typeof vegaEmbed !== "function") {
      document.querySelectorAll("div.vega-chart").forEach(function (el) {
        el.textContent = "Charts need assets/vega-bundle.js (vl-convert-python was not available when this site was built).";
      });
    } else {
      document.querySelectorAll("div.vega-chart").forEach(function (el) {
        if (el.hasAttribute("data-source")) return;  // drawn by its page below
        var spec = specOf(el.getAttribute("data-spec"));
        if (spec) embed(el, spec);
      });
    }
    var root = document.getElementById("tg-model");
    if (root && typeof vegaEmbed === "function") {
      var page = new ModelPage(root);
      window.addEventListener("hashchange", function () { page.show(); });
      page.show();
    }
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", renderAll);
  } else {
    renderAll();
  }
})();
