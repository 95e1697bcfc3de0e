#include "reporter/alerts/change_points.h"

#include "reporter/alerts/alerts.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
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

namespace {

// One run's state while the history is replayed.
struct Replay {
  const std::vector<SeriesPoint>* points = nullptr;
  std::vector<double> logs;  // of every point
  std::vector<double> sums;  // sums[i]: of logs[0, i)
  size_t next = 0;           // the first point not yet seen
  size_t start = 0;          // the first point of the current segment
  double se_sum = 0;         // of se^2 over the points seen with se > 0
  int se_n = 0;
};

// A candidate split of one run's current segment, tonight.
struct Candidate {
  size_t run = 0, first = 0;  // the first point at the new level
  size_t at = 0;              // its build
  size_t after = 0;           // points at the new level
  double t = 0;
  double before = 0;  // the old level's mean log
};

// The noise of one point from the series itself: the root mean square of
// the night-to-night differences over sqrt(2) (von Neumann's estimator).
// Efficient where the MAD of FindSteps is not (with 20 points the MAD put
// pure process noise at twice its size in a third of the harness's runs);
// an older step or an outlier night only makes it larger, which makes the
// search more cautious, never less.
double SuccessiveSigma(const std::vector<double>& logs, size_t from, size_t to) {
  if (to < from + 3) return 0;
  double ss = 0;
  for (size_t i = from + 1; i < to; ++i) ss += (logs[i] - logs[i - 1]) * (logs[i] - logs[i - 1]);
  return std::sqrt(ss / (2.0 * static_cast<double>(to - from - 1)));
}

// Whether a series of `points` points is long enough for its own noise
// estimate: min_series_points before the newest min_after (a change being
// tested tonight must not inflate the noise it is tested against).
bool SeriesNoiseKnown(size_t points, const OnlineOptions& o) {
  return points >= static_cast<size_t>(o.min_series_points + o.min_after);
}

double Sigma(const Replay& r, const OnlineOptions& o) {
  const double proc = r.se_n > 0 ? std::sqrt(r.se_sum / r.se_n) : 0;
  double series = 0;
  if (SeriesNoiseKnown(r.next, o)) {
    const size_t to = r.next - static_cast<size_t>(o.min_after);
    const size_t from = to > static_cast<size_t>(o.lookback) ? to - o.lookback : 0;
    series = SuccessiveSigma(r.logs, from, to);
  }
  if (proc > 0 && !(series > o.night_noise_ratio * proc)) return proc;
  return series;
}

// Every split of run `k`'s current segment that reaches the threshold: the
// new level is the newest points from j on (at most `lookback`), the old
// one the `lookback` points before j within the segment.
void Splits(const Replay& r, size_t k, const OnlineOptions& o, std::vector<Candidate>& out) {
  const double sigma = Sigma(r, o);
  if (!(sigma > 0)) return;
  const size_t end = r.next;
  const size_t mb = static_cast<size_t>(std::max(1, r.start == 0 ? o.min_before : o.min_before_after_change));
  const size_t look = static_cast<size_t>(std::max(1, o.lookback));
  if (end - r.start < mb + 1) return;
  const size_t lowest = std::max(r.start + mb, end > look ? end - look : 0);
  for (size_t j = end - 1; j >= lowest; --j) {  // j: the first point of the new level
    const size_t from = std::max(r.start, j > look ? j - look : 0);
    const double nb = static_cast<double>(j - from), na = static_cast<double>(end - j);
    const double d = (r.sums[end] - r.sums[j]) / na - (r.sums[j] - r.sums[from]) / nb;
    if ((std::exp(std::abs(d)) - 1) * 100 >= o.min_change_percent)
      out.push_back({k, j, (*r.points)[j].build, end - j, d / (sigma * std::sqrt(1 / nb + 1 / na)),
                     (r.sums[j] - r.sums[from]) / nb});
    if (j == 0) break;
  }
}

bool Alone(const Candidate& c, const OnlineOptions& o) {
  if (c.after >= static_cast<size_t>(o.min_after)) return std::abs(c.t) >= o.min_t;
  return c.after >= static_cast<size_t>(std::max(1, o.min_after_early)) && std::abs(c.t) >= o.min_t_early;
}

// Whether the new level of `c` is more than one build's doing: each of its
// builds moved beyond the threshold, not only their mean. One slow night
// among the builds at a "new level" moves their mean by a third or a half
// of its excess, and the t statistic assumes independent builds, which a
// night whose every process ran slow is not. In the harness this rule also
// keeps a change that every run shows (a machine) from being raised in a
// run at a build before it, where the new "level" is mostly old builds.
bool Persists(const Candidate& c, const Replay& r, const OnlineOptions& o) {
  const double band = std::log1p(o.min_change_percent / 100);
  for (size_t i = c.first; i < r.next; ++i) {
    if ((c.t > 0 ? r.logs[i] - c.before : c.before - r.logs[i]) < band) return false;
  }
  return true;
}

// Tonight's raised changes among `cands`. Each run offers its strongest
// split (the largest |t|), if it Persists: that one raises alone when it
// passes alone, or joins the runs whose strongest splits are at the same build in the same
// direction, with at least min_after builds at the new level and t of at
// least min_t_group each; such a group of group_runs or more raises. A run's
// weaker splits never count: a change seen in one build is strongest there
// and waits for its next builds, rather than grouping early at a build
// before it.
std::vector<std::pair<Candidate, bool>> Raise(const std::vector<Candidate>& cands, const std::vector<Replay>& runs,
                                              const OnlineOptions& o) {
  std::map<size_t, Candidate> best;
  for (const auto& c : cands) {
    auto [it, fresh] = best.emplace(c.run, c);
    if (!fresh && std::abs(c.t) > std::abs(it->second.t)) it->second = c;
  }
  std::vector<std::pair<Candidate, bool>> out;
  std::vector<Candidate> eligible;
  for (const auto& [run, c] : best) {
    if (!Persists(c, runs[run], o)) continue;
    if (Alone(c, o)) {
      out.push_back({c, false});
    } else if (c.after >= static_cast<size_t>(o.min_after) && std::abs(c.t) >= o.min_t_group) {
      eligible.push_back(c);
    }
  }
  std::map<std::pair<size_t, bool>, std::vector<Candidate>> groups;  // (build, up)
  for (const auto& c : eligible) groups[{c.at, c.t > 0}].push_back(c);
  for (const auto& [key, g] : groups) {
    if (g.size() < static_cast<size_t>(o.group_runs)) continue;
    for (const auto& c : g) out.push_back({c, true});
  }
  return out;
}

// The levels either side of each change, and a regression's fate, from the
// final segments of each series.
void Settle(std::vector<OnlineChange>& changes, const std::vector<Replay>& runs, double min_change_percent) {
  std::map<size_t, std::vector<size_t>> by_series;  // change indices, by first point
  for (size_t i = 0; i < changes.size(); ++i) by_series[changes[i].series].push_back(i);
  for (auto& [k, idx] : by_series) {
    const Replay& r = runs[k];
    auto first = [&](size_t i) {
      size_t p = 0;
      while ((*r.points)[p].build < changes[i].at) ++p;
      return p;
    };
    std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return changes[a].at < changes[b].at; });
    std::vector<size_t> bounds{0};
    for (size_t i : idx) bounds.push_back(first(i));
    bounds.push_back(r.logs.size());
    std::vector<double> level;  // of segment s = [bounds[s], bounds[s+1])
    for (size_t s = 0; s + 1 < bounds.size(); ++s)
      level.push_back((r.sums[bounds[s + 1]] - r.sums[bounds[s]]) / static_cast<double>(bounds[s + 1] - bounds[s]));
    const double band = std::log1p(min_change_percent / 100);
    for (size_t n = 0; n < idx.size(); ++n) {
      OnlineChange& c = changes[idx[n]];
      c.before = std::exp(level[n]);
      c.after = std::exp(level[n + 1]);
      if (c.after <= c.before) continue;
      for (size_t l = n + 1; l < idx.size(); ++l) {
        const OnlineChange& later = changes[idx[l]];
        if (std::abs(std::log(later.after_when_raised) - level[n]) >= band) continue;
        c.recovered_at = later.at;
        c.reverted = later.after_when_raised < std::exp(level[l]);
        break;
      }
      c.still_present = std::abs(level.back() - level[n]) >= band;
    }
  }
}

}  // namespace

std::vector<OnlineChange> FindChangesOnline(const std::vector<std::vector<SeriesPoint>>& series, size_t builds,
                                            const OnlineOptions& o) {
  std::vector<Replay> runs(series.size());
  for (size_t k = 0; k < series.size(); ++k) {
    runs[k].points = &series[k];
    runs[k].sums.push_back(0);
    for (const auto& p : series[k]) {
      runs[k].logs.push_back(std::log(p.value));
      runs[k].sums.push_back(runs[k].sums.back() + runs[k].logs.back());
    }
  }
  std::vector<OnlineChange> out;
  for (size_t night = 0; night < builds; ++night) {
    std::vector<Candidate> cands;
    for (size_t k = 0; k < runs.size(); ++k) {
      Replay& r = runs[k];
      if (r.next >= series[k].size() || series[k][r.next].build != night) continue;
      if (series[k][r.next].se > 0) r.se_sum += series[k][r.next].se * series[k][r.next].se, ++r.se_n;
      ++r.next;
      Splits(r, k, o, cands);
    }
    for (const auto& [c, grouped] : Raise(cands, runs, o)) {
      const auto& pts = series[c.run];
      OnlineChange ch;
      ch.series = c.run;
      ch.at = c.at;
      ch.before_build = pts[c.first - 1].build;
      ch.raised = night;
      ch.t = c.t;
      ch.grouped = grouped;
      const Replay& r = runs[c.run];
      ch.after_when_raised = std::exp((r.sums[r.next] - r.sums[c.first]) / static_cast<double>(r.next - c.first));
      out.push_back(ch);
      runs[c.run].start = c.first;
    }
  }
  Settle(out, runs, o.min_change_percent);
  return out;
}

std::vector<HistoryChange> FindHistoryChanges(const std::vector<BuildSummary>& history, const OnlineOptions& o) {
  using Key = std::tuple<std::string, std::string, std::string>;  // platform, model, config
  std::map<std::string, std::map<Key, std::vector<SeriesPoint>>> by_platform;
  for (size_t b = 0; b < history.size(); ++b) {
    for (const auto& p : history[b].platforms) {
      for (const auto& m : p.medians) {
        if (m.noisy || !(m.median_ms > 0)) continue;
        const bool level = m.level_ms > 0;
        by_platform[p.id][{p.id, m.model, m.config}].push_back(
            {b, level ? m.level_ms : m.median_ms, level ? m.level_se : 0.0});
      }
    }
  }
  std::vector<HistoryChange> out;
  for (const auto& [platform, runs] : by_platform) {
    std::vector<Key> keys;
    std::vector<std::vector<SeriesPoint>> series;
    for (const auto& [key, points] : runs) keys.push_back(key), series.push_back(points);
    for (const auto& c : FindChangesOnline(series, history.size(), o)) {
      HistoryChange h;
      std::tie(h.platform, h.model, h.config) = keys[c.series];
      h.change = c;
      h.points = static_cast<int>(series[c.series].size());
      out.push_back(std::move(h));
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const HistoryChange& a, const HistoryChange& b) {
    return std::tie(a.change.at, a.platform, a.model, a.config) < std::tie(b.change.at, b.platform, b.model, b.config);
  });
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

bool HistoryCanJudge(const std::vector<BuildSummary>& history, const std::string& platform, const std::string& model,
                     const std::string& config, size_t at, const OnlineOptions& o) {
  size_t points = 0;
  for (size_t b = 0; b <= at && b < history.size(); ++b) {
    for (const auto& p : history[b].platforms) {
      if (p.id != platform) continue;
      for (const auto& m : p.medians) {
        if (m.model != model || m.config != config || m.noisy || !(m.median_ms > 0)) continue;
        if (m.level_ms > 0 && m.level_se > 0) return true;
        ++points;
      }
    }
  }
  return SeriesNoiseKnown(points, o);
}

std::vector<ChangePoint> ChangePointsOf(const std::vector<HistoryChange>& found,
                                        const std::vector<BuildSummary>& history) {
  std::vector<ChangePoint> out;
  for (const auto& h : found) {
    ChangePoint c;
    c.platform = h.platform;
    c.model = h.model;
    c.config = h.config;
    c.build_before = history[h.change.before_build].id;
    c.build = history[h.change.at].id;
    c.started_at = history[h.change.at].started_at;
    c.before_ms = h.change.before;
    c.after_ms = h.change.after;
    c.t = std::abs(h.change.t);
    c.points = h.points;
    c.raised_in = history[h.change.raised].id;
    out.push_back(std::move(c));
  }
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
