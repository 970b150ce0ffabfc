// recover --design placed: the pilot, the placed run and its last round
// certified in balls: in MPFR from the answers widened by their stated
// errors, where the distance to the certified heads bounds the run's error
// (the float judge, proofs/40); in balls as they are
// (run/recover_placed_ball.cpp); from the model's own oracle
// (--oracle-bits) or an external one (--oracle, with a stated bound on its
// error) (docs/math/designs.md#placed).
#include <cmath>
#include <optional>

#include "mhaq/analysis/ball_replay.hpp"
#include "mhaq/analysis/placed_certify.hpp"
#include "mhaq/analysis/placed_design.hpp"
#include "mhaq/oracle/oracle_stack.hpp"
#include "mhaq/run/arith_policy.hpp"
#include "mhaq/run/external_run.hpp"
#include "mhaq/run/recover.hpp"
#include "mhaq/run/report.hpp"

namespace mhaq {

namespace {

// The placed design's error model, |answer - f| <= 2^-answer_bits |answer| +
// answer_abs, from an external oracle's stated bound abs + rel |answer|: the
// relative part rounded up to a power of two (answer_bits = floor(-log2 rel),
// capped by the learner's precision), the absolute part as stated. The
// placed fits weigh each answer by its own error, so an absolute bound
// weighs small answers by what it allows them, not by a size they lack.
void placed_answer_error(const ErrorStatement& b, long bits, PlacedOptions& po) {
  if (!b.stated())
    throw Error(ErrorKind::usage,
                "--design placed weighs every answer by its stated error: the oracle states no \"accuracy\", so state a true bound with "
                "--oracle-error EPS (absolute), rel:EPS or abs:EPS,rel:EPS (docs/oracle-protocol.md)");
  po.answer_bits = bits;
  if (b.rel && b.rel->sign() > 0)
    po.answer_bits = std::min(bits, static_cast<long>(std::floor(-std::log2(b.rel->approx_double()))));
  po.answer_abs = b.abs ? b.abs->approx_double() : 0.0;
  if (po.answer_abs > 0) po.answer_abs = std::nextafter(po.answer_abs, INFINITY);  // rounded up
  if (po.answer_bits < 1)
    throw Error(ErrorKind::usage, "--design placed needs answers with a relative error below 1/2 (the stated bound is " + b.str() + ")");
}

// The oracle's longest sequence (its hello's max_length; 0: none stated):
// the runs of copies keep within it, k_max = max_length - 1, and the ladder
// of the poles' places, made for log k within +-log 2^16, shrinks with the
// window +-log k_max so that the places keep their share of it.
void placed_length_limit(long max_length, PlacedOptions& po) {
  if (max_length <= 0 || max_length > po.k_max) return;
  if (max_length < 3)
    throw Error(ErrorKind::usage, "--design placed asks runs of at least 2 copies and a final token: the oracle answers at most " + std::to_string(max_length) +
                                      " tokens (its hello's max_length)");
  const double f = std::log(static_cast<double>(max_length - 1)) / std::log(static_cast<double>(po.k_max));
  po.k_max = max_length - 1;
  po.ladder_top *= f;
  po.ladder_bottom *= f;
  po.ladder_shift *= f;
}

// MPFR: the design's own heads. The first-order estimate is a figure; the
// judge's bound is the certified distance from these heads to the heads
// certified from the last round's answers as balls of their stated errors.
void placed_heads(const Field<Mpfr>& F, const PlacedResult& res, int H, const Model* canon, RecoverResult& r, RunFacts& facts) {
  r.evidence.heads_recovered = res.heads.size();
  r.evidence.heads_found = res.heads.size();
  r.evidence.self_check = self_check_of(res.self_check);
  r.evidence.self_check_note = res.self_check_note;
  r.evidence.heads = head_records(F, res.heads);
  facts.self_check = res.self_check;
  facts.heads_recovered = static_cast<int>(res.heads.size());
  record_estimate(r, facts, res.estimate_log2);
  if (res.beta) r.evidence.beta = F.str(*res.beta);
  if (canon) ArithPolicy<Mpfr>::compare(r, facts, *canon, res.heads, res.beta ? &*res.beta : nullptr);
  // The design's self-check is a weighted residual and a labelling test on
  // local least-squares fits of rounded answers: when it fails, the fits may
  // have missed an H-head model that fits, so it never shows the answers
  // inconsistent (balls decide that: certify_placed).
  // rounds that stopped with poles still off their places: the labels, not
  // the answers' accuracy, are what failed
  if (res.self_check == Truth::no && res.rounds_end == "budget")
    throw Error(ErrorKind::unable, "the placed design's rounds did not hold together within its budget (" + res.self_check_note + "): " +
                                       std::to_string(res.tokens_off) + " final tokens still had poles off their places, and another round (" +
                                       std::to_string(res.next_round_queries) + " queries) would have passed the budget");
  if (res.self_check == Truth::no && res.rounds_end == "rounds")
    throw Error(ErrorKind::unable, "the placed design's rounds did not hold together in " + std::to_string(res.rounds) + " rounds (" + res.self_check_note + "): " +
                                       std::to_string(res.tokens_off) + " final tokens still had poles off their places");
  if (res.self_check == Truth::no)
    throw Error(ErrorKind::unable, "the placed design's fits do not hold together (" + res.self_check_note +
                                       "); from rounded answers that does not show that no " + std::to_string(facts.heads_recovered) +
                                       "-head model fits them: more accurate answers, or --arith ball, can decide");
  r.judge.judge_route = "placed";
  r.judge.judge_bits = working_precision();
  try {
    // a certified contradiction (inconsistent) stands: the balls hold the
    // true answers whenever the stated errors do
    const PlacedCertified cert = certify_placed(res, H);
    if (record_certified_bound(r, facts, certified_distance_log2(F, res.heads, cert.heads, res.beta ? &*res.beta : nullptr, cert.beta ? &*cert.beta : nullptr)))
      return;
    record_judge_note(r, facts, "the certified heads' balls do not bound every head's scale away from zero");
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::unable) throw;
    record_judge_note(r, facts, std::string("the last round could not be certified in balls: ") + e.what());
  }
}

template <class T>
long run_placed(RecoverResult& r, const Model& truth, const Model& canon, const RecoverOptions& o, const LearnOptions& lo) {
  using P = ArithPolicy<T>;
  const auto scope = P::precision(o.bits);
  PlacedOptions po;
  po.H = lo.H;
  po.seed = lo.seed;
  po.tokens = lo.tokens;
  po.answer_bits = o.oracle_bits > 0 ? std::min<long>(o.oracle_bits, o.bits) : o.bits;
  po.bias = lo.bias;
  // its own budget, or --max-queries below it: rounds only within it, and
  // its pilot, first round and links refused before asking when they exceed it.
  // Ten times the paper schedule's count (with biases, that of the schedule
  // with biases: docs/math/biases.md)
  const long budget = 10 * schedule_query_count(Schedule::paper, truth.d, lo.H, 0, lo.bias);
  const std::string formula = lo.bias ? "10 (4Hd^2+4Hd-2H+1)" : "10 (4Hd^2-2H+1)";
  const long cap = o.external ? o.external->max_queries : 0;
  const bool capped = cap > 0 && cap <= budget;
  r.design.query_budget = budget;
  po.budget = capped ? cap : budget;
  r.plan.max_length_bound = po.k_max + 1;
  // the learner asks this oracle and nothing else; the model, when known,
  // only judges the result afterwards
  std::optional<OracleStack<T>> own;
  ExternalSetup<T> ext;
  if (o.external) {
    if (refuse_over_max_queries(r, o, placed_least_queries(truth.d, po), "the placed design (its pilot, its first round and, from d = " + std::to_string(po.links_from_d) + ", its links)", "--design paper or scaled")) return 0;
    if (!start_external(r, o, truth.d, oracle_protocol::ModelKind::attention, {}, ext)) return 0;
    placed_answer_error(bound_in_force(o.external->error, ext.session->hello()), o.bits, po);
    placed_length_limit(ext.session->hello().max_length, po);
    po.max_entry = ext.session->hello().max_entry;
    r.plan.max_length_bound = po.k_max + 1;
  } else {
    own.emplace(OracleStack<T>::model(truth, lo.tokens.den, OracleNoise{o.oracle_bits, Rational(0), o.noise_seed, NoisePattern::uniform, {}}));
  }
  P::floats([&] {
    po.errors = o.external ? ext.oracle->errors() : own->errors();
    if (po.errors) r.judge.answer_assumption = po.errors->error_assumption();
  });
  Oracle<T>& oracle = o.external ? ext.oracle->top() : own->top();
  if (capped) cap_queries(o, oracle);
  else oracle.limit(budget, "the placed design asked for query " + std::to_string(budget + 1) + ", beyond its budget of " + std::to_string(budget));
  const bool truth_known = !o.external || o.external->truth_known;
  const Field<T>& F = oracle.field();
  RunFacts facts = truth_known ? known_truth_facts(o.arith, canon) : RunFacts{};
  facts.arith = o.arith;
  P::tolerance(r, facts, F, o.tolerance, true);
  Verdict v;
  std::string rounds_end;  // why the rounds stopped, and the fits that missed, for the remedy
  int missed = 0;
  try {
    const PlacedResult res = learn_placed(oracle, po);
    rounds_end = res.rounds_end;
    missed = res.pairs_missed;
    r.design.pilot_queries = res.pilot_queries;
    r.design.pilot_status = res.pilot_status;
    r.design.pilot_kind = res.pilot_kind;
    r.design.design_queries = res.design_queries;
    r.design.placed_rounds = res.rounds;
    r.design.placed_reestimates = res.reestimates;
    r.design.max_pole_shift = res.max_pole_shift;
    if (!res.misplaced.empty()) r.design.misplaced = res.misplaced;
    r.design.pair_log2_cond_max = res.worst_pair_log2_cond;
    r.design.offsets_log2_cond_max = res.log2_cond_offsets;
    placed_heads(F, res, lo.H, truth_known ? &canon : nullptr, r, facts);
    v = judge(facts);
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::usage || e.kind() == ErrorKind::input || e.kind() == ErrorKind::internal) throw;
    v = {status_of(e.kind()), e.what()};
    r.evidence.heads_recovered = 0;
  }
  if (capped && v.status == Status::over_budget && !oracle.limit_reached())
    v.message = "--max-queries " + std::to_string(cap) + " is the placed design's budget (its own is " + std::to_string(budget) + "): " + v.message;
  external_verdict(v, ext.session.get(), capped && oracle.limit_reached());
  // its own budget spent: the design could not finish within its means
  const bool spent = v.status == Status::over_budget && !capped;
  if (spent) v.status = Status::unable;
  report_verdict(r, v, o);
  r.evidence.queries = oracle.queries();
  r.evidence.max_length = oracle.max_length();
  finish_external(o, ext.session.get());
  external_remedy(r, o, v.status);
  // rounds that did not hold together: when every pair fits its answers, the
  // labels failed, and more answer bits or --bits would not have placed the
  // poles; a budget that allows more rounds, or other draws, may
  if (v.status == Status::unable && (rounds_end == "budget" || rounds_end == "rounds")) {
    const std::string more = rounds_end == "rounds" ? "its limit of rounds was reached" : capped ? "raise --max-queries (at most the design's budget of " + std::to_string(budget) + ")"
                                                                                                   : "its budget of " + std::to_string(budget) + " queries (" + formula + ") ran out";
    const std::string accuracy = o.external ? "a smaller true stated error (--oracle-error)" : o.oracle_bits > 0 ? "more --oracle-bits" : "more --bits";
    r.judge.remedy = missed == 0 ? "every pair fits its answers but the rounds did not place every head's poles (labels, not the answers' accuracy: more answer bits or --bits do not help): " + more +
                                       "; another --seed draws other final tokens and offsets"
                                 : std::to_string(missed) + " pair fits of the last round miss their answers, and the rounds did not place every head's poles: " + more +
                                       "; more accurate answers (" + accuracy + ") or another --seed may place them";
  }
  if (spent)
    r.judge.remedy = "the placed design needs more than its budget of " + std::to_string(budget) + " queries (" + formula + ") at this draw: another --seed, or --design scaled";
  return oracle.queries();
}

}  // namespace

long recover_placed(RecoverResult& r, const Model& truth, const Model& canon, const RecoverOptions& o, const LearnOptions& lo) {
  if (!arith_facts(o.arith).chosen_bits)
    throw Error(ErrorKind::usage,
                "--design placed runs in MPFR (--arith mpfr, judged on its first-order "
                "estimate) or in balls (--arith ball, certified)");
  if (!o.noise_eps.is_zero() || !o.target_error.is_zero() || o.certificate || lo.heads_is_bound || o.samples_per_pair != 0)
    throw Error(ErrorKind::usage,
                "--design placed takes a known H, and answers from a model (--oracle-bits) or from --oracle "
                "(no --noise, --target-error, --certificate, --max-heads or --samples-per-pair)");
  long queries = 0;
  with_arith(o.arith, [&]<class T>() {
    ArithPolicy<T>::chosen_bits([&](auto t) { queries = run_placed<typename decltype(t)::type>(r, truth, canon, o, lo); }, std::type_identity<T>{});
  });
  return queries;
}

}  // namespace mhaq
