// The certificate checker (tests/golden/CERTIFICATE.md). Everything here is
// re-derived from the recorded model and plan with the checker's own code;
// see include/mhaq/check/certificate_check.hpp for why it duplicates a little.
#include "mhaq/check/certificate_check.hpp"

#include <flint/fmpq_mat.h>
#include <flint/fmpz_poly.h>

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <set>

#include "certificate_read.hpp"
#include "certificate_witness.hpp"
#include "check_internal.hpp"
#include "mhaq/check/limits.hpp"

namespace mhaq::check {

namespace {

using json = nlohmann::json;

// ------------------------------------------------------------ checking
enum class Tri { yes, no, unknown };

std::string head_path(size_t h, int d, size_t e) {  // entry e of a head: W row-major, then v, then c
  const size_t dd = static_cast<size_t>(d) * d;
  if (e < dd) return at(at(at("heads", h), "W"), e / d) + "[" + std::to_string(e % d) + "]";
  if (e < dd + static_cast<size_t>(d)) return at(at(at("heads", h), "v"), e - dd);
  return at(at(at("heads", h), "c"), e - dd - static_cast<size_t>(d));
}

// Assignment of recorded items g to true items perm[g] with the fewest
// failing fields (brute force; H is small). n > 8: identity.
std::vector<int> best_assignment(int n, const std::function<int(int, int)>& cost) {
  std::vector<int> perm(static_cast<size_t>(n)), best = perm;
  std::iota(perm.begin(), perm.end(), 0);
  best = perm;
  if (n > 8) return best;
  std::vector<std::vector<int>> c(n, std::vector<int>(n));
  for (int g = 0; g < n; ++g)
    for (int h = 0; h < n; ++h) c[g][h] = cost(g, h);
  int best_cost = -1;
  do {
    int s = 0;
    for (int g = 0; g < n; ++g) s += c[g][perm[g]];
    if (best_cost < 0 || s < best_cost) { best_cost = s; best = perm; }
  } while (std::next_permutation(perm.begin(), perm.end()));
  return best;
}

struct PlanPair {
  std::string kind;
  int i, j;
  std::vector<Qn> offset, final_token;
};

class Checker {
 public:
  Checker(const Cert& c, CertificateReport& rep) : c_(c), rep_(rep), d_(c.d), H_(c.H), nb_(c.d + (c.bias ? 1 : 0)) {
    canon_ = canonical(c.model);
    // Precision follows the recorded values, not only the claim: a file that
    // claims 2^16 bits for 256-bit values is decided at about 256 bits (the
    // tests are rigorous at any precision; the loop raises it when undecided).
    slong data = 53;
    if (c.mode != Mode::exact) for_each_num([&](const Num& x, const std::string&) { data = std::max<slong>(data, arf_bits(arb_midref(x.b.v))); });
    start_prec_ = (c.mode == Mode::exact ? 128 : std::min<slong>(c.bits, data)) + 64;
    max_prec_ = std::max<slong>(16 * ((c.mode == Mode::exact ? 128 : c.bits) + 64), 8192);
  }

  void run() {
    rep_.arith = c_.arith;
    rep_.d = d_;
    rep_.H = H_;
    rep_.queries = static_cast<long>(c_.queries.size());
    rep_.pairs = static_cast<long>(c_.pairs.size());
    rep_.heads = static_cast<long>(c_.heads.size());
    build_plan();
    mark_wild();
    check_plan_and_claims();
    check_queries();
    check_pairs_structure();
    check_binary_widths();
    exact_values();
    check_answers();
    check_pairs();
    check_heads();
  }

 private:
  const Cert& c_;
  CertificateReport& rep_;
  int d_, H_;
  int nb_;  // final tokens: d, or d + 1 with biases
  std::vector<RatHead> canon_;
  slong start_prec_;
  std::vector<PlanPair> plan_;
  size_t plan_size_ = 0;  // queries of the plan: 1 + 2H per pair
  // The plan's query i, built on demand (a crafted file must not make the
  // checker hold a plan it never compares with): [b_1], then each pair's
  // [a x k, b] for k = 1..2H.
  Query plan_query(size_t i) const {
    if (i == 0) return Query{Run{col(c_.B, 0, nb_), 1}};
    const size_t per = 2 * static_cast<size_t>(H_);
    const PlanPair& p = plan_[(i - 1) / per];
    return Query{Run{add(p.final_token, p.offset), static_cast<long>((i - 1) % per) + 1}, Run{p.final_token, 1}};
  }
  std::vector<bool> query_ok_;  // recorded query i equals the plan's query i
  // exact mode: the model's value at each recorded query
  std::vector<Pq> exact_;
  std::vector<bool> exact_ok_;
  std::vector<std::string> exact_why_;
  std::map<slong, std::vector<BallHead>> model_balls_;
  slong max_prec_;

  // Every recorded binary or ball value, with its path.
  void for_each_num(const std::function<void(const Num&, const std::string&)>& f) const {
    for (size_t i = 0; i < c_.answers.size(); ++i) f(c_.answers[i], at("answers", i));
    for (size_t p = 0; p < c_.pairs.size(); ++p) {
      const std::string pp = at("pairs", p);
      f(c_.pairs[p].P, at(pp, "P"));
      for (size_t h = 0; h < c_.pairs[p].r.size(); ++h) f(c_.pairs[p].r[h], at(at(at(pp, "poles"), h), "r"));
      for (size_t h = 0; h < c_.pairs[p].c.size(); ++h) f(c_.pairs[p].c[h], at(at(at(pp, "poles"), h), "c"));
    }
    for (size_t h = 0; h < c_.heads.size(); ++h)
      for (size_t e = 0; e < head_entries(); ++e) f(head_entry(c_.heads[h], e), head_path(h, d_, e));
    if (c_.bias) f(c_.beta, "beta");
  }
  // A head's entries: W row-major, v, and c with biases.
  size_t head_entries() const { return static_cast<size_t>(d_) * d_ + static_cast<size_t>(d_) * (c_.bias ? 2 : 1); }
  static const Num& head_entry(const HeadRec& h, size_t e) {
    return e < h.W.size() ? h.W[e] : e < h.W.size() + h.v.size() ? h.v[e - h.W.size()] : h.c[e - h.W.size() - h.v.size()];
  }

  // Recorded queries with a token entry beyond 3 token_range / token_den (no
  // plan holds one: a = b + offset is three drawn entries at most), or beyond
  // the witness grid's largest range for the queries after the plan of a
  // certificate with witnesses: the model is not evaluated there, since such
  // a token could demand any precision.
  std::vector<bool> wild_;
  bool plan_ok_ = true;  // B and Delta on the grid: the plan's queries are evaluated
  void mark_wild() {
    Qn tmax;
    wild_.assign(c_.queries.size(), false);
    for (size_t i = 0; i < c_.queries.size(); ++i) {
      const long w = i >= plan_size_ && c_.witness_queries > 0 ? witness_range_bound(c_.token_range, H_) : 0;
      fmpq_set_si(tmax.v, std::max(plan_reach() * c_.token_range, w), static_cast<ulong>(c_.token_den));
      for (const auto& run : c_.queries[i].q)
        for (const auto& x : run.token) {
          Qn a;
          fmpq_abs(a.v, x.v);
          if (fmpq_cmp(a.v, tmax.v) > 0) wild_[i] = true;
        }
    }
  }
  // A plan token a = b + offset holds 3 drawn entries at most; 4 with biases (b = 2 b_1 - b_j).
  long plan_reach() const { return c_.bias ? 4 : 3; }
  std::string wild_msg(size_t i) const {
    const bool w = i >= plan_size_ && c_.witness_queries > 0;
    const std::string reach = std::to_string(plan_reach()) + " token_range";
    return "not evaluated: queries[" + std::to_string(i) + "] has a token entry beyond " + (w ? "max(" + reach + ", 4H - 1)" : reach) +
           " / token_den in size, which no " + (w ? "plan or witness" : "plan") + " holds";
  }

  void fail(const std::string& path, const std::string& msg) { rep_.failures.push_back({path, msg}); }
  void fact(bool ok, const std::string& path, const std::string& msg) {
    ++rep_.checks;
    if (!ok) fail(path, msg);
  }
  // column j of a row-major matrix of d rows and n columns
  std::vector<Qn> col(const std::vector<Qn>& M, int j, int n) const {
    std::vector<Qn> out;
    for (int r = 0; r < d_; ++r) out.push_back(M[static_cast<size_t>(r) * n + j]);
    return out;
  }
  static std::vector<Qn> add(const std::vector<Qn>& a, const std::vector<Qn>& b) {
    std::vector<Qn> out(a.size());
    for (size_t i = 0; i < a.size(); ++i) fmpq_add(out[i].v, a[i].v, b[i].v);
    return out;
  }
  static Qn dot(const std::vector<Qn>& a, const std::vector<Qn>& b) {
    Qn s;
    for (size_t i = 0; i < a.size(); ++i) fmpq_addmul(s.v, a[i].v, b[i].v);
    return s;
  }
  Qn bilinear(const std::vector<Qn>& x, const RatHead& h, const std::vector<Qn>& y) const {  // x^T (W y + c)
    Qn s, t;
    for (int i = 0; i < d_; ++i)
      for (int j = 0; j < d_; ++j) {
        fmpq_mul(t.v, x[i].v, h.W[static_cast<size_t>(i) * d_ + j].v);
        fmpq_addmul(s.v, t.v, y[j].v);
      }
    for (size_t i = 0; i < h.c.size(); ++i) fmpq_addmul(s.v, x[i].v, h.c[i].v);
    return s;
  }
  const std::vector<BallHead>& model_balls(slong prec) {
    auto it = model_balls_.find(prec);
    if (it == model_balls_.end()) it = model_balls_.emplace(prec, to_balls(c_.model, prec)).first;
    return it->second;
  }
  // Runs test(prec) at increasing precision until it decides.
  Tri decide(const std::function<Tri(slong)>& test) const {
    for (slong p = start_prec_; p <= max_prec_; p *= 2) {
      const Tri t = test(p);
      if (t != Tri::unknown) return t;
    }
    return Tri::unknown;
  }
  static std::string tri_msg(Tri t, const std::string& no) { return t == Tri::no ? no : no + " (undecided at the checker's precision cap)"; }

  // ---- plan, structure, claims
  // d (d + 1 with biases) final tokens; the across link at b_1 + b_j, or 2 b_1 - b_j with biases
  void build_plan() {
    const bool paper = c_.schedule == "paper";
    auto b = [&](int j) { return col(c_.B, j, nb_); };
    auto delta = [&](int i) { return col(c_.Delta, i, d_); };
    for (int j = 0; j < nb_; ++j)
      for (int i = 0; i < d_; ++i) plan_.push_back({"base", i, j, delta(i), b(j)});
    for (int j = 0; j < (paper ? nb_ : 1); ++j)
      for (int i = 1; i < d_; ++i) plan_.push_back({"within", i, j, add(delta(0), delta(i)), b(j)});
    if (paper)
      for (int j = 1; j < nb_; ++j) {
        std::vector<Qn> t = add(b(0), b(0));
        if (c_.bias)
          for (int r = 0; r < d_; ++r) fmpq_sub(t[r].v, t[r].v, b(j)[r].v);
        plan_.push_back({"across", 0, j, delta(0), c_.bias ? t : add(b(0), b(j))});
      }
    plan_size_ = 1 + plan_.size() * 2 * static_cast<size_t>(H_);
  }

  void check_plan_and_claims() {
    fact(c_.plan_schedule == c_.schedule, "plan.schedule", quote_str(c_.plan_schedule) + " differs from inputs.schedule \"" + c_.schedule + "\"");
    fact(c_.plan_d == d_, "plan.d", std::to_string(c_.plan_d) + " differs from the model's d = " + std::to_string(d_));
    fact(c_.plan_H == H_, "plan.H", std::to_string(c_.plan_H) + " differs from inputs.heads_learner = " + std::to_string(H_));
    // B and Delta: entries on the learner's grid, and invertible (with
    // biases [B; 1 ... 1]: the d + 1 final tokens span affinely).
    for (const auto* which : {"B", "Delta"}) {
      const bool isB = std::string(which) == "B";
      const std::vector<Qn>& M = isB ? c_.B : c_.Delta;
      const int n = isB ? nb_ : d_;
      fmpq_mat_t A;
      fmpq_mat_init(A, n, n);
      for (int k = 0; k < n && n > d_; ++k) fmpq_one(fmpq_mat_entry(A, d_, k));
      for (int r = 0; r < d_; ++r)
        for (int k = 0; k < n; ++k) {
          const Qn& x = M[static_cast<size_t>(r) * n + k];
          fmpq_set(fmpq_mat_entry(A, r, k), x.v);
          Qn t;
          fmpq_mul_si(t.v, x.v, c_.token_den);
          fmpz_t R;
          fmpz_init_set_ui(R, static_cast<ulong>(c_.token_range));
          const bool ok = fmpz_is_one(fmpq_denref(t.v)) && fmpz_cmpabs(fmpq_numref(t.v), R) <= 0;
          fmpz_clear(R);
          plan_ok_ = plan_ok_ && ok;
          fact(ok, "plan." + std::string(which) + "[" + std::to_string(r) + "][" + std::to_string(k) + "]",
               clean(x.str()) + " is not an integer in [-" + std::to_string(c_.token_range) + ", " + std::to_string(c_.token_range) + "] divided by " +
                   std::to_string(c_.token_den));
        }
      Qn det;
      fmpq_mat_det(det.v, A);
      fmpq_mat_clear(A);
      fact(!fmpq_is_zero(det.v), "plan." + std::string(which),
           n > d_ ? "the final tokens are affinely dependent: the pairs do not determine (W, c)" : "singular: the pairs do not determine the heads");
    }
    // the query count and length claims
    const long H = H_, d = d_;
    const bool paper = c_.schedule == "paper";
    const long formula = c_.bias ? (paper ? 4 * H * d * d + 4 * H * d - 2 * H + 1 : 1 + 2 * H * (d * d + 2 * d - 1))
                                 : (paper ? 4 * H * d * d - 2 * H + 1 : 1 + 2 * H * (d * d + d - 1));
    const std::string fname = c_.bias ? (paper ? "4Hd^2+4Hd-2H+1" : "1+2H(d^2+2d-1)") : (paper ? "4Hd^2-2H+1" : "1+2H(d^2+d-1)");
    const long n = static_cast<long>(c_.queries.size());
    fact(c_.claim_formula == fname, "claims.query_formula", quote_str(c_.claim_formula) + ", the " + c_.schedule + " schedule uses " + fname);
    fact(c_.claim_formula_value == formula, "claims.query_formula_value",
         std::to_string(c_.claim_formula_value) + ", but " + fname + " = " + std::to_string(formula) + " for d=" + std::to_string(d) + ", H=" + std::to_string(H));
    fact(c_.claim_queries == n, "claims.queries", "claims " + std::to_string(c_.claim_queries) + " queries, the certificate records " + std::to_string(n));
    const long w = c_.witness_queries;  // the small-grid guard's, after the plan's
    fact(n == formula + w, "queries",
         std::to_string(n) + " queries recorded, " + fname + " = " + std::to_string(formula) + (w ? " and " + std::to_string(w) + " witness queries" : ""));
    if (w) fact(n - formula == w, "claims.grid_witness_queries", "claims " + std::to_string(w) + ", the certificate records " + std::to_string(n - formula) + " queries after the plan's");
    long longest = 0;
    for (const auto& q : c_.queries) {
      long len = 0;
      for (const auto& r : q.q) len += r.count;
      longest = std::max(longest, len);
    }
    fact(c_.claim_max_length == longest, "claims.max_length",
         "claims " + std::to_string(c_.claim_max_length) + ", the longest recorded query has " + std::to_string(longest) + " tokens");
    fact(c_.claim_length_bound == 2 * H + 1, "claims.length_bound", std::to_string(c_.claim_length_bound) + ", but 2H+1 = " + std::to_string(2 * H + 1));
    fact(longest <= 2 * H + 1, "claims.max_length", "a query has " + std::to_string(longest) + " tokens, more than 2H+1 = " + std::to_string(2 * H + 1));
    if (c_.mode == Mode::binary) {
      // Claimed tolerances are powers of two (recover writes the smallest power
      // of two above twice a rigorous bound); the comparisons below verify them.
      const Qn* tols[3] = {&c_.tol_answers, &c_.tol_pairs, &c_.tol_heads};
      const char* names[3] = {"answers", "pairs", "heads"};
      for (int k = 0; k < 3; ++k) {
        const fmpz* n = fmpq_numref(tols[k]->v);
        const fmpz* dn = fmpq_denref(tols[k]->v);
        const bool pow2 = fmpz_sgn(n) > 0 && ((fmpz_is_one(dn) && fmpz_val2(n) + 1 == fmpz_bits(n)) || (fmpz_is_one(n) && fmpz_val2(dn) + 1 == fmpz_bits(dn)));
        fact(pow2, at("tolerances", names[k]), clean(tols[k]->str()) + " is not a power of two");
      }
    }
    fact(canon_.size() <= static_cast<size_t>(H_), "model.heads",
         "the model's canonical form has " + std::to_string(canon_.size()) + " heads, more than the learner's H = " + std::to_string(H_) +
             " (its pair values are then not compared)");
    fact(c_.claim_heads == static_cast<long>(c_.heads.size()), "claims.heads_recovered",
         std::to_string(c_.claim_heads) + ", but " + std::to_string(c_.heads.size()) + " heads are recorded");
    if (c_.mode == Mode::exact) {
      // L = (lcm of the W and c denominators) * token_den^2 makes every score a multiple of 1/L.
      fmpz_t l;
      fmpz_init_set_ui(l, 1);
      for (const auto& h : c_.model) {
        for (const auto& x : h.W) fmpz_lcm(l, l, fmpq_denref(x.v));
        for (const auto& x : h.c) fmpz_lcm(l, l, fmpq_denref(x.v));
      }
      fmpz_mul_si(l, l, c_.token_den);
      fmpz_mul_si(l, l, c_.token_den);
      char* ls = fmpz_get_str(nullptr, 10, l);
      fact(fmpz_cmp_si(l, c_.L) == 0, "L", std::to_string(c_.L) + ", but the model and token grid give L = " + ls);
      flint_free(ls);
      fmpz_clear(l);
    }
  }

  void check_queries() {
    query_ok_.assign(c_.queries.size(), false);
    for (size_t i = 0; i < c_.queries.size(); ++i) {
      const std::string p = at("queries", i);
      const QueryRec& r = c_.queries[i];
      long len = 0;
      for (const auto& run : r.q) len += run.count;
      fact(r.index == static_cast<long>(i), at(p, "index"), std::to_string(r.index) + ", expected " + std::to_string(i));
      fact(r.length == len, at(p, "length"), std::to_string(r.length) + ", but the runs have " + std::to_string(len) + " tokens");
      if (i >= plan_size_) continue;  // witness queries (below), or a count failure
      const Query e = plan_query(i);
      bool ok = r.q.size() == e.size();
      fact(ok, at(p, "runs"), std::to_string(r.q.size()) + " runs, the plan's query has " + std::to_string(e.size()));
      for (size_t k = 0; k < r.q.size() && k < e.size(); ++k) {
        const std::string rp = at(at(p, "runs"), k);
        for (int t = 0; t < d_; ++t) {
          const bool same = r.q[k].token[t] == e[k].token[t];
          fact(same, at(at(rp, "token"), static_cast<size_t>(t)),
               clean(r.q[k].token[t].str()) + ", the plan's query has " + clean(e[k].token[t].str()));
          ok = ok && same;
        }
        fact(r.q[k].count == e[k].count, at(rp, "count"), std::to_string(r.q[k].count) + ", the plan's query has " + std::to_string(e[k].count));
        ok = ok && r.q[k].count == e[k].count;
      }
      query_ok_[i] = ok;
    }
    check_witness_queries(c_, plan_size_, [&](bool ok, const std::string& path, const std::string& msg) { fact(ok, path, msg); });
  }

  void check_pairs_structure() {
    fact(c_.pairs.size() == plan_.size(), "pairs", std::to_string(c_.pairs.size()) + " pairs recorded, the plan has " + std::to_string(plan_.size()));
    for (size_t p = 0; p < c_.pairs.size() && p < plan_.size(); ++p) {
      const std::string pp = at("pairs", p);
      const PairRec& r = c_.pairs[p];
      const PlanPair& e = plan_[p];
      fact(r.kind == e.kind, at(pp, "kind"), quote_str(r.kind) + ", the plan has \"" + e.kind + "\"");
      fact(r.i == e.i && r.j == e.j, at(pp, "i"), "(i, j) = (" + std::to_string(r.i) + ", " + std::to_string(r.j) + "), the plan has (" + std::to_string(e.i) + ", " + std::to_string(e.j) + ")");
      for (int t = 0; t < d_; ++t) {
        fact(r.offset[t] == e.offset[t], at(at(pp, "offset"), static_cast<size_t>(t)), clean(r.offset[t].str()) + ", the plan has " + clean(e.offset[t].str()));
        fact(r.final_token[t] == e.final_token[t], at(at(pp, "final_token"), static_cast<size_t>(t)), clean(r.final_token[t].str()) + ", the plan has " + clean(e.final_token[t].str()));
      }
      const long first = 1 + static_cast<long>(p) * 2 * H_;
      fact(r.first == first && r.last == first + 2 * H_ - 1, at(pp, "queries"),
           "[" + std::to_string(r.first) + ", " + std::to_string(r.last) + "], the plan has [" + std::to_string(first) + ", " + std::to_string(first + 2 * H_ - 1) + "]");
      const size_t npoles = c_.mode == Mode::exact ? r.n.size() : r.r.size();
      if (c_.bound) fact(npoles <= static_cast<size_t>(H_), at(pp, "poles"), std::to_string(npoles) + " poles, more than the bound H0 = " + std::to_string(H_));
      else fact(npoles == static_cast<size_t>(H_), at(pp, "poles"), std::to_string(npoles) + " poles, the learner's H is " + std::to_string(H_));
    }
  }

  // Claimed bits, verified: binary floats hold at most `bits` significant
  // bits (double: 53). Ball midpoints are rounded to the run's precision,
  // except answers, which the oracle rounds 64 bits beyond the larger of the
  // run's and the oracle's precision; every midpoint stays within that.
  void check_binary_widths() {
    if (c_.mode == Mode::exact) return;
    const slong limit = c_.mode == Mode::binary ? c_.bits : std::max(c_.bits, c_.oracle_bits) + 64;
    for_each_num([&](const Num& x, const std::string& path) {
      const slong b = arf_bits(arb_midref(x.b.v));
      fact(fmpq_is_zero(x.q.v) || b <= limit, path,
           "has " + std::to_string(b) + " significant bits, more than the run's " + std::to_string(c_.bits) + (c_.mode == Mode::ball ? " (+ 64 for answers)" : ""));
    });
  }

  // ---- the model's exact values
  void exact_values() {
    if (c_.mode != Mode::exact) return;
    exact_.resize(c_.queries.size());
    exact_ok_.assign(c_.queries.size(), false);
    exact_why_.assign(c_.queries.size(), "");
    for (size_t i = 0; i < c_.queries.size(); ++i) {
      if (wild_[i]) exact_why_[i] = wild_msg(i);
      else exact_ok_[i] = eval_exact(exact_[i], c_.model, d_, c_.queries[i].q, c_.L, exact_why_[i], &c_.model_beta);
    }
  }

  // Exact value of the model at plan query i (the recorded one when it is the same query).
  bool exact_at_plan(size_t i, Pq& out, std::string& why) {
    if (i < query_ok_.size() && query_ok_[i] && exact_ok_[i]) {
      out = exact_[i];
      return true;
    }
    return eval_exact(out, c_.model, d_, plan_query(i), c_.L, why, &c_.model_beta);
  }

  // Ball containment of the model's value at query q, or |y - f(q)| <= tol for binary values.
  Tri matches_truth(const Query& q, const std::function<void(Ab&, slong)>& recorded, const Qn* tol) {
    // Without a tolerance, a recorded point (radius 0) equals f(q) only if
    // f(q) is rational, which balls can never show: decide it exactly, first.
    // With one, balls decide; the exact value (degree ~L in tau) is the fallback.
    if (!tol) {
      Ab y0;
      recorded(y0, start_prec_);
      if (mag_is_zero(arb_radref(y0.v))) {
        Qn v;
        const Tri rational = rational_value(q, v);
        if (rational == Tri::yes) {
          Qn m;
          arf_get_fmpq(m.v, arb_midref(y0.v));
          fmpq_sub(m.v, m.v, v.v);
          fmpq_abs(m.v, m.v);
          return fmpq_is_zero(m.v) ? Tri::yes : Tri::no;
        }
        if (rational == Tri::no) return Tri::no;
      }
    }
    const Tri t = decide([&](slong prec) {
      Ab x, y, beta;
      arb_set_fmpq(beta.v, c_.model_beta.v, prec);
      eval_arb(x, model_balls(prec), d_, q, prec, &beta);
      recorded(y, prec);
      return compare(y, x, tol, prec);
    });
    if (t != Tri::unknown) return t;
    // Undecided at the cap: balls cannot tell a value from a dyadic boundary
    // or point it equals exactly. That needs f(q) rational: decide exactly.
    Qn v;
    const Tri rational = rational_value(q, v);
    Ab y;
    recorded(y, max_prec_);
    const bool point = mag_is_zero(arb_radref(y.v));
    if (rational == Tri::no) return point && !tol ? Tri::no : Tri::unknown;  // a point never equals an irrational value
    if (rational == Tri::unknown) return Tri::unknown;
    if (!tol) return arb_contains_fmpq(y.v, v.v) ? Tri::yes : Tri::no;
    if (!point) return Tri::unknown;
    Qn m;
    arf_get_fmpq(m.v, arb_midref(y.v));
    fmpq_sub(m.v, m.v, v.v);
    fmpq_abs(m.v, m.v);
    return fmpq_cmp(m.v, tol->v) <= 0 ? Tri::yes : Tri::no;
  }
  // Whether f(q) is rational, and its value: f lies in Q(e^{1/L}) for L the
  // lcm of the denominators of the score differences at q, where a non-constant element is
  // transcendental (tau is). Tri::unknown when the exact evaluation is beyond
  // the tau-degree cap. The canonical heads define the same f; a head with
  // v = 0 (dropped there) would otherwise force a huge L on a value it does
  // not touch.
  Tri rational_value(const Query& q, Qn& out) const {
    fmpz_t l;
    fmpz_init_set_ui(l, 1);
    const std::vector<Qn>& xN = q.back().token;
    for (const auto& h : canon_)
      for (const auto& r : q) {
        std::vector<Qn> dx(static_cast<size_t>(d_));  // the score difference (x_r - x_N)^T (W x_N + c)
        for (int i = 0; i < d_; ++i) fmpq_sub(dx[static_cast<size_t>(i)].v, r.token[static_cast<size_t>(i)].v, xN[static_cast<size_t>(i)].v);
        fmpz_lcm(l, l, fmpq_denref(bilinear(dx, h, xN).v));
      }
    const bool small = fmpz_cmp_si(l, limits::max_L) <= 0;
    const long L = small ? fmpz_get_si(l) : 0;
    fmpz_clear(l);
    if (!small) return Tri::unknown;
    Pq f;
    std::string why;
    if (!eval_exact(f, canon_, d_, q, L, why, &c_.model_beta)) return Tri::unknown;
    if (fmpz_poly_degree(f.v->num) > 0 || fmpz_poly_degree(f.v->den) > 0) return Tri::no;
    fmpz_t n, dd;
    fmpz_init(n);
    fmpz_init(dd);
    fmpz_poly_get_coeff_fmpz(n, f.v->num, 0);
    fmpz_poly_get_coeff_fmpz(dd, f.v->den, 0);
    fmpq_set_fmpz_frac(out.v, n, dd);
    fmpz_clear(n);
    fmpz_clear(dd);
    return Tri::yes;
  }
  // y is the recorded ball (or the value computed from recorded floats); x encloses the truth.
  static Tri compare(const Ab& y, const Ab& x, const Qn* tol, slong prec) {
    if (!tol) {
      if (arb_contains(y.v, x.v)) return Tri::yes;
      return arb_overlaps(y.v, x.v) ? Tri::unknown : Tri::no;
    }
    Ab dlt, t;
    arb_sub(dlt.v, y.v, x.v, prec);
    arb_abs(dlt.v, dlt.v);
    arb_set_fmpq(t.v, tol->v, prec);
    if (arb_le(dlt.v, t.v)) return Tri::yes;
    return arb_gt(dlt.v, t.v) ? Tri::no : Tri::unknown;
  }
  // A recorded number against an exact rational: equality, containment or |x - q| <= tol, in Q.
  bool num_matches(const Num& x, const Qn& q, const Qn* tol) const {
    if (c_.mode == Mode::exact) return x.q == q;
    if (c_.mode == Mode::ball) return arb_contains_fmpq(x.b.v, q.v);
    Qn dlt;
    fmpq_sub(dlt.v, x.q.v, q.v);
    fmpq_abs(dlt.v, dlt.v);
    return fmpq_cmp(dlt.v, tol->v) <= 0;
  }
  std::string num_str(const Num& x) const {
    if (c_.mode != Mode::ball) return clean(x.q.str());
    char* s = arb_get_str(x.b.v, 20, 0);
    std::string out(s);
    flint_free(s);
    return out;
  }
  std::string relation(const Qn* tol) const {
    if (c_.mode == Mode::exact) return "is not equal to";
    if (c_.mode == Mode::ball) return "does not contain";
    // tolerances are powers of two when mhaq writes them: print 2^e
    const fmpz* n = fmpq_numref(tol->v);
    const fmpz* dn = fmpq_denref(tol->v);
    std::string t = clean(tol->str());
    if (fmpz_is_one(n) && fmpz_val2(dn) + 1 == fmpz_bits(dn)) t = "2^-" + std::to_string(fmpz_val2(dn));
    else if (fmpz_is_one(dn) && fmpz_sgn(n) > 0 && fmpz_val2(n) + 1 == fmpz_bits(n)) t = "2^" + std::to_string(fmpz_val2(n));
    return "is farther than " + t + " from";
  }

  // ---- (a) answers
  void check_answers() {
    const size_t n = c_.mode == Mode::exact ? c_.exact_answers.size() : c_.answers.size();
    fact(n == c_.queries.size(), "answers", std::to_string(n) + " answers recorded for " + std::to_string(c_.queries.size()) + " queries");
    for (size_t i = 0; i < n && i < c_.queries.size(); ++i) {
      const std::string p = at("answers", i);
      if (c_.mode == Mode::exact) {
        if (!exact_ok_[i]) {
          fact(false, p, "the model cannot be evaluated exactly at queries[" + std::to_string(i) + "]: " + exact_why_[i]);
          continue;
        }
        fact(fmpz_poly_q_equal(exact_[i].v, c_.exact_answers[i].v), p, "differs from the model's exact value at queries[" + std::to_string(i) + "]");
        continue;
      }
      const Qn* tol = c_.mode == Mode::binary ? &c_.tol_answers : nullptr;
      if (wild_[i]) {
        fact(false, p, wild_msg(i));
        continue;
      }
      const Tri t = matches_truth(c_.queries[i].q, [&](Ab& y, slong) { arb_set(y.v, c_.answers[i].b.v); }, tol);
      fact(t == Tri::yes, p, tri_msg(t, "the recorded answer " + relation(tol) + " the model's value at queries[" + std::to_string(i) + "]"));
    }
  }

  // ---- (b) pair interpolants
  // v^T x + beta, v the sum of the model's value vectors: f at [x], and a pair's limit at x = a
  Qn model_value(const std::vector<Qn>& x) const {
    Qn s = c_.model_beta;
    for (const auto& h : c_.model) fmpq_add(s.v, s.v, dot(h.v, x).v);
    return s;
  }
  struct TruePole {
    Qn s, c;  // log r = s, residue c
  };
  std::vector<TruePole> visible_heads(const PlanPair& e) const {
    std::vector<TruePole> out;
    for (const auto& h : canon_) {
      const Qn s = bilinear(e.offset, h, e.final_token);
      Qn cc = dot(h.v, e.offset);
      fmpq_neg(cc.v, cc.v);
      bool merged = false;  // heads with equal poles at this pair act as one
      for (auto& t : out)
        if (t.s == s) { fmpq_add(t.c.v, t.c.v, cc.v); merged = true; }
      if (!merged) out.push_back({s, cc});
    }
    std::vector<TruePole> kept;
    for (auto& t : out)
      if (!fmpq_is_zero(t.c.v)) kept.push_back(std::move(t));
    return kept;
  }

  // Exact mode: whether a pair's recorded interpolant P + sum c_h / (1 + k tau^n_h)
  // equals the model's value at point k (plan query qi; k = 0 is f(0) = v^T b);
  // no when the sum's tau-degree is beyond the cap.
  Tri exact_interpolant_at(const PairRec& r, const PlanPair& e, long k, size_t qi) {
    const size_t np = r.n.size();
    Pq want, got = pq_of(r.P.q), term;
    std::string why;
    bool ok = k == 0 ? true : exact_at_plan(qi, want, why);
    if (k == 0) want = pq_of(model_value(e.final_token));
    long degree = 0;  // of the sum's denominator: bounded like the answers' (eval_exact)
    for (size_t h = 0; h < np && ok; ++h) {
      const long n = r.n[h], a = n < 0 ? -n : n;
      degree += a;
      if (degree > limits::max_tau_exponent) { ok = false; break; }
      // c / (1 + k tau^n) = c tau^|n| / (tau^|n| + k) when n < 0
      fmpz_poly_set_fmpz(term.v->num, fmpq_numref(r.c[h].q.v));
      fmpz_poly_set_fmpz(term.v->den, fmpq_denref(r.c[h].q.v));
      fmpz_poly_t den;
      fmpz_poly_init(den);
      fmpz_poly_set_coeff_si(den, 0, n < 0 ? k : 1);
      fmpz_t kk;
      fmpz_init_set_si(kk, n < 0 ? 1 : k);
      fmpz_t cur;
      fmpz_init(cur);
      fmpz_poly_get_coeff_fmpz(cur, den, a);
      fmpz_add(cur, cur, kk);
      fmpz_poly_set_coeff_fmpz(den, a, cur);
      if (n < 0) fmpz_poly_shift_left(term.v->num, term.v->num, a);
      fmpz_poly_mul(term.v->den, term.v->den, den);
      fmpz_poly_clear(den);
      fmpz_clear(kk);
      fmpz_clear(cur);
      if (fmpz_poly_is_zero(term.v->den)) { ok = false; break; }
      fmpz_poly_q_canonicalise(term.v);
      fmpz_poly_q_add(got.v, got.v, term.v);
    }
    return ok && fmpz_poly_q_equal(got.v, want.v) ? Tri::yes : Tri::no;
  }

  void check_pairs() {
    if (!plan_ok_) {  // the plan's queries hold tokens off the grid: not evaluated (each entry is reported)
      fail("pairs", "not compared with the model: plan.B or plan.Delta is off the learner's token grid");
      return;
    }
    for (size_t p = 0; p < c_.pairs.size() && p < plan_.size(); ++p) {
      const std::string pp = at("pairs", p);
      const PairRec& r = c_.pairs[p];
      const PlanPair& e = plan_[p];
      const Qn* tol = c_.mode == Mode::binary ? &c_.tol_pairs : nullptr;
      const size_t np = c_.mode == Mode::exact ? r.n.size() : r.r.size();
      // reproduction: P + sum c_h/(1 + r_h k) = f(k), k = 0..2H
      std::string bad_k;
      long n_bad = 0;
      for (long k = 0; k <= 2L * H_; ++k) {
        const size_t qi = static_cast<size_t>(1 + static_cast<long>(p) * 2 * H_ + (k - 1));
        Tri t;
        if (c_.mode == Mode::exact) {
          t = exact_interpolant_at(r, e, k, qi);
        } else {
          auto interp = [&](Ab& y, slong prec) {
            Ab one, den, term;
            arb_set(y.v, r.P.b.v);
            for (size_t h = 0; h < np; ++h) {
              arb_mul_si(den.v, r.r[h].b.v, k, prec);
              arb_add_si(den.v, den.v, 1, prec);
              arb_div(term.v, r.c[h].b.v, den.v, prec);
              arb_add(y.v, y.v, term.v, prec);
            }
          };
          if (k == 0) {
            const Qn vb = model_value(e.final_token);
            t = decide([&](slong prec) {
              Ab x, y;
              arb_set_fmpq(x.v, vb.v, prec);
              interp(y, prec);
              return compare(y, x, tol, prec);
            });
          } else {
            t = matches_truth(plan_query(qi), interp, tol);
          }
        }
        ++rep_.checks;
        if (t != Tri::yes) {
          ++n_bad;
          if (n_bad <= 4) bad_k += (bad_k.empty() ? "" : ", ") + std::string("k=") + std::to_string(k) + (k == 0 ? " (f(0) = v^T b)" : " (answers[" + std::to_string(qi) + "])");
        }
      }
      if (n_bad > 0)
        fail(pp, "P + sum c_h/(1 + r_h k) " + relation(tol) + " the model's value at " + std::to_string(n_bad) + " of " +
                     std::to_string(2 * H_ + 1) + " points: " + bad_k + (n_bad > 4 ? ", ..." : ""));
      // the interpolant's parameters against the model's own pair values
      const Qn P = model_value(add(e.final_token, e.offset));
      fact(num_matches(r.P, P, tol), at(pp, "P"), num_str(r.P) + " " + relation(tol) + " the model's limit v^T a" + (c_.bias ? " + beta" : "") + " = " + clean(P.str()));
      if (canon_.size() > static_cast<size_t>(H_)) continue;  // reported once (check_plan_and_claims)
      const std::vector<TruePole> tp = visible_heads(e);
      if (tp.size() != np) {
        fact(false, at(pp, "poles"), std::to_string(np) + " poles recorded, the model has " + std::to_string(tp.size()) + " visible heads at this pair");
        continue;
      }
      auto pole_ok = [&](size_t g, size_t h) {
        if (c_.mode == Mode::exact) {
          Qn n;
          fmpq_mul_si(n.v, tp[h].s.v, c_.L);
          return fmpz_is_one(fmpq_denref(n.v)) && fmpz_cmp_si(fmpq_numref(n.v), r.n[g]) == 0;
        }
        return decide([&](slong prec) {
                 Ab x;
                 arb_set_fmpq(x.v, tp[h].s.v, prec);
                 arb_exp(x.v, x.v, prec);
                 return compare(r.r[g].b, x, tol, prec);
               }) == Tri::yes;
      };
      std::vector<std::vector<int>> okr(np, std::vector<int>(np)), okc(np, std::vector<int>(np));
      for (size_t g = 0; g < np; ++g)
        for (size_t h = 0; h < np; ++h) {
          okr[g][h] = pole_ok(g, h);
          okc[g][h] = num_matches(r.c[g], tp[h].c, tol);
        }
      const std::vector<int> m = best_assignment(static_cast<int>(np), [&](int g, int h) { return !okr[g][h] + !okc[g][h]; });
      for (size_t g = 0; g < np; ++g) {
        const std::string hp = at(at(pp, "poles"), g);
        const TruePole& t = tp[static_cast<size_t>(m[g])];
        if (c_.mode == Mode::exact) {
          Qn n;
          fmpq_mul_si(n.v, t.s.v, c_.L);
          fact(okr[g][m[g]], at(hp, "n"),
               std::to_string(r.n[g]) + " is not the model's exponent L (a-b)^T " + (c_.bias ? "(W_h b + c_h)" : "W_h b") + " = " + clean(n.str()));
        } else {
          fact(okr[g][m[g]], at(hp, "r"), num_str(r.r[g]) + " " + relation(tol) + " the model's pole exp(" + clean(t.s.str()) + ")");
        }
        fact(okc[g][m[g]], at(hp, "c"), num_str(r.c[g]) + " " + relation(tol) + " the model's residue v_h^T (b - a) = " + clean(t.c.str()));
      }
    }
  }

  // ---- (c) recovered heads
  void check_heads() {
    const size_t nh = c_.heads.size();
    const Qn* tol = c_.mode == Mode::binary ? &c_.tol_heads : nullptr;
    // reproduction of every answer
    std::string first_bad;
    long n_bad = 0;
    // the certificate's heads, entry by entry: as rationals (exact mode) and as balls
    const auto heads_as = [this](auto head, auto entry) {
      std::vector<decltype(head)> out;
      for (const auto& h : c_.heads) {
        auto o = head;
        for (const auto& x : h.W) o.W.push_back(entry(x));
        for (const auto& x : h.v) o.v.push_back(entry(x));
        for (const auto& x : h.c) o.c.push_back(entry(x));
        out.push_back(std::move(o));
      }
      return out;
    };
    std::vector<RatHead> rat;
    if (c_.mode == Mode::exact) rat = heads_as(RatHead{}, [](const auto& x) { return x.q; });
    const std::vector<BallHead> balls = heads_as(BallHead{}, [](const auto& x) { return x.b; });
    const Qn* beta_q = c_.bias ? &c_.beta.q : nullptr;
    const Ab* beta_b = c_.bias ? &c_.beta.b : nullptr;
    for (size_t i = 0; i < c_.queries.size(); ++i) {
      Tri t;
      if (c_.mode == Mode::exact) {
        Pq got;
        std::string why;
        t = exact_ok_[i] && eval_exact(got, rat, d_, c_.queries[i].q, c_.L, why, beta_q) && fmpz_poly_q_equal(got.v, exact_[i].v) ? Tri::yes : Tri::no;
      } else if (wild_[i]) {
        t = Tri::no;  // not evaluated (reported at answers[i])
      } else {
        t = matches_truth(c_.queries[i].q, [&](Ab& y, slong prec) { eval_arb(y, balls, d_, c_.queries[i].q, prec, beta_b); }, tol);
      }
      ++rep_.checks;
      if (t != Tri::yes && ++n_bad <= 4) first_bad += (first_bad.empty() ? "" : ", ") + at("answers", i);
    }
    if (n_bad > 0)
      fail("heads", "f with the recovered heads " + relation(tol) + " the model's value at " + std::to_string(n_bad) + " of " +
                        std::to_string(c_.queries.size()) + " queries: " + first_bad + (n_bad > 4 ? ", ..." : ""));
    // entries against the canonical model, up to the order of heads
    if (c_.bias) fact(num_matches(c_.beta, c_.model_beta, tol), "beta", num_str(c_.beta) + " " + relation(tol) + " the model's beta " + clean(c_.model_beta.str()));
    if (nh != canon_.size()) {
      fact(false, "heads", std::to_string(nh) + " heads recorded, the model's canonical form has " + std::to_string(canon_.size()));
      return;
    }
    const size_t ne = head_entries();
    const Qn zero;
    auto truth = [&](const RatHead& h, size_t e) -> const Qn& {
      const size_t w = h.W.size(), v = w + h.v.size();
      return e < w ? h.W[e] : e < v ? h.v[e - w] : e - v < h.c.size() ? h.c[e - v] : zero;
    };
    auto entry = [&](const HeadRec& h, size_t e) -> const Num& { return head_entry(h, e); };
    std::vector<std::vector<std::vector<char>>> ok(nh, std::vector<std::vector<char>>(nh, std::vector<char>(ne)));
    for (size_t g = 0; g < nh; ++g)
      for (size_t h = 0; h < nh; ++h)
        for (size_t e = 0; e < ne; ++e) ok[g][h][e] = num_matches(entry(c_.heads[g], e), truth(canon_[h], e), tol);
    const std::vector<int> m = best_assignment(static_cast<int>(nh), [&](int g, int h) {
      return static_cast<int>(std::count(ok[g][h].begin(), ok[g][h].end(), 0));
    });
    for (size_t g = 0; g < nh; ++g)
      for (size_t e = 0; e < ne; ++e)
        fact(ok[g][m[g]][e], head_path(g, d_, e),
             num_str(entry(c_.heads[g], e)) + " " + relation(tol) + " the canonical model's entry " + clean(truth(canon_[m[g]], e).str()));
  }
};
}  // namespace

CertificateReport check_certificate(const std::string& text) {
  try {  // an InputError comes from the strict readers only, naming the path
    const json doc = parse_certificate_document(text);
    if (is_transformer_certificate(doc)) return check_transformer_certificate(doc);
    CertificateReport rep;
    Checker(read_certificate(doc), rep).run();  // the record lives to the end of the run
    return rep;
  } catch (const InputError& e) {
    throw InputError(std::string("malformed certificate: ") + e.what());
  }
}

}  // namespace mhaq::check
