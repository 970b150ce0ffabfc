// The witness queries of a run on a small token grid, checked for their
// shape and grid (certificate_witness.hpp). The answers at these queries, and
// the recovered heads' values there, are checked with every other query's.
#include "certificate_witness.hpp"

#include <flint/fmpz.h>

#include <algorithm>
#include <vector>

namespace mhaq::check {

namespace {

using Token = std::vector<Qn>;

// The token most queries of a group hold in one role, so that a single
// changed token is the one reported (ties: the first).
const Token* majority(const std::vector<const Token*>& seen) {
  const Token* best = nullptr;
  long best_n = 0;
  for (const Token* t : seen) {
    long n = 0;
    for (const Token* u : seen) n += *u == *t;
    if (n > best_n) {
      best = t;
      best_n = n;
    }
  }
  return best;
}

// Whether x is an integer in [-range, range] divided by den.
bool on_grid(const Qn& x, long den, long range) {
  Qn t;
  fmpq_mul_si(t.v, x.v, den);
  return fmpz_is_one(fmpq_denref(t.v)) && fmpz_cmp_si(fmpq_numref(t.v), range) <= 0 && fmpz_cmp_si(fmpq_numref(t.v), -range) >= 0;
}

// ((4H - 1) / (2 R_w + 1))^pairs <= 2^-10, in integers.
bool pairs_enough(long H, long range, long pairs) {
  fmpz_t a, b;
  fmpz_init_set_si(a, 4 * H - 1);
  fmpz_init_set_si(b, 2 * range + 1);
  fmpz_pow_ui(a, a, static_cast<ulong>(pairs));
  fmpz_pow_ui(b, b, static_cast<ulong>(pairs));
  fmpz_mul_2exp(a, a, 10);
  const bool ok = fmpz_cmp(a, b) <= 0;
  fmpz_clear(a);
  fmpz_clear(b);
  return ok;
}

// One group: queries[first .. first + size), the pair's k = 0..size-1.
void check_group(const Cert& c, std::size_t first, std::size_t size, long n, long group, const FactFn& fact) {
  std::vector<const Token*> xs, ys;
  for (std::size_t k = 0; k < size; ++k) {
    const Query& q = c.queries[first + k].q;
    ys.push_back(&q.back().token);
    if (k > 0 && q.size() > 1) xs.push_back(&q.front().token);
  }
  const Token* y = majority(ys);
  const Token* x = majority(xs);
  const std::string which = "witness pair " + std::to_string(group) + " (proofs/39-grid-witness.md)";
  for (std::size_t k = 0; k < size; ++k) {
    const std::size_t i = first + k;
    const std::string p = at("queries", i);
    const Query& q = c.queries[i].q;
    const std::size_t want = k == 0 ? 1 : 2;
    const std::string kk = "k = " + std::to_string(k) + " of " + which;
    if (q.size() != want) {
      fact(false, at(p, "runs"), std::to_string(q.size()) + " runs, query " + kk + " has " + std::to_string(want));
      continue;
    }
    for (std::size_t r = 0; r < want; ++r) {
      const bool is_y = r + 1 == want;
      const Token* e = is_y ? y : x;
      const long count = is_y ? n - static_cast<long>(k) : static_cast<long>(k);
      const std::string rp = at(at(p, "runs"), r);
      for (std::size_t t = 0; t < q[r].token.size(); ++t) {
        const Qn& v = q[r].token[t];
        const std::string tp = at(at(rp, "token"), t);
        fact(on_grid(v, c.token_den, c.witness_range), tp,
             clean(v.str()) + " is not an integer in [-" + std::to_string(c.witness_range) + ", " + std::to_string(c.witness_range) +
                 "] (inputs.witness_range) divided by " + std::to_string(c.token_den));
        if (e) fact((*e)[t] == v, tp, clean(v.str()) + ", but the other queries of " + which + " have " + clean((*e)[t].str()) + (is_y ? " (y)" : " (x)"));
      }
      fact(q[r].count == count, at(rp, "count"),
           std::to_string(q[r].count) + ", query " + kk + " has " + std::to_string(count) + (is_y ? " copies of y" : " copies of x"));
    }
  }
}

}  // namespace

long witness_range_bound(long token_range, long H) { return std::max(token_range, 4 * H - 1); }

void check_witness_queries(const Cert& c, std::size_t first, const FactFn& fact) {
  if (c.witness_queries == 0) return;
  const long H = c.H, n = 2 * H + 1;
  const long bound = witness_range_bound(c.token_range, H);
  fact(c.witness_range <= bound, "inputs.witness_range",
       std::to_string(c.witness_range) + ", more than max(token_range, 4H - 1) = " + std::to_string(bound) + ", the witness grid of proofs/39-grid-witness.md");
  const long pairs = c.witness_queries / n;
  fact(c.witness_queries % n == 0, "claims.grid_witness_queries",
       std::to_string(c.witness_queries) + " is not a whole number of witness pairs of 2H+1 = " + std::to_string(n) + " queries");
  fact(pairs == 0 || pairs_enough(H, c.witness_range, pairs), "claims.grid_witness_queries",
       std::to_string(pairs) + " witness pairs on {-" + std::to_string(c.witness_range) + ".." + std::to_string(c.witness_range) +
           "}: a wrong model escapes them with probability up to ((4H-1)/(2 R_w + 1))^pairs, more than 2^-10");
  if (c.queries.size() <= first) return;  // the count failure is already reported
  // the claimed witness queries only: any beyond them fail the count
  const std::size_t extra = std::min(c.queries.size() - first, static_cast<std::size_t>(c.witness_queries)), un = static_cast<std::size_t>(n);
  for (std::size_t g = 0; g * un < extra; ++g)
    check_group(c, first + g * un, std::min(un, extra - g * un), n, static_cast<long>(g), fact);
}

}  // namespace mhaq::check
