// Renders every chart on the page: each <div class="vega-chart"> names the
// <script type="application/json"> that holds its Vega-Lite spec.
(function () {
  "use strict";
  function renderAll() {
    if (typeof vegaEmbed !== "function") {
      document.querySelectorAll("div.vega-chart").forEach(function (el) {
        el.textContent = "Charts need assets/vega-bundle.js (vl-convert-python was not available when this site was built).";
      });
      return;
    }
    document.querySelectorAll("div.vega-chart").forEach(function (el) {
      var source = document.getElementById(el.getAttribute("data-spec"));
      if (!source) return;
      var spec = JSON.parse(source.textContent);
      vegaEmbed(el, spec, { renderer: "svg", actions: { export: true, source: false, compiled: false, editor: false } })
        .catch(function (err) {
          el.textContent = "Chart failed to render: " + err;
          console.error(err);
        });
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", renderAll);
  } else {
    renderAll();
  }
})();
