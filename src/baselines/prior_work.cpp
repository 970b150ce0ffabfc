// The prior-work baselines (include/mhaq/baselines/prior_work.hpp), written
// once for every field, like the stages.
#include "mhaq/baselines/prior_work.hpp"

#include "mhaq/arith/all_fields.hpp"
#include "mhaq/base/random.hpp"

namespace mhaq {

const char* baseline_method_name(BaselineMethod m) { return m == BaselineMethod::single_head ? "single-head" : "orthogonal"; }
BaselineMethod parse_baseline_method(const std::string& s) {
  if (s == "single-head") return BaselineMethod::single_head;
  if (s == "orthogonal") return BaselineMethod::orthogonal;
  throw Error(ErrorKind::usage, "--method must be single-head or orthogonal, got \"" + s + "\"");
}

std::vector<QMat> axis_bases(int d, int H) {
  if (H < 1 || H > d) throw Error(ErrorKind::usage, "axis-aligned bases need 1 <= H <= d");
  std::vector<QMat> out;
  int start = 0;
  for (int h = 0; h < H; ++h) {
    const int k = d / H + (h < d % H ? 1 : 0);
    QMat P(d, k);
    for (int c = 0; c < k; ++c) P(start + c, c) = Rational(1);
    start += k;
    out.push_back(std::move(P));
  }
  return out;
}

void validate_bases(const std::vector<QMat>& bases, int d) {
  if (bases.empty()) throw_input("bases: at least one head basis is needed");
  for (size_t h = 0; h < bases.size(); ++h) {
    const std::string where = "bases[" + std::to_string(h) + "]";
    if (bases[h].rows() != d || bases[h].cols() < 1) throw_input(where + ": expected d = " + std::to_string(d) + " entries per vector and at least one vector");
    QMat G(bases[h].cols(), bases[h].cols());
    for (int a = 0; a < G.rows(); ++a)
      for (int b = 0; b < G.cols(); ++b) G(a, b) = dot(bases[h].col(a), bases[h].col(b));
    if (det(G).is_zero()) throw_input(where + ": the vectors are linearly dependent");
    for (size_t g = 0; g < h; ++g)
      for (int a = 0; a < bases[h].cols(); ++a)
        for (int b = 0; b < bases[g].cols(); ++b)
          if (!dot(bases[h].col(a), bases[g].col(b)).is_zero())
            throw_input(where + ": vector " + std::to_string(a) + " is not orthogonal to bases[" + std::to_string(g) + "] vector " + std::to_string(b));
  }
}

namespace {

// One head's part of the design: basis P (d x k), the random U (k x k,
// invertible, columns u_t) and the scale exponents e(t, j).
struct HeadDesign {
  QMat P, U;
  std::vector<int> scale;  // k x k, row t, column j
  int k() const { return P.cols(); }
  QVec token(const QVec& y) const { return matvec(P, y); }
  QVec unit(int j) const {
    QVec e(k());
    e[j] = Rational(1);
    return e;
  }
  // The queries of this head, in order: [P e_i] (i < k), then
  // [P (2^-e u_t + e_j), P e_j] for every column j and every t.
  std::vector<Query> queries() const {
    std::vector<Query> out;
    for (int i = 0; i < k(); ++i) out.push_back({Run{token(unit(i)), 1}});
    for (int j = 0; j < k(); ++j)
      for (int t = 0; t < k(); ++t) {
        QVec y = U.col(t);
        const Rational s(1, 1UL << scale[t * k() + j]);
        for (auto& x : y) x = x * s;
        out.push_back({Run{token(y + unit(j)), 1}, Run{token(unit(j)), 1}});
      }
    return out;
  }
};

Rational norm1(const QVec& x) {
  Rational s(0);
  for (const auto& e : x) s = s + (e.sign() < 0 ? -e : e);
  return s;
}

std::vector<HeadDesign> design(int d, const BaselineOptions& o, int* redraws) {
  std::vector<QMat> bases;
  if (o.method == BaselineMethod::single_head) {
    QMat I(d, d);
    for (int i = 0; i < d; ++i) I(i, i) = Rational(1);
    bases.push_back(std::move(I));
  } else {
    validate_bases(o.bases, d);
    bases = o.bases;
  }
  if (o.max_scale_log2 < 0 || o.max_scale_log2 > 40) throw Error(ErrorKind::usage, "the baseline's scale exponent must be in [0, 40]");
  Rng rng(o.seed);
  std::vector<HeadDesign> out;
  int re = 0;
  for (const auto& P : bases) {
    HeadDesign h;
    h.P = P;
    Draws dr = draw_tokens(rng, P.cols(), o.tokens);
    re += dr.redraws;
    h.U = dr.B;
    const int k = P.cols();
    h.scale.assign(static_cast<size_t>(k) * k, 0);
    for (int t = 0; t < k; ++t)
      for (int j = 0; j < k; ++j) {
        const Rational bound = norm1(matvec(P, h.U.col(t))) * norm1(P.col(j)) * o.w_bound;
        int e = 0;
        while (e < o.max_scale_log2 && bound * Rational(1L, 1UL << e) > Rational(1L, 2UL)) ++e;
        h.scale[t * k + j] = e;
      }
    out.push_back(std::move(h));
  }
  if (redraws) *redraws = re;
  return out;
}

}  // namespace

std::vector<Query> baseline_plan(int d, const BaselineOptions& o, int* redraws) {
  std::vector<Query> out;
  for (const auto& h : design(d, o, redraws))
    for (auto& q : h.queries()) out.push_back(std::move(q));
  return out;
}

long baseline_query_count(int d, const BaselineOptions& o) {
  long n = 0;
  for (const auto& h : design(d, o, nullptr)) n += static_cast<long>(h.k()) * h.k() + h.k();
  return n;
}

template <ArithField F>
BaselineResult<typename F::value_type> learn_baseline(Oracle<typename F::value_type>& oracle, const BaselineOptions& o) {
  using T = typename F::value_type;
  const F& fld = oracle.field();
  const int d = oracle.dim();
  BaselineResult<T> res;
  const T zero = fld.from(Rational(0)), one = fld.from(Rational(1));
  for (const auto& h : design(d, o, &res.redraws)) {
    const int k = h.k();
    const std::vector<Query> qs = h.queries();
    std::vector<T> b;  // b = P^T v from the one-token queries
    for (int i = 0; i < k; ++i) b.push_back(oracle.query(qs[i]));
    Mat<T> logit(k, k);  // row t, column j: u_t^T A e_j
    size_t next = static_cast<size_t>(k);
    for (int j = 0; j < k; ++j)
      for (int t = 0; t < k; ++t) {
        const T f = oracle.query(qs[next++]);
        const Rational s(1L, 1UL << h.scale[t * k + j]);
        T bu = zero;  // v^T P (s u_t) = s b^T u_t
        for (int i = 0; i < k; ++i) bu = bu + b[i] * fld.from(h.U(i, t) * s);
        require_truth(truth_not(fld.is_zero(bu)), ErrorKind::degenerate,
                      "the baseline needs v^T u != 0, and a drawn u has v^T u = 0");
        const T alpha = (f - b[j]) / bu;  // sigmoid(s u_t^T A e_j)
        const T odds = alpha / (one - alpha);
        // the sigmoid inverse exists only for alpha in (0, 1); an answer that
        // puts alpha outside fits no single head in this subspace
        require_truth(fld.is_positive(odds), ErrorKind::inconsistent,
                      "the sigmoid inverse is undefined: an answer puts alpha outside (0, 1), which no single head in this subspace gives");
        logit(t, j) = fld.log(odds) / fld.from(s);
      }
    // A = U^{-T} logit, exactly inverted in Q (U is the learner's own draw)
    QMat UinvT;
    if (!inverse(h.U.transpose(), UinvT)) throw_internal("U singular after the draw check");
    Mat<T> A(k, k, zero);
    for (int i = 0; i < k; ++i)
      for (int j = 0; j < k; ++j)
        for (int t = 0; t < k; ++t) A(i, j) = A(i, j) + fld.from(UinvT(i, t)) * logit(t, j);
    // lift: M = P G^-1, W = M A M^T, v = M b
    QMat G(k, k), Ginv;
    for (int a = 0; a < k; ++a)
      for (int c = 0; c < k; ++c) G(a, c) = dot(h.P.col(a), h.P.col(c));
    if (!inverse(G, Ginv)) throw_internal("basis Gram matrix singular after validation");
    QMat M(d, k);
    for (int r = 0; r < d; ++r)
      for (int c = 0; c < k; ++c)
        for (int t = 0; t < k; ++t) M(r, c) = M(r, c) + h.P(r, t) * Ginv(t, c);
    LearnedHead<T> head{Mat<T>(d, d, zero), std::vector<T>(d, zero)};
    Mat<T> MA(d, k, zero);
    for (int r = 0; r < d; ++r)
      for (int c = 0; c < k; ++c) {
        for (int t = 0; t < k; ++t) MA(r, c) = MA(r, c) + fld.from(M(r, t)) * A(t, c);
        head.v[r] = head.v[r] + fld.from(M(r, c)) * b[c];
      }
    for (int r = 0; r < d; ++r)
      for (int c = 0; c < d; ++c)
        for (int t = 0; t < k; ++t) head.W(r, c) = head.W(r, c) + MA(r, t) * fld.from(M(c, t));
    res.heads.push_back(std::move(head));
  }
  return res;
}

#define MHAQ_INSTANTIATE(F) template BaselineResult<F::value_type> learn_baseline<F>(Oracle<F::value_type>&, const BaselineOptions&);
MHAQ_FOR_EACH_FIELD(MHAQ_INSTANTIATE)
#undef MHAQ_INSTANTIATE

}  // namespace mhaq
