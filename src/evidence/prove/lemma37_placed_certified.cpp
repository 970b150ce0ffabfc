// The machine check of proofs/37-placed-certified.md (the registry: registry.cpp).
#include "prove_common.hpp"

namespace mhaq::proof {

namespace {

// (1) At random distinct nodes t_k >= 0 (ratios k/m as the placed grid asks),
// PairSystem's closed-form inverse Jacobian times the Jacobian encloses the
// identity. The broken variant forms the inverse at the nodes 0..2H (the
// system without its nodes). Returns the number of systems.
long inverse_at_ratios(const ProveOptions& o, bool broken, Rng& rng) {
  PrecisionScope scope(256);
  const Field<Ball> F;
  const long systems = scaled(o, 40);
  for (long s = 0; s < systems; ++s) {
    const int H = 1 + static_cast<int>(s % 4), n = 2 * H + 1;
    std::vector<Rational> t;
    while (static_cast<int>(t.size()) < n) {
      const long k = rng.uniform_int(0, 3) == 0 ? 0 : (1L << rng.uniform_int(0, 16)) + rng.uniform_int(0, 3);
      const Rational q(k, static_cast<unsigned long>((1L << rng.uniform_int(0, 16)) + rng.uniform_int(0, 3)));
      if (std::find(t.begin(), t.end(), q) == t.end()) t.push_back(q);
    }
    std::sort(t.begin(), t.end(), [](const Rational& a, const Rational& b) { return (a - b).sign() < 0; });
    std::vector<Ball> x(n);
    x[0] = Ball(rand_q(rng, 1000, 1000));
    std::vector<long> lr;
    for (int h = 0; h < H; ++h) {
      long v;
      do v = rng.uniform_int(-8000, 8000);
      while (std::find(lr.begin(), lr.end(), v) != lr.end());
      lr.push_back(v);
      x[1 + h] = F.exp(Rational(v, 1000));
      x[1 + H + h] = Ball(rand_q_nonzero(rng, 2000, 1000));
    }
    const PairSystem<Ball> sys(std::vector<Ball>(n, Ball(0L)), H, t), paper(std::vector<Ball>(n, Ball(0L)), H);
    Mat<Ball> J(n, n), Y;
    sys.jacobian(F, x, J);
    require((broken ? paper : sys).inverse_jacobian(F, x, Y), "inverse_jacobian refused a square system");
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        Ball p(0L);
        for (int k = 0; k < n; ++k) p += Y(i, k) * J(k, j);
        p -= Ball(static_cast<long>(i == j));
        require(arb_contains_zero(p.raw()) && mag_cmp_2exp_si(arb_radref(p.raw()), -100) < 0,
                "system " + std::to_string(s) + " (H = " + std::to_string(H) + "): (Y J)(" + std::to_string(i) + ", " + std::to_string(j) +
                    ") is not the identity's entry: " + p.str());
      }
  }
  return systems;
}

// A d x d matrix of offsets (entries rand_q(4, 4)), drawn again until it is
// invertible in Q, and its inverse.
void draw_offsets(Rng& rng, int d, QMat& D, QMat& Dinv) {
  D = QMat(d, d);
  do {
    for (int r = 0; r < d; ++r)
      for (int i = 0; i < d; ++i) D(r, i) = rand_q(rng, 4, 4);
  } while (!inverse(D, Dinv));
}

// (2) Residues c_h(i) = -delta_i^T v_h at d offsets and at check offsets
// delta_q: the choices of one residue per offset that every check pair's
// relation c(q) = (Delta^{-1} delta_q)^T c meets are the H true ones (the
// true ones always; generically no other). Exact in Q. The broken variant
// takes lambda = Delta^{-T} delta_q. Returns the number of draws.
long residue_labels(const ProveOptions& o, bool broken, Rng& rng, long& choices) {
  const long draws = scaled(o, 40);
  for (long s = 0; s < draws; ++s) {
    const int d = 2 + static_cast<int>(s % 3), H = 2 + static_cast<int>((s / 3) % 2);
    std::vector<QVec> V(H);
    for (auto& v : V) {
      v.resize(d);
      for (auto& x : v) x = rand_q(rng, 1000, 7);
    }
    QMat D, Dinv;
    draw_offsets(rng, d, D, Dinv);
    auto residue = [&](const QVec& delta, int h) { return -dot(delta, V[h]); };
    std::vector<QVec> checks;
    for (int q = 0; q < d * (d - 1); ++q) {
      QVec dq(d);
      for (auto& x : dq) x = rand_q(rng, 1000, 11);
      checks.push_back(dq);
    }
    std::vector<QVec> lam;
    for (const QVec& dq : checks) lam.push_back(matvec(broken ? Dinv.transpose() : Dinv, dq));
    long combos = 1;
    for (int i = 0; i < d; ++i) combos *= H;
    long survivors = 0, true_survivors = 0;
    for (long code = 0; code < combos; ++code) {
      std::vector<int> pick(d);
      long c = code;
      for (int i = 0; i < d; ++i, c /= H) pick[i] = static_cast<int>(c % H);
      bool all = true;
      for (size_t q = 0; q < checks.size() && all; ++q) {
        Rational pred(0);
        for (int i = 0; i < d; ++i) pred += lam[q][i] * residue(D.col(i), pick[i]);
        bool meets = false;
        for (int g = 0; g < H; ++g) meets = meets || pred == residue(checks[q], g);
        all = meets;
      }
      if (!all) continue;
      ++survivors;
      if (std::all_of(pick.begin(), pick.end(), [&](int g) { return g == pick[0]; })) ++true_survivors;
    }
    choices += combos;
    require(true_survivors == H, "draw " + std::to_string(s) + ": a true head's residues fail the relation c(q) = lambda_q^T c");
    require(survivors == H, "draw " + std::to_string(s) + ": " + std::to_string(survivors) + " choices of residues meet every check, not H");
  }
  return draws;
}

// (4) The search with its prunes (placed_label_search) finds exactly the
// choices that meet every check, with d - 1 links u delta_1 + w delta_i
// (lambda = u e_1 + w e_i, sparse) among d dense checks: compared with every
// one of the H^d choices tested exactly in Q, on balls of exact residues. The
// broken variant gives the search lambda = Delta^{-T} delta_q (as in (3)).
long sparse_search(const ProveOptions& o, bool broken, Rng& rng) {
  PrecisionScope scope(128);
  const long draws = scaled(o, 30);
  for (long s = 0; s < draws; ++s) {
    const int d = 3 + static_cast<int>(s % 3), H = 2 + static_cast<int>((s / 3) % 2);
    std::vector<QVec> V(H, QVec(d));
    for (auto& v : V)
      for (auto& x : v) x = rand_q(rng, 1000, 7);
    QMat D, Dinv;
    draw_offsets(rng, d, D, Dinv);
    // residue balls of an offset, in an order permuted per offset
    auto balls = [&](const QVec& delta) {
      PairFit<Ball> p{Ball(0L), {}, {}};
      for (int h = 0; h < H; ++h) p.c.push_back(Ball(-dot(delta, V[h])));
      for (int h = H - 1; h > 0; --h) std::swap(p.c[h], p.c[rng.uniform_int(0, h)]);
      return p;
    };
    std::vector<PairFit<Ball>> first, checks;
    for (int i = 0; i < d; ++i) first.push_back(balls(D.col(i)));
    std::vector<QVec> lamq, offs;
    for (int q = 0; q < d; ++q) {
      QVec dq(d);
      for (auto& x : dq) x = rand_q(rng, 1000, 11);
      offs.push_back(dq);
      lamq.push_back(matvec(Dinv, dq));
      checks.push_back(balls(dq));
    }
    for (int i = 1; i < d; ++i) {
      const Rational u(rng.uniform_int(1, 3), 4), w(rng.uniform_int(1, 3) * (rng.uniform_int(0, 1) ? 1 : -1), 4);
      QVec dq(d);
      for (int r = 0; r < d; ++r) dq[r] = u * D(r, 0) + w * D(r, i);
      offs.push_back(dq);
      lamq.push_back(matvec(Dinv, dq));
      checks.push_back(balls(dq));
    }
    std::vector<std::vector<Ball>> lam;
    std::vector<const PairFit<Ball>*> cp;
    for (size_t q = 0; q < checks.size(); ++q) {
      std::vector<Ball> l;
      for (const Rational& x : broken ? matvec(Dinv.transpose(), offs[q]) : lamq[q]) l.push_back(Ball(x));
      lam.push_back(l);
      cp.push_back(&checks[q]);
    }
    const std::vector<std::vector<int>> found = placed_label_search(first, lam, cp, H, true, 1L << 26).found;
    // every choice, in lexicographic order, tested exactly
    std::vector<std::vector<int>> all;
    long combos = 1;
    for (int i = 0; i < d; ++i) combos *= H;
    for (long code = 0; code < combos; ++code) {
      std::vector<int> pick(d);
      long c = code;
      for (int i = d - 1; i >= 0; --i, c /= H) pick[i] = static_cast<int>(c % H);
      bool meets_all = true;
      for (size_t q = 0; q < checks.size() && meets_all; ++q) {
        Ball pred(0L);
        for (int i = 0; i < d; ++i) pred += Ball(lamq[q][i]) * first[i].c[pick[i]];
        bool meets = false;
        for (int g = 0; g < H; ++g) meets = meets || arb_overlaps(pred.raw(), checks[q].c[g].raw());
        meets_all = meets;
      }
      if (meets_all) all.push_back(pick);
    }
    require(found == all, "draw " + std::to_string(s) + " (d = " + std::to_string(d) + ", H = " + std::to_string(H) + "): the search finds " +
                              std::to_string(found.size()) + " choices, the exhaustive test " + std::to_string(all.size()));
  }
  return draws;
}

}  // namespace

// 37: the pair system at ratios (its closed-form inverse Jacobian, which
// Krawczyk's test uses) and the labels by the residues' linear relation.
void check_placed_certified(const ProveOptions& o, bool broken, LemmaCheck& out) {
  Rng rng(o.seed ^ 0x3737);
  const long systems = inverse_at_ratios(o, broken, rng);
  long choices = 0;
  const long draws = residue_labels(o, broken, rng, choices);
  const long searches = sparse_search(o, broken, rng);
  out.cases = systems + draws + searches;
  out.detail = std::to_string(systems) + " pair systems at ratios (H = 1..4): Y J encloses I to 2^-100; " + std::to_string(draws) +
               " residue draws (d = 2..4, H = 2..3, " + std::to_string(choices) + " choices of residues): exactly the H true ones meet every check, exact in Q; " + std::to_string(searches) +
               " searches with links (d = 3..5): the pruned search finds every choice that meets every check";
}

}  // namespace mhaq::proof
