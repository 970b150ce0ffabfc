// The transformer learner: attention part, regions, neurons, checks.
#include "mhaq/stages/transformer_learner.hpp"

#include "mhaq/arith/all_fields.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "mhaq/base/random.hpp"
#include "mhaq/stages/1-oracle/recording_oracle.hpp"
#include "mhaq/stages/self_check.hpp"

namespace mhaq {

namespace {

QVec draw_vec(Rng& rng, int d, long range, long den) {
  QVec v(d);
  for (auto& x : v) x = Rational(rng.uniform_int(-range, range), static_cast<unsigned long>(den));
  return v;
}

// The learner's general verification sequences: 1-4 runs of tokens drawn
// like the attention part's, counts 1-3.
std::vector<Query> verification_queries(Rng& rng, int d, int n, const TokenSpec& tk) {
  std::vector<Query> out;
  for (int t = 0; t < n; ++t) {
    Query q;
    const int runs = static_cast<int>(rng.uniform_int(1, 4));
    for (int r = 0; r < runs; ++r) q.push_back(Run{draw_vec(rng, d, tk.range, tk.den), rng.uniform_int(1, 3)});
    out.push_back(std::move(q));
  }
  return out;
}

// p and q of length about 4, q about orthogonal to p: both segments then stay
// at a distance from the origin, where every hyperplane passes, so their
// crossings are spread along the path (proofs/15).
void draw_path(Rng& rng, int d, long g, QVec& p, QVec& q) {
  // p nonzero; q orthogonal to p (d > 1) and nonzero, else drawn again: a q
  // parallel to p has a zero orthogonal part, which would leave q without a
  // usable direction and the path degenerate
  do {
    p = draw_vec(rng, d, 4 * g, g);
  } while (dot(p, p).is_zero());
  const Rational pp = dot(p, p);
  for (;;) {
    QVec q0 = draw_vec(rng, d, 4 * g, g);
    if (d > 1) {
      const Rational c = dot(q0, p) / pp;
      for (int a = 0; a < d; ++a) q0[a] = q0[a] - c * p[a];
      // rescale to about |p| (k/1024 ~ sqrt(pp/qq), integer square root) and
      // back onto the grid: a choice, not a decision, made without floats
      const Rational qq = dot(q0, q0);
      if (qq.is_zero()) continue;
      const Rational ratio2 = pp / qq * Rational(1024 * 1024);
      const Rational scale = ratio2.isqrt_floor() / Rational(1024);
      for (int a = 0; a < d; ++a) q0[a] = (q0[a] * scale * Rational(g)).floor() / Rational(g);
    }
    if (dot(q0, q0).is_zero()) continue;
    q = q0;
    return;
  }
}

// Conditions on the recovered neurons that the design relies on: ubar_j != 0
// and no two neurons with the same hyperplane (proofs/15).
template <class F>
void check_hyperplanes(const F& fld, const std::vector<LearnedNeuron<typename F::value_type>>& ns, int d) {
  using T = typename F::value_type;
  std::vector<std::vector<T>> ubar;
  for (const auto& n : ns) {
    std::vector<T> s(d, fld.from(Rational(0)));
    for (const auto& Uh : n.U)
      for (int a = 0; a < d; ++a) s[a] = s[a] + Uh[a];
    T scale = fld.from(Rational(0));
    Truth zero = Truth::yes;
    for (const auto& Uh : n.U)
      for (const auto& x : Uh) scale = scale + fld.abs(x);
    for (const auto& x : s) zero = truth_and(zero, fld.equal(x, fld.from(Rational(0)), scale));
    if (zero == Truth::yes) throw_not_identifiable("a neuron has ubar_j = sum_h U_{h,j} = 0: its hyperplane is not a hyperplane (condition ubar_j != 0)");
    ubar.push_back(std::move(s));
  }
  for (size_t j = 0; j < ubar.size(); ++j)
    for (size_t k = j + 1; k < ubar.size(); ++k) {
      Truth parallel = Truth::yes;  // every 2x2 minor zero
      for (int a = 0; a < d && parallel != Truth::no; ++a)
        for (int b = a + 1; b < d && parallel != Truth::no; ++b) {
          const T m1 = ubar[j][a] * ubar[k][b], m2 = ubar[j][b] * ubar[k][a];
          parallel = truth_and(parallel, fld.equal(m1, m2, fld.abs(m1) + fld.abs(m2)));
        }
      if (d == 1 || parallel == Truth::yes)
        throw_not_identifiable("two neurons share a hyperplane (condition: no two hyperplanes ubar_j^T x = 0 coincide)");
    }
}

// The multiple of 1/g nearest to each entry (ties up): tokens on the grid.
QVec on_grid(QVec x, long g) {
  for (auto& v : x) v = (v * Rational(g) + Rational(1, 2)).floor() / Rational(g);
  return x;
}

// Tokens aimed at what a merged or misplaced neuron would change: for each
// crossing, single tokens (attention output = the token itself) on both sides
// of its predicted hyperplane at angles window 2^-k, k = 0..levels-1 (scaled
// so that the offset from the hyperplane stays at least 1/2 on the grid), and
// one token inside each wedge between neighbouring crossings.
template <class T>
std::vector<Query> targeted_queries(const std::vector<Crossing<T>>& cs, const Rational& window, int levels, long g) {
  std::vector<Query> out;
  auto norm = [](const QVec& x) { return (dot(x, x) * Rational(1L << 20)).isqrt_floor() / Rational(1L << 10); };
  for (const auto& c : cs) {
    if (c.normal.empty()) continue;
    const QVec xc = c.before + c.after;  // the crossing's direction (a cone: scale is free)
    const Rational xn = norm(xc), nn = norm(c.normal);
    if (xn.is_zero() || nn.is_zero()) continue;
    Rational eps = window;
    for (int k = 0; k < levels; ++k, eps /= Rational(2)) {
      Rational Z(1);
      while (eps * xn * Z < Rational(1, 2)) Z *= Rational(2);
      for (int side = -1; side <= 1; side += 2) {
        QVec x = xc;
        for (size_t a = 0; a < x.size(); ++a) x[a] = Z * xc[a] + Rational(side) * eps * Z * xn / nn * c.normal[a];
        out.push_back(Query{Run{on_grid(x, g), 1}});
      }
    }
  }
  for (size_t i = 0; i + 1 < cs.size(); ++i) out.push_back(Query{Run{cs[i].after + cs[i + 1].before, 1}});
  return out;
}

// General sequences aimed at neurons that share a hyperplane (or nearly so)
// but not their U: [c x k, y] with c a point next to a crossing and y a
// random token. Every head's output is c + w_h (y - c) with a head-dependent
// weight w_h (small when k is large), so the outputs lie near the crossing's
// hyperplane on either side, and two neurons on that hyperplane see
// sum_h w_h U_{h,j}^T (y - c) with different signs for some y whenever their
// U differ across heads: single tokens (w_h the same for every head) can
// never show that. per sequences for each crossing, counts 1, 3, 8, 32.
// 2^n with n about log2 of e^x (x >= 0 rational), at most 2^6: the count
// ratio that balances two weights e^x apart. A choice, made without floats.
long balancing_count(const Rational& x) {
  Rational n = (x * Rational(1443, 1000)).floor();
  long e = 0;
  for (; n.sign() > 0 && e < 6; n -= Rational(1)) ++e;
  return 1L << e;
}

// Sequences aimed at two neurons that share a hyperplane but not their U
// (the path, and every single token, sees them as one). [a x k, b x m] with
// the heads split in two groups A and B, k/m chosen so that the heads of A
// attend to a and those of B to b: the heads' outputs are then about a and b,
// and a recovered neuron U sees about U_A^T a + U_B^T b (U_A the sum of its
// blocks over A). a is placed so that this is zero. If U is in truth
// U' + U'' with ubar'' = lambda ubar' (lambda > 0) and U'' - lambda U' = D != 0,
// then U'^T Z and U''^T Z have opposite signs there whenever D_A^T (a - b) != 0,
// so the two neurons' sum differs from the one neuron at every such sequence
// (proofs/23). Neurons of opposite readout signs differ off that hyperplane
// instead, so every second sequence is moved off it. per sequences for each
// recovered neuron; nothing with one head, where a shared hyperplane means
// parallel U.
template <class F>
std::vector<Query> head_split_queries(const F& fld, const std::vector<Mat<typename F::value_type>>& W,
                                      const std::vector<LearnedNeuron<typename F::value_type>>& ns, Rng& rng, int per, int d, long g) {
  const int H = static_cast<int>(W.size());
  std::vector<Query> out;
  if (H < 2 || H > 30) return out;
  const long fine = 1L << 24;
  std::vector<QMat> Wq;
  for (const auto& w : W) {
    QMat q(d, d);
    for (int a = 0; a < d; ++a)
      for (int b = 0; b < d; ++b) q(a, b) = fld.nearest(w(a, b), fine);
    Wq.push_back(q);
  }
  for (const auto& n : ns) {
    std::vector<QVec> Uq(H, QVec(d));
    for (int h = 0; h < H; ++h)
      for (int a = 0; a < d; ++a) Uq[h][a] = fld.nearest(n.U[h][a], fine);
    for (int i = 0; i < per; ++i) {
      for (int attempt = 0; attempt < 16; ++attempt) {
        const long mask = rng.uniform_int(1, (1L << H) - 2);  // bit h: head h in A
        QVec UA(d, Rational(0)), UB(d, Rational(0));
        for (int h = 0; h < H; ++h)
          for (int a = 0; a < d; ++a) ((mask >> h) & 1 ? UA : UB)[a] += Uq[h][a];
        const QVec b0 = draw_vec(rng, d, 2 * g, g), a0 = draw_vec(rng, d, 2 * g, g);
        const Rational uu = dot(UA, UA);
        if (uu.is_zero()) continue;
        const Rational mu = -(dot(UB, b0) + dot(UA, a0)) / uu;
        QVec a1 = a0;
        for (int a = 0; a < d; ++a) a1[a] += mu * UA[a];
        if (i % 2) {
          // every second sequence off the hyperplane, by U_A^T a + U_B^T b =
          // rho |U_A| |a - b|: where the two neurons' readouts have opposite
          // signs they differ off the hyperplane, not on it
          const QVec ab = a1 - b0;
          const Rational ratio = (dot(ab, ab) / uu * Rational(1L << 20)).isqrt_floor() / Rational(1L << 10);
          const Rational rho(rng.uniform_int(1, 8) * (rng.uniform_int(0, 1) ? 1 : -1), 8);
          for (int a = 0; a < d; ++a) a1[a] += rho * ratio * UA[a];
        }
        // the least score of group A minus the greatest of group B
        auto gap_of = [&](const QVec& x, const QVec& y, Rational& lo_A, Rational& hi_B) {
          bool fa = true, fb = true;
          for (int h = 0; h < H; ++h) {
            const Rational r = dot(x - y, matvec(Wq[h], y));
            if ((mask >> h) & 1) {
              if (fa || r < lo_A) lo_A = r;
              fa = false;
            } else {
              if (fb || r > hi_B) hi_B = r;
              fb = false;
            }
          }
          return lo_A - hi_B;
        };
        // tokens of size at most 4 keep the exact answers' exponents as small
        // as the path's own; a gap of 4 in the scores already makes the split
        // heads' weights differ by e^2 on either side
        Rational lo, hi;
        const QVec x = on_grid(a1, g), y = on_grid(b0, g);
        bool small = true;
        for (int a = 0; a < d; ++a) small = small && x[a] <= Rational(4) && Rational(-4) <= x[a];
        if (!small || gap_of(x, y, lo, hi) < Rational(4)) continue;
        // counts of at most 2^6 balance the groups: longer sequences would
        // cost an external oracle more than the check is worth
        const Rational tau = (lo + hi) / Rational(2);
        if (tau < Rational(-4) || Rational(4) < tau) continue;
        const long k = tau.sign() < 0 ? balancing_count(-tau) : 1, m = tau.sign() > 0 ? balancing_count(tau) : 1;
        out.push_back(Query{Run{x, k}, Run{y, m}});
        break;
      }
    }
  }
  return out;
}

std::string qvec_text(const QVec& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i].str();
  return s + ")";
}

std::string resolution_text(double deg) {
  if (deg < 0) return "no crossing certified";
  char b[64];
  std::snprintf(b, sizeof b, "%.3g degrees", deg);
  return b;
}

// A float path that merged neurons, or missed one near the answers' error
// (merged_neurons): unable, yet another path may still separate them.
struct UnresolvedPath : Error {
  using Error::Error;
};

// The path took two neurons for one: fewer crossings than the stated neuron
// count, jumps that no sign vector adds up, or a check the recovered
// transformer misses. Every crossing passed the single-crossing test, so the
// two lie within the certified resolution of each other or share a
// hyperplane, which no path separates. With d = 1 every hyperplane is the
// point 0: they share it (where the miss is decided). With d >= 2 the test again at 2^-40 rad tells
// which: every jump still kinking on one hyperplane there is the stated
// condition; a jump that does not holds distinct hyperplanes, never reported
// as not identifiable; balls, which cannot certify the kink, say both; floats
// (no such test) are unable.
template <class T>
[[noreturn]] void merged_neurons(const Field<T>& fld, Oracle<T>& rec, const TransformerLearnOptions& opt, const RegionDesign& design,
                                 const PathSearch<T>& path, const TransformerLearnResult<T>& res, const std::string& what) {
  const char* condition = "(condition: no two hyperplanes ubar_j^T x = 0 coincide)";
  const int d = rec.dim();
  if (d == 1 && opt.coincidence_test)  // (a decided miss: exact, balls)
    throw_not_identifiable(what + ": with d = 1 every neuron's hyperplane is the point 0, so two neurons of opposite directions share it " + condition);
  const int fine_log2 = 40;
  const Truth one = design.single_crossing_test && opt.coincidence_test
                        ? crossings_on_one_hyperplane(fld, rec, path.crossings, res.heads_found, design, fine_log2)
                        : Truth::unknown;
  if (one == Truth::yes)
    throw_not_identifiable(what + ", yet every jump of the path kinks on one hyperplane on single tokens to within 2^-" + std::to_string(fine_log2) +
                           " rad (" + resolution_text(std::ldexp(180.0 / std::acos(-1.0), -fine_log2)) + "): two neurons share a hyperplane " + condition);
  if (one == Truth::no)
    throw_degenerate(what + ": two neurons whose hyperplanes lie within the run's certified resolution (" + resolution_text(res.resolution_deg) +
                     ") of each other were taken for one; they are distinct hyperplanes that this path cannot separate (another --seed draws another path)");
  if (opt.coincidence_test)
    throw_degenerate(what + ": two neurons were taken for one; their hyperplanes lie within the run's certified resolution (" + resolution_text(res.resolution_deg) +
                     ") of each other (another --seed may separate them), or coincide " + condition + ", which this arithmetic cannot tell apart");
  // floats judge equality at a tolerance: a jump near the answers' error is
  // one more explanation, and only more precise answers tell them apart
  throw UnresolvedPath(ErrorKind::unable, what + ": at this precision the learner cannot tell a neuron whose jump lies within the answers' error "
                                              "(more precision resolves it) from two neurons taken for one, whose hyperplanes lie within the run's certified "
                                              "resolution (" + resolution_text(res.resolution_deg) + ") of each other (another --seed may separate them) or coincide " +
                                              condition);
}

// The learner's own checks (every answer, then targeted tokens and general
// sequences it asks for); a miss throws with what it tells about the path.
template <class T>
void check_learned(const Field<T>& fld, RecordingOracle<T>& rec, const TransformerLearnOptions& opt, const RegionDesign& design, const PathSearch<T>& path,
                   Rng& rng, TransformerLearnResult<T>& res) {
  const int d = rec.dim();
  const long g = design.grid_den;
  const size_t answered = rec.queries.size();
  res.self_check_failed = -1;
  res.self_check = self_check_answers(
      answered, opt.threads,
      [&](size_t i) { return fld.equal(evaluate_learned_transformer(fld, res.W, res.neurons, rec.queries[i]), rec.answers[i]); },
      res.self_check_failed);
  auto missed = [&](const std::string& what) { merged_neurons(fld, rec, opt, design, path, res, what); };
  if (res.self_check == Truth::no) missed("the recovered transformer does not reproduce answer " + std::to_string(res.self_check_failed + 1));
  const int nv = opt.verify_queries >= 0 ? opt.verify_queries : 2 * d;
  res.verification = Truth::yes;
  std::vector<Query> checks = targeted_queries(path.crossings, design.window, opt.single_crossing_test ? opt.targeted_levels : 0, g);
  const size_t targeted = checks.size();
  for (Query& vq : verification_queries(rng, d, nv, opt.tokens)) checks.push_back(std::move(vq));
  const size_t general_end = checks.size();
  // their own stream, so that the sequences above do not depend on them
  Rng split_rng(opt.seed ^ 0x73706c69742d6864ULL);
  for (Query& vq : head_split_queries(fld, res.W, res.neurons, split_rng, opt.head_split_sequences, d, g)) checks.push_back(std::move(vq));
  for (size_t i = 0; i < checks.size(); ++i) {
    const Query& vq = checks[i];
    const T a = rec.query(vq);
    const Truth t = fld.equal(evaluate_learned_transformer(fld, res.W, res.neurons, vq), a);
    if (t == Truth::no) {
      std::string where = "a general sequence";
      if (i >= general_end) {
        where = "a sequence whose heads attend to different tokens, placed on a recovered neuron's hyperplane in the heads' outputs";
      } else if (i < targeted) {
        where = "the token " + qvec_text(vq[0].token);
        if (i < 2 * static_cast<size_t>(opt.targeted_levels) * path.crossings.size()) {
          const size_t j = i / (2 * opt.targeted_levels);
          where += " next to the hyperplane of crossing " + std::to_string(j + 1) + " (normal " + qvec_text(path.crossings[j].normal) +
                   ", certified resolution " + resolution_text(path.crossings[j].resolution_deg) + ")";
        } else {
          where += " in a wedge between neighbouring crossings";
        }
      }
      missed("the recovered transformer misses its answer at " + where);
    }
    res.verification = truth_and(res.verification, t);
  }
  res.queries_targeted = static_cast<long>(targeted + (checks.size() - general_end));
  res.queries_verify = static_cast<long>(rec.queries.size() - answered);
}

// Single-token queries asked at a small scale. With one distinct token y
// (any count) every head's output is y, so T = sum_j u_j ReLU(ubar_j^T y)
// is positively homogeneous: T([c y]) = c T([y]) for c > 0. A query whose
// token has a coordinate above `size` is asked at 2^-k times its token, k
// the least that brings every coordinate within `size`, and its answer is
// multiplied by 2^k (exact in every field; a ball's radius grows alike).
// The single-crossing test and the verification ask such tokens at sizes up
// to 2^20, where a float64 kernel's error grows with the token (about
// 1e-16 per unit of size for the torch example) past an absolute bound
// stated for tokens of moderate size; at 2^-k times the token the stated
// bound is what the oracle's answers are held to. Other queries pass
// through unchanged.
template <class T>
class SmallSingleTokens final : public Oracle<T> {
 public:
  SmallSingleTokens(Oracle<T>& inner, Rational size) : inner_(inner), size_(std::move(size)) {}
  int dim() const override { return inner_.dim(); }
  const Field<T>& field() const override { return inner_.field(); }

 private:
  T answer(const Query& q) override {
    for (const Run& r : q)
      if (r.token != q.front().token) return inner_.query(q);
    const Rational c = pow2_scale_within(q.front().token, size_);
    if (c == Rational(1)) return inner_.query(q);
    Query s = q;
    for (Run& r : s)
      for (auto& v : r.token) v /= c;
    return inner_.field().from(c) * inner_.query(s);
  }
  Oracle<T>& inner_;
  Rational size_;
};

}  // namespace

long transformer_least_queries(int d, const TransformerLearnOptions& opt) { return 2 * schedule_query_count(opt.schedule, d, opt.H); }

namespace {
// The options of the attention part (its plan does not depend on the threads)
LearnOptions attention_options(const TransformerLearnOptions& opt) {
  LearnOptions lo;
  lo.H = opt.H;
  lo.schedule = opt.schedule;
  lo.seed = opt.seed;
  lo.tokens = opt.tokens;
  lo.threads = opt.threads;
  lo.draws = opt.attention_draws;
  return lo;
}
}  // namespace

std::vector<Query> transformer_attention_plan(int d, const TransformerLearnOptions& opt) { return learner_plan(d, attention_options(opt)).queries(); }

template <class T>
TransformerLearnResult<T> learn_transformer(Oracle<T>& oracle, const TransformerLearnOptions& opt) {
  if (opt.H < 1) throw Error(ErrorKind::usage, "head count must be at least 1");
  if (opt.tokens.den < 16 || opt.tokens.den % 16 != 0) throw Error(ErrorKind::usage, "transformer tokens need a denominator that is a multiple of 16");
  using F = Field<T>;
  const F& fld = oracle.field();
  const int d = oracle.dim();
  SmallSingleTokens<T> small(oracle, Rational(16));
  RecordingOracle<T> rec(opt.fitted_regions ? static_cast<Oracle<T>&>(small) : oracle);
  TransformerLearnResult<T> res;
  // ---- attention part: the odd part is an attention model
  OddPartOracle<T> odd(rec);
  const LearnOptions lo = attention_options(opt);
  LearnResult<T> att;
  try {
    att = learn(odd, lo);
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::not_identifiable)
      throw Error(e.kind(), std::string("attention part T(X) - T(-X): ") + e.what() +
                                " (for a transformer: the stated H exceeds the canonical head count, or some head's odd value sum_j u_j U_{h,j} vanishes)");
    throw Error(e.kind(), std::string("attention part T(X) - T(-X): ") + e.what());
  }
  if (att.self_check == Truth::no) throw_inconsistent("attention part T(X) - T(-X): the heads do not reproduce its answers");
  res.heads_found = att.heads_found;
  for (const auto& h : att.heads) res.W.push_back(h.W);
  res.queries_attention = rec.queries.size();
  // With d = 1 every hyperplane ubar_j x = 0 is the point 0: the path crosses
  // all neurons at once and sees one jump, while with two or more heads the
  // neurons' pre-activations sum_h U_{h,j} z_h still differ on general
  // sequences. Such a recovery can pass every check of the path and still
  // merge two distinct neurons into one, so the condition is refused here.
  if (d == 1 && res.heads_found >= 2)
    throw_not_identifiable("d = 1 with " + std::to_string(res.heads_found) +
                           " heads: every neuron's hyperplane is the point 0, so the path cannot separate neurons whose pre-activations "
                           "differ on general sequences (condition: no two hyperplanes ubar_j^T x = 0 coincide)");
  // ---- regions along p -> q -> -p
  Rng rng(opt.seed ^ 0x7472616e73666d72ULL);  // the path's own stream
  const long g = opt.tokens.den;
  RegionDesign design;
  design.grid_den = g;
  design.max_probes = opt.max_probes;
  design.single_crossing_test = opt.single_crossing_test;
  if (opt.fitted_regions) {
    design.probe_size = Rational(4);  // the path's corners' size: they stay where they are
    design.fitted_offsets = true;
  }
  for (;;) {  // offsets of size 1/16, invertible
    QMat D(d, d);
    for (int a = 0; a < d; ++a)
      for (int b = 0; b < d; ++b) D(a, b) = Rational(rng.uniform_int(-1, 1), 16);
    if (!det(D).is_zero()) {
      design.Delta = D;
      break;
    }
  }
  // Path attempts: a path whose crossings lie closer together than the grid
  // resolves can hide two neurons in one jump, which the sign system, the
  // hyperplane checks or the self-check then reject; a fresh path (fresh
  // queries, counted) is tried, up to opt.path_attempts in all.
  Error last(ErrorKind::internal, "no path attempt");
  for (int attempt = 1; attempt <= opt.path_attempts; ++attempt) {
    res.path_attempts = attempt;
    draw_path(rng, d, g, res.p, res.q);
    try {
      const PathSearch<T> path = search_path(fld, rec, res.W, res.p, res.q, design, opt.neurons);
      res.probes += path.probes;
      res.test_probes += path.test_probes;
      res.undecided_flats = path.undecided_flats;
      res.crossings = static_cast<int>(path.crossings.size());
      res.resolution_deg = path.resolution_deg;
      res.path_crossings = path.crossings;
      if (opt.neurons > 0 && res.crossings < opt.neurons)
        merged_neurons(fld, rec, opt, design, path, res,
                       "the path crosses " + std::to_string(res.crossings) + " neuron hyperplanes, fewer than the stated " + std::to_string(opt.neurons) + " neurons");
      try {
        res.neurons = neurons_from_path(fld, path, res.p, d);
      } catch (const Error& e) {
        if (e.kind() != ErrorKind::degenerate) throw;
        merged_neurons(fld, rec, opt, design, path, res, e.what());
      }
      check_hyperplanes(fld, res.neurons, d);
      res.queries_regions = static_cast<long>(rec.queries.size()) - res.queries_attention;
      if (!opt.checks) return res;
      check_learned(fld, rec, opt, design, path, rng, res);
      return res;
    } catch (const Error& e) {
      const bool retry = dynamic_cast<const UnresolvedPath*>(&e) != nullptr;
      if (!retry && e.kind() != ErrorKind::degenerate && e.kind() != ErrorKind::not_identifiable && e.kind() != ErrorKind::inconsistent) throw;
      last = Error(e.kind(), e.what() + std::string(" (") + std::to_string(attempt) + " path attempt" + (attempt > 1 ? "s" : "") + ")");
      res.queries_regions = static_cast<long>(rec.queries.size()) - res.queries_attention - res.queries_verify;
    }
  }
  throw last;
}

#define MHAQ_INSTANTIATE(F) \
  template TransformerLearnResult<F::value_type> learn_transformer<F::value_type>(Oracle<F::value_type>&, const TransformerLearnOptions&);
MHAQ_FOR_EACH_TRANSFORMER_FIELD(MHAQ_INSTANTIATE)
#undef MHAQ_INSTANTIATE

}  // namespace mhaq
