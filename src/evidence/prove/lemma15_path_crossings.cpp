// The machine check of proofs/15-path-crossings.md (the registry: registry.cpp).
#include "prove_common.hpp"

namespace mhaq::proof {

// 15: a path p -> q -> -p crosses each hyperplane ubar_j^T x = 0 (p, q off
// it) exactly once, and E(p) + E(-p) = sum_j sigma_j jump_j with sigma_j = +1
// for a neuron that switches on along the path and -1 for one that switches off.
void check_path_crossings(const ProveOptions& o, bool broken, LemmaCheck& out) {
  Rng rng(o.seed ^ 0x1515);
  const long n = scaled(o, 400);
  for (long t = 0; t < n; ++t) {
    const int d = static_cast<int>(rng.uniform_int(1, 4)), H = static_cast<int>(rng.uniform_int(1, 3)), m = static_cast<int>(rng.uniform_int(1, 5));
    std::vector<QVec> ubar(m), w(m);  // w_j = u_j (U_{1,j}, ..., U_{H,j}), ubar_j = sum_h U_{h,j}
    for (int j = 0; j < m; ++j) {
      w[j] = rand_vec(rng, H * d, 3);
      ubar[j] = QVec(d);
      for (int h = 0; h < H; ++h)
        for (int a = 0; a < d; ++a) ubar[j][a] += w[j][h * d + a];
    }
    const QVec p = rand_vec(rng, d, 4), q = rand_vec(rng, d, 4);
    QVec mp = p;
    for (auto& c : mp) c = -c;
    const QVec end = broken ? p : mp;  // broken: the path returns to p
    bool off = true;
    for (int j = 0; j < m; ++j) off = off && !dot(ubar[j], p).is_zero() && !dot(ubar[j], q).is_zero();
    if (!off) {
      --t;
      continue;
    }
    QVec Ep(H * d), Em(H * d), sum(H * d);
    for (int j = 0; j < m; ++j) {
      const int sp = dot(ubar[j], p).sign(), sq = dot(ubar[j], q).sign(), se = dot(ubar[j], end).sign();
      // a linear function changes sign at most once on a segment
      const int crossings = (sp != sq) + (sq != se);
      require(crossings == 1, "a neuron's hyperplane is not crossed exactly once");
      const int sigma = sp > 0 ? -1 : 1;  // active at p: switches off
      for (int c = 0; c < H * d; ++c) {
        if (sp > 0) Ep[c] += w[j][c];
        if (se > 0) Em[c] += w[j][c];
        // jump = E(after) - E(before) = +w_j switching on, -w_j switching off
        sum[c] += Rational(sigma) * (sp > 0 ? -w[j][c] : w[j][c]);
      }
    }
    for (int c = 0; c < H * d; ++c) require(Ep[c] + Em[c] == sum[c], "E(p) + E(-p) != sum_j sigma_j jump_j");
    ++out.cases;
  }
  out.detail = std::to_string(out.cases) + " random neuron sets (d <= 4, H <= 3, m <= 5) and paths, exact rationals";
}

}  // namespace mhaq::proof
