#include "mhaq/run/recover_limits.hpp"

#include <flint/fmpq.h>

#include <algorithm>
#include <cstdio>

#include "mhaq/base/limits.hpp"
#include "mhaq/arith/qtau_access.hpp"
#include "mhaq/base/text.hpp"
#include "mhaq/oracle/model_oracle.hpp"
#include "mhaq/run/report.hpp"
#include "mhaq/stages/2-schedule/schedule.hpp"
#include "mhaq/stages/grid_guard.hpp"

namespace mhaq {

void exact_tau_degree_bound(fmpz_t out, const Model& m, long token_range) {
  fmpz_t lcm, t;
  fmpz_init_set_ui(lcm, 1);
  fmpz_init(t);
  fmpq_t sum, csum;
  fmpq_init(sum);
  fmpq_init(csum);
  for (const auto& h : m.heads) {
    for (int i = 0; i < h.W.rows(); ++i)
      for (int j = 0; j < h.W.cols(); ++j) {
        const fmpq* w = h.W(i, j).raw();
        fmpz_lcm(lcm, lcm, fmpq_denref(w));
        if (fmpq_sgn(w) >= 0) fmpq_add(sum, sum, w);
        else fmpq_sub(sum, sum, w);
      }
    for (const auto& x : h.c) {
      fmpz_lcm(lcm, lcm, fmpq_denref(x.raw()));
      if (fmpq_sgn(x.raw()) >= 0) fmpq_add(csum, csum, x.raw());
      else fmpq_sub(csum, csum, x.raw());
    }
  }
  // m * sum|W| and m * sum|c| are integers: every entry's denominator divides m
  fmpz_mul(t, fmpq_numref(sum), lcm);
  fmpz_divexact(t, t, fmpq_denref(sum));
  fmpz_mul_ui(t, t, 4);
  fmpz_mul_si(t, t, token_range);
  fmpz_mul_si(t, t, token_range);
  fmpz_set(out, t);
  if (!fmpq_is_zero(csum)) {
    fmpz_mul(t, fmpq_numref(csum), lcm);
    fmpz_divexact(t, t, fmpq_denref(csum));
    fmpz_mul_si(t, t, 2 * token_range);
    fmpz_add(out, out, t);
  }
  fmpq_clear(sum);
  fmpq_clear(csum);
  fmpz_clear(t);
  fmpz_clear(lcm);
}

void check_exact_tau_degree(const Model& m, const TokenSpec& tokens, ErrorKind kind, const std::string& what, const std::string& remedy) {
  fmpz_t b, L;
  fmpz_init(b);
  fmpz_init(L);
  fmpz_one(L);
  for (const auto& h : m.heads) {
    for (int i = 0; i < h.W.rows(); ++i)
      for (int j = 0; j < h.W.cols(); ++j) fmpz_lcm(L, L, fmpq_denref(h.W(i, j).raw()));
    for (const auto& x : h.c) fmpz_lcm(L, L, fmpq_denref(x.raw()));
  }
  fmpz_mul_si(L, L, tokens.den);
  fmpz_mul_si(L, L, tokens.den);
  exact_tau_degree_bound(b, m, tokens.range);
  const bool L_ok = fmpz_cmp_si(L, limits::max_L) <= 0, b_ok = fmpz_cmp_si(b, limits::max_tau_exponent) <= 0;
  auto str = [](const fmpz_t z) {
    char* s = fmpz_get_str(nullptr, 10, z);
    std::string o(s);
    flint_free(s);
    return o.size() > 40 ? o.substr(0, 3) + "...(" + std::to_string(o.size()) + " digits)" : o;
  };
  const std::string Ls = str(L), bs = str(b);
  fmpz_clear(b);
  fmpz_clear(L);
  if (!L_ok)
    throw Error(kind, what + ": exact mode needs L = (lcm of the W denominators) * token_den^2 = " + Ls + " <= " + std::to_string(limits::max_L) +
                          "; use smaller denominators");
  if (!b_ok)
    throw Error(kind, what + ": exact mode: the answers' powers of tau could reach degree " + bs + " (4 m R^2 sum|W| with R = token range " +
                          std::to_string(tokens.range) + "), more than the limit of " + std::to_string(limits::max_tau_exponent) + "; " + remedy);
}

ExactCost exact_cost(const Model& truth, const Plan& plan, long token_den) {
  ExactCost c;
  c.L = QTauAccess::L(oracle_field<QTau>(truth.w_denominator(), token_den, OracleNoise{}));
  // A pair's queries [a x k, b] share their scores, so one query per pair
  // gives the pair's degree bound; [b_1] alone has degree 0.
  for (size_t p = 0; p < plan.pairs.size(); ++p) {
    const Query q{Run{plan.pairs[p].final_token + plan.pairs[p].offset, 1}, Run{plan.pairs[p].final_token, 1}};
    const double deg = answer_score_spread(truth, q).approx_double() * static_cast<double>(c.L);
    c.total_degree += deg * (plan.pairs[p].samples - 1);
    if (deg > c.max_degree) {
      c.max_degree = deg;
      c.worst_pair = static_cast<int>(p);
    }
  }
  return c;
}

namespace {

void refuse_before_work(RecoverResult& r, const std::string& why, const RecoverOptions& o) {
  report_verdict(r, {Status::over_budget, why}, o);
  r.evidence.queries = 0;
  r.evidence.max_length = 0;
  r.evidence.heads_recovered = 0;
}

// The small-grid witnesses (stages/grid_guard.hpp) are drawn before any
// answer, so they are costed like the plan: a run that surely asks them is
// refused with its plan; one that may ask them (after a repair) is told the
// refusal and ends over budget if it gets there.
bool grid_witnesses_within_budget(RecoverResult& r, const Model& truth, const RecoverOptions& o, long budget, long L, LearnOptions& lo) {
  const GridGuard g = grid_guard(truth.d, lo);
  if (!grid_guard_possible(g, lo)) return true;
  double worst = 0;
  for (const Query& q : grid_witness_queries(truth.d, lo, g)) worst = std::max(worst, answer_score_spread(truth, q).approx_double() * static_cast<double>(L));
  if (worst <= static_cast<double>(budget)) return true;
  char b[512];
  std::snprintf(b, sizeof b,
                "the token grid {-%ld..%ld}/%ld is too small for the run's own Schwartz-Zippel bound, and its witness queries from {-%ld..%ld} "
                "would reach tau-degree %.3g, beyond the budget --max-degree %ld. Use --arith ball --bits 256 (balls do not grow with the degree, "
                "and the float grid is wide), or raise --max-degree",
                lo.tokens.range, lo.tokens.range, lo.tokens.den, g.range, g.range, worst, budget);
  if (!grid_guard_certain(g, lo)) {
    lo.grid_witness_refused = b;
    return true;
  }
  refuse_before_work(r, std::string(grid_guard_marker()) + ": " + b + "; refused before any query", o);
  return false;
}

}  // namespace

bool exact_heads_within_budget(RecoverResult& r, long H, bool bound, const RecoverOptions& o) {
  if (H <= limits::max_exact_heads) return true;
  refuse_before_work(r, std::string("exact mode: the learner's ") + (bound ? "bound H0 = " : "H = ") + std::to_string(H) +
                            " exceeds the cost bound of the stated H, " + std::to_string(limits::max_exact_heads) +
                            " heads (a pair system has 2H+1 unknowns over Q(tau), and its work grows steeply with H): refused before any query", o);
  return false;
}

bool exact_within_budget(RecoverResult& r, const Model& truth, const RecoverOptions& o, LearnOptions& lo) {
  if (o.max_degree < 0) throw Error(ErrorKind::usage, "--max-degree must be positive");
  if (!exact_heads_within_budget(r, lo.H, lo.heads_is_bound, o)) return false;
  const long budget = o.max_degree > 0 ? o.max_degree : kDefaultMaxDegree;
  const Plan plan = learner_plan(truth.d, lo);
  const ExactCost c = exact_cost(truth, plan, lo.tokens.den);
  r.plan.exact_cost = ExactCostRecord{c.L, c.max_degree, c.total_degree, budget};
  if (c.max_degree <= static_cast<double>(budget)) return grid_witnesses_within_budget(r, truth, o, budget, c.L, lo);
  char b[512];
  std::snprintf(b, sizeof b,
                "exact answers would reach tau-degree %.3g (L = %ld, %s; tau = e^{1/L}), beyond the budget --max-degree %ld: refused before any query. "
                "Degrees grow with L = (W denominator) x (token denominator)^2 and with the token range squared: use a smaller --token-range, "
                "or --arith ball --bits 256 (balls do not grow with the degree), or raise --max-degree (time and memory grow at least linearly with it)",
                c.max_degree, c.L, pair_name(plan.pairs[c.worst_pair]).c_str(), budget);
  refuse_before_work(r, b, o);
  return false;
}

bool exact_queries_within_budget(RecoverResult& r, const Model& truth, const std::vector<Query>& qs, long token_den, const RecoverOptions& o) {
  if (o.max_degree < 0) throw Error(ErrorKind::usage, "--max-degree must be positive");
  const long budget = o.max_degree > 0 ? o.max_degree : kDefaultMaxDegree;
  const long L = QTauAccess::L(oracle_field<QTau>(truth.w_denominator(), token_den, OracleNoise{}));
  double worst = 0;
  for (const Query& q : qs) worst = std::max(worst, answer_score_spread(truth, q).approx_double() * static_cast<double>(L));
  if (worst <= static_cast<double>(budget)) return true;
  char b[320];
  std::snprintf(b, sizeof b,
                "exact answers would reach tau-degree %.3g (L = %ld; tau = e^{1/L}), beyond the budget --max-degree %ld: refused before any query. "
                "Use --arith ball --bits 256 (balls do not grow with the degree), or raise --max-degree",
                worst, L, budget);
  refuse_before_work(r, b, o);
  return false;
}

void check_recover_d(long d, const RecoverOptions& o) {
  if (arith_facts(o.arith).exact && d > limits::max_exact_d)
    throw Error(ErrorKind::budget, "exact mode: d = " + std::to_string(d) + " exceeds its cost limit max_exact_d = " + std::to_string(limits::max_exact_d) +
                                       " (every answer is an element of Q(tau) whose degree grows with the scores; d = 64 already takes hours): refused before "
                                       "any work; use --arith ball (up to d = " + std::to_string(limits::max_recover_d) + "), or a smaller --d");
  if (o.certificate && d > limits::max_d)
    throw Error(ErrorKind::usage, "--certificate: a certificate holds d <= " + std::to_string(limits::max_d) + " (the checker's limit), got d = " + std::to_string(d) +
                                      "; leave --certificate out");
}

void check_recover_limits(const Model& truth, const RecoverOptions& o, const std::string& model_file, bool baseline) {
  using namespace limits;
  if (arith_facts(o.arith).chosen_bits) check_option("--bits", o.bits, min_bits, max_bits);
  check_option("--max-bits", o.max_bits, 64, max_bits);
  check_option("--oracle-bits", o.oracle_bits, 0, max_bits);
  check_option("--learner-heads", o.heads, 0, max_heads);
  check_option("--max-heads", o.max_heads, 0, max_heads);
  check_option("--threads", o.threads, 0, max_threads);
  if (o.tokens.range != 0 || o.tokens.den != 0) {
    check_option("--token-range", o.tokens.range, 1, max_token_range);
    check_option("--token-den", o.tokens.den, 1, max_token_den);
  }
  check_option("--samples-per-pair", o.samples_per_pair, 0, max_samples_per_pair);
  check_option("--max-degree", o.max_degree, 0, max_tau_exponent);  // the cost budget (recover.hpp) within the hard limit
  const bool from_file = !model_file.empty();
  const ErrorKind model_kind = from_file ? ErrorKind::input : ErrorKind::usage;
  const std::string what = from_file ? clean_text(model_file) : std::string("the drawn model");
  if (truth.d < 1 || truth.d > max_recover_d)
    throw Error(model_kind, what + ": d must be in [1, " + std::to_string(max_recover_d) + "], got " + std::to_string(truth.d));
  check_recover_d(truth.d, o);
  if (truth.num_heads() > max_file_heads)
    throw Error(model_kind, what + ": " + std::to_string(truth.num_heads()) + " heads, more than the limit of " + std::to_string(max_file_heads));
  const bool told = o.max_heads > 0 || o.heads > 0;
  const long H = o.max_heads > 0 ? o.max_heads : o.heads > 0 ? o.heads : truth.canonical().num_heads();
  if (H > max_heads)
    throw Error(model_kind, what + ": the canonical form has " + std::to_string(H) + " heads, more than the learner's limit of " + std::to_string(max_heads) +
                                " (--learner-heads)");
  check_plan_size(truth.d, H, o.schedule == Schedule::paper, o.samples_per_pair, told || !from_file ? ErrorKind::usage : ErrorKind::input,
                  told ? "--learner-heads/--max-heads" : what, max_recover_queries);
  if (o.certificate && plan_query_count(truth.d, H, o.schedule == Schedule::paper, o.samples_per_pair) > max_plan_queries)
    throw Error(ErrorKind::usage, "--certificate: a certificate holds a plan of at most " + std::to_string(max_plan_queries) + " queries (the checker's limit), and this one has " +
                                      std::to_string(plan_query_count(truth.d, H, o.schedule == Schedule::paper, o.samples_per_pair)) + "; leave --certificate out");
  if (o.schedule == Schedule::compact && H > compact_max_heads)
    throw Error(told || !from_file ? ErrorKind::usage : ErrorKind::input,
                (told ? std::string("--learner-heads/--max-heads") : what) + ": the compact schedule takes H (or H0) <= " +
                    std::to_string(compact_max_heads) + " (its links try all H! assignments of heads); use --schedule lean");
  if (o.schedule == Schedule::compact && o.samples_per_pair != 0) throw Error(ErrorKind::usage, "--samples-per-pair: the compact schedule does not oversample");
  if ((o.rank != 0) != (o.schedule == Schedule::rank)) throw Error(ErrorKind::usage, "the rank schedule and a rank bound --rank R go together");
  if (o.rank != 0) {
    if (truth.d < 2) throw Error(model_kind, what + ": d = 1: a rank bound below d needs d >= 2 (leave --rank out)");
    check_option("--rank", o.rank, 1, truth.d - 1);
  }
  if (arith_facts(o.arith).exact) {
    const bool own_tokens = o.tokens.range > 0;
    const TokenSpec tok = own_tokens ? o.tokens : default_tokens(Arith::exact);
    // a run that surely asks the small grid's witnesses (stages/grid_guard.hpp) draws them from a wider grid
    LearnOptions lo;
    lo.H = static_cast<int>(H);
    lo.heads_is_bound = o.max_heads > 0;
    lo.rank = o.rank;
    lo.tokens = tok;
    const GridGuard g = grid_guard(truth.d, lo);
    const bool wide = grid_guard_certain(g, lo) && g.range > tok.range;
    check_exact_tau_degree(truth, wide ? TokenSpec{g.range, tok.den} : tok, from_file && !own_tokens ? ErrorKind::input : ErrorKind::usage,
                           wide ? what + " (with the small token grid's witness queries, from {-" + std::to_string(g.range) + ".." + std::to_string(g.range) + "})" : what,
                           baseline ? "use smaller W entries, or --arith ball" : "use smaller W entries or --token-range, or --arith ball");
  }
}

void check_transformer_limits(const TransformerModel& truth, const RecoverOptions& o, const std::string& model_file) {
  using namespace limits;
  if (arith_facts(o.arith).chosen_bits) check_option("--bits", o.bits, min_bits, max_bits);
  check_option("--learner-heads", o.heads, 0, max_heads);
  check_option("--learner-neurons", o.neurons, 0, max_neurons);
  if (o.schedule == Schedule::rank || o.rank != 0) throw Error(ErrorKind::usage, "transformers: the rank schedule (--rank) is for attention models only");
  check_option("--threads", o.threads, 0, max_threads);
  const bool from_file = !model_file.empty();
  const ErrorKind model_kind = from_file ? ErrorKind::input : ErrorKind::usage;
  const std::string what = from_file ? clean_text(model_file) : std::string("the drawn transformer");
  if (truth.d < 1 || truth.d > max_d) throw Error(model_kind, what + ": d must be in [1, " + std::to_string(max_d) + "], got " + std::to_string(truth.d));
  if (truth.heads() > max_heads)
    throw Error(model_kind, what + ": " + std::to_string(truth.heads()) + " heads, more than the limit of " + std::to_string(max_heads));
  if (truth.neurons() > max_neurons)
    throw Error(model_kind, what + ": " + std::to_string(truth.neurons()) + " neurons, more than the limit of " + std::to_string(max_neurons));
  const long H = o.heads > 0 ? o.heads : truth.heads();  // the canonical count is at most this
  check_plan_size(truth.d, H, o.schedule == Schedule::paper, 0, o.heads > 0 || !from_file ? ErrorKind::usage : ErrorKind::input,
                  o.heads > 0 ? "--learner-heads" : what);
  if (arith_facts(o.arith).exact) {
    Model att;  // the attention part's W (check_exact_tau_degree reads only W)
    att.d = truth.d;
    for (const auto& W : truth.W) att.heads.push_back({W, QVec(static_cast<size_t>(truth.d), Rational(0))});
    check_exact_tau_degree(att, TokenSpec{16, 16}, model_kind, what, "use smaller W entries, or --arith ball");  // its tokens are fixed
  }
}

}  // namespace mhaq
