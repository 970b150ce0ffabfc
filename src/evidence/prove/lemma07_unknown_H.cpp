// The machine check of proofs/07-unknown-H.md (the registry: registry.cpp).
#include "prove_common.hpp"

namespace mhaq::proof {

// Unknown H: rank of the (H0,H0) system and the minimal-degree interpolant.
long rank_of(const flint::FmpqMat& A) {
  flint::FmpqMat R(fmpq_mat_nrows(A.m), fmpq_mat_ncols(A.m));
  return fmpq_mat_rref(R.m, A.m);
}
// Rows k = 0..K-1 of the type-(m,m) system N(k) - f(k)(Q(k)-1) = f(k);
// with_rhs appends the right-hand side column.
void fill_system(flint::FmpqMat& A, const std::vector<Rational>& f, int m, bool with_rhs) {
  for (size_t k = 0; k < f.size(); ++k) {
    Rational km(1);
    for (int e = 0; e <= m; ++e) {
      fmpq_set(fmpq_mat_entry(A.m, k, e), km.raw());
      if (e >= 1) fmpq_set(fmpq_mat_entry(A.m, k, m + e), (-(f[k] * km)).raw());
      km *= Rational(static_cast<long>(k));
    }
    if (with_rhs) fmpq_set(fmpq_mat_entry(A.m, k, 2 * m + 1), f[k].raw());
  }
}

void check_unknown_H(const ProveOptions& o, bool broken, LemmaCheck& out) {
  Rng rng(o.seed ^ 0x707);
  const long reps = scaled(o, 6);
  long ranks = 0, minimal = 0, code = 0;
  for (int H0 = 1; H0 <= 5; ++H0)
    for (int H = 0; H <= H0; ++H)
      for (long rep = 0; rep < reps; ++rep) {
        // generic H-head data with rational poles r_h > 0 (distinct), residues != 0
        std::vector<Rational> r, c;
        while (static_cast<int>(r.size()) < H) {
          const Rational x(rng.uniform_int(1, 40), 8);
          if (std::find(r.begin(), r.end(), x) == r.end()) r.push_back(x);
        }
        for (int h = 0; h < H; ++h) c.push_back(rand_q_nonzero(rng, 30, 4));
        const Rational P = rand_q(rng, 30, 4);
        std::vector<Rational> f;
        for (int k = 0; k <= 2 * H0; ++k) {
          Rational x = P;
          for (int h = 0; h < H; ++h) x += c[h] / (Rational(1) + r[h] * Rational(k));
          f.push_back(x);
        }
        const int n = 2 * H0 + 1;
        flint::FmpqMat A(n, n);
        fill_system(A, f, H0, false);
        const long rk = rank_of(A), want = H0 + H + 1 - (broken ? 1 : 0);
        require(rk == want, "rank of the (" + std::to_string(H0) + "," + std::to_string(H0) + ") system with H=" + std::to_string(H) +
                                " data is " + std::to_string(rk) + ", not H0+H+1=" + std::to_string(want));
        ++ranks;
        // Minimal degree: type (m,m) fits all 2H0+1 samples iff m >= H; at m = H uniquely.
        for (int m = 0; m <= H; ++m) {
          flint::FmpqMat M(n, 2 * m + 1), Ab(n, 2 * m + 2);
          fill_system(M, f, m, false);
          fill_system(Ab, f, m, true);
          const long rm = rank_of(M), ra = rank_of(Ab);
          if (m < H) {
            require(ra > rm, "a type-(m,m) function with m < H fits all samples");
          } else {
            require(ra == rm && rm == 2 * m + 1, "type-(H,H) fit is not unique");
            // the unique solution is the true N/Q
            flint::FmpqMat X(2 * m + 1, 1), Bv(n, 1);
            for (int k = 0; k < n; ++k) fmpq_set(fmpq_mat_entry(Bv.m, k, 0), f[k].raw());
            flint::FmpqMat Msq(2 * m + 1, 2 * m + 1), Bsq(2 * m + 1, 1);
            for (int k = 0; k <= 2 * m; ++k) {
              for (int e = 0; e <= 2 * m; ++e) fmpq_set(fmpq_mat_entry(Msq.m, k, e), fmpq_mat_entry(M.m, k, e));
              fmpq_set(fmpq_mat_entry(Bsq.m, k, 0), f[k].raw());
            }
            require(fmpq_mat_solve(X.m, Msq.m, Bsq.m) != 0, "square type-(H,H) system singular");
            std::vector<Rational> Q{Rational(1)};
            for (int h = 0; h < H; ++h) {
              std::vector<Rational> nq(Q.size() + 1);
              for (size_t e = 0; e < Q.size(); ++e) { nq[e] += Q[e]; nq[e + 1] += Q[e] * r[h]; }
              Q = nq;
            }
            for (int e = 1; e <= m; ++e) {
              Rational q;
              fmpq_set(q.raw(), fmpq_mat_entry(X.m, m + e, 0));
              require(q == Q[e], "minimal interpolant's denominator is not prod (1 + r_h k)");
            }
          }
        }
        ++minimal;
        // The code reports the over-sized exact system as singular.
        if (H < H0 && H0 <= 3) {
          Field<QTau> F;
          std::vector<QTau> fq;
          for (const auto& x : f) fq.push_back(QTau(x));
          bool threw = false;
          try {
            (void)interpolate_pair(F, fq, H0);
          } catch (const Error& e) {
            threw = e.kind() == ErrorKind::degenerate;
          }
          require(threw, "interpolate_pair did not report the rank-deficient system");
          ++code;
        }
      }
  out.cases = ranks + minimal + code;
  out.detail = "exact (fmpq_mat_rref): " + std::to_string(ranks) + " ranks = H0+H+1 (H0=1..5, H=0..H0), " + std::to_string(minimal) +
               " minimal-degree uniqueness checks, " + std::to_string(code) + " singular reports from interpolate_pair";
}

}  // namespace mhaq::proof
