#include "reporter/results/change_points.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace torchgauge::reporter {

namespace {

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  const size_t n = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + n, v.end());
  if (v.size() % 2) return v[n];
  const double hi = v[n];
  return (*std::max_element(v.begin(), v.begin() + n) + hi) / 2;
}

// The noise of one point, from the night-to-night differences: for normal
// noise, MAD * 1.4826 estimates their sigma, which is sigma * sqrt(2).
double RobustSigma(const std::vector<double>& x) {
  if (x.size() < 3) return 0;
  std::vector<double> d;
  for (size_t i = 1; i < x.size(); ++i) d.push_back(x[i] - x[i - 1]);
  const double med = Median(d);
  for (auto& v : d) v = std::abs(v - med);
  return 1.4826 * Median(d) / std::sqrt(2.0);
}

struct Split {
  size_t at = 0;
  double left = 0, right = 0, t = 0;
  bool found = false;
};

// The best split of x[lo, hi) by squared error, and its statistic.
Split BestSplit(const std::vector<double>& x, size_t lo, size_t hi, double sigma, const ChangePointOptions& o) {
  Split best;
  const size_t m = static_cast<size_t>(o.min_segment);
  if (hi - lo < 2 * m) return best;
  double total = 0;
  for (size_t i = lo; i < hi; ++i) total += x[i];
  double left_sum = 0, best_gain = -1;
  for (size_t k = lo + 1; k < hi; ++k) {
    left_sum += x[k - 1];
    const double nl = static_cast<double>(k - lo), nr = static_cast<double>(hi - k);
    if (k - lo < m || hi - k < m) continue;
    const double ml = left_sum / nl, mr = (total - left_sum) / nr;
    const double gain = nl * nr / (nl + nr) * (ml - mr) * (ml - mr);  // the drop in squared error
    if (gain <= best_gain) continue;
    best_gain = gain;
    best.at = k;
    best.left = ml;
    best.right = mr;
    best.t = sigma > 0 ? std::abs(ml - mr) / (sigma * std::sqrt(1 / nl + 1 / nr)) : INFINITY;
    best.found = true;
  }
  return best;
}

// Whether a split of segments whose log means are `a` and `b`, with
// statistic `t`, passes: the threshold and `min_t` standard errors of noise.
bool Passes(double a, double b, double t, double min_t, const ChangePointOptions& o) {
  return (std::exp(std::abs(b - a)) - 1) * 100 >= o.min_change_percent && t >= min_t;
}

// The best pair of splits of x[lo, hi): the segment x[i, j) against the
// rest of x[lo, hi) on both sides of it (circular binary segmentation's
// statistic), the segment and the rest each at least min_segment builds and
// the rest on both sides. `left` is the rest's mean, `right` the segment's.
struct Pair {
  Split s;
  size_t end = 0;
};
Pair BestPair(const std::vector<double>& x, size_t lo, size_t hi, double sigma, const ChangePointOptions& o) {
  Pair best;
  const size_t m = static_cast<size_t>(o.min_segment);
  if (hi - lo < m + 2) return best;
  std::vector<double> sum(hi - lo + 1, 0.0);  // prefix sums
  for (size_t i = lo; i < hi; ++i) sum[i - lo + 1] = sum[i - lo] + x[i];
  const double total = sum.back(), n = static_cast<double>(hi - lo);
  double best_gain = -1;
  for (size_t i = lo + 1; i < hi; ++i) {
    for (size_t j = i + m; j < hi; ++j) {
      const double nin = static_cast<double>(j - i), nout = n - nin;
      if (nout < static_cast<double>(m)) continue;
      const double in = sum[j - lo] - sum[i - lo];
      const double mi = in / nin, mo = (total - in) / nout;
      const double gain = nin * nout / n * (mi - mo) * (mi - mo);
      if (gain <= best_gain) continue;
      best_gain = gain;
      best.s = {i, mo, mi, sigma > 0 ? std::abs(mi - mo) / (sigma * std::sqrt(1 / nin + 1 / nout)) : INFINITY, true};
      best.end = j;
    }
  }
  return best;
}

void Segment(const std::vector<double>& x, size_t lo, size_t hi, double sigma, const ChangePointOptions& o,
             std::vector<Step>& out) {
  if (static_cast<int>(out.size()) >= o.max_points) return;
  const Split s = BestSplit(x, lo, hi, sigma, o);
  if (s.found && Passes(s.left, s.right, s.t, o.min_t, o)) {
    out.push_back({s.at, std::exp(s.left), std::exp(s.right), s.t});
    Segment(x, lo, s.at, sigma, o, out);
    Segment(x, s.at, hi, sigma, o, out);
    return;
  }
  // No single split passes: a short excursion (up for a few builds, then
  // back) moves neither side's mean enough. Look for it as a segment inside.
  if (static_cast<int>(out.size()) + 2 > o.max_points) return;
  const Pair p = BestPair(x, lo, hi, sigma, o);
  if (!p.s.found || !Passes(p.s.left, p.s.right, p.s.t, o.min_t_segment, o)) return;
  out.push_back({p.s.at, std::exp(p.s.left), std::exp(p.s.right), p.s.t});
  out.push_back({p.end, std::exp(p.s.right), std::exp(p.s.left), p.s.t});
  Segment(x, lo, p.s.at, sigma, o, out);
  Segment(x, p.s.at, p.end, sigma, o, out);
  Segment(x, p.end, hi, sigma, o, out);
}

}  // namespace

std::vector<Step> FindSteps(const std::vector<double>& values, const ChangePointOptions& o) {
  std::vector<double> x;
  for (double v : values) x.push_back(std::log(v));
  std::vector<Step> out;
  Segment(x, 0, x.size(), RobustSigma(x), o, out);
  std::sort(out.begin(), out.end(), [](const Step& a, const Step& b) { return a.at < b.at; });
  // A step's levels are the final segments on either side of it, not the
  // halves of the split that found it: a split of a long flat stretch from
  // a short bump and what follows it would otherwise report a fraction of
  // the bump.
  auto mean = [&](size_t lo, size_t hi) {
    double sum = 0;
    for (size_t i = lo; i < hi; ++i) sum += x[i];
    return std::exp(sum / static_cast<double>(hi - lo));
  };
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].before = mean(i ? out[i - 1].at : 0, out[i].at);
    out[i].after = mean(out[i].at, i + 1 < out.size() ? out[i + 1].at : x.size());
  }
  return out;
}

std::vector<ChangePoint> FindChangePoints(const std::vector<BuildSummary>& history, const ChangePointOptions& o) {
  struct Series {
    std::vector<double> values;
    std::vector<size_t> builds;  // index into history
  };
  std::map<std::tuple<std::string, std::string, std::string>, Series> series;
  for (size_t b = 0; b < history.size(); ++b) {
    for (const auto& p : history[b].platforms) {
      for (const auto& m : p.medians) {
        if (m.noisy || !(m.median_ms > 0)) continue;
        Series& s = series[{p.id, m.model, m.config}];
        s.values.push_back(m.median_ms);
        s.builds.push_back(b);
      }
    }
  }
  std::vector<ChangePoint> out;
  for (const auto& [key, s] : series) {
    for (const Step& st : FindSteps(s.values, o)) {
      ChangePoint c;
      std::tie(c.platform, c.model, c.config) = key;
      c.build_before = history[s.builds[st.at - 1]].id;
      c.build = history[s.builds[st.at]].id;
      c.started_at = history[s.builds[st.at]].started_at;
      c.before_ms = st.before;
      c.after_ms = st.after;
      c.t = st.t;
      c.points = static_cast<int>(s.values.size());
      out.push_back(std::move(c));
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const ChangePoint& a, const ChangePoint& b) {
    return std::tie(a.started_at, a.build, a.platform, a.model, a.config) <
           std::tie(b.started_at, b.build, b.platform, b.model, b.config);
  });
  return out;
}

const Alert* CoveringAlert(const std::vector<Alert>& alerts, const ChangePoint& c) {
  for (const auto& a : alerts) {
    if (a.platform != c.platform || a.build != c.build || a.regression != (c.Factor() > 1)) continue;
    for (const auto& f : a.rows) {
      if (f.model == c.model && ConfigLabel(f.mode, f.backend, f.precision, f.batch_size) == c.config) return &a;
    }
  }
  return nullptr;
}

}  // namespace torchgauge::reporter
