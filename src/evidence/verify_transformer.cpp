// mhaq verify, claim 5: one-layer transformers drawn per trial, recovered and
// judged against their canonical truth (docs/studies/verify.md).
#include <algorithm>
#include <sstream>

#include "mhaq/base/error.hpp"
#include "mhaq/base/random.hpp"
#include "mhaq/model/transformer.hpp"
#include "mhaq/run/transformer_blind.hpp"
#include "mhaq/stages/2-schedule/schedule.hpp"
#include "verify_internal.hpp"

namespace mhaq {

using namespace verify_internal;

TransformerTrialSpec draw_transformer_trial(const VerifyOptions& o, int index) {
  static const int sizes[4][3] = {{2, 1, 2}, {2, 2, 3}, {3, 2, 3}, {3, 2, 4}};
  TransformerTrialSpec t;
  t.d = sizes[index % 4][0];
  t.H = sizes[index % 4][1];
  t.m = sizes[index % 4][2];
  Rng rng(splitmix64(trial_seed(o.seed, index) ^ 0x7472616e73000000ULL));  // "trans": separate from the attention trial's draw
  const long kind = rng.uniform_int(0, 3);  // plain, shared W, zero neuron, parallel neurons
  t.share_w = kind == 1 && t.H >= 2;
  t.zero_neuron = kind == 2 || (kind == 1 && t.H < 2);
  t.parallel_neurons = kind == 3;
  return t;
}

namespace {
std::string transformer_replay(const VerifyOptions& o, const TransformerTrialSpec& t, std::uint64_t seed) {
  std::ostringstream s;
  s << "mhaq recover --d " << t.d << " --heads " << t.H << " --ffn " << t.m << " --seed " << seed;
  if (t.share_w) s << " --share-w";
  if (t.zero_neuron) s << " --zero-neuron";
  if (t.parallel_neurons) s << " --parallel-neurons";
  s << " --arith " << arith_name(o.arith);
  if (arith_facts(o.arith).chosen_bits) s << " --bits " << o.bits;
  s << " --json";
  return s.str();
}

// A claim-5 run, judged like recovery_outcome and re-checked against the truth.
Outcome transformer_outcome(const VerifyOptions& o, const RecoverResult& r) {
  if (auto s = status_outcome(o, r)) return *s;
  if (r.evidence.neurons_recovered.value_or(-1) != r.truth.neurons_true.value_or(-2) || r.evidence.heads_recovered.value_or(0) != r.truth.heads_true.value_or(0))
    return {TrialVerdict::fail, 0, "status ok but the recovered head or neuron count differs from the canonical truth"};
  switch (truth_test_of(o.arith)) {
    case TruthTest::equality:
      if (!r.truth.exact_match.value_or(false)) return {TrialVerdict::fail, 0, "status ok but exact_match false"};
      if (!(r.truth.functional_check && r.truth.functional_check->all_zero)) return {TrialVerdict::fail, 0, "status ok but T - T' is not zero on every fresh sequence"};
      return {TrialVerdict::pass, 0, ""};
    case TruthTest::containment:
      if (!r.truth.contains_truth.value_or(false)) return {TrialVerdict::fail, r.truth.max_radius.value_or(0), "status ok but some output ball misses the truth"};
      return {TrialVerdict::pass, r.truth.max_radius.value_or(0), ""};
    case TruthTest::rel_error: {
      const double e = r.truth.max_rel_error.value_or(INFINITY);
      if (!(e <= tolerance_of(o))) return {TrialVerdict::fail, e, "status ok but max_rel_error " + fmt(e) + " above tolerance " + fmt(tolerance_of(o))};
      return {TrialVerdict::pass, e, ""};
    }
  }
  throw_internal("transformer_outcome: unknown truth test");
}
}  // namespace

namespace verify_internal {

TransformerTrial transformer_trial(const VerifyOptions& o, int index, std::uint64_t seed) {
  const TransformerTrialSpec ts = draw_transformer_trial(o, index);
  TransformerGenerateOptions g;
  g.d = ts.d;
  g.heads = ts.H;
  g.neurons = ts.m;
  g.seed = seed;
  g.share_w = ts.share_w;
  g.zero_neuron = ts.zero_neuron;
  g.parallel_neurons = ts.parallel_neurons;
  RecoverOptions ro;
  ro.arith = o.arith;
  ro.bits = o.bits;
  ro.seed = seed;
  const TransformerModel tm = generate_transformer(g);
  RecoverResult r = recover_transformer_run(tm, ro);
  r.evidence.model.reset();
  return TransformerTrial{ts, std::move(r), violated_condition(tm.canonical())};
}

Claim5Tally::Claim5Tally(const VerifyOptions& o)
    : c{"5", std::string("one-layer transformer (attention, bias-free ReLU FFN) recovered up to functional equivalence from value queries (") +
                 (arith_facts(o.arith).exact ? "canonical equality in Q and T - T' = 0 on 20 fresh sequences" : recovery_criterion(o)) + ")"} {}

void Claim5Tally::add(const VerifyOptions& o, const TrialSpec& t, const TransformerTrial& tr) {
  const RecoverResult& r5 = tr.result;
  Outcome out = transformer_outcome(o, r5);
  // not identifiable only for a model that violates a stated condition
  if (out.v == TrialVerdict::not_identifiable && tr.condition.empty())
    out = {TrialVerdict::fail, 0, "not_identifiable for a model that meets every stated condition: " + r5.judge.message};
  c.add(out.v);
  if (out.v == TrialVerdict::pass) c.value(out.figure);
  if (out.v == TrialVerdict::fail)
    c.failing.push_back(FailingTrial{std::nullopt, t.index, t.seed, tr.spec.d, tr.spec.H, out.reason, transformer_replay(o, tr.spec, t.seed)});
  if (out.v == TrialVerdict::pass) {
    const long q = r5.evidence.queries.value_or(0);
    max_q = std::max(max_q, q);
    max_ratio = std::max(max_ratio, static_cast<double>(q) / static_cast<double>(paper_query_bound(tr.spec.d, tr.spec.H)));
  }
}

ClaimRow Claim5Tally::row(const VerifyOptions& o) {
  c.worst_text = c.any_value ? recovery_worst_text(o, c) + "; most queries " + std::to_string(max_q) + " (" + fmt(max_ratio) +
                                   " x the attention count 4Hd^2-2H+1)"
                             : "-";
  return c.row();
}

}  // namespace verify_internal

}  // namespace mhaq
