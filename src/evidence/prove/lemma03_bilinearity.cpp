// The machine check of proofs/03-bilinearity-and-links.md (the registry: registry.cpp).
#include "prove_common.hpp"

namespace mhaq::proof {

namespace {

// Symbolic, d = 3: W (9), v (3), delta_1, delta_i, b_1, b_j (3 each).
void symbolic_bilinearity(bool broken, LemmaCheck& out, std::ostringstream& det) {
  {
    const int d = 3;
    Ctx c(d * d + d + 4 * d);
    int next = 0;
    std::vector<std::vector<MP>> W(d);
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < d; ++j) W[i].push_back(MP::gen(c, next++));
    auto vecgen = [&] {
      std::vector<MP> x;
      for (int i = 0; i < d; ++i) x.push_back(MP::gen(c, next++));
      return x;
    };
    const auto v = vecgen(), d1 = vecgen(), di = vecgen(), b1 = vecgen(), bj = vecgen();
    const int b_first = d * d + 3 * d;  // variables of b_1, b_j
    auto add = [&](const std::vector<MP>& x, const std::vector<MP>& y) {
      std::vector<MP> z;
      for (int i = 0; i < d; ++i) z.push_back(x[i] + y[i]);
      return z;
    };
    auto sub = [&](const std::vector<MP>& x, const std::vector<MP>& y) {
      std::vector<MP> z;
      for (int i = 0; i < d; ++i) z.push_back(x[i] - y[i]);
      return z;
    };
    auto bil = [&](const std::vector<MP>& x, const std::vector<MP>& y) {  // x^T W y
      MP s(c, 0);
      for (int i = 0; i < d; ++i)
        for (int j = 0; j < d; ++j) s = s + x[i] * W[i][j] * y[j];
      return s;
    };
    auto dotp = [&](const std::vector<MP>& x, const std::vector<MP>& y) {
      MP s(c, 0);
      for (int i = 0; i < d; ++i) s = s + x[i] * y[i];
      return s;
    };
    // a pair with offset o and final token b: log r = (a-b)^T W b, c = v^T (b-a), a = b + o
    auto logr = [&](const std::vector<MP>& off, const std::vector<MP>& b) { return bil(sub(add(b, off), b), b); };
    auto res = [&](const std::vector<MP>& off, const std::vector<MP>& b) { return dotp(v, sub(b, add(b, off))); };
    require(logr(di, bj) == bil(di, bj), "log r(i,j) != delta_i^T W b_j");
    require(res(di, bj) == -dotp(v, di), "c(i,j) != -v^T delta_i");
    bool indep = true;
    for (int t = 0; t < 2 * d; ++t) indep = indep && res(di, bj).degree(b_first + t) <= 0;
    require(indep, "c(i,j) depends on b_j");
    // within link: offset delta_1 + delta_i, final b_j
    require(logr(add(d1, di), bj) == logr(d1, bj) + logr(di, bj), "within link: poles do not multiply");
    const MP within_want = broken ? res(d1, bj) : res(d1, bj) + res(di, bj);
    require(res(add(d1, di), bj) == within_want, "within link: residues do not add");
    // across link: offset delta_1, final b_1 + b_j
    require(logr(d1, add(b1, bj)) == logr(d1, b1) + logr(d1, bj), "across link: poles do not multiply");
    require(res(d1, add(b1, bj)) == res(d1, b1) && res(d1, b1) == res(d1, bj), "across link: residues are not equal");
    out.cases += 7;
    det << "7 symbolic identities (d=3, symbolic W, v, tokens); ";
  }
}

}  // namespace

// Bilinearity and link pairs; solve formulas; the rigorous matcher.
void check_bilinearity(const ProveOptions& o, bool broken, LemmaCheck& out) {
  std::ostringstream det;
  symbolic_bilinearity(broken, out, det);
  // Solve formulas W = Delta^{-T} L B^{-1}, v = -Delta^{-T} C, exact in Q.
  Rng rng(o.seed ^ 0x303);
  const long ns = scaled(o, 60);
  for (long t = 0; t < ns; ++t) {
    const int d = static_cast<int>(rng.uniform_int(1, 4));
    const Model m = random_model(rng, d, 1);
    const QMat B = rand_invertible(rng, d, 3), Dl = rand_invertible(rng, d, 3);
    QMat Lm(d, d), DinvT, Binv;
    QVec C(d);
    for (int i = 0; i < d; ++i) {
      C[i] = -dot(m.heads[0].v, Dl.col(i));
      for (int j = 0; j < d; ++j) Lm(i, j) = dot(Dl.col(i), matvec(m.heads[0].W, B.col(j)));
    }
    require(inverse(Dl.transpose(), DinvT) && inverse(B, Binv), "inverse failed");
    require(mat_mul(mat_mul(DinvT, Lm), Binv) == m.heads[0].W, "W != Delta^{-T} L B^{-1}");
    QVec vv = matvec(DinvT, C);
    for (auto& x : vv) x = -x;
    require(vv == m.heads[0].v, "v != -Delta^{-T} C");
    ++out.cases;
  }
  det << ns << " exact solve-formula checks (d=1..4); ";
  // The rigorous matcher's principle on link data: the true permutation is
  // never certainly incompatible, so a unique compatible one is the true one.
  const long nm = scaled(o, 200);
  long unique = 0;
  for (long t = 0; t < nm; ++t) {
    const int d = static_cast<int>(rng.uniform_int(2, 3)), H = static_cast<int>(rng.uniform_int(2, 4));
    const Model m = random_model(rng, d, H);
    const QMat B = rand_invertible(rng, d, 3), Dl = rand_invertible(rng, d, 3);
    const long L = m.w_denominator();
    const bool within = rng.uniform_int(0, 1) == 0;
    const int i = static_cast<int>(rng.uniform_int(1, d - 1)), j = static_cast<int>(rng.uniform_int(0, d - 1));
    struct Fit { std::vector<Rational> n, c; };  // pole exponents n (r = tau^n) and residues
    auto fit = [&](const QVec& off, const QVec& b) {
      Fit f;
      for (const auto& h : m.heads) {
        f.n.push_back(dot(off, matvec(h.W, b)) * Rational(L));
        f.c.push_back(-dot(h.v, off));
      }
      return f;
    };
    Fit ref, cur, link;
    if (within) {
      ref = fit(Dl.col(0), B.col(j));
      cur = fit(Dl.col(i), B.col(j));
      link = fit(Dl.col(0) + Dl.col(i), B.col(j));
    } else {
      ref = fit(Dl.col(0), B.col(0));
      cur = fit(Dl.col(0), B.col(j));
      link = fit(Dl.col(0), B.col(0) + B.col(j));
    }
    // Shuffle cur and link as an interpolation would return them.
    std::vector<int> pc(H), pl(H);
    std::iota(pc.begin(), pc.end(), 0);
    std::iota(pl.begin(), pl.end(), 0);
    for (int s = H - 1; s > 0; --s) {
      std::swap(pc[s], pc[rng.uniform_int(0, s)]);
      std::swap(pl[s], pl[rng.uniform_int(0, s)]);
    }
    Fit cs = cur, ls = link;
    std::vector<int> truth(H);
    for (int h = 0; h < H; ++h) {
      cs.n[h] = cur.n[pc[h]]; cs.c[h] = cur.c[pc[h]];
      ls.n[h] = link.n[pl[h]]; ls.c[h] = link.c[pl[h]];
      truth[pc[h]] = h;  // ref head pc[h] sits at position h of the shuffled cur
    }
    auto compat = [&](int h, int g) {  // same test as the learner's link_perm
      for (int l = 0; l < H; ++l) {
        const bool pole = ls.n[l] == ref.n[h] + cs.n[g];
        const bool resi = within ? ls.c[l] == (broken ? ref.c[h] : ref.c[h] + cs.c[g])
                                 : (ls.c[l] == ref.c[h] && cs.c[g] == ref.c[h]);
        if (pole && resi) return true;
      }
      return false;
    };
    std::vector<int> perm(H);
    std::iota(perm.begin(), perm.end(), 0);
    std::vector<std::vector<int>> ok;
    do {
      bool all = true;
      for (int h = 0; h < H && all; ++h) all = compat(h, perm[h]);
      if (all) ok.push_back(perm);
    } while (std::next_permutation(perm.begin(), perm.end()));
    require(std::find(ok.begin(), ok.end(), truth) != ok.end(),
            std::string(within ? "within" : "across") + " link: the true assignment " + perm_str(truth) + " was rejected");
    if (ok.size() == 1) {
      require(ok[0] == truth, "unique compatible assignment is not the true one");
      ++unique;
    }
    ++out.cases;
  }
  det << nm << " matcher instances (true assignment compatible in all, unique in " << unique << "); ";
  // End to end: the exact learner (paper schedule, the code's assign_rigorous).
  const long ne = scaled(o, 10);
  long done = 0, degenerate = 0;
  for (long t = 0; t < ne; ++t) {
    const int d = static_cast<int>(rng.uniform_int(2, 3)), H = static_cast<int>(rng.uniform_int(1, 3));
    const Model m = random_model(rng, d, H);
    LearnResult<QTau> lr;
    if (!learn_exact(m, H, Schedule::paper, rng.next(), lr)) { ++degenerate; continue; }
    require(exact_heads_match(lr.heads, m.canonical()), "exact learner output differs from the canonical truth");
    ++done;
  }
  out.cases += done;
  det << done << " exact end-to-end recoveries (paper schedule), " << degenerate << " degenerate draws reported";
  out.detail = det.str();
}

}  // namespace mhaq::proof
