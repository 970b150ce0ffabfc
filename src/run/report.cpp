#include "mhaq/run/report.hpp"

#include <arb.h>

#include <cmath>
#include <cstdio>

#include "mhaq/arith/numbers.hpp"
#include "mhaq/stages/5-solve/low_rank.hpp"
#include "mhaq/stages/grid_guard.hpp"

namespace mhaq {

std::string decimal_of_log2(double l2) {
  if (std::isnan(l2)) return "nan";
  if (std::isinf(l2)) return l2 < 0 ? "0" : "inf";
  const double e10 = l2 * std::log10(2.0);
  double ex = std::floor(e10), m = std::pow(10.0, e10 - ex);
  if (m >= 9.995) { m /= 10; ex += 1; }
  char b[48];
  std::snprintf(b, sizeof b, "%.2fe%+.0f", m, ex);
  return b;
}

double pow2_value(double l2) {
  if (std::isinf(l2) && l2 < 0) return 0.0;
  const double x = std::exp2(l2);
  return std::isfinite(l2) && std::isnormal(x) ? x : std::nan("");
}

bool record_certified_bound(RecoverResult& r, RunFacts& facts, double l2) {
  if (!std::isfinite(l2)) return false;
  facts.certified_log2 = l2;
  r.judge.certified_error = pow2_value(l2);
  r.judge.certified_error_decimal = decimal_of_log2(l2);
  return true;
}

void record_estimate(RecoverResult& r, RunFacts& facts, double l2) {
  facts.estimate_log2 = l2;
  r.judge.error_estimate = pow2_value(l2);
  r.judge.error_estimate_decimal = decimal_of_log2(l2);
}

void record_judge_note(RecoverResult& r, RunFacts& facts, const std::string& why) {
  facts.judge_note = why;
  r.judge.judge_note = why;
}

double log2_abs(const Rational& q) {
  PrecisionScope scope(128);
  Ball t(q);
  arb_abs(t.raw(), t.raw());
  arb_log_base_ui(t.raw(), t.raw(), 2, 128);
  return t.mid_double();
}

namespace {

bool says(const Verdict& v, const char* what) { return v.message.find(what) != std::string::npos; }

// unable: the accuracy that limits the run, and what raises it. Exact mode
// is an alternative only for the paper design and the model's own oracle
// with exact answers (it refuses the other designs, --target-error and
// --oracle, and turns rounded or noisy answers into inconsistent).
std::string unable_remedy(const Verdict& v, const RecoverOptions& o, bool baseline) {
  const ArithFacts facts = arith_facts(o.arith);
  const bool fixed = facts.fixed_bits > 0;  // double: no --bits to raise
  const bool exact_applies = !o.external && o.design == Design::paper && o.target_error.is_zero() && o.noise_eps.is_zero() && o.oracle_bits == 0;
  const std::string exact = exact_applies ? ", or --arith exact" : "";
  if (o.max_heads > 0 && facts.rigorous && says(v, "never certify"))
    return "balls never certify that a pair needs fewer heads than the bound: state H (--learner-heads) when it is known, or use --arith mpfr" + exact;
  if (o.external)
    return std::string("the answers are not accurate enough to decide (their stated error, amplified by the pair fits): a tighter true --oracle-error, ") +
           (o.design == Design::paper ? "--design scaled, " : "") +
           (fixed ? "or --arith mpfr with more bits" : "or more --bits") + " when the answers are far more accurate than the learner's precision";
  const std::string scaled = o.design == Design::paper && !baseline ? ", or --design scaled" : "";  // (baselines have no designs)
  if (!o.target_error.is_zero()) return "the balls did not certify --target-error " + o.target_error.str() + " below the cap: raise --max-bits, or a larger --target-error";
  if (!o.noise_eps.is_zero())
    return "the answers carry noise up to --noise " + o.noise_eps.str() + ", amplified by the pair fits: a smaller --noise" + scaled;
  const long answer_bits = facts.bits(o.bits);
  if (o.oracle_bits > 0 && o.oracle_bits <= answer_bits)
    return "the answers are rounded to --oracle-bits " + std::to_string(o.oracle_bits) + ", too few for this model: more --oracle-bits" + scaled;
  if (fixed) return "precision too low: --arith mpfr with --bits above " + std::to_string(facts.fixed_bits) + ", or --arith ball" + exact;
  return "precision too low: raise --bits" + exact;
}

std::string inconsistent_remedy(const RecoverResult& r, const RecoverOptions& o) {
  const bool transformer = r.run.kind == oracle_protocol::ModelKind::transformer;
  const std::string what = o.max_heads > 0 ? "is the bound --max-heads too small"
                           : transformer  ? std::string("is the stated H") + (o.neurons > 0 ? " or neuron count" : "") + " wrong"
                                          : "is H too small";
  const bool approximate = o.external || !o.noise_eps.is_zero() || o.oracle_bits > 0;
  if (approximate && arith_facts(o.arith).exact) return "the answers fit no model with the stated head count: " + what + ", or are the answers (rounded or noisy) not exact, which exact mode needs?";
  if (approximate) return "the answers fit no model with the stated head count: " + what + ", or is their error larger than stated?";
  return "the answers fit no model with the stated head count: " + what + "?";
}

std::string over_budget_remedy(const Verdict& v, const RecoverOptions& o, bool baseline) {
  if (says(v, "--max-queries")) return "the run needs more queries than --max-queries allows: raise --max-queries";
  if (says(v, "exceeds the cost bound of the stated H"))
    return std::string(o.max_heads > 0 ? "a smaller bound --max-heads" : "a smaller learner's H (--heads or --learner-heads; the canonical head count, when known)") +
           ", or --arith ball --bits 256 (balls do not grow with H as steeply)";
  if (says(v, grid_guard_marker()))
    return "the small token grid's witness queries exceed the budget: raise --max-degree, or --arith ball --bits 256";
  const std::string token_range = baseline ? "" : "a smaller --token-range, ";
  return "the exact run would exceed its budget: " + token_range + "ball mode (--arith ball --bits P), or raise --max-degree";
}

}  // namespace

std::string run_remedy(const RecoverResult& r, const Verdict& v, const RecoverOptions& o) {
  const bool baseline = r.run.method.has_value();
  switch (v.status) {
    case Status::ok: return "";
    case Status::degenerate:
      // the small-grid guard (stages/grid_guard.hpp): another seed draws from the same small grid
      if (says(v, grid_guard_marker())) return "on this small token grid the plan's answers fit more than one model: try another --seed or a larger --token-range";
      return status_remedy(v.status);
    case Status::unable: return unable_remedy(v, o, baseline);
    case Status::inconsistent:
      if (says(v, rank_bound_marker())) return "a head's rank exceeds the bound: raise --rank (at most d - 1), or leave it out for a schedule without a rank bound";
      return inconsistent_remedy(r, o);
    case Status::over_budget: return over_budget_remedy(v, o, baseline);
    default: return status_remedy(v.status);
  }
}

void report_verdict(RecoverResult& r, const Verdict& v, const RecoverOptions& o) {
  r.judge.status = v.status;
  if (v.status != Status::ok) {
    r.judge.message = v.message;
    r.judge.remedy = run_remedy(r, v, o);
  }
  // A run that decided nothing (unable, degenerate, ...) has no result to
  // print: its heads are not shown as if they were one. A mismatch keeps
  // them, the result that contradicts the truth.
  if (v.status != Status::ok && v.status != Status::mismatch) {
    r.evidence.heads.reset();
    r.evidence.model.reset();
  }
}

std::string judge_lines(const RecoverResult& r) {
  std::string o = "  tolerance        " + r.judge.tolerance_decimal.value_or("") + " on max_rel_error\n";
  if (r.judge.certified_error_decimal)
    o += "  certified error  " + *r.judge.certified_error_decimal + " (the heads against their replay in balls over the answers, " +
         r.judge.judge_route.value_or("") + ", " + std::to_string(r.judge.judge_bits.value_or(0)) + " bits)\n";
  else if (r.judge.judge_note)
    o += "  certified error  none: " + *r.judge.judge_note + "\n";
  if (r.judge.error_estimate_decimal) o += "  first order      " + *r.judge.error_estimate_decimal + " (the estimate from kappa; a figure, not a bound)\n";
  if (r.judge.answer_assumption) o += "  answers          " + *r.judge.answer_assumption + "\n";
  return o;
}

}  // namespace mhaq
