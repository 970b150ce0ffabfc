// What a run prints is what it computed: ball entries parse back to balls
// that contain the truth and are no wider than the run's balls, and a run
// that did not decide prints no heads.
#include <doctest/doctest.h>

#include <arb.h>
#include <cmath>
#include <string>
#include <vector>

#include "mhaq/arith/numbers.hpp"
#include "mhaq/base/random.hpp"
#include "mhaq/model/model.hpp"
#include "mhaq/model/transformer.hpp"
#include "mhaq/run/recover.hpp"
#include "mhaq/run/record_json.hpp"
#include "test_util.hpp"

using namespace mhaq;

namespace {

// A printed entry read back as a ball (Arb's own parser), at a precision that
// keeps every printed digit.
struct Parsed {
  arb_t b;
  explicit Parsed(const std::string& s) {
    arb_init(b);
    ok = arb_set_str(b, s.c_str(), 4 * static_cast<slong>(s.size()) + 64) == 0;
  }
  ~Parsed() { arb_clear(b); }
  Parsed(const Parsed&) = delete;
  Parsed& operator=(const Parsed&) = delete;
  bool ok = false;
  double radius() const { return mag_get_d(arb_radref(b)); }
  bool contains(const Rational& q) const { return arb_contains_fmpq(b, q.raw()); }
};

Ball ball_of(double mid, double rad) {
  Ball x;
  arf_set_d(arb_midref(x.raw()), mid);
  mag_set_d(arb_radref(x.raw()), rad);
  return x;
}

// Every entry of `got` (strings) contains the matching entry of `want`, and
// its radius is at most `max_rad`.
bool entries_hold(const std::vector<std::string>& got, const std::vector<Rational>& want, double max_rad, std::string& why) {
  if (got.size() != want.size()) return why = "entry count", false;
  for (size_t i = 0; i < got.size(); ++i) {
    const Parsed p(got[i]);
    if (!p.ok) return why = "unparsable entry " + got[i], false;
    if (!p.contains(want[i])) return why = got[i] + " misses " + want[i].str(), false;
    if (p.radius() > max_rad) return why = got[i] + " wider than " + std::to_string(max_rad), false;
  }
  return true;
}

std::vector<std::string> flat(const std::vector<std::vector<std::string>>& m) {
  std::vector<std::string> out;
  for (const auto& row : m) out.insert(out.end(), row.begin(), row.end());
  return out;
}
std::vector<Rational> flat(const QMat& m) {
  std::vector<Rational> out;
  for (int i = 0; i < m.rows(); ++i)
    for (int j = 0; j < m.cols(); ++j) out.push_back(m(i, j));
  return out;
}

// Each printed head matches a distinct true head entry by entry.
bool heads_hold(const std::vector<HeadRecord>& heads, const Model& truth, double max_rad, std::string& why) {
  std::vector<bool> used(truth.heads.size(), false);
  for (const HeadRecord& h : heads) {
    bool found = false;
    for (size_t t = 0; t < truth.heads.size() && !found; ++t) {
      if (used[t]) continue;
      std::vector<std::string> got = flat(h.W);
      got.insert(got.end(), h.v.begin(), h.v.end());
      std::vector<Rational> want = flat(truth.heads[t].W);
      want.insert(want.end(), truth.heads[t].v.begin(), truth.heads[t].v.end());
      std::string w;
      if (entries_hold(got, want, max_rad, w)) found = used[t] = true;
      else why = w;
    }
    if (!found) return false;
  }
  return true;
}

bool transformer_holds(const TransformerRecord& m, const TransformerModel& truth, double max_rad, std::string& why) {
  std::vector<bool> used(truth.W.size(), false);
  std::vector<size_t> head_of;  // the true head of each recovered head
  for (const auto& W : m.W) {
    bool found = false;
    for (size_t t = 0; t < truth.W.size() && !found; ++t)
      if (!used[t] && entries_hold(flat(W), flat(truth.W[t]), max_rad, why)) found = used[t] = true, head_of.push_back(t);
    if (!found) return false;
  }
  // neurons: (u, U) against a distinct true neuron, U's rows in the recovered heads' order
  std::vector<bool> nused(truth.u.size(), false);
  for (const auto& n : m.neurons) {
    bool found = false;
    for (size_t k = 0; k < truth.u.size() && !found; ++k) {
      if (nused[k]) continue;
      std::vector<Rational> want{truth.u[k]};
      for (size_t h : head_of) want.insert(want.end(), truth.U[h][k].begin(), truth.U[h][k].end());
      std::vector<std::string> got{n.u};
      const auto u = flat(n.U);
      got.insert(got.end(), u.begin(), u.end());
      std::string w;
      if (entries_hold(got, want, max_rad, w)) found = nused[k] = true;
      else why = w;
    }
    if (!found) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("a ball prints its midpoint and a radius no wider than its own") {
  // the float32 case of a user's run: max_radius 2.15e-2 and truth 0.0716
  // printed as "[+/- 0.0951]" at a fixed 30 digits without ARB_STR_MORE
  const Ball x = ball_of(0.0716, 2.15e-2);
  const std::string s = x.str();
  const Parsed p(s);
  REQUIRE(p.ok);
  CHECK_MESSAGE(s.find("[+/-") == std::string::npos, s);
  CHECK(p.contains(Rational::parse("0.0716")));
  CHECK(p.radius() <= 2.15e-2 * 1.1);
  // random balls: midpoints over 600 binary orders, radii from 1 ulp to
  // wider than the midpoint; the printed ball contains the ball and is at
  // most 10% wider (plus the ulp of a radius that Arb rounds up)
  test::Outcomes out("ball printing");
  Rng rng(43);
  const int n = 2000 * test::multiplier();
  for (int i = 0; i < n; ++i) {
    const double mid = std::ldexp(static_cast<double>(rng.uniform_int(-(1L << 52), 1L << 52)), static_cast<int>(rng.uniform_int(-352, 248)));
    const double rad = mid == 0 ? 1e-10 : std::fabs(mid) * std::ldexp(1.0, -static_cast<int>(rng.uniform_int(0, 60)));
    Ball b = ball_of(mid, rad);
    if (rng.uniform_int(0, 9) == 0) mag_zero(arb_radref(b.raw()));  // exact balls
    const std::string t = b.str();
    const Parsed q(t);
    REQUIRE_MESSAGE(q.ok, t);
    const bool exact = mag_is_zero(arb_radref(b.raw()));
    CHECK_MESSAGE(arb_contains(q.b, b.raw()), t);
    if (exact) {
      CHECK_MESSAGE(q.radius() <= std::fabs(mid) * 1e-15, t);
      out.count("exact");
    } else {
      CHECK_MESSAGE(q.radius() <= 1.1 * rad, t << " for radius " << rad);
      out.count("ball");
    }
  }
  out.require(n / 2, {"ball"});
}

TEST_CASE("200 ball runs print entries that contain the truth") {
  test::Outcomes att("attention, ball"), tr("transformer, ball");
  const int m = test::multiplier();
  for (int i = 0; i < 150 * m; ++i) {
    GenerateOptions g;
    g.d = 2 + i % 3;
    g.heads = 1 + (i / 3) % 3;
    g.seed = 4300 + static_cast<std::uint64_t>(i);
    g.w_range = 1L << 12, g.w_den = 1L << 12, g.v_range = 1L << 12, g.v_den = 1L << 12;
    const Model truth = generate_model(g);
    RecoverOptions o;
    o.arith = Arith::ball;
    o.bits = 64 + 32 * (i % 7);
    o.seed = g.seed;
    const RecoverResult r = recover_run(truth, o);
    if (r.status() != Status::ok) {
      CHECK_MESSAGE(!r.evidence.heads, "a " << status_name(r.status()) << " run records heads");
      att.count(status_name(r.status()));
      continue;
    }
    REQUIRE(r.truth.contains_truth);
    REQUIRE(r.truth.max_radius);
    std::string why;
    CHECK_MESSAGE(heads_hold(*r.evidence.heads, truth.canonical(), 2 * *r.truth.max_radius, why), "seed " << g.seed << ": " << why);
    att.count("ok");
  }
  att.require(100 * m, {"ok"});
  for (int i = 0; i < 50 * m; ++i) {
    TransformerGenerateOptions g;
    g.d = 2 + i % 2;
    g.heads = 1 + (i / 2) % 2;
    g.neurons = 2 + i % 3;
    g.seed = 4300 + static_cast<std::uint64_t>(i);
    const TransformerModel truth = generate_transformer(g);
    RecoverOptions o;
    o.arith = Arith::ball;
    o.bits = 128 + 64 * (i % 3);
    o.seed = g.seed;
    const RecoverResult r = recover_transformer_run(truth, o);
    if (r.status() != Status::ok) {
      CHECK_MESSAGE(!r.evidence.model, "a " << status_name(r.status()) << " run records a model");
      tr.count(status_name(r.status()));
      continue;
    }
    REQUIRE(r.evidence.model);
    REQUIRE(r.truth.max_radius);
    std::string why;
    CHECK_MESSAGE(transformer_holds(*r.evidence.model, truth.canonical(), 2 * *r.truth.max_radius, why), "seed " << g.seed << ": " << why);
    tr.count("ok");
  }
  tr.require(25 * m, {"ok"});
}
