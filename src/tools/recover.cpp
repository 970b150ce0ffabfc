#include "mhaq/tools/recover.hpp"

#include <cmath>
#include <sstream>

#include "mhaq/tools/certificate.hpp"
#include "mhaq/stages/1-oracle/model_oracle.hpp"
#include "mhaq/base/parallel.hpp"
#include "mhaq/tools/sensitivity.hpp"
#include "mhaq/stages/1-oracle/recording_oracle.hpp"

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

json pow2_json(double l2) { return std::isfinite(l2) ? json(std::exp2(l2)) : l2 < 0 ? json(0.0) : json(nullptr); }

template <class T>
void run(json& r, const Model& truth, const Model& canon, const RecoverOptions& o, const LearnOptions& lo, const OracleNoise& noise) {
  std::unique_ptr<PrecisionScope> scope;
  if (o.arith == Arith::ball || o.arith == Arith::mpfr) scope = std::make_unique<PrecisionScope>(o.bits);
  ModelOracle<T> oracle(truth, lo.tokens.den, noise);
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
    if constexpr (!Field<T>::is_exact) {
      if (noise.active()) r["observed_error"] = pow2_json(param_error_log2(res.heads, canon));
    }
    if constexpr (std::is_same_v<T, Ball>) r["certified_relative_error"] = pow2_json(certified_relative_radius_log2(res.heads));
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

namespace {
// Each canonical head must be claimed by a distinct recovered head whose every
// entry passes ok(recovered entry, true rational entry) (first fit).
template <class T, class Ok>
bool heads_match(const std::vector<LearnedHead<T>>& got, const Model& canon, Ok ok) {
  if (got.size() != canon.heads.size()) return false;
  std::vector<bool> used(got.size(), false);
  for (const auto& h : canon.heads) {
    bool found = false;
    for (size_t g = 0; g < got.size() && !found; ++g) {
      if (used[g]) continue;
      bool all = true;
      for (int i = 0; i < canon.d && all; ++i) {
        all = ok(got[g].v[i], h.v[i]);
        for (int j = 0; j < canon.d && all; ++j) all = ok(got[g].W(i, j), h.W(i, j));
      }
      if (all) used[g] = found = true;
    }
    if (!found) return false;
  }
  return true;
}
}  // namespace

bool ball_heads_contain(const std::vector<LearnedHead<Ball>>& got, const Model& canon) {
  return heads_match(got, canon, [](const Ball& x, const Rational& q) { return x.contains(q); });
}

bool exact_heads_match(const std::vector<LearnedHead<QTau>>& got, const Model& canon) {
  return heads_match(got, canon, [](const QTau& x, const Rational& q) { return x == QTau(q); });
}

namespace {
void dispatch(json& r, const Model& truth, const Model& canon, const RecoverOptions& o, const LearnOptions& lo, const OracleNoise& noise) {
  switch (o.arith) {
    case Arith::exact: run<QTau>(r, truth, canon, o, lo, noise); break;
    case Arith::ball: run<Ball>(r, truth, canon, o, lo, noise); break;
    case Arith::mpfr: run<Mpfr>(r, truth, canon, o, lo, noise); break;
    case Arith::ieee: run<double>(r, truth, canon, o, lo, noise); break;
  }
}

// Claim 4 side by side: kappa (first-order amplification at the true answers,
// computed from the model and the learner's plan, which is fixed before any
// query), a certified bound from a ball run whose answers are every value
// within eps (envelope), and the observed error of the run itself. With the
// worst pattern the run's noise is eps * sign(J) of kappa's row.
void noise_analysis(json& r, const Model& canon, const RecoverOptions& o, const LearnOptions& lo, OracleNoise& noise) {
  Ball eb(o.noise_eps);
  const double eps = eb.mid_double();
  if (lo.heads_is_bound || lo.H != canon.num_heads()) {
    r["kappa"] = nullptr;
    r["kappa_note"] = "kappa needs the learner's H to equal the canonical head count";
    if (o.noise_pattern == NoisePattern::signs) throw Error(ErrorKind::usage, "--noise-pattern worst needs the true head count");
    return;
  }
  try {
    const Sensitivity S = sensitivity_from_model(canon, learner_plan(canon.d, lo));
    r["kappa"] = S.kappa;
    r["kappa_times_eps"] = S.kappa * eps;
    r["kappa_rel"] = S.kappa_rel;
    r["kappa_pair"] = S.pair_cond;
    if (o.noise_pattern == NoisePattern::signs) noise.signs = S.worst_signs();
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::unable && e.kind() != ErrorKind::degenerate) throw;
    if (o.noise_pattern == NoisePattern::signs) throw;
    r["kappa"] = nullptr;
    r["kappa_note"] = e.what();
  }
  // certified bound: ball answers covering every perturbation up to eps
  const long cbits = o.arith == Arith::ball || o.arith == Arith::mpfr ? o.bits : 256;
  PrecisionScope scope(cbits);
  ModelOracle<Ball> env(canon, lo.tokens.den, OracleNoise{o.oracle_bits, o.noise_eps, o.noise_seed, NoisePattern::envelope, {}});
  r["certified_bits"] = cbits;
  try {
    const LearnResult<Ball> res = learn<Ball>(env, lo);
    double b = 0;
    if (!certified_param_error_log2(res.heads, canon, b)) throw_internal("certified run: balls do not contain the truth");
    r["certified_bound"] = pow2_json(b);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::unable && e.kind() != ErrorKind::degenerate) throw;
    r["certified_bound"] = nullptr;
    r["certified_note"] = std::string(kind_name(e.kind())) + ": " + e.what();
  }
}

// --target-error T (balls): estimate kappa from the learner's own float run
// (no model access), start at the precision it predicts, double until the
// balls certify relative error <= T or the cap is reached (Ziv's strategy).
void auto_precision(json& r, const Model& truth, const Model& canon, const RecoverOptions& o, const LearnOptions& lo) {
  if (o.arith != Arith::ball) throw Error(ErrorKind::usage, "--target-error needs --arith ball (only balls certify an error)");
  if (o.target_error.sign() <= 0) throw Error(ErrorKind::usage, "--target-error must be positive");
  if (o.noise_eps.sign() != 0 || o.oracle_bits != 0) throw Error(ErrorKind::usage, "--target-error raises the oracle's precision: no --noise or --oracle-bits");
  if (lo.heads_is_bound) throw Error(ErrorKind::usage, "--target-error needs a known head count (balls cannot certify H0 > H)");
  double log2_T;
  {
    PrecisionScope scope(128);
    Ball t(o.target_error);
    arb_log_base_ui(t.raw(), t.raw(), 2, 128);
    log2_T = t.mid_double();
  }
  r["target_error"] = o.target_error.str();
  long calls = 0;
  // 1. estimate: a float run whose own error (about kappa_rel 2^-p) leaves at
  // least 32 good bits; kappa is only needed to within a few bits.
  double lk = NAN, lpair = NAN;
  long est_bits = 0;
  for (long pe = 64; pe <= o.max_bits && std::isnan(lk); pe *= 2) {
    PrecisionScope scope(pe);
    ModelOracle<Mpfr> oracle(truth, lo.tokens.den);
    try {
      const LearnResult<Mpfr> res = learn<Mpfr>(oracle, lo);
      calls += oracle.queries();
      const Sensitivity S = sensitivity_from_fits(res);
      if (std::log2(S.kappa_rel) <= pe - 32.0) {
        lk = std::log2(S.kappa_rel);
        lpair = std::log2(S.pair_cond);
        est_bits = pe;
      }
    } catch (const Error& e) {
      calls += oracle.queries();
      if (e.kind() != ErrorKind::unable && e.kind() != ErrorKind::degenerate && e.kind() != ErrorKind::inconsistent) throw;
    }
  }
  if (std::isnan(lk)) {
    r["status"] = "unable";
    r["message"] = "no float run up to " + std::to_string(o.max_bits) + " bits gave a reliable kappa estimate";
    r["heads_recovered"] = 0;
    r["oracle_calls"] = calls;
    return;
  }
  r["kappa_estimate"] = std::exp2(lk);
  r["estimate_bits"] = est_bits;
  // 2. start: the balls' radius grows like kappa_rel 2^-p; the pair
  // certificate (Krawczyk) needs roughly 2 log2(pair amplification) bits.
  const long guard = 16;
  long p = static_cast<long>(std::ceil(std::max(lk - log2_T, 2 * lpair))) + guard;
  p = std::clamp(p, 64L, o.max_bits);
  r["bits_start"] = p;
  json attempts = json::array();
  for (;;) {
    RecoverOptions oa = o;
    oa.bits = p;
    json ra = r;
    dispatch(ra, truth, canon, oa, lo, OracleNoise{});
    calls += ra.value("queries", 0L);
    const bool ok = ra["status"] == "ok" && ra["certified_relative_error"].is_number() &&
                    std::log2(ra["certified_relative_error"].get<double>()) <= log2_T;
    attempts.push_back({{"bits", p}, {"status", ra["status"]}, {"certified_relative_error", ra.value("certified_relative_error", json(nullptr))}});
    if (ok || p >= o.max_bits) {
      r = ra;
      r["bits"] = p;
      r["bits_used"] = p;
      if (!ok && r["status"] == "ok") {
        r["status"] = "unable";
        r["message"] = "relative error " + ra["certified_relative_error"].dump() + " not certified below the target at the cap of " +
                       std::to_string(o.max_bits) + " bits";
      }
      break;
    }
    p = std::min(2 * p, o.max_bits);
  }
  r["attempts"] = attempts;
  r["oracle_calls"] = calls;
}
}  // namespace

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
  if (o.samples_per_pair != 0 && o.certificate)
    throw Error(ErrorKind::usage, "--certificate records the paper's 2H+1 values per pair: it cannot be combined with --samples-per-pair");
  if (o.samples_per_pair != 0) {
    if (o.samples_per_pair <= 2 * lo.H + 1)
      throw Error(ErrorKind::usage, "--samples-per-pair must exceed 2H+1 = " + std::to_string(2 * lo.H + 1) + " (the default is exactly 2H+1)");
    lo.samples_per_pair = o.samples_per_pair;
    r["samples_per_pair"] = o.samples_per_pair;
    r["max_length_bound"] = o.samples_per_pair;
  }
  OracleNoise noise{o.oracle_bits, o.noise_eps, o.noise_seed, o.noise_pattern, {}};
  if (!o.noise_eps.is_zero()) {
    r["noise_pattern"] = noise_pattern_name(o.noise_pattern);
    noise_analysis(r, canon, o, lo, noise);
  } else if (o.noise_pattern != NoisePattern::uniform) {
    throw Error(ErrorKind::usage, "--noise-pattern needs --noise EPS");
  }
  if (!o.target_error.is_zero()) {
    auto_precision(r, truth, canon, o, lo);
    return r;
  }
  dispatch(r, truth, canon, o, lo, noise);
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
  if (r.contains("samples_per_pair")) {
    o << "  queries          " << r["queries"] << " (oversampled: 1 + (K-1) per pair; the paper's count 4Hd^2-2H+1 = " << r["paper_bound"] << ")\n";
    o << "  longest query    " << r["max_length"] << " (bound K = " << r["max_length_bound"] << ")\n";
  } else {
    o << "  queries          " << r["queries"] << " (paper bound 4Hd^2-2H+1 = " << r["paper_bound"] << ")\n";
    o << "  longest query    " << r["max_length"] << " (bound 2H+1 = " << r["max_length_bound"] << ")\n";
  }
  o << "  heads            " << r["heads_recovered"] << " recovered, " << r["heads_true"] << " in the canonical truth\n";
  if (r.contains("fit_threshold")) o << "  head-count test  " << r["fit_threshold"].get<std::string>() << "\n";
  if (r.contains("exact_match")) o << "  exact match      " << (r["exact_match"].get<bool>() ? "yes (equality in Q, up to permutation)" : "NO") << "\n";
  if (r.contains("contains_truth"))
    o << "  contains truth   " << (r["contains_truth"].get<bool>() ? "yes" : "NO") << ", max radius " << r["max_radius"].get<double>() << "\n";
  if (r.contains("max_rel_error")) o << "  max rel. error   " << r["max_rel_error"].dump() << "\n";
  if (r.contains("samples_per_pair")) o << "  oversampling     " << r["samples_per_pair"] << " values per pair (least squares)\n";
  if (r.contains("noise_pattern")) {
    o << "  noise            eps = " << r["noise_eps"].get<std::string>() << ", " << r["noise_pattern"].get<std::string>() << " pattern\n";
    o << "  kappa            " << r["kappa"].dump() << (r.contains("kappa_times_eps") ? "  (kappa * eps = " + r["kappa_times_eps"].dump() + ")" : "") << "\n";
    o << "  certified bound  " << r["certified_bound"].dump() << " (ball run on every answer within eps, " << r["certified_bits"] << " bits)"
      << (r.contains("certified_note") ? "; " + r["certified_note"].get<std::string>() : "") << "\n";
    o << "  observed error   " << (r.contains("observed_error") ? r["observed_error"].dump() : "-") << "\n";
  }
  if (r.contains("bits_used")) {
    o << "  target error     " << r["target_error"].get<std::string>() << ", kappa estimate " << r["kappa_estimate"].dump() << " (float run at "
      << r["estimate_bits"] << " bits)\n";
    o << "  precision        started at " << r["bits_start"] << " bits, used " << r["bits_used"] << " bits; " << r["attempts"].size()
      << " ball attempt(s), " << r["oracle_calls"] << " oracle calls in all\n";
  }
  if (r.contains("certified_relative_error") && !r.contains("noise_pattern"))
    o << "  certified rel. error " << r["certified_relative_error"].dump() << " (ball radius / head norm)\n";
  if (r.contains("heads") && r["d"].get<int>() <= 4) {
    int h = 0;
    for (const auto& hd : r["heads"]) {
      o << "  head " << ++h << ": v = " << hd["v"].dump() << "\n          W = " << hd["W"].dump() << "\n";
    }
  }
  return o.str();
}

}  // namespace mhaq
