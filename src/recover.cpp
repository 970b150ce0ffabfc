#include "mhaq/recover.hpp"

#include <cmath>
#include <sstream>

#include "mhaq/certificate.hpp"
#include "mhaq/model_oracle.hpp"
#include "mhaq/parallel.hpp"
#include "mhaq/recording_oracle.hpp"

namespace mhaq {

std::uint64_t learner_seed(std::uint64_t seed) { return seed * 0x9E3779B97F4A7C15ULL + 0x2545F4914F6CDD1DULL; }

TokenSpec default_tokens(Arith a) {
  // Exact: integers in [-5, 5]. Larger ranges make degenerate draws rarer but
  // raise tau-degrees (cost grows roughly as range^4); see README.
  if (a == Arith::exact) return TokenSpec{5, 1};
  return TokenSpec{1L << 20, 1L << 20};
}

GenerateOptions default_generate(Arith a) {
  GenerateOptions g;
  if (a != Arith::exact) {
    g.w_range = 3L << 14;
    g.w_den = 1L << 16;  // W uniform on [-3/4, 3/4] (sd 0.43, close to the baseline's N(0, 1/d))
    g.v_range = 1L << 16;
    g.v_den = 1L << 16;  // v uniform on [-1, 1]
  }
  return g;
}

namespace {
using nlohmann::json;

template <class T>
std::string entry_str(const T& x) {
  if constexpr (std::is_same_v<T, QTau>) {
    Rational q;
    return x.is_rational(q) ? q.str() : x.str();
  } else if constexpr (std::is_same_v<T, Ball>) {
    return x.str(30);
  } else if constexpr (std::is_same_v<T, Mpfr>) {
    return x.str(30);
  } else {
    std::ostringstream ss;
    ss.precision(17);
    ss << x;
    return ss.str();
  }
}

template <class T>
json heads_json(const std::vector<LearnedHead<T>>& hs) {
  json out = json::array();
  for (const auto& h : hs) {
    json W = json::array();
    for (int i = 0; i < h.W.rows(); ++i) {
      json row = json::array();
      for (int j = 0; j < h.W.cols(); ++j) row.push_back(entry_str(h.W(i, j)));
      W.push_back(row);
    }
    json v = json::array();
    for (const auto& x : h.v) v.push_back(entry_str(x));
    out.push_back({{"W", W}, {"v", v}});
  }
  return out;
}

// log2 of the Euclidean norm of a list of log2-magnitudes (robust to under/overflow).
double log2_norm(const std::vector<double>& l2) {
  double M = -INFINITY;
  for (double x : l2) M = std::max(M, x);
  if (M == -INFINITY) return M;
  double s = 0;
  for (double x : l2) s += std::exp2(2 * (x - M));
  return M + 0.5 * std::log2(s);
}

template <class T>
void compare(json& r, const Model& canon, const std::vector<LearnedHead<T>>& got, const Field<T>& F) {
  const int d = canon.d;
  const size_t H = canon.heads.size();
  if constexpr (std::is_same_v<T, QTau>) {
    // Equality in Q, up to permutation.
    r["exact_match"] = exact_heads_match(got, canon);
  } else if constexpr (std::is_same_v<T, Ball>) {
    double maxrad = 0;
    for (const auto& g : got) {
      for (int i = 0; i < d; ++i) {
        maxrad = std::max(maxrad, g.v[i].radius());
        for (int j = 0; j < d; ++j) maxrad = std::max(maxrad, g.W(i, j).radius());
      }
    }
    r["contains_truth"] = ball_heads_contain(got, canon);
    r["max_radius"] = maxrad;
  } else {
    // Relative error as in the mpmath baseline: min over recovered heads of
    // ||W - W'||_F / ||W||_F + ||v - v'|| / ||v||, max over true heads.
    double worst = 0;
    for (size_t h = 0; h < H; ++h) {
      double best = INFINITY;
      for (const auto& g : got) {
        std::vector<double> dw, nw, dv, nv;
        for (int i = 0; i < d; ++i) {
          dv.push_back(F.log2_abs(F.from(canon.heads[h].v[i]) - g.v[i]));
          nv.push_back(F.log2_abs(F.from(canon.heads[h].v[i])));
          for (int j = 0; j < d; ++j) {
            dw.push_back(F.log2_abs(F.from(canon.heads[h].W(i, j)) - g.W(i, j)));
            nw.push_back(F.log2_abs(F.from(canon.heads[h].W(i, j))));
          }
        }
        const double e = std::exp2(log2_norm(dw) - log2_norm(nw)) + std::exp2(log2_norm(dv) - log2_norm(nv));
        best = std::min(best, e);
      }
      worst = std::max(worst, best);
    }
    if (got.size() != H) worst = INFINITY;
    r["max_rel_error"] = std::isfinite(worst) ? json(worst) : json(nullptr);
  }
}

template <class T>
void run(json& r, const Model& truth, const Model& canon, const RecoverOptions& o, const LearnOptions& lo) {
  std::unique_ptr<PrecisionScope> scope;
  if (o.arith == Arith::ball || o.arith == Arith::mpfr) scope = std::make_unique<PrecisionScope>(o.bits);
  ModelOracle<T> oracle(truth, lo.tokens.den, OracleNoise{o.oracle_bits, o.noise_eps, o.noise_seed});
  std::unique_ptr<RecordingOracle<T>> rec;  // only when a certificate is asked for
  if (o.certificate) rec = std::make_unique<RecordingOracle<T>>(oracle);
  Oracle<T>& black_box = rec ? static_cast<Oracle<T>&>(*rec) : oracle;  // the learner gets this reference and nothing else
  try {
    LearnResult<T> res = learn(black_box, lo);
    r["status"] = "ok";
    r["heads_recovered"] = res.heads.size();
    r["redraws"] = res.redraws;
    r["heads"] = heads_json(res.heads);
    r["heads_found"] = res.heads_found;
    if constexpr (Field<T>::is_exact) r["self_checked"] = res.self_checked;
    if (lo.heads_is_bound && !Field<T>::is_rigorous)
      r["fit_threshold"] = "relative residual <= 2^" + std::to_string(static_cast<int>(res.fit_threshold_log2)) + " (floating-point judgement)";
    compare(r, canon, res.heads, black_box.field());
    if (rec && r.value("exact_match", true) && r.value("contains_truth", true)) *o.certificate = certificate_text(truth, o, lo, *rec, res);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::degenerate && e.kind() != ErrorKind::unable && e.kind() != ErrorKind::inconsistent) throw;
    r["status"] = kind_name(e.kind());
    r["message"] = e.what();
    r["heads_recovered"] = 0;
  }
  r["queries"] = black_box.queries();
  r["max_length"] = black_box.max_length();
  if constexpr (std::is_same_v<T, QTau>) r["L"] = black_box.field().L;
}
}  // namespace

bool ball_heads_contain(const std::vector<LearnedHead<Ball>>& got, const Model& canon) {
  // Each canonical head must be claimed by a distinct recovered head whose
  // every entry contains the true rational entry.
  if (got.size() != canon.heads.size()) return false;
  std::vector<bool> used(got.size(), false);
  for (const auto& h : canon.heads) {
    bool found = false;
    for (size_t g = 0; g < got.size() && !found; ++g) {
      if (used[g]) continue;
      bool all = true;
      for (int i = 0; i < canon.d && all; ++i) {
        all = got[g].v[i].contains(h.v[i]);
        for (int j = 0; j < canon.d && all; ++j) all = got[g].W(i, j).contains(h.W(i, j));
      }
      if (all) used[g] = found = true;
    }
    if (!found) return false;
  }
  return true;
}

bool exact_heads_match(const std::vector<LearnedHead<QTau>>& got, const Model& canon) {
  if (got.size() != canon.heads.size()) return false;
  std::vector<bool> used(got.size(), false);
  for (const auto& h : canon.heads) {
    bool found = false;
    for (size_t g = 0; g < got.size() && !found; ++g) {
      if (used[g]) continue;
      bool eq = true;
      for (int i = 0; i < canon.d && eq; ++i) {
        eq = got[g].v[i] == QTau(h.v[i]);
        for (int j = 0; j < canon.d && eq; ++j) eq = got[g].W(i, j) == QTau(h.W(i, j));
      }
      if (eq) used[g] = found = true;
    }
    if (!found) return false;
  }
  return true;
}

nlohmann::json recover(const Model& truth, const RecoverOptions& o) {
  truth.validate();
  const Model canon = truth.canonical();
  json r;
  LearnOptions lo;
  lo.H = o.max_heads > 0 ? o.max_heads : o.heads > 0 ? o.heads : static_cast<int>(canon.heads.size());
  lo.heads_is_bound = o.max_heads > 0;
  if (lo.H < 1) {
    // All heads cancel: f is identically zero and there is nothing to learn.
    throw Error(ErrorKind::degenerate, "the model's canonical form has no heads (f is identically zero)");
  }
  lo.schedule = o.schedule;
  // The learner's stream is separate from any model-generation stream.
  lo.seed = learner_seed(o.seed);
  lo.tokens = o.tokens.range > 0 ? o.tokens : default_tokens(o.arith);
  if (o.threads < 0) throw Error(ErrorKind::usage, "--threads must be 0 (all hardware threads) or positive");
  lo.threads = o.threads == 0 ? hardware_threads() : o.threads;
  r["arith"] = arith_name(o.arith);
  if (o.arith == Arith::ball || o.arith == Arith::mpfr) r["bits"] = o.bits;
  if (o.arith == Arith::ieee) r["bits"] = 53;
  r["d"] = truth.d;
  r["H"] = lo.H;
  r["heads_known"] = lo.heads_is_bound ? "upper bound H0" : "exact";
  r["seed"] = o.seed;
  r["schedule"] = schedule_name(o.schedule);
  r["heads_true"] = canon.heads.size();
  r["paper_bound"] = paper_query_bound(truth.d, lo.H);
  r["max_length_bound"] = 2 * lo.H + 1;
  if (o.oracle_bits > 0) r["oracle_bits"] = o.oracle_bits;
  if (!o.noise_eps.is_zero()) {
    r["noise_eps"] = o.noise_eps.str();
    r["noise_seed"] = o.noise_seed;
  }
  r["token_range"] = lo.tokens.range;
  r["token_den"] = lo.tokens.den;
  switch (o.arith) {
    case Arith::exact: run<QTau>(r, truth, canon, o, lo); break;
    case Arith::ball: run<Ball>(r, truth, canon, o, lo); break;
    case Arith::mpfr: run<Mpfr>(r, truth, canon, o, lo); break;
    case Arith::ieee: run<double>(r, truth, canon, o, lo); break;
  }
  return r;
}

int recover_exit_code(const nlohmann::json& r) {
  const std::string s = r.value("status", "");
  if (s == "degenerate") return exit_code(ErrorKind::degenerate);
  if (s == "unable") return exit_code(ErrorKind::unable);
  if (s == "inconsistent") return exit_code(ErrorKind::inconsistent);
  if (s != "ok") return exit_code(ErrorKind::internal);
  if (r.contains("exact_match") && !r["exact_match"].get<bool>()) return exit_code(ErrorKind::mismatch);
  if (r.contains("contains_truth") && !r["contains_truth"].get<bool>()) return exit_code(ErrorKind::mismatch);
  return 0;
}

std::string recover_report(const nlohmann::json& r) {
  std::ostringstream o;
  o << "mhaq recover: " << r["arith"].get<std::string>();
  if (r.contains("bits")) o << " (" << r["bits"] << " bits)";
  o << ", d=" << r["d"] << (r["heads_known"] == "exact" ? ", H=" : ", H0=") << r["H"] << ", schedule " << r["schedule"].get<std::string>() << ", seed " << r["seed"] << "\n";
  o << "  status           " << r["status"].get<std::string>() << "\n";
  if (r.contains("message")) o << "  reason           " << r["message"].get<std::string>() << "\n";
  o << "  queries          " << r["queries"] << " (paper bound 4Hd^2-2H+1 = " << r["paper_bound"] << ")\n";
  o << "  longest query    " << r["max_length"] << " (bound 2H+1 = " << r["max_length_bound"] << ")\n";
  o << "  heads            " << r["heads_recovered"] << " recovered, " << r["heads_true"] << " in the canonical truth\n";
  if (r.contains("fit_threshold")) o << "  head-count test  " << r["fit_threshold"].get<std::string>() << "\n";
  if (r.contains("exact_match")) o << "  exact match      " << (r["exact_match"].get<bool>() ? "yes (equality in Q, up to permutation)" : "NO") << "\n";
  if (r.contains("contains_truth"))
    o << "  contains truth   " << (r["contains_truth"].get<bool>() ? "yes" : "NO") << ", max radius " << r["max_radius"].get<double>() << "\n";
  if (r.contains("max_rel_error")) o << "  max rel. error   " << r["max_rel_error"].dump() << "\n";
  if (r.contains("heads") && r["d"].get<int>() <= 4) {
    int h = 0;
    for (const auto& hd : r["heads"]) {
      o << "  head " << ++h << ": v = " << hd["v"].dump() << "\n          W = " << hd["W"].dump() << "\n";
    }
  }
  return o.str();
}

}  // namespace mhaq
