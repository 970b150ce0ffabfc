// The machine check of proofs/42-bias-canonical.md (the registry: registry.cpp).
#include "mhaq/model/factored.hpp"
#include "mhaq/oracle/oracle_stack.hpp"
#include "prove_common.hpp"

namespace mhaq::proof {

namespace {

QMat rand_mat(Rng& rng, int r, int c, long range, long den) {
  QMat M(r, c);
  for (int i = 0; i < r; ++i)
    for (int j = 0; j < c; ++j) M(i, j) = rand_q(rng, range, den);
  return M;
}
QVec rand_qvec(Rng& rng, int n, long range, long den) {
  QVec v(static_cast<size_t>(n));
  for (auto& x : v) x = rand_q(rng, range, den);
  return v;
}

// A factored layer with every bias, small dyadic entries.
FactoredModel random_factored(Rng& rng) {
  FactoredModel f;
  f.d = static_cast<int>(rng.uniform_int(1, 3));
  f.d_k = static_cast<int>(rng.uniform_int(1, 3));
  f.d_v = static_cast<int>(rng.uniform_int(1, 2));
  f.d_out = static_cast<int>(rng.uniform_int(1, 2));
  f.scale = Surd{rng.uniform_int(0, 1) ? Rational(1) : Rational(1, 2), 1};
  const int H = static_cast<int>(rng.uniform_int(1, 3));
  for (int h = 0; h < H; ++h) {
    FactoredHead fh;
    fh.Q = rand_mat(rng, f.d, f.d_k, 2, 2);
    fh.K = rand_mat(rng, f.d, f.d_k, 2, 2);
    fh.V = rand_mat(rng, f.d, f.d_v, 3, 2);
    fh.O = rand_mat(rng, f.d_v, f.d_out, 2, 1);
    fh.q_bias = rand_qvec(rng, f.d_k, 2, 2);
    fh.k_bias = rand_qvec(rng, f.d_k, 3, 2);
    fh.v_bias = rand_qvec(rng, f.d_v, 3, 4);
    f.heads.push_back(std::move(fh));
  }
  f.readout = rand_qvec(rng, f.d_out, 2, 1);
  f.out_bias = rand_qvec(rng, f.d_out, 3, 4);
  return f;
}

// The factored layer with its biases evaluated as written, independently of
// the conversion: scores scale (Q^T x_N + b_q).(K^T x_i + b_k), the value
// x_i^T V + b_v weighted, the output y O + b_out read out by u. The weights
// exp(s_i - s_N) are formed in Q(tau): s_i - s_N must lie in (1/L)Z.
QTau evaluate_factored(const FactoredModel& f, const Query& q, long L) {
  const Field<QTau> F(L);
  QTau total = F.from(f.out_bias.empty() ? Rational(0) : dot(f.out_bias, f.readout));
  const QVec& xN = q.back().token;
  for (const FactoredHead& h : f.heads) {
    auto plus = [](QVec a, const QVec& b) { return b.empty() ? a : a + b; };
    const QVec qN = plus(matvec(h.Q.transpose(), xN), h.q_bias);
    const QVec Ou = matvec(h.O, f.readout);
    const Rational sN = f.scale.q * dot(qN, plus(matvec(h.K.transpose(), xN), h.k_bias));
    QTau num = F.from(Rational(0)), den = num;
    for (const Run& r : q) {
      const Rational s = f.scale.q * dot(qN, plus(matvec(h.K.transpose(), r.token), h.k_bias));
      const QTau w = F.exp(s - sN) * F.from(Rational(r.count));
      num = num + w * F.from(dot(plus(matvec(h.V.transpose(), r.token), h.v_bias), Ou));
      den = den + w;
    }
    total = total + num / den;
  }
  return total;
}

Query random_sequence(Rng& rng, int d) {
  Query q;
  const int runs = static_cast<int>(rng.uniform_int(1, 4));
  for (int r = 0; r < runs; ++r) q.push_back(Run{rand_vec(rng, d, 2), rng.uniform_int(1, 3)});
  return q;
}

// A model with biases: heads 0 and 1 share (W, c), head 2 has head 0's W
// and its own c, beta nonzero.
Model biased_model(Rng& rng, int d) {
  GenerateOptions g;
  g.d = d;
  g.heads = 3;
  g.seed = rng.next();
  g.bias = true;
  g.share_w = true;
  Model m = generate_model(g);
  m.heads[2].W = m.heads[0].W;
  m.heads[2].c = QVec(static_cast<size_t>(d));
  for (int i = 0; i < d; ++i) m.heads[2].c[static_cast<size_t>(i)] = (m.heads[0].c.empty() ? Rational(0) : m.heads[0].c[static_cast<size_t>(i)]) + Rational(1, 4);
  m.beta = rand_q_nonzero(rng, 5, 4);
  return m;
}

}  // namespace

// The canonical form with biases. The broken variant drops c_h: the
// conversion forgets the query bias, and the canonical form merges on W alone.
void check_bias_canonical(const ProveOptions& o, bool broken, LemmaCheck& out) {
  std::ostringstream det;
  Rng rng(o.seed ^ 0x4040);
  auto drop_c = [&](Model m) {
    if (broken)
      for (auto& h : m.heads) h.c.clear();
    return m;
  };
  auto canon = [&](const Model& m) {
    if (!broken) return m.canonical();
    Model c = drop_c(m);
    return c.canonical();
  };
  // 1. the conversion: every bias of a factored layer, evaluated as written,
  //    against the canonical (W, c, v, beta) of to_model
  const long nf = scaled(o, 40);
  long evals = 0;
  for (long t = 0; t < nf; ++t) {
    const FactoredModel f = random_factored(rng);
    const Model m = to_model(f);
    const Model c = canon(drop_c(m));
    const long L = m.w_denominator();
    for (int s = 0; s < 4; ++s) {
      const Query q = random_sequence(rng, f.d);
      require(QTauAccess::equal(evaluate_factored(f, q, L), evaluate_exact(c, q, L)),
              "the factored layer with biases differs from its canonical (W, c, v, beta) at a sequence");
      ++evals;
    }
    ++out.cases;
  }
  det << nf << " factored layers with q, k, v and output biases, " << evals << " exact evaluations equal to the canonical form; ";
  // 2. merging: equal (W, c) merge, equal W with different c do not; the
  //    pair identity with log r = delta^T (W b + c); the affine across link
  const long nm = scaled(o, 30);
  long pairs = 0;
  for (long t = 0; t < nm; ++t) {
    const int d = static_cast<int>(rng.uniform_int(1, 3));
    const Model m = biased_model(rng, d);
    const Model c = canon(m);
    require(c.num_heads() == 2, "the canonical form does not have two heads (0 and 1 merged, 2 kept with its own c)");
    const long L = m.w_denominator();
    for (int s = 0; s < 3; ++s) {
      const Query q = random_sequence(rng, d);
      require(QTauAccess::equal(evaluate_exact(m, q, L), evaluate_exact(c, q, L)), "f changes under the canonical form with biases");
    }
    // the pair [a x k, b]: P + sum_h c_h / (1 + r_h k), r_h = tau^(L delta^T (W_h b + c_h)), P = v^T a + beta
    const QVec b = rand_vec(rng, d, 2), delta = rand_vec(rng, d, 2), a = b + delta;
    const Field<QTau> F(L);
    const Model mc = m.canonical();
    for (long k = 0; k <= 4; ++k) {
      QTau pred = F.from(mc.beta);
      for (const HeadQ& h : mc.heads) {
        const QVec Wb = h.c.empty() ? matvec(h.W, b) : matvec(h.W, b) + h.c;
        const QTau r = F.exp(dot(delta, Wb));
        pred = pred + F.from(dot(h.v, a)) - F.from(dot(h.v, delta)) / (F.from(Rational(1)) + r * F.from(Rational(k)));
      }
      require(QTauAccess::equal(pred, evaluate_exact(c, pair_query(a, k, b), L)), "the pair identity with biases fails");
    }
    // across links: 2 b_1 - b_j keeps r(link) r(b_j) = r(b_1)^2; b_1 + b_j misses by exp(delta^T c)
    const QVec b1 = rand_vec(rng, d, 2), bj = rand_vec(rng, d, 2);
    for (const HeadQ& h : c.heads) {
      auto logr = [&](const QVec& bb) { return dot(delta, h.c.empty() ? matvec(h.W, bb) : matvec(h.W, bb) + h.c); };
      require(logr(b1 + b1 - bj) + logr(bj) == logr(b1) + logr(b1), "the affine across link's relation fails");
      const Rational miss = logr(b1) + logr(bj) - logr(b1 + bj);
      require(miss == (h.c.empty() ? Rational(0) : dot(delta, h.c)), "the paper's across link misses by other than delta^T c");
    }
    ++pairs;
    ++out.cases;
  }
  det << nm << " models (shared (W, c), equal W with another c) unchanged by the canonical form, " << pairs
      << " pair identities and across-link relations; ";
  // 3. the learner returns the canonical form and beta, with 4Hd^2 + 4Hd - 2H + 1 queries
  const long nr = scaled(o, 6);
  long recov = 0, degenerate = 0;
  for (long t = 0; t < nr; ++t) {
    const int d = static_cast<int>(rng.uniform_int(1, 3));
    const Model m = biased_model(rng, d);
    const Model c = canon(m);
    OracleStack<QTau> stack = OracleStack<QTau>::model(m, 1);
    Oracle<QTau>& oracle = stack.top();
    LearnOptions lo;
    lo.H = c.num_heads();
    lo.bias = true;
    lo.seed = rng.next();
    LearnResult<QTau> lr;
    try {
      lr = learn(oracle, lo);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::degenerate) throw;
      ++degenerate;
      continue;
    }
    require(lr.beta.has_value(), "no beta from a run with biases");
    require(exact_heads_match(lr.heads, c, &*lr.beta), "the learner's (W, c, v) and beta differ from the canonical form");
    if (lr.repairs.empty() && lr.grid_witness_queries == 0)
      require(oracle.queries() == 4L * lo.H * d * d + 4L * lo.H * d - 2L * lo.H + 1, "the run did not ask 4Hd^2 + 4Hd - 2H + 1 queries");
    ++recov;
  }
  out.cases += recov;
  det << recov << " exact recoveries of (W_h, c_h, v_h) and beta (" << degenerate << " degenerate draws reported)";
  out.detail = det.str();
}

}  // namespace mhaq::proof
