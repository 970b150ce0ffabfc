// One generic test body per stage, instantiated over the four number types
// (Boost.Multiprecision's test_arithmetic style): equality where the type is
// exact, containment with precision doubling for balls, a stated tolerance for
// floats. Then the exact sign test against 4096-bit Arb.
#include <doctest/doctest.h>

#include <arb_poly.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "mhaq/arith/qtau_access.hpp"
#include "mhaq/base/random.hpp"
#include "mhaq/stages/learner.hpp"
#include "mhaq/oracle/oracle_stack.hpp"
#include "mhaq/run/recover.hpp"
#include "test_util.hpp"

using namespace mhaq;

namespace {

constexpr long kL = 8;  // tau = e^{1/8} for the exact field

// A number the test knows exactly, computed in any field: q0 + sum_t q_t e^{s_t}
// is enough for every quantity below (P, c_h are rationals; r_h = e^{s_h}).
struct Known {
  Rational q;  // rational part
  Rational s;  // exponent of e^s (used when `is_exp`)
  bool is_exp = false;
  template <class F>
  typename F::value_type in(const F& fld) const { return is_exp ? fld.exp(s) : fld.from(q); }
};

// The comparison contract of each arithmetic.
template <class T>
struct Contract;
template <>
struct Contract<QTau> {
  static Field<QTau> field() { return Field<QTau>(kL); }
  static long start_bits() { return 64; }
  static bool close(const Field<QTau>& F, const QTau& x, const Known& k) { return F.equal(x, k.in(F)) == Truth::yes; }
  static const char* what() { return "equality in Q(tau)"; }
};
template <>
struct Contract<Ball> {
  static Field<Ball> field() { return Field<Ball>{}; }
  static long start_bits() { return 64; }
  static bool close(const Field<Ball>&, const Ball& x, const Known& k) {
    PrecisionScope hi(4 * working_precision());
    const Ball t = k.in(Field<Ball>{});
    return arb_contains(x.raw(), t.raw());
  }
  static const char* what() { return "the ball contains the truth"; }
};
template <class T>
struct FloatContract {
  static long start_bits() { return 128; }
  static bool close(const Field<T>& F, const T& x, const Known& k) {
    const T t = k.in(F);
    const double rel = F.log2_abs(x - t) - std::max(0.0, F.log2_abs(t));
    return rel <= -static_cast<double>(F.precision()) / 4;  // the default tolerance
  }
  static const char* what() { return "relative error within 2^(-bits/4)"; }
};
template <>
struct Contract<Mpfr> : FloatContract<Mpfr> {
  static Field<Mpfr> field() { return Field<Mpfr>{}; }
};
template <>
struct Contract<double> : FloatContract<double> {
  static Field<double> field() { return Field<double>{}; }
};

// Runs body at rising precision (balls: Arb's t-solve pattern; the others run
// once): an `unable` is retried at twice the bits, up to 1024.
template <class T>
void with_precision(const std::function<void()>& body) {
  for (long bits = Contract<T>::start_bits();; bits *= 2) {
    PrecisionScope scope(bits);
    try {
      body();
      return;
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::unable || bits >= 1024) throw;
    }
  }
}

struct PairCase {
  Rational P;
  std::vector<Rational> s, c;  // r_h = e^{s_h}, residues
};
PairCase draw_pair(Rng& rng, int H) {
  PairCase pc{Rational(rng.uniform_int(-20, 20), 4), {}, {}};
  std::vector<long> used;
  while (static_cast<int>(pc.s.size()) < H) {
    const long n = rng.uniform_int(-12, 12);  // s = n / L: poles e^{-1.5} .. e^{1.5}
    if (std::find(used.begin(), used.end(), n) != used.end()) continue;
    used.push_back(n);
    pc.s.push_back(Rational(n, kL));
    long c = 0;
    while (c == 0) c = rng.uniform_int(-16, 16);
    pc.c.push_back(Rational(c, 8));
  }
  return pc;
}
template <class F>
std::vector<typename F::value_type> samples(const F& fld, const PairCase& pc, int K) {
  std::vector<typename F::value_type> f;
  for (int k = 0; k < K; ++k) {
    auto v = fld.from(pc.P);
    for (size_t h = 0; h < pc.s.size(); ++h) v = v + fld.from(pc.c[h]) / (fld.from(Rational(1)) + fld.exp(pc.s[h]) * fld.from(Rational(k)));
    f.push_back(v);
  }
  return f;
}

}  // namespace

#define MHAQ_TYPES QTau, Ball, Mpfr, double

TEST_CASE_TEMPLATE("stage 3: a pair's type-(H,H) interpolant gives P, the poles and the residues", T, MHAQ_TYPES) {
  Rng rng(1101);
  const int n = 30 * test::multiplier();
  test::Outcomes cases(std::string("pair interpolants, ") + Contract<T>::what());
  for (int t = 0; t < n; ++t) {
    const int H = 1 + t % 3;
    const PairCase pc = draw_pair(rng, H);
    with_precision<T>([&] {
      const auto F = Contract<T>::field();
      const PairFit<T> fit = interpolate_pair(F, samples(F, pc, 2 * H + 1), H);
      INFO("case " << t << ", H = " << H << ": " << Contract<T>::what());
      REQUIRE(fit.heads() == H);
      CHECK(Contract<T>::close(F, fit.P, Known{pc.P}));
      // heads come in no particular order: each true head must be matched by one fitted head
      const Assignment a = match_heads(H, [&](int h, int g) {
        return truth_of(Contract<T>::close(F, fit.r[g], Known{{}, pc.s[h], true}) && Contract<T>::close(F, fit.c[g], Known{pc.c[h]}));
      });
      CHECK(a.kind != Assignment::Kind::none);
      cases.count(a.kind != Assignment::Kind::none ? "every head matched" : "a head missed");
    });
  }
  cases.require(n, {"every head matched"});
}

TEST_CASE_TEMPLATE("stage 3: the minimal type through extra values is the true head count", T, QTau, Mpfr) {
  Rng rng(1102);
  const int n = 10 * test::multiplier();
  test::Outcomes cases(std::string("minimal types, ") + Contract<T>::what());
  for (int t = 0; t < n; ++t) {
    const int H = 1 + t % 2, H0 = H + 2;
    const PairCase pc = draw_pair(rng, H);
    with_precision<T>([&] {
      const auto F = Contract<T>::field();
      const PairFit<T> fit = interpolate_pair_minimal(F, samples(F, pc, 2 * H0 + 1), H0);
      CHECK(fit.heads() == H);
      cases.count(fit.heads() == H ? "true type" : "wrong type");
    });
  }
  cases.require(n, {"true type"});
}

TEST_CASE_TEMPLATE("arithmetic: real_roots of prod (1 + r_h k) are -1/r_h", T, MHAQ_TYPES) {
  Rng rng(1103);
  const int n = 30 * test::multiplier();
  test::Outcomes cases(std::string("pole polynomials, ") + Contract<T>::what());
  for (int t = 0; t < n; ++t) {
    const int H = 1 + t % 4;
    const PairCase pc = draw_pair(rng, H);
    with_precision<T>([&] {
      const auto F = Contract<T>::field();
      std::vector<T> Q{F.from(Rational(1))};
      for (int h = 0; h < H; ++h) {  // multiply by (1 + r_h k)
        const T r = F.exp(pc.s[h]);
        std::vector<T> next(Q.size() + 1, F.from(Rational(0)));
        for (size_t m = 0; m < Q.size(); ++m) {
          next[m] = next[m] + Q[m];
          next[m + 1] = next[m + 1] + Q[m] * r;
        }
        Q = next;
      }
      const Roots<T> rt = F.real_roots(Q);
      require_truth(rt.ok, ErrorKind::inconsistent, "real_roots: " + rt.why);
      REQUIRE(static_cast<int>(rt.roots.size()) == H);
      const Assignment a = match_heads(H, [&](int h, int g) {
        return truth_of(Contract<T>::close(F, F.from(Rational(-1)) / rt.roots[g], Known{{}, pc.s[h], true}));
      });
      CHECK(a.kind == Assignment::Kind::unique);
      cases.count(a.kind == Assignment::Kind::unique ? "roots matched" : "roots unmatched");
    });
  }
  cases.require(n, {"roots matched"});
}

TEST_CASE_TEMPLATE("arithmetic: solve agrees with the exact rational solution", T, MHAQ_TYPES) {
  Rng rng(1104);
  const int n_sys = 30 * test::multiplier();
  test::Outcomes cases(std::string("rational systems, ") + Contract<T>::what());
  for (int t = 0; t < n_sys; ++t) {
    const int n = 1 + t % 6;
    QMat A(n, n);
    QVec b(n);
    for (int i = 0; i < n; ++i) {
      b[i] = Rational(rng.uniform_int(-9, 9), 3);
      for (int j = 0; j < n; ++j) A(i, j) = Rational(rng.uniform_int(-9, 9), 2);
    }
    QVec x;
    if (!solve(A, b, x)) {
      cases.count("singular (skipped)");
      continue;
    }
    cases.count("solved and compared");
    with_precision<T>([&] {
      const auto F = Contract<T>::field();
      Mat<T> Am(n, n), Bm(n, 1), X;
      for (int i = 0; i < n; ++i) {
        Bm(i, 0) = F.from(b[i]);
        for (int j = 0; j < n; ++j) Am(i, j) = F.from(A(i, j));
      }
      require_truth(F.solve(X, Am, Bm), ErrorKind::degenerate, "a nonsingular rational system");
      for (int i = 0; i < n; ++i) CHECK(Contract<T>::close(F, X(i, 0), Known{x[i]}));
    });
  }
  cases.require(n_sys * 3 / 4, {"solved and compared"});
}

TEST_CASE_TEMPLATE("stage 4: link relations recover a hidden permutation", T, MHAQ_TYPES) {
  Rng rng(1105);
  const int n = 20 * test::multiplier();
  test::Outcomes cases(std::string("hidden permutations, ") + Contract<T>::what());
  for (int t = 0; t < n; ++t) {
    const int H = 1 + t % 3;
    PairCase ref = draw_pair(rng, H), cur = draw_pair(rng, H);
    std::vector<int> perm(H);
    for (int h = 0; h < H; ++h) perm[h] = h;
    for (int h = H - 1; h > 0; --h) std::swap(perm[h], perm[rng.uniform_int(0, h)]);
    with_precision<T>([&] {
      const auto F = Contract<T>::field();
      auto fit_of = [&](const std::vector<Rational>& s, const std::vector<Rational>& c) {
        PairFit<T> f{F.from(Rational(0)), {}, {}};
        for (size_t h = 0; h < s.size(); ++h) {
          f.r.push_back(F.exp(s[h]));
          f.c.push_back(F.from(c[h]));
        }
        return f;
      };
      // cur's head perm[h] is ref's head h; the within link has products and sums
      std::vector<Rational> cs(H), cc(H), ls(H), lc(H);
      for (int h = 0; h < H; ++h) {
        cs[perm[h]] = cur.s[h];
        cc[perm[h]] = cur.c[h];
        ls[(h + 1) % H] = ref.s[h] + cur.s[h];  // the link's own order is arbitrary too
        lc[(h + 1) % H] = ref.c[h] + cur.c[h];
      }
      const PairFit<T> r = fit_of(ref.s, ref.c), c = fit_of(cs, cc), l = fit_of(ls, lc);
      const Assignment a = label_assignment(F, r, c, &l, Relation::within);
      INFO("case " << t << ", H = " << H);
      REQUIRE(a.kind == Assignment::Kind::unique);
      CHECK(a.perm == perm);
      cases.count(a.perm == perm ? "permutation recovered" : "wrong permutation");
    });
  }
  cases.require(n, {"permutation recovered"});
}

TEST_CASE("assignment: uniqueness, ambiguity and the bottleneck matching") {
  // identity forced; a 2-cycle of unknowns is ambiguous but not certainly so
  auto m = [](std::vector<std::vector<Truth>> c) {
    return match_heads(static_cast<int>(c.size()), [&](int h, int g) { return c[h][g]; });
  };
  const Truth y = Truth::yes, n = Truth::no, u = Truth::unknown;
  CHECK(m({{y, n}, {n, y}}).kind == Assignment::Kind::unique);
  CHECK(m({{n, y}, {y, n}}).perm == std::vector<int>{1, 0});
  CHECK(m({{n, n}, {y, y}}).kind == Assignment::Kind::none);
  const Assignment amb = m({{y, u}, {u, y}});
  CHECK(amb.kind == Assignment::Kind::several);
  CHECK_FALSE(amb.certain);
  CHECK(m({{y, y}, {y, y}}).certain);
  // bottleneck: the matching whose worst cost is least, not the greedy one
  double v = 0;
  const auto p = bottleneck_matching({{0, 1}, {2, 9}}, &v);
  CHECK(p == std::vector<int>{1, 0});
  CHECK(v == 2);
  CHECK(bottleneck_matching({{INFINITY, INFINITY}, {0, 0}}).empty());
}

TEST_CASE("exact signs of non-constant elements of Q(tau) agree with a 4096-bit Arb evaluation; zero is decided exactly") {
  Rng rng(1106);
  const int n = 10000 * test::multiplier();
  test::Outcomes elements("random elements of Q(tau)");
  for (int t = 0; t < n; ++t) {
    const long L = rng.uniform_int(1, 60);
    const Field<QTau> F(L);
    // a random ratio of integer polynomials in tau, not constant
    auto poly = [&](int deg) {
      QTau p(Rational(0));
      for (int e = 0; e <= deg; ++e) p = p + QTau(Rational(rng.uniform_int(-5, 5))) * QTauAccess::tau_pow(e);
      return p;
    };
    QTau num = poly(static_cast<int>(rng.uniform_int(1, 24))), den = poly(static_cast<int>(rng.uniform_int(0, 12)));
    if (QTauAccess::is_zero(den)) {
      elements.count("zero denominator (skipped)");
      continue;
    }
    const QTau x = (num + QTauAccess::tau_pow(static_cast<long>(rng.uniform_int(1, 30)))) / den;
    Rational q;
    if (QTauAccess::is_rational(x, q) || QTauAccess::is_zero(x)) {
      elements.count("constant (skipped)");
      continue;
    }
    const Truth s = F.is_positive(x);
    REQUIRE(s != Truth::unknown);
    PrecisionScope hi(4096);
    const Ball v = F.enclose(x);
    REQUIRE(!arb_contains_zero(v.raw()));
    CHECK((s == Truth::yes) == arb_is_positive(v.raw()));
    CHECK(F.is_zero(x) == Truth::no);
    CHECK(F.is_positive(-x) == truth_not(s));
    elements.count("sign decided, agrees with Arb");
  }
  elements.require(n * 9 / 10 + 1, {"sign decided, agrees with Arb"});
  // zero, exactly: (tau + 1)^2 - (tau^2 + 2 tau + 1), and x - x
  const Field<QTau> F(7);
  const QTau t = QTauAccess::tau_pow(1), one(Rational(1));
  const QTau z = (t + one) * (t + one) - (t * t + QTau(Rational(2)) * t + one);
  CHECK(F.is_zero(z) == Truth::yes);
  CHECK(F.is_positive(z) == Truth::no);
  CHECK(F.is_zero(t - t) == Truth::yes);
  // an element within 2^-60 of zero is still decided, and correctly
  const QTau tiny = QTauAccess::tau_pow(-300);  // e^{-300/7}, about 2^-62
  CHECK(F.is_positive(tiny) == Truth::yes);
  CHECK(F.is_positive(tiny - QTauAccess::tau_pow(-299)) == Truth::no);
}

TEST_CASE("MPFR accuracy falls as precision rises on two heads whose W differ by 2^-10") {
  Model m;
  m.d = 2;
  HeadQ a{QMat(2, 2), QVec{Rational(1), Rational(-1, 2)}}, b{QMat(2, 2), QVec{Rational(-1), Rational(2)}};
  const long W[2][2] = {{2, -1}, {1, 3}};  // quarters
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) a.W(i, j) = b.W(i, j) = Rational(W[i][j], 4);
  b.W(0, 0) = b.W(0, 0) + Rational(1, 1024);
  m.heads = {a, b};
  LearnOptions lo;
  lo.H = 2;
  lo.tokens = TokenSpec{1L << 20, 1L << 20};
  for (std::uint64_t seed : {1ULL, 2ULL, 3ULL}) {
    lo.seed = seed;
    double prev = INFINITY;
    for (long bits = 120; bits <= 256; bits += 8) {
      PrecisionScope scope(bits);
      OracleStack<Mpfr> o_stack = OracleStack<Mpfr>::model(m, lo.tokens.den);
      Oracle<Mpfr>& o = o_stack.top();
      const LearnResult<Mpfr> res = learn(o, lo);
      const double e = std::exp2(max_rel_error_log2(res.heads, m));
      INFO("seed " << seed << ", " << bits << " bits: max_rel_error " << e << " (previous " << prev << ")");
      CHECK(e < prev);
      if (bits == 128) CHECK(e <= 1e-15);
      prev = e;
    }
  }
}

namespace {
// the very same number: equal midpoints and radii, equal floats at equal precision
bool same_number(const Ball& a, const Ball& b) { return arb_equal(a.raw(), b.raw()) != 0; }
bool same_number(const Mpfr& a, const Mpfr& b) {
  return mpfr_get_prec(a.raw()) == mpfr_get_prec(b.raw()) && mpfr_equal_p(a.raw(), b.raw()) != 0;
}
bool same_number(double a, double b) { return a == b && std::signbit(a) == std::signbit(b); }
}  // namespace

TEST_CASE_TEMPLATE("stage 5: the self-check's evaluator gives evaluate_heads' numbers bit for bit", T, Ball, Mpfr, double) {
  PrecisionScope scope(128);
  GenerateOptions g;
  g.d = 5;
  g.heads = 3;
  g.seed = 4;
  const Model m = generate_model(g);
  LearnOptions lo;
  lo.H = 3;
  lo.seed = 4;
  OracleStack<T> o_stack = OracleStack<T>::model(m, lo.tokens.den);
  Oracle<T>& o = o_stack.top();
  const Field<T>& F = o.field();
  // the true heads in the field (the evaluator does not need learned ones)
  std::vector<LearnedHead<T>> heads;
  for (const HeadQ& h : m.heads) {
    LearnedHead<T> lh{Mat<T>(m.d, m.d), {}};
    for (int i = 0; i < m.d; ++i) {
      lh.v.push_back(F.from(h.v[i]));
      for (int j = 0; j < m.d; ++j) lh.W(i, j) = F.from(h.W(i, j));
    }
    heads.push_back(std::move(lh));
  }
  std::vector<Query> qs = learner_plan(m.d, lo).queries();
  QueryLog log;
  for (const Query& q : qs) log.push_back(q);
  for (int threads : {1, 2}) {
    const HeadEvaluator<Field<T>> predict(F, heads, log, threads);
    for (size_t i = 0; i < qs.size(); ++i) {
      const T direct = evaluate_heads(F, heads, qs[i]);
      CHECK(same_number(predict(qs[i]), direct));
      const T answer = o.query(qs[i]);
      CHECK(predict.matches_at(i, qs[i], answer) == F.equal(direct, answer));
      CHECK(predict.matches(qs[i], answer) == F.equal(direct, answer));
    }
    // a count beyond every count of the list, and a query with a token never seen
    Query longer = qs[1];
    longer[0].count = 40;
    CHECK(same_number(predict(longer), evaluate_heads(F, heads, longer)));
    Query fresh = qs[1];
    fresh[0].token[0] = fresh[0].token[0] + Rational(1, 3);
    CHECK(same_number(predict(fresh), evaluate_heads(F, heads, fresh)));
  }
}

TEST_CASE("QueryLog: every query back as asked, each pair's tokens stored once") {
  LearnOptions lo;
  lo.H = 2;
  lo.seed = 5;
  for (const Schedule sc : {Schedule::paper, Schedule::lean}) {
    lo.schedule = sc;
    const Plan plan = learner_plan(4, lo);
    const std::vector<Query> qs = plan.queries();
    QueryLog log;
    for (const Query& q : qs) log.push_back(q);
    // a query of many distinct tokens, and one repeating a token of the plan far back
    Query wide;
    for (int r = 0; r < 5; ++r) wide.push_back(Run{QVec{Rational(r), Rational(1, r + 2), Rational(-r), Rational(7)}, r + 1});
    log.push_back(wide);
    log.push_back(qs[1]);
    REQUIRE(log.size() == qs.size() + 2);
    for (size_t i = 0; i < qs.size(); ++i) CHECK(same_query(log[i], qs[i]));
    CHECK(same_query(log[qs.size()], wide));
    CHECK(same_query(log[qs.size() + 1], qs[1]));
    CHECK(same_query(log.all()[qs.size() - 1], qs.back()));
    CHECK(log.tokens() <= 2 * plan.pairs.size() + 1 + 5 + 2);
    CHECK(log.tokens() < qs.size());
    log.clear();
    CHECK(log.empty());
  }
}
