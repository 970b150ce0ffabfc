// recover --design placed --arith ball: the design runs on the answers'
// midpoints, then its last round is certified from the answers as balls
// (analysis/placed_certify.hpp, proofs/37). The status comes from the
// certification alone; the truth is compared afterwards.
#include <cstdio>

#include "mhaq/analysis/placed_certify.hpp"
#include "mhaq/model/model_oracle.hpp"
#include "mhaq/run/arith_policy.hpp"
#include "mhaq/run/recover.hpp"
#include "mhaq/run/report.hpp"

namespace mhaq {

long recover_placed_ball(RecoverResult& r, const Model& truth, const Model& canon, const RecoverOptions& o, const LearnOptions& lo) {
  if (o.external) throw Error(ErrorKind::usage, "--design placed with --arith ball takes a model (its own oracle), not --oracle");
  using P = ArithPolicy<Ball>;
  const auto scope = P::precision(o.bits);
  ModelOracle<Ball> oracle(truth, lo.tokens.den, OracleNoise{o.oracle_bits, Rational(0), o.noise_seed, NoisePattern::uniform, {}});
  const Field<Ball>& F = oracle.field();
  RunFacts facts = known_truth_facts(o.arith, canon);
  PlacedOptions po;
  po.H = lo.H;
  po.seed = lo.seed;
  po.tokens = lo.tokens;
  po.answer_bits = o.oracle_bits > 0 ? std::min<long>(o.oracle_bits, o.bits) : o.bits;
  const long budget = 10 * paper_query_bound(truth.d, lo.H);
  r.query_budget = budget;
  po.budget = budget;
  r.max_length_bound = po.k_max + 1;
  Verdict v;
  try {
    const PlacedResult res = learn_placed(oracle, po);
    r.pilot_queries = res.pilot_queries;
    r.pilot_status = res.pilot_status;
    r.pilot_kind = res.pilot_kind;
    r.design_queries = res.design_queries;
    r.placed_rounds = res.rounds;
    r.placed_reestimates = res.reestimates;
    r.max_pole_shift = res.max_pole_shift;
    if (!res.misplaced.empty()) r.misplaced = res.misplaced;
    r.pair_log2_cond_max = res.worst_pair_log2_cond;
    r.offsets_log2_cond_max = res.log2_cond_offsets;
    const PlacedCertified cert = certify_placed(res, lo.H);
    r.heads_recovered = r.heads_found = static_cast<int>(cert.heads.size());
    facts.self_check = Truth::yes;  // every step above was decided on the balls
    facts.heads_recovered = static_cast<int>(cert.heads.size());
    r.self_check = truth_name(Truth::yes);
    char note[200];
    std::snprintf(note, sizeof note,
                  "every pair certified by Krawczyk's test on 2H+1 of its samples (widest pole or residue 2^%.1f relative); "
                  "labels certified by the residues' linear relation",
                  cert.worst_pair_log2_rel);
    r.self_check_note = note;
    r.heads = head_records(F, cert.heads);
    P::compare(r, facts, canon, cert.heads);
    v = judge(facts);
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::usage || e.kind() == ErrorKind::input || e.kind() == ErrorKind::internal) throw;
    v = {status_of(e.kind()), e.what()};
    r.heads_recovered = 0;
  }
  if (oracle.queries() > budget)
    v = {Status::unable, "the placed design asked " + std::to_string(oracle.queries()) + " queries, beyond its budget " + std::to_string(budget)};
  report_verdict(r, v);
  r.queries = oracle.queries();
  r.max_length = oracle.max_length();
  return oracle.queries();
}

}  // namespace mhaq
