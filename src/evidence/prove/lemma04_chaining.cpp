// The machine check of proofs/04-chaining.md (the registry: registry.cpp).
#include "prove_common.hpp"

namespace mhaq::proof {

// Chaining: one [b_1] gives every f(0).
void check_chaining(const ProveOptions& o, bool broken, LemmaCheck& out) {
  std::ostringstream det;
  // Symbolic via Cramer: det(D) v^T b = det(D) v^T b_1 + sum_i det(D_i) v^T delta_i,
  // D_i = Delta with column i replaced by b - b_1.
  for (int d = 2; d <= 3; ++d) {
    Ctx c(d * d + 3 * d);
    int next = 0;
    std::vector<std::vector<MP>> D(d, std::vector<MP>(d, MP(c, 0)));
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < d; ++j) D[i][j] = MP::gen(c, next++);  // D[i][j] = (delta_j)_i
    std::vector<MP> b, b1, v;
    for (int i = 0; i < d; ++i) b.push_back(MP::gen(c, next++));
    for (int i = 0; i < d; ++i) b1.push_back(MP::gen(c, next++));
    for (int i = 0; i < d; ++i) v.push_back(MP::gen(c, next++));
    const MP dD = det_bareiss(D);
    MP vb(c, 0), vb1(c, 0);
    for (int i = 0; i < d; ++i) { vb = vb + v[i] * b[i]; vb1 = vb1 + v[i] * b1[i]; }
    MP rhs = dD * vb1;
    for (int col = 0; col < d; ++col) {
      auto Di = D;
      for (int rr = 0; rr < d; ++rr) {
        // correct: replace column col; broken: replace row col (i.e. solve with Delta^T)
        if (broken) Di[col][rr] = b[rr] - b1[rr];
        else Di[rr][col] = b[rr] - b1[rr];
      }
      MP vdi(c, 0);
      for (int rr = 0; rr < d; ++rr) vdi = vdi + v[rr] * D[rr][col];
      rhs = rhs + det_bareiss(Di) * vdi;
    }
    require(dD * vb == rhs, "symbolic chaining identity fails for d=" + std::to_string(d));
    ++out.cases;
  }
  det << "symbolic Cramer identity for d=2,3; ";
  // Exact randomized through the oracle and interpolate_pair: v^T delta_i from
  // the limits of the pairs (i,1), then v^T b for fresh b.
  Rng rng(o.seed ^ 0x404);
  const long n = scaled(o, 40);
  long done = 0, degenerate = 0;
  for (long t = 0; t < n; ++t) {
    const int d = static_cast<int>(rng.uniform_int(1, 3)), H = static_cast<int>(rng.uniform_int(1, 3));
    const Model m = random_model(rng, d, H);
    const long L = m.w_denominator();
    const Field<QTau> F(L);
    const QMat B = rand_invertible(rng, d, 3), Dl = rand_invertible(rng, d, 3);
    const QVec b1 = B.col(0);
    const QTau fb1 = evaluate_exact(m, {Run{b1, 1}}, L);
    std::vector<QTau> vdelta;
    bool degen = false;
    for (int i = 0; i < d && !degen; ++i) {
      std::vector<QTau> f{fb1};
      for (int k = 1; k <= 2 * H; ++k) f.push_back(evaluate_exact(m, pair_query(b1 + Dl.col(i), k, b1), L));
      try {
        vdelta.push_back(interpolate_pair(F, f, H).P - fb1);
      } catch (const Error& e) {
        if (e.kind() != ErrorKind::degenerate) throw;
        degen = true;
      }
    }
    if (degen) { ++degenerate; continue; }
    QMat DinvT;
    require(inverse(broken ? Dl : Dl.transpose(), DinvT), "inverse failed");
    for (int s = 0; s < 3; ++s) {
      const QVec b = rand_vec(rng, d, 3);
      const QVec lambda = matvec(DinvT.transpose(), b - b1);  // Delta lambda = b - b_1
      QTau want = fb1;
      for (int i = 0; i < d; ++i) want += QTau(lambda[i]) * vdelta[i];
      require(QTauAccess::equal(want, evaluate_exact(m, {Run{b, 1}}, L)), "chained f(0) differs from the oracle's [b]");
      ++done;
    }
  }
  out.cases += done;
  det << done << " exact chained values vs the oracle (" << degenerate << " degenerate draws skipped); ";
  // The schedules send exactly one length-1 query, and it is [b_1].
  long plans = 0;
  for (int d = 1; d <= 5; ++d)
    for (int H = 1; H <= 3; ++H)
      for (Schedule s : {Schedule::paper, Schedule::lean}) {
        QMat B = rand_invertible(rng, d, 3), Dl = rand_invertible(rng, d, 3);
        const auto qs = make_plan(s, B, Dl, H).queries();
        long ones = 0;
        for (const auto& q : qs) ones += query_length(q) == 1;
        require(ones == 1 && query_length(qs[0]) == 1 && qs[0][0].token == B.col(0), "plan does not have exactly one length-1 query [b_1]");
        ++plans;
      }
  out.cases += plans;
  det << plans << " plans with exactly one length-1 query";
  out.detail = det.str();
}

}  // namespace mhaq::proof
