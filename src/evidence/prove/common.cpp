// The helpers the lemma checks share (prove_common.hpp).
#include "prove_common.hpp"


namespace mhaq::proof {

void require(bool ok, const std::string& what) {
  if (!ok) throw CheckFailure{what};
}

// Determinant by fraction-free (Bareiss) elimination with row swaps.
MP det_bareiss(std::vector<std::vector<MP>> M) {
  const size_t n = M.size();
  const Ctx& c = M[0][0].ctx();
  int sign = 1;
  MP prev(c, 1);
  for (size_t k = 0; k + 1 < n; ++k) {
    if (M[k][k].is_zero()) {
      size_t r = k + 1;
      while (r < n && M[r][k].is_zero()) ++r;
      if (r == n) return MP(c, 0);
      std::swap(M[k], M[r]);
      sign = -sign;
    }
    for (size_t i = k + 1; i < n; ++i)
      for (size_t j = k + 1; j < n; ++j) M[i][j] = MP::exact_div(M[i][j] * M[k][k] - M[i][k] * M[k][j], prev);
    prev = M[k][k];
  }
  return sign * M[n - 1][n - 1];
}

KPoly kmul(const KPoly& a, const KPoly& b) {
  KPoly r(a.size() + b.size() - 1, MP(a[0].ctx(), 0));
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t j = 0; j < b.size(); ++j) r[i + j] = r[i + j] + a[i] * b[j];
  return r;
}
KPoly kadd(KPoly a, const KPoly& b) {
  while (a.size() < b.size()) a.push_back(MP(b[0].ctx(), 0));
  for (size_t i = 0; i < b.size(); ++i) a[i] = a[i] + b[i];
  return a;
}
KPoly kscale(const MP& s, KPoly a) {
  for (auto& x : a) x = s * x;
  return a;
}
MP keval(const KPoly& a, long k) {
  MP acc(a[0].ctx(), 0);
  for (size_t m = a.size(); m-- > 0;) acc = (k * acc) + a[m];
  return acc;
}
// x^(deg) * a(-1/x), as a polynomial (deg >= degree of a).
MP kreverse_at_neg_inv(const KPoly& a, const MP& x, size_t deg) {
  MP acc(x.ctx(), 0);
  for (size_t m = 0; m < a.size(); ++m) acc = acc + ((m % 2) ? -1L : 1L) * (a[m] * x.pow(deg - m));
  return acc;
}
KPoly kderiv(const KPoly& a) {
  KPoly d;
  for (size_t m = 1; m < a.size(); ++m) d.push_back(static_cast<long>(m) * a[m]);
  if (d.empty()) d.push_back(MP(a[0].ctx(), 0));
  return d;
}

std::string perm_str(const std::vector<int>& p) {
  std::string s = "(";
  for (size_t i = 0; i < p.size(); ++i) s += (i ? "," : "") + std::to_string(p[i]);
  return s + ")";
}

Rational rand_q(Rng& rng, long range, long den) { return Rational(rng.uniform_int(-range, range), static_cast<unsigned long>(den)); }
Rational rand_q_nonzero(Rng& rng, long range, long den) {
  for (;;) {
    Rational q = rand_q(rng, range, den);
    if (!q.is_zero()) return q;
  }
}
QVec rand_vec(Rng& rng, int d, long range) {
  QVec v(d);
  for (auto& x : v) x = Rational(rng.uniform_int(-range, range));
  return v;
}
QMat rand_invertible(Rng& rng, int d, long range) {
  for (;;) {
    QMat M(d, d);
    for (int r = 0; r < d; ++r)
      for (int c = 0; c < d; ++c) M(r, c) = Rational(rng.uniform_int(-range, range));
    if (!det(M).is_zero()) return M;
  }
}
QMat mat_mul(const QMat& A, const QMat& B) {
  QMat C(A.rows(), B.cols());
  for (int i = 0; i < A.rows(); ++i)
    for (int j = 0; j < B.cols(); ++j)
      for (int t = 0; t < A.cols(); ++t) C(i, j) += A(i, t) * B(t, j);
  return C;
}
Model random_model(Rng& rng, int d, int heads, bool share, bool cancel) {
  GenerateOptions g;
  g.d = d;
  g.heads = heads;
  g.seed = rng.next();
  g.share_w = share;
  g.cancel_v = cancel;
  return generate_model(g);
}
Query pair_query(const QVec& a, long k, const QVec& b) {
  if (k == 0) return {Run{b, 1}};
  return {Run{a, k}, Run{b, 1}};
}


// Runs the exact learner on a model; false when the draw was degenerate
// (reported, never a wrong answer), true with `out` set otherwise.
bool learn_exact(const Model& m, int H, Schedule s, std::uint64_t seed, LearnResult<QTau>& out) {
  OracleStack<QTau> oracle = OracleStack<QTau>::model(m, 1);
  LearnOptions lo;
  lo.H = H;
  lo.schedule = s;
  lo.seed = seed;
  lo.tokens = TokenSpec{3, 1};
  try {
    out = learn(oracle.top(), lo);
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::degenerate) return false;
    throw;
  }
  return true;
}

long scaled(const ProveOptions& o, long n) { return n * std::max(1L, o.multiplier); }

TransformerModel random_transformer(Rng& rng, int d, int H, int m, bool variants) {
  TransformerGenerateOptions g;
  g.d = d;
  g.heads = H;
  g.neurons = m;
  g.seed = rng.next();
  if (variants) {
    g.share_w = H >= 2 && rng.uniform_int(0, 1) == 1;
    g.zero_neuron = rng.uniform_int(0, 1) == 1;
    g.parallel_neurons = rng.uniform_int(0, 1) == 1;
  }
  return generate_transformer(g);
}
Query negate_query(Query q) {
  for (auto& r : q)
    for (auto& c : r.token) c = -c;
  return q;
}
Query random_query(Rng& rng, int d, long range) {
  Query q;
  const int runs = static_cast<int>(rng.uniform_int(1, 4));
  for (int r = 0; r < runs; ++r) q.push_back(Run{rand_vec(rng, d, range), rng.uniform_int(1, 3)});
  return q;
}

// A compact pair over Q (proofs/19): g(k) = sum_h c_h/(1 + r_h k) at
// k = 1..s, N(0) = sum c, Q(0) = 1, deg N <= H-1, deg Q <= H. With
// s = 2H-1-m the solutions of N(k) = g(k) Q(k) form an m-parameter family;
// the parameters are the top coefficients q_H = t_1, q_{H-1} = t_2, ...
// (variables 1..m of the context; variable 0 is k). False when the system for
// the other unknowns is singular.
bool family_over_q(const std::vector<Rational>& r, const std::vector<Rational>& c, int m, const QCtx& ctx, QP& N, QP& Q) {
  const int H = static_cast<int>(r.size()), s = 2 * H - 1 - m, nq = H - m;
  Rational n0(0);
  for (const auto& x : c) n0 += x;
  fmpq_mat_t A, B, X;
  fmpq_mat_init(A, s, s);
  fmpq_mat_init(B, s, m + 1);
  fmpq_mat_init(X, s, m + 1);
  auto kp = [](long k, int e) {
    Rational p(1);
    for (int i = 0; i < e; ++i) p *= Rational(k);
    return p;
  };
  for (int row = 0; row < s; ++row) {
    const long k = row + 1;
    Rational g(0);
    for (int h = 0; h < H; ++h) g += c[h] / (Rational(1) + r[h] * Rational(k));
    for (int a = 1; a < H; ++a) fmpq_set(fmpq_mat_entry(A, row, a - 1), kp(k, a).raw());
    for (int b = 1; b <= nq; ++b) fmpq_set(fmpq_mat_entry(A, row, H - 1 + b - 1), (Rational(0) - g * kp(k, b)).raw());
    fmpq_set(fmpq_mat_entry(B, row, 0), (g - n0).raw());
    for (int p = 1; p <= m; ++p) fmpq_set(fmpq_mat_entry(B, row, p), (g * kp(k, H - p + 1)).raw());
  }
  const bool ok = fmpq_mat_solve(X, A, B);
  if (ok) {
    const QP k = QP::gen(ctx, 0);
    auto coef = [&](int row) {  // the unknown in this row, as x_0 + sum_p x_p t_p
      QP v(ctx, Rational(0));
      for (int p = 0; p <= m; ++p) {
        Rational x;
        fmpq_set(x.raw(), fmpq_mat_entry(X, row, p));
        v = v + (p == 0 ? QP(ctx, x) : x * QP::gen(ctx, p));
      }
      return v;
    };
    N = QP(ctx, n0);
    for (int a = 1; a < H; ++a) N = N + coef(a - 1) * k.pow(a);
    Q = QP(ctx, Rational(1));
    for (int b = 1; b <= nq; ++b) Q = Q + coef(H - 1 + b - 1) * k.pow(b);
    for (int p = 1; p <= m; ++p) Q = Q + QP::gen(ctx, p) * k.pow(H - p + 1);
  }
  fmpq_mat_clear(X);
  fmpq_mat_clear(B);
  fmpq_mat_clear(A);
  return ok;
}

// Distinct positive rational poles and distinct nonzero residues.
void draw_pair(Rng& rng, int H, std::vector<Rational>& r, std::vector<Rational>& c) {
  r.clear();
  c.clear();
  while (static_cast<int>(r.size()) < H) {
    const Rational x(rng.uniform_int(1, 64), 16);
    if (std::find(r.begin(), r.end(), x) == r.end()) r.push_back(x);
  }
  while (static_cast<int>(c.size()) < H) {
    const Rational x = rand_q_nonzero(rng, 64, 16);
    if (std::find(c.begin(), c.end(), x) == c.end()) c.push_back(x);
  }
}

MP operator*(long s, const MP& a) {
  MP r(a.ctx());
  fmpz_mpoly_scalar_mul_si(r.raw(), a.raw(), s, a.ctx().c);
  return r;
}
QP operator*(const Rational& q, const QP& a) {
  QP r(a.ctx());
  fmpq_mpoly_scalar_mul_fmpq(r.raw(), a.raw(), q.raw(), a.ctx().c);
  return r;
}

std::optional<SensitivityDraw> draw_sensitivity_model(Rng& rng, long t, int constant_answer) {
  GenerateOptions g = default_generate(Arith::mpfr);
  g.d = 2 + static_cast<int>(t % 2);
  g.heads = 1 + static_cast<int>((t / 2) % 2);
  g.seed = rng.next();
  Model m = generate_model(g);
  Model canon = m.canonical();
  if (canon.num_heads() != g.heads) return std::nullopt;
  LearnOptions lo;
  lo.H = g.heads;
  lo.seed = rng.next();
  lo.tokens = default_tokens(Arith::mpfr);
  try {
    Sensitivity S = sensitivity_from_model(canon, lo, lo.tokens.den, constant_answer);
    return SensitivityDraw{g, std::move(m), std::move(canon), lo, std::move(S)};
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::degenerate) return std::nullopt;
    throw;
  }
}

bool record_mpfr_run(GenerateOptions g, Rng& rng, RecordedMpfrRun& out, bool keep_fit_samples, const std::function<void(LearnOptions&)>& adjust,
                     bool any_failure) {
  g.seed = rng.next();
  const Model m = generate_model(g);
  if (m.canonical().num_heads() != g.heads) return false;
  out.lo = LearnOptions{};
  out.lo.H = g.heads;
  out.lo.seed = rng.next();
  out.lo.tokens = default_tokens(Arith::mpfr);
  out.lo.self_check = false;
  out.lo.keep_fit_samples = keep_fit_samples;
  if (adjust) adjust(out.lo);
  OracleStack<Mpfr> stack = OracleStack<Mpfr>::model(m, out.lo.tokens.den).recorded();
  const RecordingOracle<Mpfr>& rec = stack.record();
  try {
    out.res = learn<Mpfr>(stack.top(), out.lo);
  } catch (const Error& e) {
    const bool fault = e.kind() == ErrorKind::internal || e.kind() == ErrorKind::usage || e.kind() == ErrorKind::input;
    if (e.kind() == ErrorKind::degenerate || (any_failure && !fault)) return false;  // a draw this learner cannot finish
    throw;
  }
  out.queries = rec.queries.all();
  out.answers = rec.answers;
  return true;
}

void count_tokens(int d, QMat& B, QMat& Delta) {
  B = QMat(d, d);
  Delta = QMat(d, d);
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j) {
      B(i, j) = Rational(i <= j ? (i == j ? 1 : (i + j) % 3 - 1) : 0);
      Delta(i, j) = Rational(i >= j ? (i == j ? 2 : (i * j) % 3 - 1) : 0);
    }
}

}  // namespace mhaq::proof
