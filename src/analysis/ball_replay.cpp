// The float judge's ball replay (analysis/ball_replay.hpp, proofs/40).
#include "mhaq/analysis/ball_replay.hpp"

#include <arb.h>

#include <cmath>
#include <limits>

#include "mhaq/base/parallel.hpp"
#include "mhaq/base/precision.hpp"
#include "mhaq/oracle/recorded_balls.hpp"
#include "mhaq/stages/4-match/match.hpp"

namespace mhaq {

namespace replay_detail {
constexpr double kUnbounded = std::numeric_limits<double>::infinity();

// An upper (lower) bound of |x| as an exact ball (radius 0).
Ball abs_bound(const Ball& x, bool upper) {
  flint::Mag m;
  if (upper) arb_get_mag(m.v, x.raw());
  else arb_get_mag_lower(m.v, x.raw());
  Ball b;
  arf_set_mag(arb_midref(b.raw()), m.v);
  return b;
}
Ball upper_abs(const Ball& x) { return abs_bound(x, true); }
Ball lower_abs(const Ball& x) { return abs_bound(x, false); }
// An upper bound of sqrt(num2) / sqrt(den2) from an upper bound of num2 and a
// lower bound of den2; a den2 that is certainly zero counts as 1 (the scale
// of a zero norm); +inf when den2 may be zero or tiny but not certainly zero.
Ball ratio_upper(const Ball& num2, const Ball& den2, bool den_exact_zero) {
  Ball d = den2;
  if (den_exact_zero) d = Ball(1L);
  if (!arb_is_positive(d.raw())) {
    Ball inf;
    arb_pos_inf(inf.raw());
    return inf;
  }
  Ball q = num2 / d;
  arb_sqrt(q.raw(), q.raw(), working_precision());
  return upper_abs(q);
}
}  // namespace replay_detail
using namespace replay_detail;

template <class T>
std::vector<Ball> answer_balls(const Field<T>& F, const std::vector<T>& answers, const AnswerErrors& errors) {
  std::vector<Ball> balls;
  balls.reserve(answers.size());
  for (size_t j = 0; j < answers.size(); ++j) {
    Ball b = F.enclose(answers[j]);
    arb_set_round(b.raw(), b.raw(), working_precision());
    arb_add_error_mag(b.raw(), errors.answer_error(static_cast<long>(j)).v);
    balls.push_back(std::move(b));
  }
  return balls;
}

namespace replay_detail {
// perm[h] = the index of head h of `labelled` in `fit` (the same numbers), or empty.
template <class T>
std::vector<int> label_order(const Field<T>& F, const PairFit<T>& fit, const PairFit<T>& labelled) {
  const int H = fit.heads();
  if (labelled.heads() != H) return {};
  std::vector<int> perm(H, -1);
  for (int h = 0; h < H; ++h)
    for (int g = 0; g < H && perm[h] < 0; ++g)
      if (arb_equal(F.enclose(labelled.r[h]).raw(), F.enclose(fit.r[g]).raw()) && arb_equal(F.enclose(labelled.c[h]).raw(), F.enclose(fit.c[g]).raw()))
        perm[h] = g;
  for (int h = 0; h < H; ++h)
    if (perm[h] < 0) return {};
  return perm;
}

// A pair's system for the direct route's Krawczyk tests: PairSystem's
// equations, with the residuals and the Jacobian formed in Arb directly (the
// same functions, without the field's temporaries).
class ArbPair {
 public:
  ArbPair(std::vector<Ball> f, int H) : sys_(std::move(f), H), H_(H) {}
  int unknowns() const { return sys_.unknowns(); }
  int equations() const { return sys_.equations(); }
  const Ball& target(int k) const { return sys_.target(k); }
  Ball model(const Field<Ball>& F, const std::vector<Ball>& x, int k) const { return sys_.model(F, x, k); }
  // r_k = P + sum_h c_h / (1 + r_h k) - f_k
  void residuals(const Field<Ball>&, const std::vector<Ball>& x, std::vector<Ball>& r) const {
    const long prec = working_precision();
    r.resize(static_cast<size_t>(equations()));
    Ball den, t;
    for (int k = 0; k < equations(); ++k) {
      arb_set(r[k].raw(), x[0].raw());
      for (int h = 0; h < H_; ++h) {
        arb_mul_si(den.raw(), x[1 + h].raw(), k, prec);
        arb_add_ui(den.raw(), den.raw(), 1, prec);
        arb_div(t.raw(), x[1 + H_ + h].raw(), den.raw(), prec);
        arb_add(r[k].raw(), r[k].raw(), t.raw(), prec);
      }
      arb_sub(r[k].raw(), r[k].raw(), target(k).raw(), prec);
    }
  }
  // dP = 1, dc_h = 1 / (1 + r_h k), dr_h = -c_h k / (1 + r_h k)^2
  void jacobian(const Field<Ball>&, const std::vector<Ball>& x, Mat<Ball>& J) const {
    const long prec = working_precision();
    Ball inv;
    for (int k = 0; k < equations(); ++k) {
      arb_one(J(k, 0).raw());
      for (int h = 0; h < H_; ++h) {
        arb_mul_si(inv.raw(), x[1 + h].raw(), k, prec);
        arb_add_ui(inv.raw(), inv.raw(), 1, prec);
        arb_inv(inv.raw(), inv.raw(), prec);
        arb_set(J(k, 1 + H_ + h).raw(), inv.raw());
        arb_mul(J(k, 1 + h).raw(), inv.raw(), inv.raw(), prec);
        arb_mul(J(k, 1 + h).raw(), J(k, 1 + h).raw(), x[1 + H_ + h].raw(), prec);
        arb_mul_si(J(k, 1 + h).raw(), J(k, 1 + h).raw(), -k, prec);
      }
    }
  }
  template <class G>
  bool inverse_jacobian(const G& F, const std::vector<typename G::value_type>& x, Mat<typename G::value_type>& Y) const {
    return sys_.inverse_jacobian(F, x, Y);
  }
  Truth admissible(const Field<Ball>& F, const std::vector<Ball>& x) const { return sys_.admissible(F, x); }
  // the slope form's terms (Field<Ball>::certify's route for ill-conditioned pairs)
  bool applied_second_derivative(const Field<Ball>& F, const Mat<Ball>& Y, const std::vector<Ball>& xt, const std::vector<Ball>& X,
                                 const std::vector<Ball>& dX, int j, int l, std::vector<Ball>& out) const {
    return sys_.applied_second_derivative(F, Y, xt, X, dX, j, l, out);
  }

 private:
  PairSystem<Ball> sys_;
  int H_;
};

// The learner's final solve (stages/5-solve) on the certified boxes, as Arb
// matrix products: W_h = Delta^{-T} L_h B^{-1} with L_h = [log r_h(i, j)],
// v_h = -Delta^{-T} c_h(., 1). False when a pole ball is not certainly positive.
bool final_solve(const Plan& plan, const QMat& DeltaInv, const std::vector<PairFit<Ball>>& labelled, int H, std::vector<LearnedHead<Ball>>& heads) {
  const int d = plan.d;
  const long prec = working_precision();
  QMat BInv;
  if (!inverse(plan.B, BInv)) throw_internal("B singular");
  flint::ArbMat DiT(d, d), Bi(d, d), L(d, d), M(d, d), W(d, d), C(d, 1), V(d, 1);
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j) {
      arb_set_fmpq(arb_mat_entry(DiT.m, i, j), DeltaInv(j, i).raw(), prec);
      arb_set_fmpq(arb_mat_entry(Bi.m, i, j), BInv(i, j).raw(), prec);
    }
  heads.assign(static_cast<size_t>(H), {});
  for (int h = 0; h < H; ++h) {
    for (int i = 0; i < d; ++i) {
      arb_neg(arb_mat_entry(C.m, i, 0), labelled[plan.base_index(i, 0)].c[h].raw());
      for (int j = 0; j < d; ++j) {
        const arb_srcptr r = labelled[plan.base_index(i, j)].r[h].raw();
        if (!arb_is_positive(r)) return false;
        arb_log(arb_mat_entry(L.m, i, j), r, prec);
      }
    }
    arb_mat_mul(M.m, DiT.m, L.m, prec);
    arb_mat_mul(W.m, M.m, Bi.m, prec);
    arb_mat_mul(V.m, DiT.m, C.m, prec);
    LearnedHead<Ball>& out = heads[static_cast<size_t>(h)];
    out.W = Mat<Ball>(d, d);
    out.v.resize(static_cast<size_t>(d));
    for (int i = 0; i < d; ++i) {
      arb_set(out.v[i].raw(), arb_mat_entry(V.m, i, 0));
      for (int j = 0; j < d; ++j) arb_set(out.W(i, j).raw(), arb_mat_entry(W.m, i, j));
    }
  }
  return true;
}

bool identity_unique(const Assignment& a) {
  if (a.kind != Assignment::Kind::unique) return false;
  for (size_t h = 0; h < a.perm.size(); ++h)
    if (a.perm[h] != static_cast<int>(h)) return false;
  return true;
}
// A replay's learner, run: finished, or stopped with its own outcome
// (unable, degenerate, ...) and why; a usage, input or internal error is no
// outcome of the answers and propagates.
template <class Out, class Learn>
void run_learner(Out& out, Learn&& learn) {
  try {
    learn();
    out.finished = true;
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::internal || e.kind() == ErrorKind::usage || e.kind() == ErrorKind::input) throw;
    out.failure = e.kind();
    out.why = e.what();
  }
}

}  // namespace replay_detail

// The direct route (proofs/40): the run's plain path only (paper or lean
// schedule, H known, no repair, fallback or oversampling). Every base pair
// and the within links at b_1 are certified by Krawczyk's test from the
// run's own fits; the run's labels are then certified: at each offset the
// residues of (i, j) against (i, 1), and (i, 1) against (1, 1) through their
// within link, each the unique assignment (proofs/12, 37); the heads are the
// learner's final solve in balls. Anything else is left to the replay.
template <class T>
BallReplay certify_by_pairs(const Field<T>& F, const LearnOptions& lo, const LearnResult<T>& run, const std::vector<Query>& queries,
                            const std::vector<T>& answers, const AnswerErrors& errors, long bits) {
  BallReplay out;
  out.bits = bits;
  out.route = "pairs";
  const Plan& plan = run.plan;
  const int d = plan.d, H = lo.H;
  auto refuse = [&](const std::string& why) {
    out.why = why;
    return out;
  };
  if ((plan.schedule != Schedule::paper && plan.schedule != Schedule::lean) || lo.bias || lo.heads_is_bound || lo.samples_per_pair != 0 || !run.repairs.empty() ||
      !run.fallback_pairs.empty() || static_cast<int>(run.labelled.size()) != d * d || run.fits.size() != plan.pairs.size() ||
      static_cast<long>(answers.size()) < plan.query_count())
    return refuse("the run did not take the plain path");
  // the learner asks the plan's queries first, in order (Path::ask)
  if (!same_query(queries[0], plan.first)) return refuse("the record does not start with the plan's queries");
  PrecisionScope scope(bits);
  const std::vector<Ball> y = answer_balls(F, answers, errors);
  Field<Ball> fb;
  fb.point_inverse = true;
  // the pairs certified: base pairs, then the within links at b_1
  std::vector<int> pairs;
  for (int p = 0; p < d * d; ++p) pairs.push_back(p);
  std::vector<int> link_of(d, -1);
  for (size_t p = d * d; p < plan.pairs.size(); ++p)
    if (plan.pairs[p].kind == PairKind::within && plan.pairs[p].j == 0) link_of[plan.pairs[p].i] = static_cast<int>(p);
  for (int i = 1; i < d; ++i) {
    if (link_of[i] < 0) return refuse("no within link at b_1");
    pairs.push_back(link_of[i]);
  }
  std::vector<std::optional<PairFit<Ball>>> box(plan.pairs.size());
  auto certify_pair = [&](int p, const Ball& f0) {
    const PairSpec& ps = plan.pairs[p];
    const PairFit<T>& start = run.fits[p];
    if (start.heads() != H || ps.samples != 2 * H + 1) return;
    std::vector<Ball> f{f0};
    for (int k = 1; k < ps.samples; ++k) f.push_back(y[plan.query_index(p, k)]);
    std::vector<Ball> x{F.enclose(start.P)};
    for (const T& r : start.r) x.push_back(F.enclose(r));
    for (const T& c : start.c) x.push_back(F.enclose(c));
    if (fb.certify(ArbPair(std::move(f), H), x) != Truth::yes) return;
    box[p] = PairFit<Ball>{x[0], std::vector<Ball>(x.begin() + 1, x.begin() + 1 + H), std::vector<Ball>(x.begin() + 1 + H, x.end())};
  };
  parallel_for(0, static_cast<size_t>(d), lo.threads, [&](size_t i) { certify_pair(plan.base_index(static_cast<int>(i), 0), y[0]); });
  for (int i = 0; i < d; ++i)
    if (!box[plan.base_index(i, 0)]) return refuse("a base pair (i, 1) is not certified");
  Chaining<Ball> chain{y[0], {}, {}, plan.B.col(0), {}, {}, {}, {}};
  if (!inverse(plan.Delta, chain.DeltaInv)) throw_internal("Delta singular");
  for (int i = 0; i < d; ++i) chain.vdelta.push_back(box[plan.base_index(i, 0)]->P - y[0]);
  for (int p : pairs) chain.remember(plan.pairs[p].final_token);
  chain.convert(fb);
  parallel_for(static_cast<size_t>(d), pairs.size(), lo.threads, [&](size_t n) {
    const int p = pairs[n];
    certify_pair(p, chain.f0(fb, plan.pairs[p].final_token));
  });
  for (int p : pairs)
    if (!box[p]) return refuse(pair_name(plan.pairs[p]) + " is not certified");
  // the run's labels, each certified as the only assignment the boxes allow
  std::vector<PairFit<Ball>> labelled(d * d);
  for (int p = 0; p < d * d; ++p) {
    const std::vector<int> perm = label_order(F, run.fits[p], run.labelled[p]);
    if (perm.empty()) return refuse("the run's labels are not its fits'");
    labelled[p] = permuted(*box[p], perm);
  }
  for (int i = 1; i < d; ++i)
    if (!identity_unique(label_assignment(fb, labelled[plan.base_index(0, 0)], labelled[plan.base_index(i, 0)], &*box[link_of[i]], Relation::within)))
      return refuse("the labels of " + pair_name(plan.pairs[plan.base_index(i, 0)]) + " are not certified by their within link");
  for (int i = 0; i < d; ++i)
    for (int j = 1; j < d; ++j)
      if (!identity_unique(label_assignment(fb, labelled[plan.base_index(i, 0)], labelled[plan.base_index(i, j)], nullptr, Relation::residue)))
        return refuse("the labels of " + pair_name(plan.pairs[plan.base_index(i, j)]) + " are not certified by their residues");
  if (!final_solve(plan, chain.DeltaInv, labelled, H, out.heads)) return refuse("a pole is not certainly positive");
  out.finished = true;
  return out;
}

template <class T>
BallReplay replay_in_balls(const Field<T>& F, int d, const LearnOptions& lo, const std::vector<Query>& queries, const std::vector<T>& answers,
                           const AnswerErrors& errors, const FitStarts* starts, long bits, bool self_check) {
  BallReplay out;
  out.bits = bits;
  out.route = "replay";
  PrecisionScope scope(bits);
  RecordedBalls oracle(d, queries, answer_balls(F, answers, errors), starts);
  LearnOptions l = lo;
  l.self_check = self_check;
  l.keep_fit_samples = false;
  l.progress = nullptr;
  run_learner(out, [&] {
    LearnResult<Ball> res = learn<Ball>(oracle, l);
    out.heads = std::move(res.heads);
    out.beta = std::move(res.beta);
    out.self_check = res.self_check;
    out.self_check_failed = res.self_check_failed;
  });
  return out;
}

template <class T>
FitStarts fit_starts(const Field<T>& F, const LearnResult<T>& run) {
  FitStarts s;
  for (size_t p = 0; p < run.fit_samples.size() && p < run.fits.size(); ++p) {
    const std::vector<T>& f = run.fit_samples[p];
    if (f.empty()) continue;
    const PairFit<T>& fit = run.fits[p];
    std::vector<double> key;
    for (const T& y : f) key.push_back(F.enclose(y).mid_double());
    std::vector<Ball> x{F.enclose(fit.P)};
    for (const T& r : fit.r) x.push_back(F.enclose(r));
    for (const T& c : fit.c) x.push_back(F.enclose(c));
    s.add(key, fit.heads(), std::move(x));
  }
  return s;
}

namespace replay_detail {
// log2 of an upper bound of the ball x (0 <= x), rounded up; -inf for 0.
double log2_up(const Ball& x) {
  const Ball u = upper_abs(x);
  if (arb_is_zero(u.raw())) return -kUnbounded;
  if (!arb_is_finite(u.raw())) return kUnbounded;
  Ball l2;
  arb_log_base_ui(l2.raw(), u.raw(), 2, 64);
  arb_get_ubound_arf(arb_midref(l2.raw()), l2.raw(), 64);
  return arf_get_d(arb_midref(l2.raw()), ARF_RND_UP);
}
// log2 of a lower bound of the ball x (0 <= x), rounded down; -inf for 0.
double log2_down(const Ball& x) {
  const Ball l = lower_abs(x);
  if (arb_is_zero(l.raw())) return -kUnbounded;
  Ball l2;
  arb_log_base_ui(l2.raw(), l.raw(), 2, 64);
  arb_get_lbound_arf(arb_midref(l2.raw()), l2.raw(), 64);
  return arf_get_d(arb_midref(l2.raw()), ARF_RND_DOWN);
}

// Bounds of ||x - b|| / s(b) over the balls b, s the norm, or 1 when every
// b is exactly zero (the scale of max_rel_error): the upper bound sup, as a
// ball (+inf when the norm may vanish without certainly vanishing), and the
// lower bound inf in log2 (-inf when it may be zero).
struct RelBounds {
  Ball upper;
  double lower_log2;
};
RelBounds rel_bounds(const std::vector<Ball>& x, const std::vector<const Ball*>& b) {
  Ball dhi(0L), dlo(0L), nlo(0L), nhi(0L);
  bool zero = true;
  for (size_t i = 0; i < x.size(); ++i) {
    const Ball e = x[i] - *b[i];
    const Ball eu = upper_abs(e), el = lower_abs(e), bu = upper_abs(*b[i]), bl = lower_abs(*b[i]);
    dhi += eu * eu;
    dlo += el * el;
    nhi += bu * bu;
    nlo += bl * bl;
    zero = zero && arb_is_zero(b[i]->raw());
  }
  // the lower endpoints of the sums rounded outward
  arb_get_lbound_arf(arb_midref(nlo.raw()), nlo.raw(), 64);
  mag_zero(arb_radref(nlo.raw()));
  Ball lo = zero ? dlo : dlo / nhi;
  arb_sqrt(lo.raw(), lo.raw(), 64);
  return {ratio_upper(dhi, nlo, zero), arb_is_finite(lo.raw()) ? log2_down(lo) : -kUnbounded};
}
template <class T>
std::vector<Ball> enclosed(const Field<T>& F, const std::vector<const T*>& x) {
  std::vector<Ball> out;
  for (const T* e : x) out.push_back(F.enclose(*e));
  return out;
}
template <class X>
std::vector<const X*> entries(const Mat<X>& W) {
  std::vector<const X*> out;
  for (int i = 0; i < W.rows(); ++i)
    for (int j = 0; j < W.cols(); ++j) out.push_back(&W(i, j));
  return out;
}
template <class X>
std::vector<const X*> entries(const std::vector<X>& v) {
  std::vector<const X*> out;
  for (const X& e : v) out.push_back(&e);
  return out;
}
}  // namespace replay_detail

template <class T>
double certified_distance_log2(const Field<T>& F, const std::vector<LearnedHead<T>>& got, const std::vector<LearnedHead<Ball>>& balls,
                               const T* got_beta, const Ball* ball_beta) {
  if (got.size() != balls.size() || got.empty() || (got_beta == nullptr) != (ball_beta == nullptr)) return kUnbounded;
  PrecisionScope scope(64);
  const size_t H = got.size();
  // with biases W stands for [W c], as in max_rel_error
  auto score_part = [](const auto& head) {
    auto e = entries(head.W);
    const auto c = entries(head.c);
    e.insert(e.end(), c.begin(), c.end());
    return e;
  };
  std::vector<std::vector<double>> cost(H, std::vector<double>(H, kUnbounded));
  for (size_t g = 0; g < H; ++g)
    for (size_t k = 0; k < H; ++k) {
      if (got[g].c.size() != balls[k].c.size()) continue;
      const RelBounds w = rel_bounds(enclosed(F, score_part(got[g])), score_part(balls[k]));
      const RelBounds v = rel_bounds(enclosed(F, entries(got[g].v)), entries(balls[k].v));
      cost[g][k] = log2_up(w.upper + v.upper);
    }
  double best = kUnbounded;
  bottleneck_matching(cost, &best);
  // beta's relative error: one more term of the maximum
  if (got_beta) best = std::max(best, log2_up(rel_bounds({F.enclose(*got_beta)}, {ball_beta}).upper));
  return best;
}

template <class T>
TransformerBallReplay replay_transformer_in_balls(const Field<T>& F, int d, const TransformerLearnOptions& lo, const std::vector<Query>& queries,
                                                  const std::vector<T>& answers, const AnswerErrors& errors, long bits) {
  TransformerBallReplay out;
  out.bits = bits;
  PrecisionScope scope(bits);
  RecordedBalls oracle(d, queries, answer_balls(F, answers, errors), nullptr);
  TransformerLearnOptions l = lo;
  l.coincidence_test = true;  // equality is decided in balls
  run_learner(out, [&] { out.res = learn_transformer<Ball>(oracle, l); });
  return out;
}

template <class T>
double certified_transformer_distance_log2(const Field<T>& F, const TransformerLearnResult<T>& got, const TransformerLearnResult<Ball>& balls,
                                           std::string& why) {
  const size_t H = got.W.size(), m = got.neurons.size();
  if (balls.W.size() != H || balls.neurons.size() != m || H == 0 || m == 0) {
    why = "the replay in balls found " + std::to_string(balls.W.size()) + " heads and " + std::to_string(balls.neurons.size()) + " neurons, the run " +
          std::to_string(H) + " and " + std::to_string(m);
    return kUnbounded;
  }
  PrecisionScope scope(64);
  // heads: rows the ball heads (where the truth's lie), columns the run's
  std::vector<std::vector<double>> hi(H, std::vector<double>(H)), lo(H, std::vector<double>(H));
  for (size_t k = 0; k < H; ++k)
    for (size_t g = 0; g < H; ++g) {
      const RelBounds b = rel_bounds(enclosed(F, entries(got.W[g])), entries(balls.W[k]));
      hi[k][g] = log2_up(b.upper);
      lo[k][g] = b.lower_log2;
    }
  double hw = kUnbounded;
  const std::vector<int> hp = bottleneck_matching(hi, &hw);
  bool separated = !hp.empty() && std::isfinite(hw);
  for (size_t k = 0; separated && k < H; ++k)
    for (size_t g = 0; g < H; ++g)
      if (static_cast<int>(g) != hp[k] && !(lo[k][g] > hw)) separated = false;
  if (!separated) {
    why = "the run's heads are not certainly matched to distinct heads of the replay in balls";
    return kUnbounded;
  }
  // neurons under that head order: u the same sign, U by relative error
  std::vector<std::vector<double>> nc(m, std::vector<double>(m, kUnbounded));
  for (size_t j = 0; j < m; ++j)
    for (size_t k = 0; k < m; ++k) {
      const Ball& u = balls.neurons[j].u;
      if (!arb_is_exact(u.raw()) || !arb_equal(u.raw(), F.enclose(got.neurons[k].u).raw())) continue;
      std::vector<Ball> x;
      std::vector<const Ball*> b;
      for (size_t h = 0; h < H; ++h) {
        const std::vector<Ball> xs = enclosed(F, entries(got.neurons[k].U[static_cast<size_t>(hp[h])]));
        x.insert(x.end(), xs.begin(), xs.end());
        for (const Ball& e : balls.neurons[j].U[h]) b.push_back(&e);
      }
      nc[j][k] = log2_up(rel_bounds(x, b).upper);
    }
  double nw = kUnbounded;
  if (bottleneck_matching(nc, &nw).empty() || !std::isfinite(nw)) {
    why = "the run's neurons are not matched to the replay's (a sign differs, or a norm may vanish)";
    return kUnbounded;
  }
  // 2^hw + 2^nw, rounded up
  const double top = std::max(hw, nw);
  return std::isinf(top) ? top : top + std::log2(1 + std::exp2(std::min(hw, nw) - top)) + 1e-9;
}

#define MHAQ_INSTANTIATE(T)                                                                                                                     \
  template std::vector<Ball> answer_balls<T>(const Field<T>&, const std::vector<T>&, const AnswerErrors&);                                    \
  template BallReplay replay_in_balls<T>(const Field<T>&, int, const LearnOptions&, const std::vector<Query>&, const std::vector<T>&,         \
                                         const AnswerErrors&, const FitStarts*, long, bool);                                                 \
  template FitStarts fit_starts<T>(const Field<T>&, const LearnResult<T>&);                                                                  \
  template BallReplay certify_by_pairs<T>(const Field<T>&, const LearnOptions&, const LearnResult<T>&, const std::vector<Query>&,             \
                                          const std::vector<T>&, const AnswerErrors&, long);                                                                  \
  template double certified_distance_log2<T>(const Field<T>&, const std::vector<LearnedHead<T>>&, const std::vector<LearnedHead<Ball>>&,      \
                                             const T*, const Ball*);                                                                         \
  template TransformerBallReplay replay_transformer_in_balls<T>(const Field<T>&, int, const TransformerLearnOptions&, const std::vector<Query>&, \
                                                                const std::vector<T>&, const AnswerErrors&, long);                               \
  template double certified_transformer_distance_log2<T>(const Field<T>&, const TransformerLearnResult<T>&, const TransformerLearnResult<Ball>&, \
                                                         std::string&);
MHAQ_INSTANTIATE(Mpfr)
MHAQ_INSTANTIATE(double)
#undef MHAQ_INSTANTIATE

}  // namespace mhaq
