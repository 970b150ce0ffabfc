// What the lemma checks of src/evidence/prove/ share: the failure of a
// sub-claim, one RAII wrapper for FLINT's multivariate polynomials over Z
// and over Q, random draws of rationals, models and queries, and the
// declarations of the checks the registry (registry.cpp) lists. The public
// entry points are in include/mhaq/evidence/prove.hpp.
#pragma once
#include <arb.h>
#include <arb_mat.h>
#include <arb_poly.h>
#include <flint/fmpq_mat.h>
#include <flint/fmpq_mpoly.h>
#include <flint/fmpq_mpoly_factor.h>
#include <flint/fmpz_mpoly.h>
#include <flint/fmpz_mpoly_factor.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "mhaq/analysis/design_search.hpp"
#include "mhaq/analysis/placed_certify.hpp"
#include "mhaq/analysis/sensitivity.hpp"
#include "mhaq/arith/field.hpp"
#include "mhaq/arith/flint_wrappers.hpp"
#include "mhaq/arith/numbers.hpp"
#include "mhaq/arith/qtau_access.hpp"
#include "mhaq/arith/rational.hpp"
#include "mhaq/base/error.hpp"
#include "mhaq/base/random.hpp"
#include "mhaq/evidence/baseline.hpp"
#include "mhaq/evidence/prove.hpp"
#include "mhaq/model/model.hpp"
#include "mhaq/oracle/oracle_stack.hpp"
#include "mhaq/model/transformer.hpp"
#include "mhaq/run/recover.hpp"
#include "mhaq/stages/2-schedule/design.hpp"
#include "mhaq/stages/2-schedule/schedule.hpp"
#include "mhaq/stages/4-match/known_residues.hpp"
#include "mhaq/stages/4-match/match.hpp"
#include "mhaq/stages/learner.hpp"

namespace mhaq::proof {

// A failed sub-claim: carries the message to LemmaCheck::detail.
struct CheckFailure {
  std::string what;
};
void require(bool ok, const std::string& what);

// The FLINT calls of multivariate polynomials over Z (fmpz_mpoly, graded
// reverse lexicographic order) and over Q (fmpq_mpoly, lexicographic order).
struct OverZ {
  using Poly = fmpz_mpoly_struct;
  using Ctx = fmpz_mpoly_ctx_struct;
  static constexpr ordering_t order = ORD_DEGREVLEX;
  static void ctx_init(Ctx* c, slong n) { fmpz_mpoly_ctx_init(c, n, order); }
  static void ctx_clear(Ctx* c) { fmpz_mpoly_ctx_clear(c); }
  static void init(Poly* p, const Ctx* c) { fmpz_mpoly_init(p, c); }
  static void clear(Poly* p, const Ctx* c) { fmpz_mpoly_clear(p, c); }
  static void set(Poly* r, const Poly* a, const Ctx* c) { fmpz_mpoly_set(r, a, c); }
  static void swap(Poly* a, Poly* b, const Ctx* c) { fmpz_mpoly_swap(a, b, c); }
  static void gen(Poly* r, slong i, const Ctx* c) { fmpz_mpoly_gen(r, i, c); }
  static void add(Poly* r, const Poly* a, const Poly* b, const Ctx* c) { fmpz_mpoly_add(r, a, b, c); }
  static void sub(Poly* r, const Poly* a, const Poly* b, const Ctx* c) { fmpz_mpoly_sub(r, a, b, c); }
  static void mul(Poly* r, const Poly* a, const Poly* b, const Ctx* c) { fmpz_mpoly_mul(r, a, b, c); }
  static void neg(Poly* r, const Poly* a, const Ctx* c) { fmpz_mpoly_neg(r, a, c); }
  static void pow(Poly* r, const Poly* a, ulong e, const Ctx* c) { fmpz_mpoly_pow_ui(r, a, e, c); }
  static int divides(Poly* q, const Poly* a, const Poly* b, const Ctx* c) { return fmpz_mpoly_divides(q, a, b, c); }
  static int equal(const Poly* a, const Poly* b, const Ctx* c) { return fmpz_mpoly_equal(a, b, c); }
  static int is_zero(const Poly* a, const Ctx* c) { return fmpz_mpoly_is_zero(a, c); }
  static slong degree(const Poly* a, slong v, const Ctx* c) { return fmpz_mpoly_degree_si(a, v, c); }
  static slong total_degree(const Poly* a, const Ctx* c) { return fmpz_mpoly_total_degree_si(a, c); }
};
struct OverQ {
  using Poly = fmpq_mpoly_struct;
  using Ctx = fmpq_mpoly_ctx_struct;
  static constexpr ordering_t order = ORD_LEX;
  static void ctx_init(Ctx* c, slong n) { fmpq_mpoly_ctx_init(c, n, order); }
  static void ctx_clear(Ctx* c) { fmpq_mpoly_ctx_clear(c); }
  static void init(Poly* p, const Ctx* c) { fmpq_mpoly_init(p, c); }
  static void clear(Poly* p, const Ctx* c) { fmpq_mpoly_clear(p, c); }
  static void set(Poly* r, const Poly* a, const Ctx* c) { fmpq_mpoly_set(r, a, c); }
  static void swap(Poly* a, Poly* b, const Ctx* c) { fmpq_mpoly_swap(a, b, c); }
  static void gen(Poly* r, slong i, const Ctx* c) { fmpq_mpoly_gen(r, i, c); }
  static void add(Poly* r, const Poly* a, const Poly* b, const Ctx* c) { fmpq_mpoly_add(r, a, b, c); }
  static void sub(Poly* r, const Poly* a, const Poly* b, const Ctx* c) { fmpq_mpoly_sub(r, a, b, c); }
  static void mul(Poly* r, const Poly* a, const Poly* b, const Ctx* c) { fmpq_mpoly_mul(r, a, b, c); }
  static void neg(Poly* r, const Poly* a, const Ctx* c) { fmpq_mpoly_neg(r, a, c); }
  static void pow(Poly* r, const Poly* a, ulong e, const Ctx* c) { fmpq_mpoly_pow_ui(r, a, e, c); }
  static int divides(Poly* q, const Poly* a, const Poly* b, const Ctx* c) { return fmpq_mpoly_divides(q, a, b, c); }
  static int equal(const Poly* a, const Poly* b, const Ctx* c) { return fmpq_mpoly_equal(a, b, c); }
  static int is_zero(const Poly* a, const Ctx* c) { return fmpq_mpoly_is_zero(a, c); }
  static slong degree(const Poly* a, slong v, const Ctx* c) { return fmpq_mpoly_degree_si(a, v, c); }
  static slong total_degree(const Poly* a, const Ctx* c) { return fmpq_mpoly_total_degree_si(a, c); }
};

// One context of nvars variables.
template <class K>
class PolyCtx {
 public:
  explicit PolyCtx(slong nvars) { K::ctx_init(c, nvars); }
  ~PolyCtx() { K::ctx_clear(c); }
  PolyCtx(const PolyCtx&) = delete;
  PolyCtx& operator=(const PolyCtx&) = delete;
  typename K::Ctx c[1];
};

// A polynomial in one context (which must outlive it).
template <class K>
class Poly {
 public:
  using Context = PolyCtx<K>;
  explicit Poly(const Context& c) : c_(&c) { K::init(p_, c.c); }
  // the constant v (over Z)
  Poly(const Context& c, long v)
    requires std::is_same_v<K, OverZ>
      : Poly(c) {
    fmpz_mpoly_set_si(p_, v, c.c);
  }
  // the constant q (over Q)
  Poly(const Context& c, const Rational& q)
    requires std::is_same_v<K, OverQ>
      : Poly(c) {
    fmpq_mpoly_set_fmpq(p_, q.raw(), c.c);
  }
  Poly(const Poly& o) : Poly(*o.c_) { K::set(p_, o.p_, c_->c); }
  Poly(Poly&& o) noexcept : Poly(*o.c_) { K::swap(p_, o.p_, c_->c); }
  Poly& operator=(const Poly& o) {
    K::set(p_, o.p_, c_->c);
    return *this;
  }
  Poly& operator=(Poly&& o) noexcept {
    K::swap(p_, o.p_, c_->c);
    return *this;
  }
  ~Poly() { K::clear(p_, c_->c); }

  static Poly gen(const Context& c, slong i) {
    Poly r(c);
    K::gen(r.p_, i, c.c);
    return r;
  }
  const Context& ctx() const { return *c_; }
  typename K::Poly* raw() { return p_; }
  const typename K::Poly* raw() const { return p_; }
  bool is_zero() const { return K::is_zero(p_, c_->c); }
  slong degree(slong v) const { return K::degree(p_, v, c_->c); }
  slong total_degree() const { return K::total_degree(p_, c_->c); }

  friend Poly operator+(const Poly& a, const Poly& b) { return a.apply(K::add, b); }
  friend Poly operator-(const Poly& a, const Poly& b) { return a.apply(K::sub, b); }
  friend Poly operator*(const Poly& a, const Poly& b) { return a.apply(K::mul, b); }
  friend Poly operator-(const Poly& a) {
    Poly r(*a.c_);
    K::neg(r.p_, a.p_, a.c_->c);
    return r;
  }
  friend bool operator==(const Poly& a, const Poly& b) { return K::equal(a.p_, b.p_, a.c_->c); }
  Poly pow(ulong e) const {
    Poly r(*c_);
    K::pow(r.p_, p_, e, c_->c);
    return r;
  }
  // this = b q: true with q set when b divides this
  bool divides(const Poly& b, Poly& q) const { return K::divides(q.p_, p_, b.p_, c_->c); }
  // Exact quotient a / b; throws internal if b does not divide a.
  static Poly exact_div(const Poly& a, const Poly& b) {
    Poly q(*a.c_);
    if (!a.divides(b, q)) throw_internal("prove: inexact polynomial division");
    return q;
  }
  // Over Q only: the derivative in v, the resultant in v and the gcd, the
  // monic associate, the irreducible factors with their multiplicities (the
  // constant dropped), the value at a point (one value per variable) and the
  // polynomial with variable v set to q.
  Poly deriv(slong v) const
    requires std::is_same_v<K, OverQ>
  {
    Poly r(*c_);
    fmpq_mpoly_derivative(r.p_, p_, v, c_->c);
    return r;
  }
  static Poly resultant(const Poly& a, const Poly& b, slong v)
    requires std::is_same_v<K, OverQ>
  {
    Poly r(*a.c_);
    if (!fmpq_mpoly_resultant(r.p_, a.p_, b.p_, v, a.c_->c)) throw_internal("prove: FLINT resultant failed");
    return r;
  }
  static Poly gcd(const Poly& a, const Poly& b)
    requires std::is_same_v<K, OverQ>
  {
    Poly r(*a.c_);
    if (!fmpq_mpoly_gcd(r.p_, a.p_, b.p_, a.c_->c)) throw_internal("prove: FLINT gcd failed");
    return r;
  }
  Poly monic() const
    requires std::is_same_v<K, OverQ>
  {
    Poly r(*c_);
    fmpq_mpoly_make_monic(r.p_, p_, c_->c);
    return r;
  }
  std::vector<std::pair<Poly, long>> factors() const
    requires std::is_same_v<K, OverQ>
  {
    fmpq_mpoly_factor_t f;
    fmpq_mpoly_factor_init(f, c_->c);
    if (!fmpq_mpoly_factor(f, p_, c_->c)) throw_internal("prove: FLINT factorisation failed");
    std::vector<std::pair<Poly, long>> out;
    for (slong i = 0; i < f->num; ++i) {
      Poly g(*c_);
      fmpq_mpoly_set(g.p_, f->poly + i, c_->c);
      out.emplace_back(g, fmpz_get_si(f->exp + i));
    }
    fmpq_mpoly_factor_clear(f, c_->c);
    return out;
  }
  Rational value(const std::vector<Rational>& vals) const
    requires std::is_same_v<K, OverQ>
  {
    std::vector<fmpq*> ptrs;
    std::vector<Rational> copy = vals;
    for (auto& x : copy) ptrs.push_back(x.raw());
    Rational out;
    if (!fmpq_mpoly_evaluate_all_fmpq(out.raw(), p_, ptrs.data(), c_->c)) throw_internal("prove: FLINT evaluation failed");
    return out;
  }
  Poly at(slong v, const Rational& q) const
    requires std::is_same_v<K, OverQ>
  {
    Poly r(*c_);
    if (!fmpq_mpoly_evaluate_one_fmpq(r.p_, p_, v, q.raw(), c_->c)) throw_internal("prove: FLINT evaluation failed");
    return r;
  }

 private:
  Poly apply(void (*op)(typename K::Poly*, const typename K::Poly*, const typename K::Poly*, const typename K::Ctx*), const Poly& b) const {
    Poly r(*c_);
    op(r.p_, p_, b.p_, c_->c);
    return r;
  }
  const Context* c_;
  typename K::Poly p_[1];
};

using Ctx = PolyCtx<OverZ>;
using MP = Poly<OverZ>;
using QCtx = PolyCtx<OverQ>;
using QP = Poly<OverQ>;

MP operator*(long s, const MP& a);
QP operator*(const Rational& q, const QP& a);

// Determinant by fraction-free (Bareiss) elimination with row swaps.
MP det_bareiss(std::vector<std::vector<MP>> M);

// Polynomials in one extra variable k with coefficients in Z[vars]:
// coefficient vectors, lowest degree first.
using KPoly = std::vector<MP>;
KPoly kmul(const KPoly& a, const KPoly& b);
KPoly kadd(KPoly a, const KPoly& b);
KPoly kscale(const MP& s, KPoly a);
MP keval(const KPoly& a, long k);
// x^(deg) * a(-1/x), as a polynomial (deg >= degree of a).
MP kreverse_at_neg_inv(const KPoly& a, const MP& x, size_t deg);
KPoly kderiv(const KPoly& a);

std::string perm_str(const std::vector<int>& p);

Rational rand_q(Rng& rng, long range, long den);
Rational rand_q_nonzero(Rng& rng, long range, long den);
QVec rand_vec(Rng& rng, int d, long range);
QMat rand_invertible(Rng& rng, int d, long range);
QMat mat_mul(const QMat& A, const QMat& B);
Model random_model(Rng& rng, int d, int heads, bool share = false, bool cancel = false);
Query pair_query(const QVec& a, long k, const QVec& b);

// Runs the exact learner on a model; false when the draw was degenerate
// (reported, never a wrong answer), true with `out` set otherwise.
bool learn_exact(const Model& m, int H, Schedule s, std::uint64_t seed, LearnResult<QTau>& out);

// An MPFR learner run at the current working precision on the model drawn
// from g (g.seed drawn from rng), with its queries and answers recorded
// (lemmas 32 and 33). False when the canonical form has fewer heads than g
// asks for or the run ends degenerate.
struct RecordedMpfrRun {
  LearnOptions lo;
  std::vector<Query> queries;
  std::vector<Mpfr> answers;
  LearnResult<Mpfr> res;
};
// keep_fit_samples: the run keeps its fits' samples (lemma 35). `adjust`
// changes the learner's options once they are drawn (lemma 38: the schedule
// and the draw); any_failure: any outcome of the learner but an internal,
// usage or input error is no run, not just a degenerate one.
bool record_mpfr_run(GenerateOptions g, Rng& rng, RecordedMpfrRun& out, bool keep_fit_samples = false,
                     const std::function<void(LearnOptions&)>& adjust = {}, bool any_failure = false);

// The integer tokens of the query-count checks (lemmas 5 and 18): B unit upper
// triangular plus ones, Delta lower triangular with 2 on the diagonal.
void count_tokens(int d, QMat& B, QMat& Delta);

// A randomized case count times the --multiplier.
long scaled(const ProveOptions& o, long n);

// The transformer lemmas (13-16): random transformers (with shared W, zero
// and parallel neurons when `variants`), negated and random sequences.
TransformerModel random_transformer(Rng& rng, int d, int H, int m, bool variants);
Query negate_query(Query q);
Query random_query(Rng& rng, int d, long range);

// The compact-schedule lemmas (18-20).
// A compact pair over Q (proofs/19): g(k) = sum_h c_h/(1 + r_h k) at
// k = 1..s, N(0) = sum c, Q(0) = 1, deg N <= H-1, deg Q <= H. With
// s = 2H-1-m the solutions of N(k) = g(k) Q(k) form an m-parameter family;
// the parameters are the top coefficients q_H = t_1, q_{H-1} = t_2, ...
// (variables 1..m of the context; variable 0 is k). False when the system for
// the other unknowns is singular.
bool family_over_q(const std::vector<Rational>& r, const std::vector<Rational>& c, int m, const QCtx& ctx, QP& N, QP& Q);
// Distinct positive rational poles and distinct nonzero residues.
void draw_pair(Rng& rng, int H, std::vector<Rational>& r, std::vector<Rational>& c);

// A random mpfr model for the sensitivity checks: model t has d = 2 + t % 2
// and 1 + (t / 2) % 2 heads; the draws are the model's seed, then the
// learner's seed. Empty when the canonical form loses a head (the learner's
// seed is not drawn then) or the sensitivity is degenerate.
struct SensitivityDraw {
  GenerateOptions g;
  Model model;
  Model canon;
  LearnOptions lo;
  Sensitivity S;
};
std::optional<SensitivityDraw> draw_sensitivity_model(Rng& rng, long t, int constant_answer = -1);

// One check per page of proofs/: `broken` swaps in the page's wrong variant.
using CheckFn = void (*)(const ProveOptions&, bool broken, LemmaCheck&);
void check_pair_identity(const ProveOptions& o, bool broken, LemmaCheck& out);
void check_placed_poles(const ProveOptions& o, bool broken, LemmaCheck& out);
void check_interpolation(const ProveOptions& o, bool broken, LemmaCheck& out);
void check_bilinearity(const ProveOptions& o, bool broken, LemmaCheck& out);
void check_chaining(const ProveOptions& o, bool broken, LemmaCheck& out);
void check_query_count(const ProveOptions& o, bool broken, LemmaCheck& out);
void check_canonical(const ProveOptions& o, bool broken, LemmaCheck& out);
void check_unknown_H(const ProveOptions& o, bool broken, LemmaCheck& out);
void check_exactness(const ProveOptions& o, bool broken, LemmaCheck& out);
void check_sensitivity(const ProveOptions& o, bool broken, LemmaCheck& out);
void check_assignment(const ProveOptions& o, bool broken, LemmaCheck& out);
void check_odd_part(const ProveOptions& o, bool broken, LemmaCheck& out);
void check_region_values(const ProveOptions& o, bool broken, LemmaCheck& out);
void check_path_crossings(const ProveOptions& o, bool broken, LemmaCheck& out);
void check_transformer_canonical(const ProveOptions& o, bool broken, LemmaCheck& out);
void check_baselines(const ProveOptions& o, bool broken, LemmaCheck& out);
void check_compact_count(const ProveOptions& o, bool broken, LemmaCheck& out);
void check_known_residues(const ProveOptions& o, bool broken, LemmaCheck& out);
void check_compact_limits(const ProveOptions& o, bool broken, LemmaCheck& out);
void check_repair_witness(const ProveOptions& o, bool broken, LemmaCheck& out);
void check_grid_witness(const ProveOptions& o, bool broken, LemmaCheck& out);
void check_rank_schedule(const ProveOptions& o, bool broken, LemmaCheck& out);
void check_single_crossing(const ProveOptions& o, bool broken, LemmaCheck& out);
void check_head_split(const ProveOptions& o, bool broken, LemmaCheck& out);
void check_pair_closed_form(const ProveOptions& o, bool broken, LemmaCheck& out);
void check_mean_value_bound(const ProveOptions& o, bool broken, LemmaCheck& out);
void check_low_precision_estimate(const ProveOptions& o, bool broken, LemmaCheck& out);
void check_double_derivative_estimate(const ProveOptions& o, bool broken, LemmaCheck& out);
void check_replay_reuses_fits(const ProveOptions& o, bool broken, LemmaCheck& out);
void check_scaled_queries(const ProveOptions& o, bool broken, LemmaCheck& out);
void check_placed_certified(const ProveOptions& o, bool broken, LemmaCheck& out);
void check_composed_estimate(const ProveOptions& o, bool broken, LemmaCheck& out);
void check_float_judge(const ProveOptions& o, bool broken, LemmaCheck& out);
void check_bias_canonical(const ProveOptions& o, bool broken, LemmaCheck& out);

}  // namespace mhaq::proof
