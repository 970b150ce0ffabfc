// Stage 4: the one head-assignment routine and the labelling relations.
#include "mhaq/stages/4-match/match.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "mhaq/arith/all_fields.hpp"

namespace mhaq {

namespace {

// Kuhn's augmenting paths on the bipartite graph allowed[h][g].
bool augment(int h, const std::vector<std::vector<char>>& allowed, std::vector<int>& owner, std::vector<char>& seen) {
  const int n = static_cast<int>(allowed.size());
  for (int g = 0; g < n; ++g) {
    if (!allowed[h][g] || seen[g]) continue;
    seen[g] = 1;
    if (owner[g] < 0 || augment(owner[g], allowed, owner, seen)) {
      owner[g] = h;
      return true;
    }
  }
  return false;
}

// A perfect matching of `allowed` (perm[h] = g), or empty.
std::vector<int> perfect_matching(const std::vector<std::vector<char>>& allowed) {
  const int n = static_cast<int>(allowed.size());
  std::vector<int> owner(n, -1);
  for (int h = 0; h < n; ++h) {
    std::vector<char> seen(n, 0);
    if (!augment(h, allowed, owner, seen)) return {};
  }
  std::vector<int> perm(n);
  for (int g = 0; g < n; ++g) perm[owner[g]] = g;
  return perm;
}

// A perfect matching is the only one iff the directed graph with arcs
// h -> g for allowed, unmatched (h, g) and g -> h for matched (h, g) has no
// cycle (an alternating cycle would exchange partners).
bool has_alternating_cycle(const std::vector<std::vector<char>>& allowed, const std::vector<int>& perm) {
  const int n = static_cast<int>(perm.size());
  std::vector<int> owner(n);
  for (int h = 0; h < n; ++h) owner[perm[h]] = h;
  // nodes: h in [0, n), g in [n, 2n); colour 0 new, 1 on stack, 2 done
  std::vector<int> colour(2 * n, 0);
  std::function<bool(int)> dfs = [&](int v) {
    colour[v] = 1;
    if (v < n) {
      for (int g = 0; g < n; ++g)
        if (allowed[v][g] && perm[v] != g) {
          const int w = n + g;
          if (colour[w] == 1 || (colour[w] == 0 && dfs(w))) return true;
        }
    } else {
      const int w = owner[v - n];
      if (colour[w] == 1 || (colour[w] == 0 && dfs(w))) return true;
    }
    colour[v] = 2;
    return false;
  };
  for (int v = 0; v < 2 * n; ++v)
    if (colour[v] == 0 && dfs(v)) return true;
  return false;
}

enum class Count { none, one, several };
Count count_matchings(const std::vector<std::vector<char>>& allowed, std::vector<int>& perm) {
  perm = perfect_matching(allowed);
  if (perm.empty() && !allowed.empty()) return Count::none;
  return has_alternating_cycle(allowed, perm) ? Count::several : Count::one;
}

}  // namespace

Assignment match_heads(int n, const std::function<Truth(int, int)>& compat) {
  std::vector<std::vector<char>> possible(n, std::vector<char>(n)), certain(n, std::vector<char>(n));
  for (int h = 0; h < n; ++h)
    for (int g = 0; g < n; ++g) {
      const Truth t = compat(h, g);
      possible[h][g] = t != Truth::no;
      certain[h][g] = t == Truth::yes;
    }
  Assignment a;
  const Count c = count_matchings(possible, a.perm);
  a.kind = c == Count::none ? Assignment::Kind::none : c == Count::one ? Assignment::Kind::unique : Assignment::Kind::several;
  if (c == Count::several) {
    std::vector<int> p;
    a.certain = count_matchings(certain, p) == Count::several;
  }
  if (c == Count::none) a.perm.clear();
  return a;
}

std::vector<int> bottleneck_matching(const std::vector<std::vector<double>>& cost, double* value) {
  const int n = static_cast<int>(cost.size());
  std::vector<double> levels;
  for (const auto& row : cost)
    for (double c : row)
      if (std::isfinite(c) || (std::isinf(c) && c < 0)) levels.push_back(c);
  std::sort(levels.begin(), levels.end());
  levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
  auto at = [&](double level) {
    std::vector<std::vector<char>> allowed(n, std::vector<char>(n));
    for (int h = 0; h < n; ++h)
      for (int g = 0; g < n; ++g) allowed[h][g] = cost[h][g] <= level;
    return perfect_matching(allowed);
  };
  if (n == 0) {
    if (value) *value = -std::numeric_limits<double>::infinity();
    return {};
  }
  // binary search for the least level admitting a perfect matching
  size_t lo = 0, hi = levels.size();
  std::vector<int> best;
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    std::vector<int> p = at(levels[mid]);
    if (!p.empty()) {
      best = std::move(p);
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  if (value) *value = best.empty() ? std::numeric_limits<double>::infinity() : levels[lo];
  return best;
}

template <ArithField F>
Assignment label_assignment(const F& fld, const PairFit<typename F::value_type>& ref, const PairFit<typename F::value_type>& cur,
                            const PairFit<typename F::value_type>* link, Relation rel) {
  const int H = ref.heads();
  // Only decisions are taken here: in the field's decision view (its values).
  const auto& dv = decision_view(fld);
  auto val = [](const typename F::value_type& x) -> decltype(auto) { return decision_value(x); };
  // Residues are compared against the pairs' residue scale (sum of |c_h|),
  // not against their own size: a nearly invisible head's residue is small
  // and only absolutely accurate. Poles are compared relatively.
  auto cscale = dv.from(Rational(0));
  for (int h = 0; h < H; ++h) cscale = cscale + dv.abs(val(ref.c[h])) + dv.abs(val(cur.c[h]));
  auto compat = [&](int h, int g) {
    if (rel == Relation::residue) return dv.equal(val(cur.c[g]), val(ref.c[h]), cscale);
    // link = ref * cur (within, across), or link * cur = ref^2 (across_affine)
    const bool affine = rel == Relation::across_affine;
    const auto prod = affine ? val(ref.r[h]) * val(ref.r[h]) : val(ref.r[h]) * val(cur.r[g]);
    Truth any = Truth::no;
    for (int l = 0; l < H && any != Truth::yes; ++l) {
      Truth t = affine ? dv.equal(val(link->r[l]) * val(cur.r[g]), prod) : dv.equal(val(link->r[l]), prod);
      if (rel == Relation::within) {
        t = truth_and(t, dv.equal(val(link->c[l]), val(ref.c[h]) + val(cur.c[g]), cscale));
      } else {
        t = truth_and(t, truth_and(dv.equal(val(link->c[l]), val(ref.c[h]), cscale), dv.equal(val(cur.c[g]), val(ref.c[h]), cscale)));
      }
      any = truth_or(any, t);
    }
    return any;
  };
  return match_heads(H, compat);
}

template <ArithField F>
PairFit<typename F::value_type> derive_from_link(const F& fld, const PairFit<typename F::value_type>& ref, const PairFit<typename F::value_type>& link,
                                                 const std::vector<typename F::value_type>& known_c, const PairFit<typename F::value_type>& partial,
                                                 Relation rel, const typename F::value_type& P, Assignment& a) {
  using T = typename F::value_type;
  const int H = ref.heads();
  a = Assignment{};
  const bool by_known = !known_c.empty();
  if (link.heads() != H || rel == Relation::residue || (by_known && static_cast<int>(known_c.size()) != H)) return {};
  auto cscale = fld.from(Rational(0));
  for (int h = 0; h < H; ++h) cscale = cscale + fld.abs(ref.c[h]) + fld.abs(link.c[h]);
  const bool across = rel == Relation::across || rel == Relation::across_affine;
  a = match_heads(H, [&](int h, int l) {
    if (across) return fld.equal(link.c[l], ref.c[h], cscale);
    if (by_known) return fld.equal(link.c[l], ref.c[h] + known_c[h], cscale);
    // a visible head of the target, or one whose residue is zero there
    Truth t = fld.equal(link.c[l], ref.c[h], cscale);
    for (int g = 0; g < partial.heads() && t != Truth::yes; ++g)
      t = truth_or(t, truth_and(fld.equal(link.r[l], ref.r[h] * partial.r[g]), fld.equal(link.c[l], ref.c[h] + partial.c[g], cscale)));
    return t;
  });
  if (a.kind != Assignment::Kind::unique) return {};
  PairFit<T> out{P, {}, {}};
  for (int h = 0; h < H; ++h) {
    const int l = a.perm[h];
    // across_affine: link = ref^2 / target
    out.r.push_back(rel == Relation::across_affine ? ref.r[h] * ref.r[h] / link.r[l] : link.r[l] / ref.r[h]);
    out.c.push_back(across ? ref.c[h] : by_known ? known_c[h] : link.c[l] - ref.c[h]);
  }
  return out;
}

template <ArithField F>
Assignment predicted_assignment(const F& fld, const PairFit<typename F::value_type>& ref, const PairFit<typename F::value_type>& cur,
                                const typename F::value_type& f0, const typename F::value_type& f1, Relation rel) {
  using T = typename F::value_type;
  const int H = ref.heads();
  Assignment out;
  const bool across = rel == Relation::across || rel == Relation::across_affine;
  if (cur.heads() != H || (rel != Relation::within && !across)) return out;
  const T one = fld.from(Rational(1));
  // term[h][g]: head h of ref with head g of cur; allowed[h][g]: not certainly
  // excluded by the residues (across)
  std::vector<std::vector<T>> term(H);
  std::vector<std::vector<char>> allowed(H, std::vector<char>(H, 1));
  T scale = fld.abs(f0 - f1), cscale = fld.from(Rational(0));
  for (int h = 0; h < H; ++h) cscale = cscale + fld.abs(ref.c[h]) + fld.abs(cur.c[h]);
  for (int h = 0; h < H; ++h)
    for (int g = 0; g < H; ++g) {
      const T rho = rel == Relation::across_affine ? ref.r[h] * ref.r[h] / cur.r[g] : ref.r[h] * cur.r[g];
      term[h].push_back((rel == Relation::within ? ref.c[h] + cur.c[g] : ref.c[h]) * rho / (one + rho));
      scale = scale + fld.abs(term[h].back());
      if (across) allowed[h][g] = fld.equal(ref.c[h], cur.c[g], cscale) != Truth::no;
    }
  const T target = f0 - f1;
  std::vector<std::vector<int>> possible, certain;
  std::vector<int> perm(H);
  std::vector<char> used(H, 0);
  // depth-first over assignments, partial sums shared by common prefixes
  std::function<void(int, const T&)> walk = [&](int h, const T& sum) {
    if (h == H) {
      const Truth t = fld.equal(sum, target, scale);
      if (t != Truth::no) possible.push_back(perm);
      if (t == Truth::yes) certain.push_back(perm);
      return;
    }
    for (int g = 0; g < H; ++g) {
      if (used[g] || !allowed[h][g]) continue;
      used[g] = 1;
      perm[h] = g;
      walk(h + 1, sum + term[h][g]);
      used[g] = 0;
    }
  };
  walk(0, fld.from(Rational(0)));
  if (possible.empty()) return out;
  out.perm = possible.front();
  out.kind = possible.size() == 1 ? Assignment::Kind::unique : Assignment::Kind::several;
  out.certain = certain.size() > 1;
  return out;
}

std::vector<int> unique_or_throw(const Assignment& a, const std::string& what) {
  switch (a.kind) {
    case Assignment::Kind::unique: return a.perm;
    case Assignment::Kind::none:
      throw_inconsistent(what + ": no head assignment fits (the answers are not those of a model with this many heads)");
    case Assignment::Kind::several:
      if (a.certain) throw_degenerate(what + ": ambiguous link, several head assignments fit");
      throw_unable(what + ": cannot tell the heads apart at this precision");
  }
  throw_internal("unique_or_throw: bad assignment kind");
}

#define MHAQ_INSTANTIATE(F)                                                                                                 \
  template Assignment label_assignment<F>(const F&, const PairFit<F::value_type>&, const PairFit<F::value_type>&, \
                                          const PairFit<F::value_type>*, Relation);                                 \
  template PairFit<F::value_type> derive_from_link<F>(const F&, const PairFit<F::value_type>&, const PairFit<F::value_type>&,   \
                                                      const std::vector<F::value_type>&, const PairFit<F::value_type>&, Relation,  \
                                                      const F::value_type&, Assignment&);            \
  template Assignment predicted_assignment<F>(const F&, const PairFit<F::value_type>&, const PairFit<F::value_type>&,  \
                                              const F::value_type&, const F::value_type&, Relation);
MHAQ_FOR_EACH_FIELD(MHAQ_INSTANTIATE)
#undef MHAQ_INSTANTIATE

}  // namespace mhaq
