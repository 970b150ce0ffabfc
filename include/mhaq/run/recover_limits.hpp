// The limits (base/limits.hpp) that recover() depends on, checked before it
// allocates anything: the CLI calls check_recover_limits after parsing (naming
// its file), and recover_run() and recover_transformer_run() call them first
// thing for library callers (they throw, never return a status).
#pragma once
#include <flint/fmpz.h>

#include <string>

#include "mhaq/base/error.hpp"
#include "mhaq/model/model.hpp"
#include "mhaq/model/transformer.hpp"
#include "mhaq/run/recover.hpp"

namespace mhaq {

// Checks options and model against the limits: --bits, --max-bits,
// --oracle-bits, --learner-heads / --max-heads / --heads, --threads,
// --token-range, --token-den, --samples-per-pair, the plan's query count, the
// learner's H (the canonical head count when not given), and in exact mode
// L = m den^2 and the a-priori tau-degree bound (exact_tau_degree_bound).
// Option values out of range are Error(usage) naming the option. Sizes that
// come from the model are Error(input) prefixed with `model_file` when it is
// non-empty (a file), Error(usage) otherwise (a drawn model). The baselines
// (`baseline` true) have no --token-range, so their messages do not name it.
void check_recover_limits(const Model& truth, const RecoverOptions& o, const std::string& model_file = "", bool baseline = false);
// The limits that depend on d alone, checked before a model of that d is
// drawn: exact mode stops at max_exact_d (Error(budget), exit 11), and a
// certificate holds d <= max_d (Error(usage)). check_recover_limits repeats them.
void check_recover_d(long d, const RecoverOptions& o);

// The same for a transformer truth (recover_transformer): d, heads and neurons
// of the truth, --learner-heads, --learner-neurons, the attention part's plan,
// and in exact mode the attention part's L and tau-degree bound (its tokens:
// entries in [-1, 1] on the 1/16 grid).
void check_transformer_limits(const TransformerModel& truth, const RecoverOptions& o, const std::string& model_file = "");

// A priori bound on the tau-degree of one exact answer over the plan's
// queries [a x k, b]: the exponent of head h is L (a-b)^T W_h b with
// |a-b|, |b| <= 2R/den entrywise and L = m den^2, so the degree of the
// answer's denominator is at most 4 m R^2 sum_h sum_ij |W_h,ij| (m = lcm of
// the W denominators). With biases the exponent gains L (a-b)^T c_h, at most
// 2 m R sum_h sum_i |c_h,i| (m then the lcm of the W and c denominators),
// and the across links' final tokens 2 b_1 - b_j (3R) stay within the 4 R^2.
// Sets out to that bound.
void exact_tau_degree_bound(fmpz_t out, const Model& m, long token_range);

// Error(kind) "<what>: ..." unless L = m den^2 <= limits::max_L and the bound
// above is at most limits::max_tau_exponent; `remedy` (what the caller's
// options can change) ends the message on the degree bound.
void check_exact_tau_degree(const Model& m, const TokenSpec& tokens, ErrorKind kind, const std::string& what, const std::string& remedy);

// The exact cost guard: false (and r's verdict over_budget) when the plan's
// answers, or the small token grid's witnesses of a run that surely asks
// them, would exceed --max-degree, decided before any query. A run that may
// ask the witnesses only after a repair gets lo.grid_witness_refused instead.
// The learner's H (or H0, `bound`) beyond limits::max_exact_heads is refused
// in exact mode first: false, r's verdict over_budget.
bool exact_within_budget(RecoverResult& r, const Model& truth, const RecoverOptions& o, LearnOptions& lo);
bool exact_heads_within_budget(RecoverResult& r, long H, bool bound, const RecoverOptions& o);

// The same guard for any fixed list of queries (the baselines' plans): false
// (and r's verdict over_budget, no query sent) when an answer would exceed
// the budget o.max_degree (0: kDefaultMaxDegree).
bool exact_queries_within_budget(RecoverResult& r, const Model& truth, const std::vector<Query>& qs, long token_den, const RecoverOptions& o);

}  // namespace mhaq
