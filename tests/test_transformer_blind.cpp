// Claim 5 without a known truth: transformer runs whose status comes from the
// answers alone (learn_transformer_blind), compared with the truth only
// afterwards. No run may end ok with a transformer that differs from the
// canonical truth, and none may call an identifiable model not identifiable.
// Every ok run is re-checked by an evaluator written here, in long double,
// sharing no code with the learner or the oracle.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "mhaq/model/transformer.hpp"
#include "mhaq/oracle/oracle_stack.hpp"
#include "mhaq/run/recover.hpp"
#include "mhaq/run/transformer_blind.hpp"
#include "test_record.hpp"
#include "test_util.hpp"

using namespace mhaq;
using nlohmann::json;

namespace {

using LD = long double;

// ---- the test's own evaluator: T(X) = sum_j u_j ReLU(sum_h U_hj^T z_h(X))
struct PlainTransformer {
  int d = 0;
  std::vector<std::vector<std::vector<LD>>> W;  // [h][a][b]
  std::vector<std::vector<std::vector<LD>>> U;  // [h][j][a]
  std::vector<LD> u;
};

LD to_ld(const Rational& q) {
  // numerator and denominator from the decimal text: no library conversion
  const std::string s = q.str();
  const auto slash = s.find('/');
  const LD num = std::stold(s.substr(0, slash));
  const LD den = slash == std::string::npos ? 1.0L : std::stold(s.substr(slash + 1));
  return num / den;
}

PlainTransformer plain(const TransformerModel& m) {
  PlainTransformer p;
  p.d = m.d;
  for (const auto& W : m.W) {
    std::vector<std::vector<LD>> w(m.d, std::vector<LD>(m.d));
    for (int a = 0; a < m.d; ++a)
      for (int b = 0; b < m.d; ++b) w[a][b] = to_ld(W(a, b));
    p.W.push_back(w);
  }
  for (const auto& Uh : m.U) {
    std::vector<std::vector<LD>> uh;
    for (const auto& v : Uh) {
      std::vector<LD> x;
      for (const auto& c : v) x.push_back(to_ld(c));
      uh.push_back(x);
    }
    p.U.push_back(uh);
  }
  for (const auto& c : m.u) p.u.push_back(to_ld(c));
  return p;
}

// value and a magnitude scale (sum of |terms|) for the tolerance
std::pair<LD, LD> evaluate(const PlainTransformer& t, const std::vector<std::vector<LD>>& X) {
  const auto& xN = X.back();
  const size_t H = t.W.size();
  std::vector<std::vector<LD>> z(H, std::vector<LD>(t.d, 0));
  for (size_t h = 0; h < H; ++h) {
    std::vector<LD> s(X.size());
    LD mx = -INFINITY;
    for (size_t i = 0; i < X.size(); ++i) {
      LD v = 0;
      for (int a = 0; a < t.d; ++a)
        for (int b = 0; b < t.d; ++b) v += X[i][a] * t.W[h][a][b] * xN[b];
      s[i] = v;
      mx = std::max(mx, v);
    }
    LD den = 0;
    for (size_t i = 0; i < X.size(); ++i) {
      const LD w = std::exp(s[i] - mx);
      den += w;
      for (int a = 0; a < t.d; ++a) z[h][a] += w * X[i][a];
    }
    for (int a = 0; a < t.d; ++a) z[h][a] /= den;
  }
  LD out = 0, scale = 0;
  for (size_t j = 0; j < t.u.size(); ++j) {
    LD g = 0, gs = 0;
    for (size_t h = 0; h < H; ++h)
      for (int a = 0; a < t.d; ++a) {
        g += t.U[h][j][a] * z[h][a];
        gs += std::fabs(t.U[h][j][a] * z[h][a]);
      }
    out += t.u[j] * (g > 0 ? g : 0);
    scale += std::fabs(t.u[j]) * gs;
  }
  return {out, scale};
}

// 200 fresh random real sequences, lengths 1-12, scales 1/8 to 8: the worst
// |T - T'| / max(scale, 1).
LD worst_difference(const TransformerModel& a, const TransformerModel& b, std::mt19937_64& rng) {
  const PlainTransformer pa = plain(a), pb = plain(b);
  std::uniform_int_distribution<int> len(1, 12), sc(0, 6);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  LD worst = 0;
  for (int t = 0; t < 200; ++t) {
    const LD scale = std::ldexp(1.0L, sc(rng) - 3);
    std::vector<std::vector<LD>> X(len(rng), std::vector<LD>(a.d));
    for (auto& x : X)
      for (auto& c : x) c = scale * unit(rng);
    const auto [va, sa] = evaluate(pa, X);
    const auto [vb, sb] = evaluate(pb, X);
    worst = std::max(worst, std::fabs(va - vb) / std::max<LD>(1, std::max(sa, sb)));
  }
  return worst;
}

// ---- stated conditions (README "One-layer transformers"), decided on the canonical truth
bool violates_stated_condition(const TransformerModel& c) {
  const int m = c.neurons(), H = c.heads(), d = c.d;
  if (d == 1 && H >= 2) return true;
  for (int h = 0; h < H; ++h) {  // a head invisible in the odd part: sum_j u_j U_hj = 0
    bool zero = true;
    for (int a = 0; a < d; ++a) {
      Rational s(0);
      for (int j = 0; j < m; ++j) s += c.u[j] * c.U[h][j][a];
      zero = zero && s.is_zero();
    }
    if (zero) return true;
  }
  for (int j = 0; j < m; ++j) {
    const QVec a = c.ubar(j);
    bool zero = true;
    for (const auto& x : a) zero = zero && x.is_zero();
    if (zero) return true;  // ubar_j = 0
    for (int k = j + 1; k < m; ++k) {  // parallel or antiparallel ubar: one hyperplane
      const QVec b = c.ubar(k);
      bool parallel = true;
      for (int r = 0; r < d; ++r)
        for (int t = r + 1; t < d; ++t) parallel = parallel && a[r] * b[t] == a[t] * b[r];
      if (parallel) return true;
    }
  }
  // a signed subset of the jumps w_j = u_j U_.j summing to zero (several sign vectors fit)
  std::vector<QVec> w;
  for (int j = 0; j < m; ++j) {
    QVec v;
    for (int h = 0; h < H; ++h)
      for (int a = 0; a < d; ++a) v.push_back(c.u[j] * c.U[h][j][a]);
    w.push_back(v);
  }
  long total = 1;
  for (int j = 0; j < m; ++j) total *= 3;
  for (long code = 1; code < total; ++code) {
    QVec s(static_cast<size_t>(H) * d, Rational(0));
    long x = code;
    bool some = false;
    for (int j = 0; j < m; ++j, x /= 3) {
      const int coef = static_cast<int>(x % 3) - 1;
      some = some || coef != 0;
      if (coef)
        for (size_t i = 0; i < s.size(); ++i) s[i] += Rational(coef) * w[j][i];
    }
    bool zero = true;
    for (const auto& e : s) zero = zero && e.is_zero();
    if (zero && some) return true;
  }
  return false;
}

struct BlindOutcome {
  BlindTransformerRun run;
  bool ok = false, exact = false;
};

BlindOutcome run_blind(const TransformerModel& truth, std::uint64_t seed) {
  const TransformerModel canon = truth.canonical();
  TransformerLearnOptions lo;
  lo.H = canon.heads();  // told, as recover tells it
  lo.seed = learner_seed(seed);
  lo.tokens = TokenSpec{16, 16};
  BlindOutcome o;
  {
    OracleStack<QTau> oracle_stack = OracleStack<QTau>::transformer(truth, 16);  // the learner sees this Oracle<QTau>& and nothing else
    Oracle<QTau>& oracle = oracle_stack.top();
    o.run = learn_transformer_blind(oracle, lo);
  }
  // only now, after the run has ended, the truth
  o.ok = o.run.status == "ok";
  o.exact = compare_blind(o.run, truth).exact_match;
  return o;
}

Rational rq(std::mt19937_64& rng, long range, long den) {
  std::uniform_int_distribution<long> dist(-range, range);
  return Rational(dist(rng), static_cast<unsigned long>(den));
}

}  // namespace

TEST_CASE("the seed-33 model: ok and exact, or a message naming the two close hyperplanes (must-show 1)") {
  const std::string bin = MHAQ_BINARY;
  const std::string file = (std::filesystem::temp_directory_path() / "mhaq_tfm_seed33.json").string();
  REQUIRE(test::run(bin + " generate --d 2 --heads 1 --ffn 2 --seed 33 -o " + file).code == 0);
  const auto r = test::run(bin + " recover --model " + file + " --seed 33 --json");
  const RecoverResult rec = test::record_of(r.out);
  INFO(r.out.substr(0, 1500));
  const Status st = rec.judge.status;
  if (st == Status::ok) {
    CHECK(r.code == 0);
    CHECK(rec.truth.exact_match == true);
    CHECK(rec.evidence.neurons_recovered == 2);
    REQUIRE(rec.evidence.angular_resolution_deg.has_value());
    CHECK(*rec.evidence.angular_resolution_deg < 4.4);
  } else {
    CHECK(st != Status::not_identifiable);
    CHECK(st != Status::mismatch);
    CHECK(rec.judge.message.find("hyperplane") != std::string::npos);
  }
  CHECK(rec.judge.blind_status == st);
  std::remove(file.c_str());
}

TEST_CASE("the issue's near-parallel pair (U = (-5/4, 3/2) and (-9/8, 13/8), u = -1) is not called not identifiable") {
  TransformerModel t;
  t.d = 2;
  QMat W(2, 2);
  W(0, 0) = Rational(1, 2);
  W(0, 1) = Rational(-1, 4);
  W(1, 0) = Rational(1, 4);
  W(1, 1) = Rational(3, 4);
  t.W = {W};
  t.U = {{QVec{Rational(-5, 4), Rational(3, 2)}, QVec{Rational(-9, 8), Rational(13, 8)}}};
  t.u = {Rational(-1), Rational(-1)};
  REQUIRE_FALSE(violates_stated_condition(t.canonical()));
  test::Outcomes runs("near-parallel pair, seeds 1-3");
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const BlindOutcome o = run_blind(t, seed);
    INFO("seed " << seed << ": " << o.run.status << ": " << o.run.message);
    CHECK(o.run.status != "not_identifiable");
    CHECK(!(o.ok && !o.exact));
    runs.count(o.run.status);
  }
  runs.require(1, {"ok"});
}

TEST_CASE("a hyperplane through a grid point of the path is not a neuron with ubar_j = 0") {
  // From the near-parallel family (3.6 degrees): neuron 1's hyperplane is
  // y_2 = 0, so the path's point (-240, 0) lies on it, and the jump from
  // (-240, 1/16) has zero normal. Single tokens kink exactly at that end
  // point; a kink test confined to the closed piece missed it and called the
  // model not identifiable.
  TransformerModel t;
  t.d = 2;
  QMat W1(2, 2), W2(2, 2);
  W1(0, 0) = Rational(3, 4), W1(0, 1) = Rational(1, 2), W1(1, 0) = Rational(1), W1(1, 1) = Rational(-1);
  W2(0, 0) = Rational(-3, 4), W2(0, 1) = Rational(-1, 2), W2(1, 0) = Rational(-3, 4), W2(1, 1) = Rational(-3, 4);
  t.W = {W1, W2};
  t.U = {{QVec{Rational(-3, 4), Rational(3, 2)}, QVec{Rational(-2), Rational(2)}},
         {QVec{Rational(3, 4), Rational(-11, 4)}, QVec{Rational(4255, 2048), Rational(-13, 4)}}};
  t.u = {Rational(-1), Rational(-1)};
  REQUIRE_FALSE(violates_stated_condition(t.canonical()));
  const BlindOutcome o = run_blind(t, 4);
  INFO(o.run.status << ": " << o.run.message);
  CHECK(o.run.status != "not_identifiable");
  CHECK(!(o.ok && !o.exact));
}

TEST_CASE("a path corner on a hyperplane is not a neuron with ubar_j = 0") {
  // From the near-parallel family (6.6 degrees): at seed 4 the path's corner
  // (-4, 7/2) lies on neuron 1's hyperplane 7 y_1 + 8 y_2 = 0, where the probe
  // pairs flip at every offset scale. Single tokens kink there, so the
  // verdict is degenerate (it was not_identifiable); seed 1 recovers it.
  TransformerModel t;
  t.d = 2;
  QMat W(2, 2);
  W(0, 0) = Rational(0), W(0, 1) = Rational(0), W(1, 0) = Rational(3, 4), W(1, 1) = Rational(-1, 4);
  t.W = {W};
  t.U = {{QVec{Rational(-7, 4), Rational(-2)}, QVec{Rational(-1555, 1024), Rational(-18043, 8192)}}};
  t.u = {Rational(2), Rational(2)};
  REQUIRE_FALSE(violates_stated_condition(t.canonical()));
  test::Outcomes runs("corner on a hyperplane, seeds 4 and 1");
  for (std::uint64_t seed : {4, 1}) {
    const BlindOutcome o = run_blind(t, seed);
    INFO("seed " << seed << ": " << o.run.status << ": " << o.run.message);
    CHECK(o.run.status != "not_identifiable");
    CHECK(!(o.ok && !o.exact));
    runs.count(o.run.status);
  }
  runs.require(1, {"ok"});  // seed 1 recovers it
}

TEST_CASE("blind soak: random transformers and a near-parallel family, never ok and wrong (must-show 2, 3)") {
  const int mult = test::multiplier();
  std::mt19937_64 eval_rng(0xe7a1);
  std::map<std::string, int> statuses;
  int ok_runs = 0, checked_ok = 0, stated = 0, ni_stated = 0;
  test::Outcomes random_runs("blind soak, random transformers"), family_runs("blind soak, near-parallel family");
  LD worst = 0;
  auto check_ok = [&](const TransformerModel& truth, const BlindOutcome& o) {
    if (!o.ok) return;
    ++ok_runs;
    CHECK(o.exact);  // never ok and wrong
    const LD w = worst_difference(truth.canonical(), o.run.learned, eval_rng);
    worst = std::max(worst, w);
    CHECK(w < 1e-12L);
    ++checked_ok;
  };
  // (1) random transformers: d <= 3, H <= 2, m <= 4, shared W, zero and parallel
  // neurons. 20 per unit of MHAQ_TEST_MULTIPLIER (the CI default, 1, keeps the
  // suite's budget); 1000 random and 200 near-parallel models are MHAQ_TEST_MULTIPLIER=50.
  const int n_random = 20 * mult;
  std::mt19937_64 rng(0x5eed);
  for (int t = 0; t < n_random; ++t) {
    TransformerGenerateOptions g;
    g.d = static_cast<int>(std::uniform_int_distribution<int>(1, 3)(rng));
    g.heads = static_cast<int>(std::uniform_int_distribution<int>(1, 2)(rng));
    g.neurons = static_cast<int>(std::uniform_int_distribution<int>(1, 4)(rng));
    g.seed = rng();
    const int variant = std::uniform_int_distribution<int>(0, 3)(rng);
    g.share_w = variant == 1 && g.heads >= 2;
    g.zero_neuron = variant == 2 && g.neurons < 4;
    g.parallel_neurons = variant == 3 && g.neurons < 4;
    const TransformerModel truth = generate_transformer(g);
    const TransformerModel canon = truth.canonical();
    if (canon.heads() == 0 || canon.neurons() == 0) continue;
    const BlindOutcome o = run_blind(truth, 1 + t % 7);
    INFO("random " << t << " d=" << g.d << " H=" << g.heads << " m=" << g.neurons << " seed " << g.seed << ": " << o.run.status << ": "
                   << o.run.message);
    ++statuses[o.run.status];
    random_runs.count(o.run.status);
    const bool cond = violates_stated_condition(canon);
    stated += cond;
    if (o.run.status == "not_identifiable") {
      CHECK(cond);  // never for an identifiable model
      ni_stated += cond;
    }
    CHECK(o.run.status != "mismatch");
    check_ok(truth, o);
  }
  std::printf("blind soak, %d random transformers: ", n_random);
  for (const auto& [k, v] : statuses) std::printf("%s %d, ", k.c_str(), v);
  std::printf("(%d violate a stated condition; %d of them not_identifiable)\n", stated, ni_stated);
  // (2) two neurons whose hyperplanes meet at 0.5-10 degrees, U not parallel
  const int n_family = 5 * mult;
  const double bands[] = {0.5, 1, 2, 5, 10.0001};
  int band_total[4] = {0, 0, 0, 0}, band_ok[4] = {0, 0, 0, 0};
  std::map<std::string, int> fam_status;
  std::mt19937_64 frng(0xfa1);
  std::uniform_real_distribution<double> angle(0.5, 10.0);
  for (int t = 0; t < n_family;) {
    const int d = std::uniform_int_distribution<int>(2, 3)(frng), H = std::uniform_int_distribution<int>(1, 2)(frng);
    TransformerModel m;
    m.d = d;
    for (int h = 0; h < H; ++h) {
      QMat W(d, d);
      for (int a = 0; a < d; ++a)
        for (int b = 0; b < d; ++b) W(a, b) = rq(frng, 4, 4);
      m.W.push_back(W);
    }
    // ubar_1 = a, ubar_2 = a + c r with r orthogonal to a, |r| = |a|, c ~ tan(theta)
    QVec a(d), r(d);
    for (auto& x : a) x = rq(frng, 8, 4);
    for (auto& x : r) x = rq(frng, 8, 4);
    if (dot(a, a).is_zero()) continue;
    const Rational proj = dot(r, a) / dot(a, a);
    for (int i = 0; i < d; ++i) r[i] -= proj * a[i];
    if (dot(r, r).is_zero()) continue;
    const double theta = angle(frng) * M_PI / 180.0;
    const double c = std::tan(theta) * std::sqrt(to_ld(dot(a, a)) / to_ld(dot(r, r)));
    const Rational cq(std::llround(c * 4096), 4096);
    QVec b(d);
    for (int i = 0; i < d; ++i) b[i] = a[i] + cq * r[i];
    // the actual angle between the hyperplanes
    const LD ab = to_ld(dot(a, b)), aa = to_ld(dot(a, a)), bb = to_ld(dot(b, b));
    const double deg = static_cast<double>(std::acos(std::min<LD>(1, std::fabs(ab) / std::sqrt(aa * bb))) * 180.0L / M_PI);
    if (deg < 0.5 || deg > 10) continue;
    // U_{h,j}: head blocks summing to ubar_j, different splits (H = 2)
    m.U.assign(H, {});
    for (const QVec* ub : {&a, &b}) {
      QVec rest = *ub;
      for (int h = 0; h + 1 < H; ++h) {
        QVec part(d);
        for (auto& x : part) x = rq(frng, 8, 4);
        for (int i = 0; i < d; ++i) rest[i] -= part[i];
        m.U[h].push_back(part);
      }
      m.U[H - 1].push_back(rest);
    }
    const long u1 = std::uniform_int_distribution<int>(0, 1)(frng) ? 1 : -1, u2 = std::uniform_int_distribution<int>(0, 1)(frng) ? 1 : -1;
    m.u = {Rational(u1 * std::uniform_int_distribution<int>(1, 3)(frng)), Rational(u2 * std::uniform_int_distribution<int>(1, 3)(frng))};
    const TransformerModel canon = m.canonical();
    if (canon.neurons() != 2 || canon.heads() != H || violates_stated_condition(canon)) continue;  // the family is identifiable
    ++t;
    const BlindOutcome o = run_blind(m, 1 + t % 5);
    INFO("family " << t << " d=" << d << " H=" << H << " angle " << deg << ": " << o.run.status << ": " << o.run.message);
    CHECK(o.run.status != "not_identifiable");
    CHECK(o.run.status != "mismatch");
    ++fam_status[o.run.status];
    family_runs.count(o.run.status);
    int band = 0;
    while (band < 3 && deg >= bands[band + 1]) ++band;
    ++band_total[band];
    band_ok[band] += o.ok;
    check_ok(m, o);
  }
  std::printf("near-parallel family, %d models: ", n_family);
  for (const auto& [k, v] : fam_status) std::printf("%s %d, ", k.c_str(), v);
  std::printf("\n  ok fraction per angle band:");
  for (int b = 0; b < 4; ++b) std::printf(" [%g, %g): %d/%d", bands[b], b == 3 ? 10.0 : bands[b + 1], band_ok[b], band_total[b]);
  std::printf("\n  ok runs %d, each checked on 200 fresh real sequences by the test's own evaluator: worst |T - T'| / max(scale, 1) = %.3Lg\n",
              ok_runs, worst);
  CHECK(checked_ok == ok_runs);
  random_runs.require(n_random * 2 / 5, {"ok"});  // 11 of 20 at MHAQ_TEST_MULTIPLIER=1
  family_runs.require(1, {"ok"});
}

TEST_CASE("blind: two neurons on one hyperplane whose U differ across heads are never ok and wrong") {
  // H = 2, ubar_2 = lambda ubar_1 with lambda > 0 while U_{.,1} and U_{.,2} are
  // not parallel: on single tokens (every head's output the token itself) the
  // pair acts as one neuron, and only sequences whose head outputs differ show
  // two. The condition "no two hyperplanes coincide" fails, so not_identifiable
  // is a right verdict here and ok is wrong unless the recovery is exact.
  const int n = 3 * test::multiplier();
  std::mt19937_64 rng(0x5a3e);
  std::map<std::string, int> statuses;
  test::Outcomes runs("shared-hyperplane family");
  for (int t = 0; t < n;) {
    const int d = std::uniform_int_distribution<int>(2, 3)(rng);
    TransformerModel m;
    m.d = d;
    for (int h = 0; h < 2; ++h) {
      QMat W(d, d);
      for (int a = 0; a < d; ++a)
        for (int b = 0; b < d; ++b) W(a, b) = rq(rng, 8, 8);
      m.W.push_back(W);
    }
    QVec U10(d), U11(d), D(d);
    for (int a = 0; a < d; ++a) {
      U10[a] = rq(rng, 8, 8);
      U11[a] = rq(rng, 8, 8);
      D[a] = rq(rng, 8, 8);
    }
    const Rational lambda(std::uniform_int_distribution<long>(1, 3)(rng), static_cast<unsigned long>(std::uniform_int_distribution<long>(1, 2)(rng)));
    QVec U20(d), U21(d);
    for (int a = 0; a < d; ++a) {
      U20[a] = lambda * U10[a] + D[a];
      U21[a] = lambda * U11[a] - D[a];
    }
    m.U = {{U10, U20}, {U11, U21}};
    m.u = {Rational(1), Rational(std::uniform_int_distribution<int>(0, 1)(rng) ? 1 : -1)};
    const TransformerModel canon = m.canonical();
    if (canon.neurons() != 2 || canon.heads() != 2) continue;  // D parallel to U: the neurons merge canonically
    ++t;
    const BlindOutcome o = run_blind(m, 1 + t % 5);
    INFO("shared hyperplane " << t << " d=" << d << ": " << o.run.status << ": " << o.run.message);
    REQUIRE(violates_stated_condition(canon));
    ++statuses[o.run.status];
    runs.count(o.ok ? (o.exact ? "ok and exact" : "ok and WRONG") : o.run.status);
    CHECK(!(o.ok && !o.exact));
  }
  std::printf("shared-hyperplane family, %d models: ", n);
  for (const auto& [k, v] : statuses) std::printf("%s %d, ", k.c_str(), v);
  std::printf("\n");
  // decided: a verdict this family may have (the condition fails), or an exact recovery
  runs.require(n, {"not_identifiable", "degenerate", "ok and exact"});
}

namespace {
TransformerModel transformer_of(const char* text) { return transformer_from_json_text(text); }
}  // namespace

TEST_CASE("a single small neuron keeps its direction: ok at every seed, exact and in balls") {
  // u = 2^-20: its jump (about 2e-6) once rounded its predicted normal to the
  // 2^-24 grid, so the test points missed the hyperplane at every seed. The
  // status is decided blind, then compared with the truth.
  const TransformerModel t = transformer_of(
      R"({"format": "mhaq-transformer", "version": 1, "d": 2, "heads": [{"W": [["-1/4", "1/2"], ["1/4", "1"]]}],
          "neurons": [{"u": "1/1048576", "U": [["11455/32768", "267073/131072"]]}]})");
  REQUIRE_FALSE(violates_stated_condition(t.canonical()));
  test::Outcomes exact("small neuron, exact, seeds 1-6");
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const BlindOutcome o = run_blind(t, seed);
    INFO("seed " << seed << ": " << o.run.status << ": " << o.run.message);
    CHECK(!(o.ok && !o.exact));
    CHECK(o.run.status != "not_identifiable");
    exact.count(o.run.status);
  }
  RecoverOptions b;
  b.arith = Arith::ball;
  b.bits = 256;
  test::Outcomes ball("small neuron, ball 256, seeds 1-2");
  for (std::uint64_t seed = 1; seed <= 2; ++seed) {
    b.seed = seed;
    const RecoverResult r = recover_transformer_run(t, b);
    INFO("ball seed " << seed << ": " << status_name(r.judge.status) << ": " << r.judge.message);
    CHECK(r.judge.blind_status == r.judge.status);
    if (r.judge.status == Status::ok) CHECK(r.truth.contains_truth == true);
    ball.count(status_name(r.judge.status));
  }
  exact.require(6, {"ok"});  // every seed: the failure was no draw's
  ball.require(2, {"ok"});
}

TEST_CASE("smaller neurons 1-30 degrees from a large one, down to u = 2^-200, keep their direction") {
  struct Tiny {
    const char* U;
    int log2_u;
  };
  test::Outcomes runs("tiny neuron beside a large one, exact");
  for (const Tiny& n : {Tiny{R"(["3915/4096", "8287/4096"])", 20}, Tiny{R"(["4057/4096", "8227/4096"])", 20}, Tiny{R"(["3840/4096", "8385/4096"])", 40},
                        Tiny{R"(["3" , "-1"])", 100}, Tiny{R"(["1", "-5"])", 200}}) {
    TransformerModel t = transformer_of(R"({"format": "mhaq-transformer", "version": 1, "d": 2, "heads": [{"W": [["-1/4", "1/2"], ["1/4", "1"]]}],
        "neurons": [{"u": "1", "U": [["1", "2"]]}]})");
    Rational u(1);
    for (int k = 0; k < n.log2_u; ++k) u /= Rational(2);
    t.u.push_back(u);
    const nlohmann::json U = nlohmann::json::parse(n.U);
    t.U[0].push_back(QVec{Rational::parse(U[0].get<std::string>()), Rational::parse(U[1].get<std::string>())});
    REQUIRE_FALSE(violates_stated_condition(t.canonical()));
    const BlindOutcome o = run_blind(t, 1);
    INFO("u = 2^-" << n.log2_u << ", U = " << n.U << ": " << o.run.status << ": " << o.run.message);
    CHECK(!(o.ok && !o.exact));
    CHECK(o.run.status != "not_identifiable");
    runs.count(o.run.status);
  }
  runs.require(5, {"ok"});
}

TEST_CASE("two neurons of opposite directions on one hyperplane: the same true verdict exact and in balls") {
  // d = 1, H = 1: every hyperplane is the point 0, so the canonical neurons
  // U > 0 and U < 0 share it, and the stated condition fails. Balls were told
  // the canonical count 2, saw one crossing and said inconsistent; exact mode
  // said degenerate. Both now name the condition; no seed changes it.
  const TransformerModel d1 = transformer_of(
      R"({"format": "mhaq-transformer", "version": 1, "d": 1, "heads": [{"W": [["3/4"]]}],
          "neurons": [{"u": "15/4", "U": [["-3/8"]]}, {"u": "3/32", "U": [["1/4"]]}, {"u": "1/2", "U": [["5/128"]]}, {"u": "5/4", "U": [["-3/2"]]}]})");
  // d = 2, H = 1: U_2 = -2 U_1 exactly
  const TransformerModel d2 = transformer_of(
      R"({"format": "mhaq-transformer", "version": 1, "d": 2, "heads": [{"W": [["1/2", "-1/4"], ["1/4", "3/4"]]}],
          "neurons": [{"u": "1", "U": [["3/4", "-1/2"]]}, {"u": "1/2", "U": [["-3/2", "1"]]}, {"u": "-1", "U": [["1/4", "1"]]}]})");
  test::Outcomes outcomes("opposite neurons on one hyperplane, exact and ball");
  for (const TransformerModel* t : {&d1, &d2}) {
    const TransformerModel canon = t->canonical();
    REQUIRE(violates_stated_condition(canon));  // the condition the verdict may name
    for (std::uint64_t seed = 1; seed <= 2; ++seed) {
      const BlindOutcome o = run_blind(*t, seed);
      INFO("d = " << t->d << ", exact, seed " << seed << ": " << o.run.status << ": " << o.run.message);
      CHECK(!(o.ok && !o.exact));
      CHECK(o.run.status != "inconsistent");
      if (t->d == 1) CHECK(o.run.status == "not_identifiable");
      outcomes.count(o.run.status);
      RecoverOptions b;
      b.arith = Arith::ball;
      b.bits = 256;
      b.seed = seed;
      const RecoverResult r = recover_transformer_run(*t, b);
      INFO("ball: " << status_name(r.judge.status) << ": " << r.judge.message);
      CHECK(r.judge.status != Status::inconsistent);  // the answers fit the stated counts
      CHECK(r.judge.status != Status::mismatch);
      if (t->d == 1) CHECK(r.judge.status == Status::not_identifiable);
      // balls cannot certify that the kinks coincide: they say both, never ok
      if (t->d == 2) CHECK((r.judge.status == Status::not_identifiable || r.judge.status == Status::degenerate || r.judge.status == Status::unable));
      outcomes.count(status_name(r.judge.status));
    }
  }
  outcomes.require(8, {"ok", "not_identifiable", "degenerate"});
}
