// The checker of transformer certificates (docs/formats.md), with its own
// evaluator of a one-layer transformer: exactly in Q(tau) (exact) or as Arb
// enclosures (ball). Nothing here comes from mhaq_lib
// (tests/check_separation.sh). Checked: the claims and the query records;
// every answer against the recorded model; the recovered transformer against
// every answer, the learner's final verification queries reported apart; and
// the path's crossings, each of which must be one recovered hyperplane whose
// neuron's jump it shows and whose jump the model's region values confirm.
#include <flint/fmpz.h>
#include <flint/fmpz_poly.h>

#include <algorithm>
#include <functional>

#include "certificate_read.hpp"
#include "check_internal.hpp"

namespace mhaq::check {

namespace {

enum class Tri { yes, no, unknown };

// A transformer's parameters: W[h] row-major, u[k], U[k][h] (d each).
template <class V>
struct Tfm {
  std::vector<std::vector<V>> W;
  std::vector<V> u;
  std::vector<std::vector<std::vector<V>>> U;
};

void scale(Pq& x, const Qn& q) {
  fmpz_poly_scalar_mul_fmpz(x.v->num, x.v->num, fmpq_numref(q.v));
  fmpz_poly_scalar_mul_fmpz(x.v->den, x.v->den, fmpq_denref(q.v));
  fmpz_poly_q_canonicalise(x.v);
}

// T(q) = sum_k u_k ReLU(pre_k(q)) in Q(tau); pre_k is attention with heads
// (W_h, U_{k,h}). False with `why` when a value cannot be derived exactly.
bool eval_exact_tfm(Pq& out, const Tfm<Qn>& t, int d, const Query& q, long L, std::string& why) {
  fmpz_poly_q_zero(out.v);
  for (size_t k = 0; k < t.u.size(); ++k) {
    std::vector<RatHead> heads;
    for (size_t h = 0; h < t.W.size(); ++h) heads.push_back(RatHead{t.W[h], t.U[k][h]});
    Pq g;
    if (!eval_exact(g, heads, d, q, L, why)) return false;
    const int s = qtau_sign(g, L);
    if (s == 2) {
      why = "the sign of neuron " + std::to_string(k) + "'s pre-activation is not certified within 2^22 bits";
      return false;
    }
    if (s <= 0) continue;
    scale(g, t.u[k]);
    fmpz_poly_q_add(out.v, out.v, g.v);
  }
  return true;
}

// An enclosure of T(q) over every parameter in the balls: a pre-activation
// ball that straddles 0 gives the union of 0 and itself.
void eval_arb_tfm(Ab& out, const Tfm<Ab>& t, int d, const Query& q, slong prec) {
  arb_zero(out.v);
  Ab zero;
  for (size_t k = 0; k < t.u.size(); ++k) {
    std::vector<BallHead> heads;
    for (size_t h = 0; h < t.W.size(); ++h) heads.push_back(BallHead{t.W[h], t.U[k][h]});
    Ab g;
    eval_arb(g, heads, d, q, prec);
    if (arb_is_nonpositive(g.v)) continue;
    if (!arb_is_nonnegative(g.v)) arb_union(g.v, g.v, zero.v, prec);
    arb_addmul(out.v, t.u[k].v, g.v, prec);
  }
}

Ab ball_of(const Qn& q, slong prec) {
  Ab b;
  arb_set_fmpq(b.v, q.v, prec);
  return b;
}
std::vector<Ab> balls_of(const std::vector<Qn>& v, slong prec) {
  std::vector<Ab> out;
  for (const auto& x : v) out.push_back(ball_of(x, prec));
  return out;
}

int sign_of(const Qn& x) { return fmpq_sgn(x.v); }
// 2: undecided
int sign_of(const Ab& x) { return arb_is_positive(x.v) ? 1 : arb_is_negative(x.v) ? -1 : arb_is_zero(x.v) ? 0 : 2; }

class TfmChecker {
 public:
  TfmChecker(const TfmCert& c, CertificateReport& rep) : c_(c), rep_(rep), d_(c.d) {
    truth_.W = c.model_W;
    truth_.u = c.model_u;
    truth_.U = c.model_U;
    prec_ = c.mode == Mode::exact ? 128 : c.bits + 64;
    max_prec_ = std::max<slong>(16 * prec_, 8192);
    for (const auto& W : c.W) {
      rec_exact_.W.emplace_back();
      rec_ball_.W.emplace_back();
      for (const auto& x : W) {
        rec_exact_.W.back().push_back(x.q);
        rec_ball_.W.back().push_back(x.b);
      }
    }
    for (const auto& n : c.neurons) {
      rec_exact_.u.push_back(n.u.q);
      rec_ball_.u.push_back(n.u.b);
      rec_exact_.U.emplace_back();
      rec_ball_.U.emplace_back();
      for (const auto& Uh : n.U) {
        rec_exact_.U.back().emplace_back();
        rec_ball_.U.back().emplace_back();
        for (const auto& x : Uh) {
          rec_exact_.U.back().back().push_back(x.q);
          rec_ball_.U.back().back().push_back(x.b);
        }
      }
    }
  }

  void run() {
    rep_.kind = "transformer";
    rep_.arith = c_.arith;
    rep_.d = d_;
    rep_.H = static_cast<int>(c_.heads_learner);
    rep_.queries = static_cast<long>(c_.queries.size());
    rep_.heads = static_cast<long>(c_.W.size());
    rep_.neurons = static_cast<long>(c_.neurons.size());
    rep_.crossings = static_cast<long>(c_.crossings.size());
    check_claims();
    check_queries();
    if (c_.mode == Mode::exact) check_answers_exact();
    else check_answers_ball();
    match_heads();
    check_crossings();
    check_canonical();
  }

 private:
  const TfmCert& c_;
  CertificateReport& rep_;
  int d_;
  Tfm<Qn> truth_, rec_exact_;
  Tfm<Ab> rec_ball_;
  slong prec_, max_prec_;
  std::vector<std::vector<size_t>> group_;  // recovered head g -> the model's heads with its W

  void fail(const std::string& path, const std::string& msg) { rep_.failures.push_back({path, msg}); }
  void fact(bool ok, const std::string& path, const std::string& msg) {
    ++rep_.checks;
    if (!ok) fail(path, msg);
  }
  std::string num_str(const Num& x) const {
    if (c_.mode == Mode::exact) return clean(x.q.str());
    char* s = arb_get_str(x.b.v, 20, 0);
    std::string out(s);
    flint_free(s);
    return out;
  }
  bool verification(size_t i) const { return static_cast<long>(i) >= c_.verify_first; }

  void check_claims() {
    const long n = static_cast<long>(c_.queries.size());
    fact(c_.claim_queries == n, "claims.queries", "claims " + std::to_string(c_.claim_queries) + " queries, the certificate records " + std::to_string(n));
    long longest = 0;
    for (const auto& q : c_.queries) longest = std::max(longest, q.length);
    fact(c_.claim_max_length == longest, "claims.max_length",
         "claims " + std::to_string(c_.claim_max_length) + ", the longest recorded query has " + std::to_string(longest) + " tokens");
    fact(c_.claim_heads == static_cast<long>(c_.W.size()), "claims.heads_recovered",
         std::to_string(c_.claim_heads) + ", but " + std::to_string(c_.W.size()) + " heads are recorded");
    fact(c_.claim_neurons == static_cast<long>(c_.neurons.size()), "claims.neurons_recovered",
         std::to_string(c_.claim_neurons) + ", but " + std::to_string(c_.neurons.size()) + " neurons are recorded");
    fact(c_.claim_crossings == static_cast<long>(c_.crossings.size()), "claims.crossings",
         std::to_string(c_.claim_crossings) + ", but " + std::to_string(c_.crossings.size()) + " crossings are recorded");
    fact(c_.verify_count >= 1 && c_.verify_first + c_.verify_count == n, "verification",
         "queries " + std::to_string(c_.verify_first) + " to " + std::to_string(c_.verify_first + c_.verify_count - 1) +
             " are not a non-empty range ending with the last of the " + std::to_string(n) + " recorded queries");
    fact(static_cast<long>(c_.W.size()) == c_.heads_learner, "heads",
         std::to_string(c_.W.size()) + " heads recorded, inputs.heads_learner = " + std::to_string(c_.heads_learner));
    if (c_.neurons_told > 0)
      fact(static_cast<long>(c_.neurons.size()) == c_.neurons_told, "neurons",
           std::to_string(c_.neurons.size()) + " neurons recorded, inputs.neurons_told = " + std::to_string(c_.neurons_told));
    for (size_t j = 0; j < c_.neurons.size(); ++j) {  // the learner's neurons are canonical: u = +1 or -1
      const Num& u = c_.neurons[j].u;
      bool ok;
      if (c_.mode == Mode::exact) ok = fmpz_is_one(fmpq_denref(u.q.v)) && fmpz_is_pm1(fmpq_numref(u.q.v));
      else ok = arb_contains_si(u.b.v, 1) != arb_contains_si(u.b.v, -1);
      fact(ok, at(at("neurons", j), "u"), num_str(u) + ", but the learner's neurons are canonical (u = +1 or -1)");
    }
    if (c_.mode == Mode::exact) {
      // L = (lcm of the W denominators) * token_den^2 makes every score a multiple of 1/L.
      fmpz_t l;
      fmpz_init_set_ui(l, 1);
      for (const auto& W : c_.model_W)
        for (const auto& x : W) fmpz_lcm(l, l, fmpq_denref(x.v));
      fmpz_mul_si(l, l, c_.token_den);
      fmpz_mul_si(l, l, c_.token_den);
      char* ls = fmpz_get_str(nullptr, 10, l);
      fact(fmpz_cmp_si(l, c_.L) == 0, "L", std::to_string(c_.L) + ", but the model and token grid give L = " + ls);
      flint_free(ls);
      fmpz_clear(l);
    }
  }

  void check_queries() {
    for (size_t i = 0; i < c_.queries.size(); ++i) {
      const std::string p = at("queries", i);
      const QueryRec& r = c_.queries[i];
      long len = 0;
      for (const auto& run : r.q) len += run.count;
      fact(r.index == static_cast<long>(i), at(p, "index"), std::to_string(r.index) + ", expected " + std::to_string(i));
      fact(r.length == len, at(p, "length"), std::to_string(r.length) + ", but the runs have " + std::to_string(len) + " tokens");
      for (size_t k = 0; k < r.q.size(); ++k)
        for (size_t a = 0; a < r.q[k].token.size(); ++a) {
          Qn t;
          fmpq_mul_si(t.v, r.q[k].token[a].v, c_.token_den);
          fact(fmpz_is_one(fmpq_denref(t.v)), at(at(at(at(p, "runs"), k), "token"), a),
               clean(r.q[k].token[a].str()) + " is not on the token grid (1/" + std::to_string(c_.token_den) + ")Z");
        }
    }
  }

  // Misses of the recovered transformer, learner's queries and verification apart.
  struct Misses {
    long n[2] = {0, 0}, total[2] = {0, 0};
    std::string first[2];
    void add(size_t i, bool verify, bool ok) {
      const int s = verify ? 1 : 0;
      ++total[s];
      if (ok) return;
      if (++n[s] <= 4) first[s] += (first[s].empty() ? "" : ", ") + at("answers", i);
    }
  };
  void report(const Misses& m, const std::string& relation) {
    const char* path[2] = {"neurons", "verification"};
    const char* what[2] = {"the learner's queries", "the verification queries"};
    for (int s = 0; s < 2; ++s) {
      ++rep_.checks;
      if (m.n[s] > 0)
        fail(path[s], "the recovered transformer " + relation + " at " + std::to_string(m.n[s]) + " of " + std::to_string(m.total[s]) + " of " +
                          what[s] + ": " + m.first[s] + (m.n[s] > 4 ? ", ..." : ""));
    }
  }

  void check_answers_exact() {
    Misses m;
    for (size_t i = 0; i < c_.queries.size(); ++i) {
      const std::string p = at("answers", i);
      Pq t, r;
      std::string why;
      if (!eval_exact_tfm(t, truth_, d_, c_.queries[i].q, c_.L, why)) {
        fact(false, p, "cannot re-derive the model's value: " + why);
      } else {
        fact(fmpz_poly_q_equal(t.v, c_.exact_answers[i].v), p, "the recorded answer is not equal to the model's value at queries[" + std::to_string(i) + "]");
      }
      why.clear();
      m.add(i, verification(i), eval_exact_tfm(r, rec_exact_, d_, c_.queries[i].q, c_.L, why) && fmpz_poly_q_equal(r.v, c_.exact_answers[i].v));
    }
    report(m, "does not reproduce the recorded answer exactly");
  }

  // Ball mode: each answer ball and the recovered transformer's enclosure
  // must contain the model's value; precision doubles until both decide.
  void check_answers_ball() {
    Misses m;
    for (size_t i = 0; i < c_.queries.size(); ++i) {
      const Query& q = c_.queries[i].q;
      Tri ans = Tri::unknown, rec = Tri::unknown;
      for (slong prec = prec_; prec <= max_prec_ && (ans == Tri::unknown || rec == Tri::unknown); prec *= 2) {
        Tfm<Ab> tb;
        for (const auto& W : truth_.W) tb.W.push_back(balls_of(W, prec));
        for (const auto& u : truth_.u) tb.u.push_back(ball_of(u, prec));
        for (const auto& Uk : truth_.U) {
          tb.U.emplace_back();
          for (const auto& Uh : Uk) tb.U.back().push_back(balls_of(Uh, prec));
        }
        Ab t, r;
        eval_arb_tfm(t, tb, d_, q, prec);
        const Ab& a = c_.answers[i].b;
        if (ans == Tri::unknown) ans = arb_contains(a.v, t.v) ? Tri::yes : !arb_overlaps(a.v, t.v) ? Tri::no : Tri::unknown;
        if (rec == Tri::unknown) {
          eval_arb_tfm(r, rec_ball_, d_, q, prec);
          rec = arb_contains(r.v, t.v) ? Tri::yes : !arb_overlaps(r.v, t.v) ? Tri::no : Tri::unknown;
        }
      }
      fact(ans == Tri::yes, at("answers", i),
           std::string("the recorded answer does not contain the model's value at queries[") + std::to_string(i) + "]" +
               (ans == Tri::unknown ? " (undecided at the checker's precision cap)" : ""));
      m.add(i, verification(i), rec == Tri::yes);
    }
    report(m, "does not contain the model's value (its enclosure misses the value the answer holds)");
  }

  // Recovered head g stands for the model's heads with the same W (exact)
  // or with W inside its balls.
  void match_heads() {
    group_.assign(c_.W.size(), {});
    for (size_t g = 0; g < c_.W.size(); ++g) {
      for (size_t h = 0; h < c_.model_W.size(); ++h) {
        bool same = true;
        for (size_t e = 0; e < c_.model_W[h].size() && same; ++e)
          same = c_.mode == Mode::exact ? c_.W[g][e].q == c_.model_W[h][e] : arb_contains_fmpq(c_.W[g][e].b.v, c_.model_W[h][e].v);
        if (same) group_[g].push_back(h);
      }
      fact(!group_[g].empty(), at(at("heads", g), "W"), "matches no head of the model");
    }
  }

  // The model's region values at final token x for recovered head g:
  // sum over its heads and the model's neurons active at x of u_k U_{k,h}.
  std::vector<Qn> model_region(size_t g, const std::vector<Qn>& x) const {
    std::vector<Qn> e(static_cast<size_t>(d_));
    for (size_t k = 0; k < truth_.u.size(); ++k) {
      Qn s, t;
      for (const auto& Uh : truth_.U[k])
        for (int a = 0; a < d_; ++a) fmpq_addmul(s.v, Uh[a].v, x[a].v);
      if (fmpq_sgn(s.v) <= 0) continue;
      for (size_t h : group_[g])
        for (int a = 0; a < d_; ++a) {
          fmpq_mul(t.v, truth_.u[k].v, truth_.U[k][h][a].v);
          fmpq_add(e[a].v, e[a].v, t.v);
        }
    }
    return e;
  }

  // The side of recovered neuron j's hyperplane ubar_j^T x = 0 at x (2: undecided).
  int side(size_t j, const std::vector<Qn>& x) const {
    if (c_.mode == Mode::exact) {
      Qn s;
      for (const auto& Uh : rec_exact_.U[j])
        for (int a = 0; a < d_; ++a) fmpq_addmul(s.v, Uh[a].v, x[a].v);
      return sign_of(s);
    }
    Ab s, xa;
    for (const auto& Uh : rec_ball_.U[j])
      for (int a = 0; a < d_; ++a) {
        arb_set_fmpq(xa.v, x[a].v, 2 * prec_);
        arb_addmul(s.v, Uh[a].v, xa.v, 2 * prec_);
      }
    return sign_of(s);
  }

  void check_crossings() {
    const size_t nn = c_.neurons.size();
    std::vector<int> crossed(nn, 0);
    for (size_t c = 0; c < c_.crossings.size(); ++c) {
      const TfmCrossing& x = c_.crossings[c];
      const std::string cp = at("crossings", c);
      std::vector<size_t> flipped;
      bool decided = true;
      for (size_t j = 0; j < nn; ++j) {
        const int sb = side(j, x.before), sa = side(j, x.after);
        if (sb == 2 || sa == 2 || sb == 0 || sa == 0) {
          fact(false, cp, std::string(sb == 2 || sa == 2 ? "the side of" : "before or after lies on") + " neuron " + std::to_string(j) +
                              "'s hyperplane" + (sb == 2 || sa == 2 ? " at before or after is undecided" : ""));
          decided = false;
        } else if (sb != sa) {
          flipped.push_back(j);
        }
      }
      if (!decided) continue;
      fact(flipped.size() == 1, cp,
           std::to_string(flipped.size()) + " of the recovered hyperplanes separate before and after; a crossing is exactly one");
      if (flipped.size() == 1) {
        const size_t j = flipped[0];
        ++crossed[j];
        check_jump_recovered(c, j, side(j, x.after));
      }
      check_jump_model(c);
    }
    fact(nn == c_.crossings.size(), "crossings",
         std::to_string(c_.crossings.size()) + " crossings for " + std::to_string(nn) + " recovered neurons (the path crosses each hyperplane once)");
    for (size_t j = 0; j < nn; ++j)
      fact(crossed[j] == 1, at("neurons", j),
           "its hyperplane separates before and after of " + std::to_string(crossed[j]) + " recorded crossings, expected exactly one");
  }

  // ---- the recovered neurons against the model's canonical form, in the
  // recovered heads' order: a model neuron's vector is V[g] = sum of U_{k,h}
  // over the model's heads h with recovered head g's W; neurons with u = 0
  // or V = 0 drop out, positively parallel ones merge (a sum_k u_k c_k with
  // V_k = c_k V), and each remaining one is u = sign(a), U = |a| V.
  struct Canon {
    std::vector<Qn> V;  // flattened, G*d
    Qn a;
  };
  std::vector<Canon> canonical_neurons() {
    const size_t G = c_.W.size();
    std::vector<Canon> out;
    for (size_t h = 0; h < truth_.W.size(); ++h) {  // a head the neurons use must be recovered
      bool grouped = false, used = false;
      for (const auto& gr : group_) grouped = grouped || std::find(gr.begin(), gr.end(), h) != gr.end();
      for (size_t k = 0; k < truth_.u.size(); ++k)
        for (const auto& x : truth_.U[k][h]) used = used || (!fmpq_is_zero(x.v) && !fmpq_is_zero(truth_.u[k].v));
      if (used && !grouped) fact(false, at("model.heads", h), "the model's neurons use this head, and no recovered head has its W");
    }
    for (size_t k = 0; k < truth_.u.size(); ++k) {
      std::vector<Qn> V(G * d_);
      bool zero = true;
      for (size_t g = 0; g < G; ++g)
        for (size_t h : group_[g])
          for (int a = 0; a < d_; ++a) {
            fmpq_add(V[g * d_ + a].v, V[g * d_ + a].v, truth_.U[k][h][a].v);
            zero = zero && fmpq_is_zero(V[g * d_ + a].v);
          }
      if (zero || fmpq_is_zero(truth_.u[k].v)) continue;
      bool merged = false;
      for (auto& c : out) {
        size_t i0 = 0;
        while (fmpq_is_zero(c.V[i0].v)) ++i0;
        Qn ratio, t;
        fmpq_div(ratio.v, V[i0].v, c.V[i0].v);
        bool parallel = fmpq_sgn(ratio.v) > 0;
        for (size_t i = 0; i < V.size() && parallel; ++i) {
          fmpq_mul(t.v, ratio.v, c.V[i].v);
          parallel = t == V[i];
        }
        if (!parallel) continue;
        fmpq_addmul(c.a.v, truth_.u[k].v, ratio.v);
        merged = true;
        break;
      }
      if (!merged) out.push_back({std::move(V), truth_.u[k]});
    }
    std::vector<Canon> kept;
    for (auto& c : out)
      if (!fmpq_is_zero(c.a.v)) kept.push_back(std::move(c));
    return kept;
  }

  void check_canonical() {
    const std::vector<Canon> canon = canonical_neurons();
    const size_t nn = c_.neurons.size();
    fact(nn == canon.size(), "neurons", std::to_string(nn) + " neurons recovered, the model's canonical form has " + std::to_string(canon.size()));
    std::vector<int> used(canon.size(), 0);
    for (size_t j = 0; j < nn; ++j) {
      bool found = false;
      for (size_t m = 0; m < canon.size() && !found; ++m) {
        Qn absa, e;
        fmpq_abs(absa.v, canon[m].a.v);
        const Num& u = c_.neurons[j].u;
        bool same = c_.mode == Mode::exact ? fmpq_sgn(u.q.v) == fmpq_sgn(canon[m].a.v) && fmpz_is_pm1(fmpq_numref(u.q.v)) && fmpz_is_one(fmpq_denref(u.q.v))
                                           : arb_contains_si(u.b.v, fmpq_sgn(canon[m].a.v));
        for (size_t g = 0; g < c_.W.size() && same; ++g)
          for (int a = 0; a < d_ && same; ++a) {
            fmpq_mul(e.v, absa.v, canon[m].V[g * d_ + a].v);
            const Num& x = c_.neurons[j].U[g][a];
            same = c_.mode == Mode::exact ? x.q == e : arb_contains_fmpq(x.b.v, e.v);
          }
        if (same) {
          found = true;
          ++used[m];
        }
      }
      fact(found, at("neurons", j),
           std::string(c_.mode == Mode::exact ? "equals" : "contains") + " no neuron of the model's canonical form (u = +-1, U scaled by |u|, "
                                                                           "parallel neurons merged), in the recovered heads' order");
    }
    for (size_t m = 0; m < canon.size(); ++m)
      fact(used[m] <= 1, "neurons", "two recovered neurons match the same neuron of the model's canonical form");
  }

  // The jump is +-u_j U_{.,j}: + where the neuron turns on (after side +1).
  void check_jump_recovered(size_t c, size_t j, int s) {
    const TfmCrossing& x = c_.crossings[c];
    for (size_t h = 0; h < x.jump.size(); ++h)
      for (int a = 0; a < d_; ++a) {
        const Num& v = x.jump[h][a];
        const Num& U = c_.neurons[j].U[h][a];
        const Num& u = c_.neurons[j].u;
        bool ok;
        std::string expect;
        if (c_.mode == Mode::exact) {
          Qn e;
          fmpq_mul(e.v, u.q.v, U.q.v);
          fmpq_mul_si(e.v, e.v, s);
          ok = v.q == e;
          expect = clean(e.str());
        } else {
          Ab e;
          arb_mul(e.v, u.b.v, U.b.v, 2 * prec_);
          arb_mul_si(e.v, e.v, s, 2 * prec_);
          ok = arb_overlaps(v.b.v, e.v);
          char* str = arb_get_str(e.v, 20, 0);
          expect = str;
          flint_free(str);
        }
        fact(ok, at(at(at("crossings", c), "jump"), h) + "[" + std::to_string(a) + "]",
             num_str(v) + (c_.mode == Mode::exact ? " is not" : " is disjoint from") + " recovered neuron " + std::to_string(j) + "'s jump " +
                 (s > 0 ? "+" : "-") + "u U = " + expect);
      }
  }

  // The jump equals the model's region values after minus before.
  void check_jump_model(size_t c) {
    const TfmCrossing& x = c_.crossings[c];
    for (size_t g = 0; g < x.jump.size() && g < group_.size(); ++g) {
      if (group_[g].empty()) continue;  // reported at heads[g].W
      const std::vector<Qn> eb = model_region(g, x.before), ea = model_region(g, x.after);
      for (int a = 0; a < d_; ++a) {
        Qn t;
        fmpq_sub(t.v, ea[a].v, eb[a].v);
        const Num& v = x.jump[g][a];
        const bool ok = c_.mode == Mode::exact ? v.q == t : arb_contains_fmpq(v.b.v, t.v);
        fact(ok, at(at(at("crossings", c), "jump"), g) + "[" + std::to_string(a) + "]",
             num_str(v) + (c_.mode == Mode::exact ? " is not" : " does not contain") + " the model's jump of the region values from before to after, " +
                 clean(t.str()));
      }
    }
  }
};

}  // namespace

CertificateReport check_transformer_certificate(const nlohmann::json& doc) {
  const TfmCert c = read_transformer_certificate(doc);
  CertificateReport rep;
  TfmChecker(c, rep).run();
  return rep;
}

}  // namespace mhaq::check
