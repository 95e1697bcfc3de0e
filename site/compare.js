// compare.html: any two builds of the site, compared in the browser, with no
// server (compare.html#base=<a>&new=<b>[&platform=<p>]). The data are the
// builds' builds/<id>/data/compare.js files (reporter/compare_page_data.h).
//
// This file is a port of two C++ units, kept in step by the browser test,
// which compares this page's result and Markdown with CompareBuilds and
// RenderCompareMarkdown on the same pair (every change, every line):
//  - the rules: core/compare.cc's CompareRunSets with a baseline of one
//    build (window 1, persistence 1), core/mann_whitney.cc's test and
//    core/stats.cc's quantile;
//  - the report: reporter/compare_report.cc's document (its sections, rows
//    and wording), its Markdown, and format.cc's number formats.
// A change to either side must change the other.
(function () {
  "use strict";
  var DATA = (window.TorchGaugeData = window.TorchGaugeData || {});
  var METRICS = ["time", "throughput", "cpu_memory", "gpu_memory", "ttft", "tpot", "tokens_per_s"];
  var UNITS = { time: "ms", throughput: "samples/s", cpu_memory: "bytes", gpu_memory: "bytes", ttft: "ms", tpot: "ms",
                tokens_per_s: "tokens/s" };
  var MAX_MARKDOWN_BYTES = 65536 - 536;  // ReportOptions::max_markdown_chars

  // ------------------------------------------------------------ statistics

  function ascending(a, b) { return a - b; }
  // core::Quantile: linear interpolation between order statistics.
  function quantile(values, q) {
    var v = values.slice().sort(ascending);
    var pos = q * (v.length - 1), lo = Math.floor(pos), hi = Math.ceil(pos);
    return v[lo] + (v[hi] - v[lo]) * (pos - lo);
  }
  function median(v) { return quantile(v, 0.5); }
  function geomean(v) {
    var s = 0;
    v.forEach(function (x) { s += Math.log(x); });
    return Math.exp(s / v.length);
  }

  // erfc to about 1e-13 relative: the series of erf below 2, the continued
  // fraction above (the C++ side calls std::erfc).
  function erfc(x) {
    if (x < 0) return 2 - erfc(-x);
    if (x < 2) {
      var term = x, sum = x, n = 0;
      while (Math.abs(term) > 1e-17 * Math.abs(sum)) {
        n++;
        term *= -x * x / n;
        sum += term / (2 * n + 1);
      }
      return 1 - 2 / Math.sqrt(Math.PI) * sum;
    }
    var t = x;
    for (var k = 300; k >= 1; k--) t = x + (k / 2) / t;
    return Math.exp(-x * x) / Math.sqrt(Math.PI) / t;
  }

  var U_CACHE = {};
  // The exact null distribution of U for sample sizes n1, n2 (no ties).
  function uDistribution(n1, n2) {
    var key = n1 + "," + n2;
    if (U_CACHE[key]) return U_CACHE[key];
    var umax = n1 * n2, c = [], k, u, j;
    for (k = 0; k <= n1; k++) { c.push(new Float64Array(umax + 1)); }
    c[0][0] = 1;
    for (j = 0; j < n1 + n2; j++) {
      for (k = Math.min(j + 1, n1); k >= 1; k--) {
        var below2 = j - (k - 1);
        if (below2 > n2) continue;
        for (u = umax; u >= below2; u--) c[k][u] += c[k - 1][u - below2];
      }
    }
    var dist = Array.prototype.slice.call(c[n1]), total = 0;
    dist.forEach(function (d) { total += d; });
    dist = dist.map(function (d) { return d / total; });
    U_CACHE[key] = dist;
    return dist;
  }
  // core::MannWhitneyU: two-sided; exact without ties up to 100 samples,
  // else the normal approximation with the tie correction and 0.5 continuity.
  function mannWhitney(a, b) {
    var r = { p_value: 1, exact: false };
    if (!a.length || !b.length) return r;
    var pooled = a.concat(b), n = pooled.length, order = [], ranks = new Array(n), tie = 0, i, j, k;
    for (i = 0; i < n; i++) order.push(i);
    order.sort(function (x, y) { return pooled[x] - pooled[y]; });
    for (i = 0; i < n;) {
      j = i;
      while (j + 1 < n && pooled[order[j + 1]] === pooled[order[i]]) j++;
      var mid = (i + j) / 2 + 1;
      for (k = i; k <= j; k++) ranks[order[k]] = mid;
      var t = j - i + 1;
      tie += t * t * t - t;
      i = j + 1;
    }
    var n1 = a.length, n2 = b.length, r1 = 0;
    for (i = 0; i < n1; i++) r1 += ranks[i];
    var u1 = r1 - n1 * (n1 + 1) / 2, mn = n1 * n2;
    if (tie === 0 && n <= 100) {
      r.exact = true;
      var dist = uDistribution(n1, n2), small = Math.min(u1, mn - u1), cdf = 0;
      for (k = 0; k < dist.length && k <= small + 1e-9; k++) cdf += dist[k];
      r.p_value = Math.min(1, 2 * cdf);
      return r;
    }
    var variance = mn / 12 * ((n + 1) - tie / (n * (n - 1)));
    if (!(variance > 0)) return r;
    var z = Math.max(0, Math.abs(u1 - mn / 2) - 0.5) / Math.sqrt(variance);
    r.p_value = Math.min(1, erfc(z / Math.sqrt(2)));
    return r;
  }
  // core::MinAchievablePValue: 2 / C(n1 + n2, n1), capped at 1.
  function minAchievableP(n1, n2) {
    if (!n1 || !n2) return 1;
    var logc = 0;
    for (var i = 1; i <= n2; i++) logc += Math.log((n1 + i) / i);
    return Math.min(1, 2 * Math.exp(-logc));
  }
  // d2(n), and the log-band of medians that should agree (core/compare.cc).
  var D2 = [1.128, 1.693, 2.059, 2.326, 2.534, 2.704, 2.847, 2.970, 3.078, 3.173, 3.258, 3.336,
            3.407, 3.472, 3.532, 3.588, 3.640, 3.689, 3.735, 3.778, 3.819, 3.858, 3.895, 3.931];
  function expectedRange(n) { return D2[Math.min(Math.max(n, 2), 25) - 2]; }
  function logBand(v) {
    if (!v || v.length < 2) return null;
    var lo = Math.min.apply(null, v), hi = Math.max.apply(null, v);
    if (!(lo > 0)) return null;
    return Math.log(hi / lo) * expectedRange(5) / expectedRange(v.length);
  }
  function bandPercent(b) { return Math.expm1(b) * 100; }

  // ------------------------------------------------------------ the rules

  // A run row of compare.js (BuildCompareData's RuleInputs) as an object.
  function Run(row) {
    return { model: row[0], mode: row[1], backend: row[2], precision: row[3], status: row[4], reason: row[5],
             batch: row[6], device: row[7], samples: row[8], medians: row[9], perStep: row[10], cpu: row[11],
             gpu: row[12], noise: row[13], settings: row[14], generation: row[15] || null };
  }
  function keyOf(r) { return [r.model, r.mode, r.backend, r.precision]; }
  function keyString(r) { return keyOf(r).join("\u0000"); }
  // Runs by key, in RunKey order (model, mode, backend, precision); a
  // later duplicate replaces an earlier one, as in core::MakeRunSet.
  function runSet(build, platform) {
    var byKey = {};
    platform.runs.forEach(function (row) { var r = Run(row); byKey[keyString(r)] = r; });
    // "\u0000" sorts below every character of an id, so the joined keys
    // sort as the tuples do (std::map<RunKey> order).
    var keys = Object.keys(byKey).sort();
    return { build: build, env: platform.env, keys: keys, runs: byKey };
  }
  function isGeneration(m) { return m === "ttft" || m === "tpot" || m === "tokens_per_s"; }
  // core::MetricSamples (the generation's values come computed by it).
  function metricSamples(r, m) {
    if (isGeneration(m)) return r.generation ? r.generation[m] : [];
    if (m === "time") return r.samples || [];
    if (m === "throughput") {
      if (!r.samples || r.perStep === null || r.perStep === undefined) return [];
      var out = [];
      r.samples.forEach(function (ms) { if (ms > 0) out.push(1000 * r.perStep / ms); });
      return out;
    }
    var v = m === "cpu_memory" ? r.cpu : r.gpu;
    return v === null || v === undefined ? [] : [v];
  }
  function processMedians(r, m) {  // core::MetricProcessMedians
    if (isGeneration(m)) return r.generation ? r.generation.medians[m] : [];
    return hasNoiseBand(m) && r.medians ? r.medians : [];
  }
  // core::ProcessUnits: one value per worker process, where the run has
  // per-process medians; empty otherwise (the test then reads the samples).
  function processUnits(r, m) {
    var medians = processMedians(r, m);
    if (medians.length < 2) return [];
    if (m !== "throughput") return medians;
    if (r.perStep === null || r.perStep === undefined) return [];
    var out = [];
    r.medians.forEach(function (ms) { if (ms > 0) out.push(1000 * r.perStep / ms); });
    return out.length < 2 ? [] : out;
  }
  function statusRank(s) { return s === "ok" ? 0 : s === "unsupported" ? 1 : 2; }
  function lowerIsBetter(m) { return m !== "throughput" && m !== "tokens_per_s"; }
  function hasNoiseBand(m) { return m !== "cpu_memory" && m !== "gpu_memory"; }
  function thresholdFor(options, metric, model) {
    var t = options.threshold_percent;
    options.rules.forEach(function (rule) {
      if ((rule.metric === "*" || rule.metric === metric) && new RegExp(rule.model_regex).test(model)) t = rule.percent;
    });
    return t;
  }

  // core::CompareRunSets with a window of one build; persistence 1, so
  // every regression is confirmed.
  function comparePlatform(id, base, next, options) {
    var pc = { platform_id: id, base_builds: [base.build], new_build: next.build, streak: [next.build],
               base_env: base.env, new_env: next.env, changes: [], status_changes: [], presence: [], summary: [] };
    base.keys.forEach(function (k) {
      if (!next.runs[k]) pc.presence.push({ run: base.runs[k], change: "disappeared", status: base.runs[k].status });
    });
    next.keys.forEach(function (k) {
      var r = next.runs[k], b = base.runs[k];
      if (!b) {
        pc.presence.push({ run: r, change: "appeared", status: r.status });
        return;
      }
      if (b.status !== r.status) {
        pc.status_changes.push({ run: r, base_status: b.status, new_status: r.status, reason: r.reason,
                                 worse: statusRank(r.status) > statusRank(b.status) });
      }
    });
    var ratios = {}, ratioKeys = [];
    next.keys.forEach(function (k) {
      var r = next.runs[k];
      if (r.status !== "ok") return;
      var noisy = [];
      if (r.noise) noisy.push("new build " + next.build + ": " + r.noise);
      var b = base.runs[k];
      if (b && b.status === "ok" && b.noise) noisy.push("base build " + base.build + ": " + b.noise);
      METRICS.forEach(function (m) {
        var fresh = metricSamples(r, m);
        if (!fresh.length || !b || b.status !== "ok") return;
        var pooled = metricSamples(b, m);
        if (!pooled.length) return;
        var band = null;
        function widen(v) {
          var s = logBand(v);
          if (s !== null) band = Math.max(band === null ? 0 : band, s);
        }
        // The per-process medians of both runs; the spread of the window's
        // per-build medians (C++'s per_build) needs two builds, and this
        // window has one.
        widen(processMedians(r, m));
        widen(processMedians(b, m));
        var c = { run: r, metric: m, base: median(pooled), "new": median(fresh), n_base: pooled.length,
                  n_new: fresh.length, threshold_percent: thresholdFor(options, m, r.model), p_value: null,
                  noise_percent: null, noisy: null, exact_test: false, test_unit: null, confirmed: true, seen_in: 1 };
        if (!(c.base > 0)) return;
        c.ratio = c["new"] / c.base;
        c.delta_percent = (c.ratio - 1) * 100;
        var worse = lowerIsBetter(m) ? c.ratio > 1 : c.ratio < 1;
        var over = Math.abs(c.delta_percent) >= c.threshold_percent;
        if (m === "time" && c["new"] > 0) {
          var rk = [r.mode, r.backend, r.precision].join("\u0000");
          if (!ratios[rk]) { ratios[rk] = []; ratioKeys.push(rk); }
          ratios[rk].push(c.ratio);
        }
        if (m === "cpu_memory" || m === "gpu_memory") {
          var big = Math.abs(c["new"] - c.base) >= options.memory_min_abs_bytes;
          c.verdict = over && big ? (worse ? "regression" : "improvement") : "unchanged";
        } else {
          var baseUnits = processUnits(b, m), newUnits = processUnits(r, m);
          var byProcess = baseUnits.length > 0 && newUnits.length > 0;
          var t = byProcess ? mannWhitney(baseUnits, newUnits) : mannWhitney(pooled, fresh);
          c.test_unit = byProcess ? "process_medians" : "samples";
          if (byProcess) { c.n_base = baseUnits.length; c.n_new = newUnits.length; }
          c.p_value = t.p_value;
          c.exact_test = t.exact;
          if (band !== null) c.noise_percent = bandPercent(band);
          var beyond = band === null || Math.abs(Math.log(c.ratio)) > band;
          if (noisy.length) c.noisy = noisy.join("; ");
          if (!over) c.verdict = "unchanged";
          else if (c.noisy) c.verdict = "noisy_run";
          else if (minAchievableP(c.n_base, c.n_new) >= options.alpha) c.verdict = "too_few_samples";
          else if (t.p_value < options.alpha && beyond) c.verdict = worse ? "regression" : "improvement";
          else c.verdict = "noise";
        }
        pc.changes.push(c);
      });
    });
    ratioKeys.sort().forEach(function (rk) {
      var parts = rk.split("\u0000");
      pc.summary.push({ mode: parts[0], backend: parts[1], precision: parts[2], runs: ratios[rk].length,
                        geomean_time_ratio: geomean(ratios[rk]) });
    });
    return pc;
  }

  // The result in core::ToJson's field names, for readers and the test.
  function resultJson(cmp) {
    function key(r) { return { model: r.model, mode: r.mode, backend: r.backend, precision: r.precision }; }
    function withKey(r, extra) { var o = key(r); for (var f in extra) o[f] = extra[f]; return o; }
    return {
      base: cmp.base_label, "new": cmp.new_build, options: cmp.options,
      platforms: cmp.platforms.map(function (p) {
        return {
          platform_id: p.platform_id, base_builds: p.base_builds, new_build: p.new_build,
          changes: p.changes.map(function (c) {
            return withKey(c.run, { metric: c.metric, unit: UNITS[c.metric], base: c.base, "new": c["new"],
                                    ratio: c.ratio, delta_percent: c.delta_percent, threshold_percent: c.threshold_percent,
                                    p_value: c.p_value, noise_percent: c.noise_percent, exact_test: c.exact_test,
                                    test_unit: c.test_unit, n_base: c.n_base, n_new: c.n_new, verdict: c.verdict, noisy: c.noisy,
                                    confirmed: c.confirmed, seen_in: c.seen_in });
          }),
          status_changes: p.status_changes.map(function (s) {
            return withKey(s.run, { base_status: s.base_status, new_status: s.new_status, reason: s.reason, worse: s.worse });
          }),
          presence: p.presence.map(function (s) { return withKey(s.run, { change: s.change, status: s.status }); }),
          summary: p.summary
        };
      })
    };
  }

  // ------------------------------------------------------------ formats (reporter/format.cc)

  // printf's "%.<d>f", sign and all: JavaScript rounds an exact tie away
  // from zero, C to even.
  function fixed(v, d) {
    var a = Math.abs(v), p = Math.pow(10, d), scaled = a * p, floor = Math.floor(scaled);
    var s = scaled - floor === 0.5 && floor % 2 === 0 ? (floor / p).toFixed(d) : a.toFixed(d);
    return v < 0 || Object.is(v, -0) ? "-" + s : s;
  }
  function expo(v, d) {  // "%.<d>e": two exponent digits at least
    return v.toExponential(d).replace(/e([+-])(\d)$/, "e$10$2");
  }
  function general(v) {  // "%g"
    if (v === 0) return "0";
    var x = parseInt(v.toExponential(5).split("e")[1], 10), s;
    if (x < -4 || x >= 6) {
      s = v.toExponential(5);
      var parts = s.split("e");
      s = parts[0].replace(/\.?0+$/, "") + "e" + parts[1];
      return s.replace(/e([+-])(\d)$/, "e$10$2");
    }
    s = fixed(v, 5 - x);
    return s.indexOf(".") >= 0 ? s.replace(/\.?0+$/, "") : s;
  }
  function ms(v) {
    var a = Math.abs(v);
    return fixed(v, a >= 1000 ? 0 : a >= 100 ? 1 : a >= 10 ? 2 : 3);
  }
  function metricValue(m, v) {
    if (m === "time" || m === "ttft" || m === "tpot") return ms(v) + " ms";
    if (m === "throughput") return fixed(v, 1) + "/s";
    if (m === "tokens_per_s") return fixed(v, 1) + " tokens/s";
    return fixed(v / (1024 * 1024), 1) + " MiB";
  }
  function deltaPercent(d) {
    var s = fixed(d, 1);
    return (s.charAt(0) === "-" ? s : "+" + s) + "%";
  }
  function pValue(p) {
    if (p === null) return "n/a";
    return p < 1e-4 ? expo(p, 1) : fixed(p, 4);
  }
  function oneLine(s, max) {
    s = String(s).replace(/[\n\r\t]/g, " ");
    max = max || 160;
    return s.length > max ? s.slice(0, max) + "..." : s;
  }

  // ------------------------------------------------------------ the report (reporter/compare_report.cc)

  function magnitude(c) { return c.ratio > 0 ? Math.abs(Math.log(c.ratio)) : 0; }
  function select(p, verdict) {
    return p.changes.filter(function (c) { return c.verdict === verdict; })
      .sort(function (a, b) { return magnitude(b) - magnitude(a); });
  }
  // A cell: text, and `model` (a link to the model page of the new build) or `code`.
  function cell(text, extra) {
    var c = { text: text };
    for (var f in extra || {}) c[f] = extra[f];
    return c;
  }
  var CHANGE_HEADER = ["model", "mode", "backend", "precision", "metric", "base → new", "delta", "p-value", "n base/new"];
  function changeRow(c) {
    return [cell(c.run.model, { model: c.run.model }), cell(c.run.mode), cell(c.run.backend), cell(c.run.precision),
            cell(c.metric), cell(metricValue(c.metric, c.base) + " → " + metricValue(c.metric, c["new"])),
            cell(deltaPercent(c.delta_percent)), cell(pValue(c.p_value)),
            cell(c.p_value !== null ? c.n_base + "/" + c.n_new + " " + (c.test_unit === "process_medians" ? "processes" : "samples") : "1/1")];
  }
  function rulesText(o) {
    var s = "Rules: a change counts when the median moved by at least the threshold (" + general(o.threshold_percent) +
            "% by default";
    o.rules.forEach(function (r) { s += "; " + r.metric + " of /" + r.model_regex + "/: " + general(r.percent) + "%"; });
    return s + ") and a two-sided Mann-Whitney U test gives p < " + general(o.alpha) +
           ", on the worker processes' medians where both runs were measured in several processes (the steps of " +
           "one process are not independent), else on the step samples. Memory has one value per run: threshold and at least " + general(o.memory_min_abs_bytes / 1048576) +
           " MiB, no test. Where runs were measured in several worker processes (or the baseline is a window of " +
           "builds), a time change must also exceed the spread between those processes' (or builds') medians.";
  }
  function reproduceCommand(r) {
    var kind = r.device.indexOf("cuda") === 0 ? "cuda" : r.device, s = r.settings;
    var cmd = "torchgauge-collect run";
    if (s && s[0]) cmd += " --suite smoke";
    cmd += " --model '^" + r.model + "$' --mode " + r.mode + " --precision " + r.precision + " --batch-size " +
           r.batch + " --device " + kind;
    if (r.backend !== "eager") cmd += " --backend " + r.backend;
    if (s) {
      cmd += " --warmup " + s[1] + " --repeat " + s[2];
      if (s[3] > 1) cmd += " --processes " + s[3];
      if (s[4] > 0) cmd += " --threads " + s[4];
    }
    return cmd;
  }
  function countVerdict(cmp, v) {
    var n = 0;
    cmp.platforms.forEach(function (p) { p.changes.forEach(function (c) { n += c.verdict === v ? 1 : 0; }); });
    return n;
  }
  // Runs (a platform and a run key) with a change of verdict v: one slowed
  // run is one regression, however many of its metrics moved (CountRuns).
  function countRuns(cmp, v) {
    var n = 0;
    cmp.platforms.forEach(function (p) { n += distinctRuns(p.changes.filter(function (c) { return c.verdict === v; })); });
    return n;
  }
  function distinctRuns(list) {
    var seen = {};
    list.forEach(function (c) { seen[JSON.stringify(keyOf(c.run))] = true; });
    return Object.keys(seen).length;
  }
  function runsAndMetrics(runs, metrics) {
    return runs + (runs === 1 ? " run" : " runs") + " (" + metrics + (metrics === 1 ? " metric)" : " metrics)");
  }
  function worseCount(cmp) {
    var n = 0;
    cmp.platforms.forEach(function (p) { p.status_changes.forEach(function (s) { n += s.worse ? 1 : 0; }); });
    return n;
  }
  // Comparison::ComparedRuns / NoisyRuns / Inconclusive: runs with a time
  // comparison, those of them noisy on either side, and whether more than
  // max_noisy_percent of them were noisy while nothing regressed.
  function comparedRuns(cmp, noisyOnly) {
    var n = 0;
    cmp.platforms.forEach(function (p) {
      p.changes.forEach(function (c) { n += c.metric === "time" && (!noisyOnly || !!c.noisy) ? 1 : 0; });
    });
    return n;
  }
  function inconclusive(cmp) {
    var compared = comparedRuns(cmp, false);
    return !countVerdict(cmp, "regression") && !worseCount(cmp) && compared > 0 &&
           100 * comparedRuns(cmp, true) > cmp.options.max_noisy_percent * compared;
  }
  // Comparison::UntestableRuns / TooFewSamplesRuns / CannotTell: runs whose
  // time was compared but no metric the test read (p_value set) can reach
  // alpha with its counts; runs with a change filed too_few_samples; and
  // whether, with nothing regressed, either means the test could not have
  // found a regression.
  function untestableRuns(cmp) {
    var n = 0;
    cmp.platforms.forEach(function (p) {
      var testable = {};
      p.changes.forEach(function (c) { if (c.metric === "time") testable[JSON.stringify(keyOf(c.run))] = false; });
      p.changes.forEach(function (c) {
        var k = JSON.stringify(keyOf(c.run));
        if (k in testable && c.p_value !== null && minAchievableP(c.n_base, c.n_new) < cmp.options.alpha) {
          testable[k] = true;
        }
      });
      Object.keys(testable).forEach(function (k) { n += testable[k] ? 0 : 1; });
    });
    return n;
  }
  function cannotTell(cmp) {
    var compared = comparedRuns(cmp, false);
    return !countVerdict(cmp, "regression") && !worseCount(cmp) &&
           (countRuns(cmp, "too_few_samples") > 0 || (compared > 0 && untestableRuns(cmp) === compared));
  }
  function title(cmp) {
    var reg = countRuns(cmp, "regression"), worse = worseCount(cmp), what;
    if (inconclusive(cmp)) {
      what = "Inconclusive: " + comparedRuns(cmp, true) + " of " + comparedRuns(cmp, false) + " runs noisy";
    } else if (cannotTell(cmp)) {
      what = "Cannot tell: " + untestableRuns(cmp) + " of " + comparedRuns(cmp, false) + " runs have too few samples to test";
    } else if (!reg && !worse) {
      what = "No regressions";
    } else {
      what = reg + " regression" + (reg === 1 ? "" : "s");
      if (worse) what += ", " + worse + " broken run" + (worse === 1 ? "" : "s");
    }
    return oneLine("[TorchGauge] " + what + " in " + cmp.new_build + " vs " + cmp.base_label + " (" +
                   cmp.platforms.map(function (p) { return p.platform_id; }).join(", ") + ")", 250);
  }

  function platformSections(cmp, p, config) {
    var out = [];
    function section(level, t) { var s = { level: level, title: t, paragraphs: [], header: [], rows: [], code: [] }; out.push(s); return s; }
    section(2, "Platform " + p.platform_id).paragraphs.push("Builds compared for persistence: " + p.streak.join(", "));
    var env = section(3, "Builds and environments");
    env.header = ["", "baseline", "new"];
    env.rows.push([cell("build"), cell(p.base_builds[0], { code: true }), cell(p.new_build, { code: true })]);
    config.environment.forEach(function (name, i) {
      env.rows.push([cell(name), cell(p.base_env[i] || "-"), cell(p.new_env[i] || "-")]);
    });
    function changes(t, list, empty) {
      var runs = distinctRuns(list);
      var s = section(3, t + " (" + runs + (runs === 1 ? " run, " : " runs, ") + list.length +
                         (list.length === 1 ? " metric)" : " metrics)"));
      if (!list.length) s.paragraphs.push(empty);
      else { s.header = CHANGE_HEADER; s.rows = list.map(changeRow); }
    }
    changes("Regressions", select(p, "regression"), "None.");
    changes("Improvements", select(p, "improvement"), "None.");
    var st = section(3, "Status changes (" + p.status_changes.length + ")");
    if (!p.status_changes.length) {
      st.paragraphs.push("None.");
    } else {
      st.header = ["model", "mode", "backend", "precision", "base", "new", "reason"];
      st.rows = p.status_changes.map(function (s) {
        return [cell(s.run.model, { model: s.run.model }), cell(s.run.mode), cell(s.run.backend), cell(s.run.precision),
                cell(s.base_status), cell(s.new_status + (s.worse ? " (worse)" : "")),
                cell(s.reason !== null && s.reason !== undefined ? oneLine(s.reason) : "-")];
      });
    }
    if (p.presence.length) {
      var pr = section(3, "Runs that appeared or disappeared (" + p.presence.length + ")");
      pr.header = ["model", "mode", "backend", "precision", "change", "status"];
      pr.rows = p.presence.map(function (s) {
        return [cell(s.run.model), cell(s.run.mode), cell(s.run.backend), cell(s.run.precision), cell(s.change), cell(s.status)];
      });
    }
    var noise = select(p, "noise"), few = select(p, "too_few_samples"), noisy = select(p, "noisy_run");
    if (noise.length || few.length || noisy.length) {
      var nc = section(3, "Over the threshold but not counted (" + (noise.length + few.length + noisy.length) + ")");
      nc.paragraphs.push("Too few samples to tell: the test cannot reach p < alpha with these counts (3 processes against 3 never can). " +
                         "Not significant: the processes' medians (or the samples) overlap too much to call it a change. " +
                         "Within noise: the change is no larger than the spread between the worker processes' (or the " +
                         "window's builds') medians of the same run.");
      if (noisy.length) {
        nc.paragraphs.push("Noisy run: a compared run's timing spread or the machine's other load passed its " +
                           "threshold while it was measured, so the change is not trusted.");
      }
      nc.header = CHANGE_HEADER.concat(["why"]);
      [few, noisy, noise].forEach(function (list) {
        list.forEach(function (c) {
          var why = "not significant";
          if (c.verdict === "too_few_samples") why = "too few samples to tell";
          else if (c.verdict === "noisy_run") why = "noisy run (" + oneLine(c.noisy || "") + ")";
          else if (c.noise_percent !== null && c.p_value !== null && c.p_value < cmp.options.alpha) {
            why = "within noise (spread " + fixed(c.noise_percent, 0) + "%)";
          }
          nc.rows.push(changeRow(c).concat([cell(why)]));
        });
      });
    }
    var sum = section(3, "Suite summary");
    sum.paragraphs.push("Geometric mean of new/base median time over the runs measured in both builds " +
                        "(below 1 is faster).");
    sum.header = ["platform", "mode", "backend", "precision", "runs", "geomean time ratio"];
    sum.rows = p.summary.map(function (s) {
      return [cell(p.platform_id), cell(s.mode), cell(s.backend), cell(s.precision), cell(String(s.runs)),
              cell(fixed(s.geomean_time_ratio, 3))];
    });
    if (!p.summary.length) sum.paragraphs.push("No run was measured in both builds.");
    var seen = {}, code = [];
    p.changes.forEach(function (c) {
      if (c.verdict !== "regression") return;
      var cmd = reproduceCommand(c.run);
      if (!seen[cmd]) { seen[cmd] = true; code.push(cmd); }
    });
    p.status_changes.forEach(function (s) {
      if (!s.worse) return;
      var cmd = reproduceCommand(s.run);
      if (!seen[cmd]) { seen[cmd] = true; code.push(cmd); }
    });
    if (code.length) {
      var rep = section(3, "Reproduce");
      rep.code = code;
      rep.paragraphs.push("Measure each regressed run again on this platform with the new build installed:");
    }
    return out;
  }

  function documentOf(cmp, config) {
    var d = {
      title: title(cmp),
      intro: ["New build " + cmp.new_build + " against baseline " + cmp.base_label + ": " +
              runsAndMetrics(countRuns(cmp, "regression"), countVerdict(cmp, "regression")) + " regressed, " +
              runsAndMetrics(countRuns(cmp, "improvement"), countVerdict(cmp, "improvement")) + " improved, " +
              worseCount(cmp) + " run(s) that stopped working.", rulesText(cmp.options)],
      sections: [],
      full_url: config.md_full_url ? config.md_full_url.replace("{build}", cmp.new_build) : ""
    };
    if (inconclusive(cmp)) {
      d.intro.splice(1, 0, "Inconclusive: " + comparedRuns(cmp, true) + " of the " + comparedRuns(cmp, false) +
                     " runs compared were noisy on either side (over " + cmp.options.max_noisy_percent +
                     "%). A noisy run is never judged a regression, so this comparison cannot say that nothing " +
                     "regressed: measure again on a quieter machine.");
    } else if (cannotTell(cmp)) {
      d.intro.splice(1, 0, "Cannot tell: " + untestableRuns(cmp) + " of the " + comparedRuns(cmp, false) +
                     " runs compared have too few processes or samples for the rank test to reach p < " +
                     general(cmp.options.alpha) + " however large the change (3 against 3 gives at best p 0.1), and " +
                     countRuns(cmp, "too_few_samples") + " of them moved past their threshold. A change the test " +
                     "cannot judge is never counted as a regression, so this comparison cannot say that nothing " +
                     "regressed: measure in more worker processes (--processes 5: 5 against 5 reach p 0.008) or " +
                     "compare with a window of builds (--window).");
    }
    cmp.platforms.forEach(function (p) { d.sections = d.sections.concat(platformSections(cmp, p, config)); });
    return d;
  }

  function mdEscape(s) {
    var map = { "|": "\\|", "<": "&lt;", ">": "&gt;", "&": "&amp;", "\n": " ", "\r": " " };
    return String(s).replace(/[|<>&\\`*_\[\]#\n\r]/g, function (ch) { return map[ch] || "\\" + ch; });
  }
  function mdCell(c, build, config) {
    var text = c.code ? "`" + oneLine(c.text) + "`" : mdEscape(c.text);
    var href = c.model && config.md_model_url ? config.md_model_url.replace("{build}", build).replace("{model}", c.model) : "";
    return href ? "[" + text + "](" + href + ")" : text;
  }
  function renderMd(d, maxRows, build, config) {
    var out = "# " + mdEscape(d.title) + "\n\n";
    d.intro.forEach(function (p) { out += mdEscape(p) + "\n\n"; });
    d.sections.forEach(function (s) {
      out += new Array(s.level + 1).join("#") + " " + mdEscape(s.title) + "\n\n";
      s.paragraphs.forEach(function (p) { out += mdEscape(p) + "\n\n"; });
      if (s.header.length) {
        out += "|";
        s.header.forEach(function (h) { out += " " + mdEscape(h) + " |"; });
        out += "\n|" + new Array(s.header.length + 1).join("---|") + "\n";
        var shown = Math.min(s.rows.length, maxRows);
        for (var i = 0; i < shown; i++) {
          out += "|";
          s.rows[i].forEach(function (c) { out += " " + mdCell(c, build, config) + " |"; });
          out += "\n";
        }
        out += "\n";
        if (s.rows.length > shown) {
          out += "... and " + (s.rows.length - shown) + " more rows";
          if (d.full_url) out += " in the [full report](" + d.full_url + ")";
          out += ".\n\n";
        }
      }
      if (s.code.length) {
        out += "```sh\n";
        for (var j = 0; j < s.code.length; j++) {
          if (j === maxRows) { out += "# ... and " + (s.code.length - maxRows) + " more\n"; break; }
          out += s.code[j] + "\n";
        }
        out += "```\n\n";
      }
    });
    return out + "_Generated by TorchGauge " + config.version + "._\n";
  }
  function utf8Length(s) { return new TextEncoder().encode(s).length; }
  // RenderCompareMarkdown: fewer rows per table until it fits an issue.
  function markdown(d, build, config) {
    var limits = [Infinity, 500, 200, 100, 50, 20, 10, 3], md = "";
    for (var i = 0; i < limits.length; i++) {
      md = renderMd(d, limits[i], build, config);
      if (utf8Length(md) <= MAX_MARKDOWN_BYTES) return md;
    }
    var tail = "\n\n**Report truncated.**" + (d.full_url ? " Full report: " + d.full_url : "") + "\n";
    while (utf8Length(md) > MAX_MARKDOWN_BYTES - utf8Length(tail) - 8 && md.lastIndexOf("\n") > 0) {
      md = md.slice(0, md.lastIndexOf("\n"));
    }
    if ((md.match(/```/g) || []).length % 2) md += "\n```";
    return md + tail;
  }

  // ------------------------------------------------------------ the page

  function node(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }
  function hashParams() {
    var out = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (kv) {
      var i = kv.indexOf("=");
      if (i > 0) out[decodeURIComponent(kv.slice(0, i))] = decodeURIComponent(kv.slice(i + 1));
    });
    return out;
  }
  function documentHtml(d, build, config) {
    var frag = document.createDocumentFragment();
    d.sections.forEach(function (s) {
      frag.appendChild(node("h" + s.level, s.title));
      s.paragraphs.forEach(function (p) { frag.appendChild(node("p", p)); });
      if (s.header.length) {
        var t = node("table"), head = node("thead"), hr = node("tr"), body = node("tbody");
        s.header.forEach(function (h) { hr.appendChild(node("th", h)); });
        head.appendChild(hr);
        s.rows.forEach(function (row) {
          var tr = node("tr");
          row.forEach(function (c, i) {
            var td = node("td", null, i > 0 && s.header[0] && /^[-+\d.,e\s%/]+$/.test(c.text) ? "num" : "");
            if (c.model) {
              var a = node("a", c.text);
              a.href = config.model_href.replace("{build}", encodeURIComponent(build)).replace("{model}", encodeURIComponent(c.model));
              td.appendChild(a);
            } else if (c.code) {
              td.appendChild(node("code", c.text));
            } else {
              td.textContent = c.text;
            }
            tr.appendChild(td);
          });
          body.appendChild(tr);
        });
        t.appendChild(head);
        t.appendChild(body);
        frag.appendChild(t);
      }
      if (s.code.length) {
        var pre = node("pre");
        pre.appendChild(node("code", s.code.join("\n")));
        frag.appendChild(pre);
      }
    });
    return frag;
  }
  var VERDICT_COLORS = { regression: "#d62728", improvement: "#2ca02c", unchanged: "#9e9e9e", noise: "#bcbd22",
                         too_few_samples: "#8c564b", noisy_run: "#ff7f0e" };
  // New/base median step time per run of one platform: one row per model,
  // a point per configuration, coloured by verdict; log scale around 1.
  function ratioSpec(p, schema) {
    var values = p.changes.filter(function (c) { return c.metric === "time"; }).map(function (c) {
      return { model: c.run.model, config: c.run.mode + " " + c.run.backend + "/" + c.run.precision, ratio: c.ratio,
               verdict: c.verdict, delta: deltaPercent(c.delta_percent) };
    });
    var models = {}, lo = 1, hi = 1;
    values.forEach(function (v) {
      models[v.model] = true;
      lo = Math.min(lo, v.ratio);
      hi = Math.max(hi, v.ratio);
    });
    var domain = Object.keys(VERDICT_COLORS);
    return {
      $schema: schema,
      title: "New/base median step time, " + p.platform_id,
      width: 520, height: { step: 16 },
      data: { values: values },
      layer: [
        { mark: { type: "rule", color: "#555" }, encoding: { x: { datum: 1 } } },
        { mark: { type: "point", filled: true, size: 60 },
          encoding: {
            y: { field: "model", type: "nominal", sort: "ascending", title: null, axis: { labelLimit: 0 } },
            x: { field: "ratio", type: "quantitative", scale: { type: "log", domain: [lo / 1.05, hi * 1.05], nice: false },
                 title: "new / base (below 1 is faster)" },
            color: { field: "verdict", type: "nominal", scale: { domain: domain, range: domain.map(function (v) { return VERDICT_COLORS[v]; }) },
                     legend: { title: "verdict", labelLimit: 0 } },
            shape: { field: "config", type: "nominal", legend: { title: "configuration", labelLimit: 0 } },
            tooltip: [{ field: "model" }, { field: "config" }, { field: "delta", title: "change" }, { field: "verdict" }]
          } }
      ],
      config: { view: { stroke: null } },
      usermeta: { models: Object.keys(models).length }
    };
  }

  function ComparePage(root, config) {
    this.root = root;
    this.config = config;
    this.builds = DATA["history/builds"] || { ids: [], t: [], pruned: [] };
    this.views = [];
    this.token = 0;
  }
  // Builds that still have their snapshot (not pruned), newest first.
  ComparePage.prototype.available = function () {
    var pruned = this.builds.pruned || [], out = [];
    for (var i = this.builds.ids.length - 1; i >= 0; i--) {
      if (pruned.indexOf(i) < 0) out.push(this.builds.ids[i]);
    }
    return out;
  };
  ComparePage.prototype.load = function (build, done) {
    var key = "build/" + build + "/compare";
    if (DATA[key]) return done(DATA[key]);
    var script = document.createElement("script");
    script.src = this.config.data_href.replace("{build}", encodeURIComponent(build));
    script.onload = function () { done(DATA[key] || null); };
    script.onerror = function () { done(null); };
    document.body.appendChild(script);
  };
  ComparePage.prototype.picker = function (label, name, builds, value, extra) {
    var wrap = node("label", label + " ");
    var select = node("select");
    select.name = name;
    (extra || []).concat(builds).forEach(function (b) {
      var o = node("option", b.label || b);
      o.value = b.value !== undefined ? b.value : b;
      if (o.value === value) o.selected = true;
      select.appendChild(o);
    });
    wrap.appendChild(select);
    return wrap;
  };
  ComparePage.prototype.show = function () {
    var self = this, builds = this.available(), params = hashParams();
    var form = this.root.querySelector("form.tg-compare-form"), out = this.root.querySelector(".tg-compare-out");
    this.views.forEach(function (v) { v.finalize(); });
    this.views = [];
    form.textContent = "";
    out.textContent = "";
    if (builds.length < 2) {
      out.appendChild(node("p", "The site has fewer than two builds with their data: there is nothing to compare."));
      return;
    }
    var next = builds.indexOf(params["new"]) >= 0 ? params["new"] : builds[0];
    var base = builds.indexOf(params.base) >= 0 ? params.base : builds[Math.min(builds.indexOf(next) + 1, builds.length - 1)];
    if (base === next) base = builds[next === builds[0] ? 1 : 0];
    var platform = params.platform || "";
    form.appendChild(this.picker("Baseline", "base", builds, base));
    form.appendChild(document.createTextNode(" "));
    form.appendChild(this.picker("New", "new", builds, next));
    var platformPicker = this.picker("Platform", "platform", [], platform, [{ label: "all", value: "" }]);
    form.appendChild(document.createTextNode(" "));
    form.appendChild(platformPicker);
    form.onchange = function () {
      var f = form.elements;
      var h = "base=" + encodeURIComponent(f.base.value) + "&new=" + encodeURIComponent(f["new"].value);
      if (f.platform.value) h += "&platform=" + encodeURIComponent(f.platform.value);
      location.hash = h;
    };
    out.appendChild(node("p", "Loading builds " + base + " and " + next + "…"));
    var token = ++this.token, got = {};
    [base, next].forEach(function (b) {
      self.load(b, function (data) {
        got[b] = data;
        if (token !== self.token || !(base in got) || !(next in got)) return;
        self.render(base, next, platform, got[base], got[next], platformPicker.querySelector("select"));
      });
    });
  };
  ComparePage.prototype.render = function (baseId, newId, platform, base, next, platformSelect) {
    var out = this.root.querySelector(".tg-compare-out"), self = this, config = this.config;
    out.textContent = "";
    if (!base || !next) {
      out.appendChild(node("p", "The data of build " + (!base ? baseId : newId) + " could not be loaded (" +
                                config.data_href.replace("{build}", !base ? baseId : newId) + ")."));
      return;
    }
    var ids = Object.keys(next.platforms).sort();
    ids.forEach(function (id) {
      var o = node("option", id);
      o.value = id;
      if (id === platform) o.selected = true;
      platformSelect.appendChild(o);
    });
    var notes = [], cmp = { base_label: baseId, new_build: newId, options: config.options, platforms: [] };
    ids.forEach(function (id) {
      if (platform && id !== platform) return;
      if (!base.platforms[id]) {
        notes.push("Platform " + id + " has no results in build " + baseId + ": not compared.");
        return;
      }
      cmp.platforms.push(comparePlatform(id, runSet(baseId, base.platforms[id]), runSet(newId, next.platforms[id]),
                                         config.options));
    });
    if (platform && ids.indexOf(platform) < 0) notes.push("Build " + newId + " has no results on platform " + platform + ".");
    notes.forEach(function (n) { out.appendChild(node("p", n, "note")); });
    if (!cmp.platforms.length) return;
    var d = documentOf(cmp, config), md = markdown(d, newId, config);
    out.appendChild(node("h2", d.title));
    d.intro.forEach(function (p) { out.appendChild(node("p", p)); });
    var bar = node("p"), copy = node("button", "Copy as Markdown"), status = node("span", "", "copied");
    copy.type = "button";
    bar.appendChild(copy);
    bar.appendChild(document.createTextNode(" "));
    bar.appendChild(status);
    out.appendChild(bar);
    var details = node("details"), text = node("textarea");
    details.appendChild(node("summary", "Markdown, ready for an issue (" + utf8Length(md) + " bytes)"));
    text.id = "tg-compare-md";
    text.readOnly = true;
    text.rows = 16;
    text.value = md;
    text.textContent = md;  // in the DOM too, so a saved page keeps it
    details.appendChild(text);
    out.appendChild(details);
    copy.addEventListener("click", function () {
      function fallback() {
        text.select();
        status.textContent = document.execCommand && document.execCommand("copy") ? "Copied." : "Selected: press Ctrl+C.";
      }
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(md).then(function () { status.textContent = "Copied."; }, fallback);
      } else {
        fallback();
      }
    });
    if (typeof vegaEmbed === "function") {
      cmp.platforms.forEach(function (p) {
        if (!p.changes.some(function (c) { return c.metric === "time"; })) return;
        var el = node("div", null, "vega-chart");
        el.setAttribute("data-source", "compare");
        out.appendChild(el);
        vegaEmbed(el, ratioSpec(p, config.vl_schema), { renderer: "svg", actions: { export: true, source: true, compiled: false, editor: false } })
          .then(function (r) { self.views.push(r.view); })
          .catch(function (err) { el.textContent = "Chart failed to render: " + err; console.error(err); });
      });
    }
    out.appendChild(documentHtml(d, newId, config));
    var result = node("script");
    result.type = "application/json";
    result.id = "tg-compare-result";
    result.textContent = JSON.stringify(resultJson(cmp));
    out.appendChild(result);
  };

  // The rules' parts, for the browser test's cases against the C++ ones.
  window.TorchGaugeCompare = { mannWhitney: mannWhitney, minAchievableP: minAchievableP, fixed: fixed, expo: expo,
                               general: general, quantile: quantile, logBand: logBand };

  function init() {
    var root = document.getElementById("tg-compare"), source = document.getElementById("tg-compare-config");
    if (!root || !source) return;
    var page = new ComparePage(root, JSON.parse(source.textContent));
    window.addEventListener("hashchange", function () { page.show(); });
    page.show();
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
