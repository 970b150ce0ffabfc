// mhaq verify: the theorem checker (docs/studies/verify.md). See include/mhaq/evidence/verify.hpp and
// proofs/09-schwartz-zippel.md for the bound.
#include "mhaq/evidence/verify.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <array>
#include <map>
#include <optional>
#include <sstream>

#include "mhaq/base/distribute.hpp"
#include "mhaq/base/error.hpp"
#include "mhaq/base/parallel.hpp"
#include "mhaq/model/model.hpp"
#include "mhaq/model/transformer.hpp"
#include "mhaq/run/transformer_blind.hpp"
#include "mhaq/base/random.hpp"
#include "mhaq/run/arith_policy.hpp"
#include "mhaq/run/recover.hpp"
#include "mhaq/run/record_json.hpp"
#include "mhaq/run/run_result.hpp"
#include "mhaq/stages/2-schedule/schedule.hpp"
#include "verify_internal.hpp"

namespace mhaq {

using nlohmann::json;
using namespace verify_internal;

namespace {

void check_options(const VerifyOptions& o) {
  if (o.trials < 0) throw Error(ErrorKind::usage, "--trials must be non-negative");
  if (o.min_d < 1 || o.max_d < o.min_d || o.max_d > 16) throw Error(ErrorKind::usage, "need 1 <= --min-d <= --max-d <= 16");
  if (o.max_h < 1 || o.max_h > 16) throw Error(ErrorKind::usage, "--max-h must be in [1, 16]");
  if (o.h0_extra < 0) throw Error(ErrorKind::usage, "--h0-extra must be non-negative");
  if (o.token_range < 0) throw Error(ErrorKind::usage, "--token-range must be positive");
  if (arith_facts(o.arith).chosen_bits && o.bits < 16) throw Error(ErrorKind::usage, "--bits must be at least 16");
  if (o.threads < 0) throw Error(ErrorKind::usage, "--threads must be 0 or positive");
  if (o.model_kind != "attention" && o.model_kind != "transformer" && o.model_kind != "all")
    throw Error(ErrorKind::usage, "--model-kind must be attention, transformer or all");
  if (o.claim != 0 && o.claim != 4)
    throw Error(ErrorKind::usage, "--claim: only 4 (approximate answers) is a study of its own; claims 1-3 and 5 run without --claim");
  if (o.claim == 4 && o.model_kind != "attention") throw Error(ErrorKind::usage, "--claim 4 is about attention models (no --model-kind)");
  if (o.design != Design::paper && arith_facts(o.arith).exact && o.claim != 4)
    throw Error(ErrorKind::usage, "--design scaled|tuned needs --arith ball, mpfr or double (exact runs use the paper design)");
  if (o.bias && (o.claim == 4 || o.model_kind != "attention" || o.design == Design::tuned))
    throw Error(ErrorKind::usage, "--bias: attention claims 1-4 with the paper or scaled design (no --claim 4, --model-kind or --design tuned)");
  if (o.schedule == Schedule::compact && o.max_h + (o.unknown_h ? o.h0_extra : 0) > compact_max_heads)
    throw Error(ErrorKind::usage, "--schedule compact takes H (or H0 = H + --h0-extra) <= " + std::to_string(compact_max_heads) +
                                      ": lower --max-h or --h0-extra");
}

// The schedule's query count as a formula, for the claim texts.
std::string count_formula(Schedule s, const char* H, bool bias) {
  const std::string h(H);
  if (bias) switch (s) {
      case Schedule::paper: return "4" + h + "d^2 + 4" + h + "d - 2" + h + " + 1";
      case Schedule::lean: return "1 + 2" + h + "(d^2 + 2d - 1)";
      case Schedule::compact: return "1 + 2" + h + "d + (d - 1) + s_" + h + " d^2";
    }
  switch (s) {
    case Schedule::paper: return "4" + h + "d^2 - 2" + h + " + 1";
    case Schedule::lean: return "1 + 2" + h + "(d^2 + d - 1)";
    case Schedule::compact: return "1 + 2" + h + "d + (d - 1) + s_" + h + " d(d - 1)";
  }
  return "?";
}
// Schwartz-Zippel applies to the paper schedule's degenerate events, which are
// polynomial in the draws (proofs/09); the compact schedule's link and
// pole-choice events are not (proofs/19).
// With biases the schedule has one more final token and affine across links,
// which proofs/09 does not count.
bool bound_applies(const VerifyOptions& o) { return o.schedule == Schedule::paper && !o.bias; }
bool runs_attention(const VerifyOptions& o) { return o.model_kind != "transformer"; }
bool runs_transformer(const VerifyOptions& o) { return o.model_kind != "attention"; }

Model trial_model(const VerifyOptions& o, const TrialSpec& t) {
  GenerateOptions g = default_generate(o.arith);
  g.d = t.d;
  g.heads = t.raw_heads;
  g.seed = t.seed;
  g.share_w = t.share_w;
  g.cancel_v = t.cancel_v;
  g.bias = o.bias;
  return generate_model(g);
}

RecoverOptions recover_options(const VerifyOptions& o, const TrialSpec& t, int max_heads) {
  RecoverOptions r;
  r.arith = o.arith;
  r.bits = o.bits;
  r.heads = 0;
  r.max_heads = max_heads;
  r.schedule = o.schedule;
  r.seed = t.seed;
  r.tokens = TokenSpec{token_range_of(o), token_den_of(o)};
  r.design = o.design;
  if (o.bias) r.bias = true;
  return r;  // recover judges each run at its default tolerance; claim 1 applies verify's own (tolerance_of)
}

// Runs recover; a thrown degenerate (e.g. a model whose canonical form is
// empty) is folded into a record like recover's own.
RecoverResult run_recover(const Model& m, const RecoverOptions& ro) {
  try {
    return recover_run(m, ro);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::degenerate) throw;
    RecoverResult r;
    r.judge.status = Status::degenerate;
    r.judge.message = e.what();
    r.evidence.queries = 0;
    r.evidence.max_length = 0;
    r.evidence.heads_recovered = 0;
    return r;
  }
}

Outcome recovery_outcome(const VerifyOptions& o, const RecoverResult& r, int H) {
  if (auto s = status_outcome(o, r)) return *s;
  const int got = r.evidence.heads_recovered.value_or(0);
  if (got != H) return {TrialVerdict::fail, 0, "status ok but " + std::to_string(got) + " heads recovered, canonical truth has " + std::to_string(H)};
  const TrialVerdict good = r.repaired() ? TrialVerdict::repaired : TrialVerdict::pass;
  switch (truth_test_of(o.arith)) {
    case TruthTest::equality:
      if (!r.truth.exact_match.value_or(false)) return {TrialVerdict::fail, 0, "status ok but exact_match false"};
      return {good, 0, ""};
    case TruthTest::containment:
      if (!r.truth.contains_truth.value_or(false)) return {TrialVerdict::fail, r.truth.max_radius.value_or(0), "status ok but some output ball misses the truth"};
      return {good, r.truth.max_radius.value_or(0), ""};
    case TruthTest::rel_error: {
      const double e = r.truth.max_rel_error.value_or(INFINITY);
      if (!(e <= tolerance_of(o))) return {TrialVerdict::fail, e, "status ok but max_rel_error " + fmt(e) + " above tolerance " + fmt(tolerance_of(o))};
      return {good, e, ""};
    }
  }
  throw_internal("recovery_outcome: unknown truth test");
}

void record_failure(ClaimTally& c, const VerifyOptions& o, const TrialSpec& t, int max_heads, const std::string& reason) {
  c.failing.push_back(json{{"trial", t.index}, {"seed", t.seed}, {"d", t.d}, {"H", t.H}, {"reason", reason},
                           {"command", replay_command(o, t, max_heads)}});
}

}  // namespace

std::uint64_t trial_seed(std::uint64_t seed, int index) {
  // 40-bit seeds keep the replay command short; distinct trials get distinct streams.
  return (splitmix64(splitmix64(seed) ^ static_cast<std::uint64_t>(index)) & ((1ULL << 40) - 1)) + 1;
}

TrialSpec draw_trial(const VerifyOptions& o, int index) {
  TrialSpec t;
  t.index = index;
  t.seed = trial_seed(o.seed, index);
  Rng rng(splitmix64(t.seed ^ 0x7665726966790000ULL));  // "verify": a stream separate from the model's and the learner's
  t.d = static_cast<int>(rng.uniform_int(o.min_d, o.max_d));
  t.H = static_cast<int>(rng.uniform_int(1, o.max_h));
  const long kind = rng.uniform_int(0, 4);  // 0-2 plain, 3 shared W, 4 cancelling pair
  t.share_w = kind == 3;
  t.cancel_v = kind == 4;
  t.raw_heads = t.H + (t.share_w ? 1 : 0) + (t.cancel_v ? 2 : 0);
  return t;
}

std::string replay_command(const VerifyOptions& o, const TrialSpec& t, int max_heads) {
  std::ostringstream s;
  s << "mhaq recover --d " << t.d << " --heads " << t.raw_heads << " --seed " << t.seed;
  if (t.share_w) s << " --share-w";
  if (t.cancel_v) s << " --cancel-v";
  if (o.bias) s << " --bias";
  s << " --arith " << arith_name(o.arith);
  if (arith_facts(o.arith).chosen_bits) s << " --bits " << o.bits;
  s << " --token-range " << token_range_of(o);
  if (o.schedule != Schedule::paper) s << " --schedule " << schedule_name(o.schedule);
  if (max_heads > 0) s << " --max-heads " << max_heads;
  if (o.design != Design::paper) s << " --design " << design_name(o.design);
  s << " --json";
  return s.str();
}

namespace {
std::string distribution_text(const VerifyOptions& o, const std::string& range, bool rates, const char* runs = nullptr) {
  const GenerateOptions g = default_generate(o.arith);
  std::ostringstream s;
  s << "per trial: d uniform on {" << o.min_d << ".." << o.max_d << "}, canonical head count H uniform on {1.." << o.max_h
    << "}; model kind 3/5 plain (H fresh heads), 1/5 share_w (H+1 heads, heads 1 and 2 share W and merge), 1/5 cancel_v "
       "(H+2 heads, the last two share W with opposite v and vanish); W entries uniform in [-"
    << g.w_range << ", " << g.w_range << "]/" << g.w_den << ", v entries uniform in [-" << g.v_range << ", " << g.v_range << "]/"
    << g.v_den << (o.bias ? "; biases: c entries as W's, copied by shared and cancelling heads, beta as a v entry" : "")
    << " (mhaq generate defaults for " << arith_name(o.arith) << "); learner: " << schedule_name(o.schedule)
    << " schedule, B and Delta entries uniform integers in "
    << range << (token_den_of(o) != 1 ? "/" + std::to_string(token_den_of(o)) : std::string())
    << ", singular draws redrawn before any query; runs: "
    << (runs ? std::string(runs) : rates ? std::string("H known only; the same trials (models and seeds) for every R")
              : "H known, and only H0 = H+" + std::to_string(o.h0_extra) + " known (same model and draws)")
    << "; H = the model's canonical head count; trial seeds derived from --seed";
  return s.str();
}
}  // namespace

std::string verify_distribution(const VerifyOptions& o) {
  if (o.claim == 4) {
    VerifyOptions o4 = o;
    o4.arith = Arith::mpfr;
    return distribution_text(o4, "[-" + std::to_string(token_range_of(o4)) + ", " + std::to_string(token_range_of(o4)) + "]", false, "H known") +
           "; design " + design_name(o.design) + "; claim 4: eps = m 10^e with e uniform on {-40..-15} and m on {1..9} (so in [1e-40, 1e-14]), "
           "every answer of an MPFR oracle off by a seeded uniform amount in [-eps, eps], and again by eps times the sign pattern of kappa's row "
           "(the worst case to first order); the MPFR learner at " + std::to_string(o.bits) +
           " bits (H known); certified bound: the mean-value bound of proofs/31 (learner on jets over balls of the envelope)";
  }
  std::string s;
  if (runs_attention(o)) s = distribution_text(o, "[-" + std::to_string(token_range_of(o)) + ", " + std::to_string(token_range_of(o)) + "]", false);
  if (runs_transformer(o))
    s += std::string(s.empty() ? "" : "; ") +
         "claim 5 trials: (d, H, m) = (2,1,2), (2,2,3), (3,2,3), (3,2,4) by trial index, variant uniform over plain, shared W "
         "(H >= 2; a zero neuron when H = 1), a zero neuron, parallel neurons; entries as mhaq generate --ffn; learner: the "
         "transformer learner (odd-part attention, regions along p -> q -> -p), told H, the neuron count found";
  return s;
}

json schwartz_zippel(int d, int H, long S) {
  // Events and degrees in the entries of B and Delta (proofs/09).
  const long pairs = 2L * d * d - 1;            // base + within + across pairs of the paper schedule
  const long offsets = 2L * d - 1;              // distinct offsets: delta_i, delta_1 + delta_i
  const long links = static_cast<long>(d) * d - 1;  // d(d-1) within + (d-1) across links
  const long res_events = static_cast<long>(H) * offsets;                    // v_h^T offset = 0, degree 1
  const long col_events = pairs * (static_cast<long>(H) * (H - 1) / 2);      // offset^T (W_h - W_g) b = 0, degree 2
  const long link_events = links * static_cast<long>(H) * (H - 1) * std::max(0, H - 2);  // spurious link match, degree 2
  const long degree_sum = res_events * 1 + col_events * 2 + link_events * 2;
  const double raw = static_cast<double>(degree_sum) / static_cast<double>(S);
  // Redrawing singular B/Delta conditions the draw on det B det Delta != 0:
  // P(E | nonsingular) <= P(E) / P(nonsingular), P(one matrix singular) <= sum_{k=1..d} S^-k.
  double sing = 0;
  for (int k = 1; k <= d; ++k) sing += std::pow(static_cast<double>(S), -k);
  const double ns = (1 - sing) * (1 - sing);
  const double bound = std::min(1.0, ns > 0 ? raw / ns : 1.0);
  return json{{"d", d},
              {"H", H},
              {"S", S},
              {"pairs", pairs},
              {"residue_events", res_events},
              {"collision_events", col_events},
              {"link_events", link_events},
              {"degree_sum", degree_sum},
              {"unconditioned", raw},
              {"nonsingular_lower", ns},
              {"bound", bound}};
}

double schwartz_zippel_bound(int d, int H, long S) { return schwartz_zippel(d, H, S)["bound"].get<double>(); }

namespace {
// A recover result as the tally sees it: everything but the heads (a record
// crosses process boundaries, and the verdicts never read the heads).
json without_heads(RecoverResult r) {
  r.evidence.heads.reset();
  return record_json(r);
}

TrialSpec spec_of(const json& rec) {
  TrialSpec t;
  t.index = rec["trial"].get<int>();
  t.seed = rec["seed"].get<std::uint64_t>();
  t.d = rec["d"].get<int>();
  t.H = rec["H"].get<int>();
  t.raw_heads = rec["raw_heads"].get<int>();
  t.share_w = rec["share_w"].get<bool>();
  t.cancel_v = rec["cancel_v"].get<bool>();
  return t;
}

int threads_of(const VerifyOptions& o) { return o.threads == 0 ? hardware_threads() : o.threads; }

// The records of trials 0..n-1 of o, computed across threads and ranks; on
// ranks other than 0 the list is empty.
std::vector<json> trial_records(const VerifyOptions& o) {
  auto texts = distributed_map(static_cast<size_t>(o.trials), threads_of(o),
                               [&](size_t i) { return verify_trial(o, static_cast<int>(i)).dump(); });
  std::vector<json> recs;
  recs.reserve(texts.size());
  for (auto& t : texts) {
    recs.push_back(json::parse(t));
    std::string().swap(t);  // about 0.7 kB a trial: do not hold text and tree at once
  }
  return recs;
}
}  // namespace

json verify_trial(const VerifyOptions& o, int index) {
  TrialSpec t = draw_trial(o, index);
  json rec{{"trial", index}, {"seed", t.seed}};
  if (o.claim == 4) {
    VerifyOptions o4 = o;
    o4.arith = Arith::mpfr;
    const Model m = trial_model(o4, t);
    t.H = m.canonical().num_heads();
    Rng rng(splitmix64(t.seed ^ 0x636c61696d340000ULL));  // "claim4"
    const long e = rng.uniform_int(-40, -15), mant = rng.uniform_int(1, 9);
    const std::string eps = std::to_string(mant) + "e" + std::to_string(e);
    RecoverOptions ro = recover_options(o4, t, 0);
    ro.noise_eps = Rational::parse(eps);
    ro.noise_seed = t.seed;
    ro.tolerance = Rational(1, 10);  // a study of the error itself: the run's own tolerance only has to admit it
    rec.update(json{{"d", t.d}, {"H", t.H}, {"raw_heads", t.raw_heads}, {"share_w", t.share_w}, {"cancel_v", t.cancel_v}, {"eps", eps}});
    rec["uniform"] = without_heads(run_recover(m, ro));
    ro.noise_pattern = NoisePattern::signs;
    RecoverResult none;
    none.judge.status = Status::degenerate;
    rec["worst"] = without_heads(t.H > 0 ? run_recover(m, ro) : none);
    return rec;
  }
  if (runs_attention(o)) {
    const Model m = trial_model(o, t);
    t.H = m.canonical().num_heads();
    rec.update(json{{"d", t.d}, {"H", t.H}, {"raw_heads", t.raw_heads}, {"share_w", t.share_w}, {"cancel_v", t.cancel_v}});
    rec["known"] = without_heads(run_recover(m, recover_options(o, t, 0)));
    if (o.unknown_h) {
      rec["H0"] = t.H + o.h0_extra;
      rec["h0"] = without_heads(run_recover(m, recover_options(o, t, t.H + o.h0_extra)));
    }
  }
  if (runs_transformer(o)) rec["transformer"] = transformer_trial_record(o, index, t.seed);
  return rec;
}

namespace {
// The claim-4 row (VerifyOptions::claim == 4).
json claim4_tally(const VerifyOptions& o, const std::vector<json>& records) {
  ClaimTally c{"4", "approximate answers, every answer off by at most eps (uniform and worst-case noise): the observed parameter error never exceeds "
                    "the certified bound, and the bound is at most 4 kappa eps wherever kappa eps <= 1e-6"};
  double worst_ratio = 0, worst_obs = 0;
  long asserted = 0, beyond = 0, beyond_bound = 0;
  json trials = json::array();
  for (const json& rec : records) {
    const TrialSpec t = spec_of(rec);
    const RecoverResult u = record_from_json(rec["uniform"]);
    const RecoverResult w = record_from_json(rec["worst"]);
    json tj{{"trial", t.index}, {"seed", t.seed}, {"d", t.d}, {"H", t.H}, {"eps", rec["eps"]}, {"status", status_name(u.judge.status)}};
    if (u.judge.status == Status::degenerate || w.judge.status == Status::degenerate || !u.study.kappa) {
      c.add(TrialVerdict::degenerate);
      trials.push_back(tj);
      continue;
    }
    const double ke = u.study.kappa_times_eps.value();
    const bool has_bound = u.study.certified_bound.has_value();
    const double cb = u.study.certified_bound.value_or(INFINITY);
    const bool first = ke <= 1e-6;
    tj["kappa_times_eps"] = ke;
    tj["certified_bound"] = has_bound ? json(cb) : json(nullptr);
    std::string why;
    bool observed = false;
    for (const RecoverResult* r : {&u, &w})
      if (r->truth.observed_error) {
        observed = true;
        const double e = *r->truth.observed_error;
        if (has_bound) {
          worst_obs = std::max(worst_obs, e / cb);
          if (e > cb) why = "observed error " + fmt(e) + " above the certified bound " + fmt(cb);
        }
      }
    if (first) {
      ++asserted;
      if (!has_bound) why = "no certified bound where kappa eps = " + fmt(ke) + " <= 1e-6: " + u.study.certified_note.value_or("");
      else if (cb > 4 * ke) why = "certified bound " + fmt(cb / ke) + " x kappa eps, beyond the factor 4";
      if (has_bound) worst_ratio = std::max(worst_ratio, cb / ke);
    } else {
      ++beyond;
      beyond_bound += has_bound;
    }
    TrialVerdict v = why.empty() ? TrialVerdict::pass : TrialVerdict::fail;
    if (v == TrialVerdict::pass && first && !observed) v = TrialVerdict::unable;  // the learner itself did not finish: nothing observed
    c.add(v);
    if (v == TrialVerdict::fail) {
      c.failing.push_back(json{{"trial", t.index}, {"seed", t.seed}, {"d", t.d}, {"H", t.H}, {"reason", why},
 {"command", replay_command([&] { VerifyOptions m = o; m.arith = Arith::mpfr; return m; }(), t, 0) + " --noise " + rec["eps"].get<std::string>() + " --noise-seed " + std::to_string(t.seed)}});
    }
    trials.push_back(tj);
  }
  if (asserted) c.value(worst_ratio);
  c.worst_text = "bound / (kappa eps) <= " + fixed(worst_ratio, 6) + " over the " + std::to_string(asserted) + " trials with kappa eps <= 1e-6; observed / bound <= " +
                 fixed(worst_obs, 6) + "; beyond 1e-6 a bound in " + std::to_string(beyond_bound) + " of " + std::to_string(beyond);
  const json cj = c.to_json();
  return json{{"command", "verify"},
              {"status", c.failures == 0 && c.passes > 0 ? "ok" : "mismatch"},
              {"claim", 4},
              {"arith", "mpfr"},
              {"bits", o.bits},
              {"design", design_name(o.design)},
              {"seed", o.seed},
              {"trials", static_cast<int>(records.size())},
              {"distribution", verify_distribution(o)},
              {"claims", json::array({cj})},
              {"worst_bound_ratio", worst_ratio},
              {"worst_observed_over_bound", worst_obs},
              {"trial_list", trials}};
}
// A run that asked a fallback's or a repair's extra queries, whatever its
// status (a repair that failed ends degenerate after asking them).
bool asked_extra(const RecoverResult& r) { return r.evidence.fallback_queries.value_or(0) > 0 || r.evidence.repair_queries.value_or(0) > 0; }
// Claim 4 for one trial: the run told only H0 = H + h0_extra, its count,
// lengths (unrepaired runs) and recovery; the trial's row gets H0 and status.
void tally_h0(const VerifyOptions& o, const json& rec, const TrialSpec& t, ClaimTally& c4, long& max_dev4, long& max_excess4, int& deg_h0, json& tj) {
  const int H = t.H;
  const int H0 = rec["H0"].get<int>();
  const RecoverResult r4 = record_from_json(rec["h0"]);
  const bool sent4 = r4.evidence.queries.value_or(0) > 0;
  // a small grid's witnesses (stages/grid_guard.hpp) are counted apart: the claim is about the plan
  const long q4 = r4.design.design_queries.value_or(r4.evidence.queries.value_or(0)) - r4.evidence.grid_witness_queries.value_or(0), l4 = r4.evidence.max_length.value_or(0);
  const long want4 = schedule_query_count(o.schedule, t.d, H0, o.bias);
  Outcome rec4 = recovery_outcome(o, r4, H);
  const bool rep4 = rec4.v == TrialVerdict::repaired || asked_extra(r4);
  if (sent4 && !rep4) {
    max_dev4 = std::max(max_dev4, std::labs(q4 - want4));
    max_excess4 = std::max(max_excess4, l4 - (2L * H0 + 1));
  }
  if (rep4) {
    // counts and lengths are asserted on unrepaired runs only
  } else if (sent4 && q4 != want4) rec4 = {TrialVerdict::fail, 0, std::to_string(q4) + " queries, formula " + count_formula(o.schedule, "H0", o.bias) + " = " + std::to_string(want4)};
  else if (sent4 && l4 > 2L * H0 + 1) rec4 = {TrialVerdict::fail, 0, "longest query " + std::to_string(l4) + " tokens, bound 2H0+1 = " + std::to_string(2 * H0 + 1)};
  else if (rec4.v == TrialVerdict::pass && r4.evidence.heads_found.value_or(-1) != H)
    rec4 = {TrialVerdict::fail, 0, "heads_found " + std::to_string(r4.evidence.heads_found.value_or(-1)) + " != canonical " + std::to_string(H)};
  c4.add(rec4.v);
  if (rec4.v == TrialVerdict::pass || rec4.v == TrialVerdict::repaired) c4.value(rec4.figure);
  if (rec4.v == TrialVerdict::fail) record_failure(c4, o, t, H0, rec4.reason);
  deg_h0 += rec4.v == TrialVerdict::degenerate;
  tj["H0"] = H0;
  tj["status_h0"] = status_name(r4.judge.status);
}

}  // namespace

json verify_tally(const VerifyOptions& o, const std::vector<json>& records) {
  check_options(o);
  if (o.claim == 4) return claim4_tally(o, records);
  const long R = token_range_of(o);
  const long S = 2 * R + 1;
  const std::string canonical = o.bias ? "(W_h, c_h, v_h) and beta" : "(W_h, v_h)";
  ClaimTally c1{"1", std::string(arith_facts(o.arith).exact ? "exact " : "") + "recovery of the canonical " + canonical + " up to permutation, H known (" +
                         recovery_criterion(o) + ")"};
  ClaimTally c2{"2", "H known: exactly " + count_formula(o.schedule, "H", o.bias) + " value queries"};
  ClaimTally c3{"3", "H known: no query longer than 2H + 1 tokens"};
  ClaimTally c4{"4", "only H0 = H+" + std::to_string(o.h0_extra) + " known: exactly " + count_formula(o.schedule, "H0", o.bias) +
                         " queries, none longer than 2H0 + 1, recovery (" + recovery_criterion(o) + ")"};
  long max_dev2 = 0, max_excess3 = -1000000, max_len3 = 0, max_dev4 = 0, max_excess4 = -1000000;
  double bound_sum = 0;
  int deg_known = 0, deg_h0 = 0, vacuous = 0, rep_known = 0;
  json trials = json::array();
  Claim5Tally c5(o);
  for (const json& rec : records) {
    if (rec.contains("transformer")) c5.add(o, rec);
    if (!rec.contains("known")) continue;
    const TrialSpec t = spec_of(rec);
    const int H = t.H;
    const RecoverResult r1 = record_from_json(rec["known"]);
    const bool sent1 = r1.evidence.queries.value_or(0) > 0;
    // a tuned run's pilot is not part of the design's count (reported as pilot_queries)
    const long q1 = r1.design.design_queries.value_or(r1.evidence.queries.value_or(0)) - r1.evidence.grid_witness_queries.value_or(0), l1 = r1.evidence.max_length.value_or(0);
    // claim 1
    const Outcome rec1 = recovery_outcome(o, r1, H);
    c1.add(rec1.v);
    if (rec1.v == TrialVerdict::pass || rec1.v == TrialVerdict::repaired) c1.value(rec1.figure);
    if (rec1.v == TrialVerdict::fail) record_failure(c1, o, t, 0, rec1.reason);
    const bool deg1 = rec1.v == TrialVerdict::degenerate;
    // a run that asked extra queries is counted apart whatever its status
    const bool rep1 = rec1.v == TrialVerdict::repaired || asked_extra(r1);
    deg_known += deg1;
    rep_known += rep1;
    // claim 2
    const long want2 = schedule_query_count(o.schedule, t.d, H, o.bias);
    if (sent1 && !rep1) {  // repaired runs ask extra queries (repair_queries): not part of the claim
      max_dev2 = std::max(max_dev2, std::labs(q1 - want2));
      c2.value(static_cast<double>(std::labs(q1 - want2)));
    }
    if (rep1) {
      c2.add(TrialVerdict::repaired);  // not asserted: claim 2 is about the unrepaired runs
    } else if (sent1 && q1 != want2) {
      c2.add(TrialVerdict::fail);
      record_failure(c2, o, t, 0, std::to_string(q1) + " queries, formula " + count_formula(o.schedule, "H", o.bias) + " = " + std::to_string(want2));
    } else {
      c2.add(!sent1 || deg1 ? TrialVerdict::degenerate : TrialVerdict::pass);
    }
    // claim 3
    if (sent1) {
      max_excess3 = std::max(max_excess3, l1 - (2L * H + 1));
      max_len3 = std::max(max_len3, l1);
      c3.value(static_cast<double>(l1 - (2L * H + 1)));
    }
    if (rep1) {
      c3.add(TrialVerdict::repaired);
    } else if (sent1 && l1 > 2L * H + 1) {
      c3.add(TrialVerdict::fail);
      record_failure(c3, o, t, 0, "longest query " + std::to_string(l1) + " tokens, bound 2H+1 = " + std::to_string(2 * H + 1));
    } else {
      c3.add(!sent1 || deg1 ? TrialVerdict::degenerate : TrialVerdict::pass);
    }
    const json sz = bound_applies(o) ? schwartz_zippel(t.d, H, S) : json{{"bound", nullptr}};
    if (bound_applies(o)) {
      bound_sum += sz["bound"].get<double>();
      vacuous += sz["bound"].get<double>() >= 1.0;
    }
    json tj{{"trial", t.index}, {"seed", t.seed}, {"d", t.d}, {"H", H}, {"raw_heads", t.raw_heads}, {"share_w", t.share_w},
            {"cancel_v", t.cancel_v}, {"status_known_h", status_name(r1.judge.status)}, {"bound", sz["bound"]}};
    if (o.unknown_h) tally_h0(o, rec, t, c4, max_dev4, max_excess4, deg_h0, tj);  // claim 4
    trials.push_back(tj);
  }
  c1.worst_text = recovery_worst_text(o, c1);
  c2.worst_text = c2.any_value ? "max |queries - formula| = " + std::to_string(max_dev2) : "-";
  c3.worst_text = c3.any_value ? "max (longest - (2H+1)) = " + std::to_string(max_excess3) + " (longest query seen " + std::to_string(max_len3) + ")" : "-";
  c4.worst_text = c4.trials ? recovery_worst_text(o, c4) + "; max |queries - formula| = " + std::to_string(max_dev4) +
                                  "; max (longest - (2H0+1)) = " + (max_excess4 > -1000000 ? std::to_string(max_excess4) : std::string("-"))
                            : "-";
  json claims = json::array();
  if (runs_attention(o)) {
    claims = json::array({c1.to_json(), c2.to_json(), c3.to_json()});
    if (o.unknown_h) claims.push_back(c4.to_json());
  }
  if (runs_transformer(o)) claims.push_back(c5.to_json(o));
  const int n = static_cast<int>(records.size());
  json szj{{"token_range", R},
           {"S", S},
           {"trials", n},
           {"degenerate_known_h", deg_known},
           {"degenerate_h0", deg_h0},
           {"repaired_known_h", rep_known},
           {"observed_rate", n ? static_cast<double>(deg_known) / n : 0.0},
           {"mean_bound", bound_applies(o) ? json(n ? bound_sum / n : 0.0) : json(nullptr)},
           {"vacuous_trials", vacuous},
           {"rate_within_bound", !bound_applies(o) || n == 0 || static_cast<double>(deg_known) / n <= bound_sum / n},
           {"bound_applies", bound_applies(o)},
           {"derivation", bound_applies(o) ? "proofs/09-schwartz-zippel.md"
                          : o.bias       ? "none: with biases the schedule has one more final token and affine across links, which proofs/09 does not count"
                                         : "none: the compact schedule's link and pole-choice events are not polynomial in the draws (proofs/19)"}};
  int total_fail = 0;
  for (const auto& c : claims) total_fail += c["failures"].get<int>();
  return json{{"command", "verify"},
              {"status", total_fail == 0 ? "ok" : "mismatch"},
              {"arith", arith_name(o.arith)},
              {"bits", bits_of(o)},
              {"seed", o.seed},
              {"trials", n},
              {"tolerance", arith_facts(o.arith).floats ? json(tolerance_of(o)) : json(nullptr)},
              {"model_kind", o.model_kind},
              {"schedule", schedule_name(o.schedule)},
              {"distribution", verify_distribution(o)},
              {"claims", claims},
              {"schwartz_zippel", szj},
              {"trial_list", trials}};
}

json verify(const VerifyOptions& o) {
  check_options(o);
  const std::vector<json> recs = trial_records(o);
  if (!is_root()) return nullptr;
  return verify_tally(o, recs);
}

std::string verify_report(const json& v) {
  std::ostringstream s;
  s << "mhaq verify: " << v["trials"] << " trials, seed " << v["seed"] << ", arith " << v["arith"].get<std::string>();
  if (v.value("schedule", "paper") != "paper") s << ", schedule " << v["schedule"].get<std::string>();
  if (v["arith"] != "exact") s << " (" << v["bits"] << " bits)";
  s << "\ndistribution: " << v["distribution"].get<std::string>() << "\n\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-4s %6s %6s %6s %6s %6s %6s  %s\n", "", "trials", "passes", "repair", "fail", "degen", "unable", "worst");
  s << line;
  for (const auto& c : v["claims"]) {
    s << c["claim"].get<std::string>() << "\n";
    std::snprintf(line, sizeof line, "%-4s %6d %6d %6d %6d %6d %6d  %s\n", "", c["trials"].get<int>(), c["passes"].get<int>(), c["repaired"].get<int>(), c["failures"].get<int>(),
                  c["degenerate"].get<int>(), c["unable"].get<int>(), c["worst"].get<std::string>().c_str());
    s << line;
  }
  if (v.contains("claim")) {
    bool anyf = false;
    for (const auto& f : v["claims"][0]["failing_trials"]) {
      if (!anyf) s << "\nfailing trials:\n";
      anyf = true;
      s << "  trial " << f["trial"] << " (seed " << f["seed"] << ", d=" << f["d"] << ", H=" << f["H"] << "): " << f["reason"].get<std::string>()
        << "\n    replay: " << f["command"].get<std::string>() << "\n";
    }
    s << (v["status"] == "ok" ? "\nclaim 4 holds on every trial\n" : "\nCLAIM 4 FAILED\n");
    return s.str();
  }
  if (v.value("model_kind", std::string("attention")) == "transformer") {
    // the attention claims' footer (repairs, degenerate draws, Schwartz-Zippel) does not apply
    for (const auto& c : v["claims"])
      s << "\nnot identifiable: " << c["not_identifiable"] << " (each one a model that violates a stated condition; any other is a failure)\n";
    bool any = false;
    for (const auto& c : v["claims"])
      for (const auto& f : c["failing_trials"]) {
        if (!any) s << "\nfailing trials:\n";
        any = true;
        s << "  claim " << c["id"].get<std::string>() << ", trial " << f["trial"] << " (seed " << f["seed"] << ", d=" << f["d"] << ", H=" << f["H"]
          << "): " << f["reason"].get<std::string>() << "\n    replay: " << f["command"].get<std::string>() << "\n";
      }
    s << (v["status"] == "ok" ? "\nclaim 5 holds on every trial that is not degenerate\n" : "\nCLAIM 5 FAILED\n");
    return s.str();
  }
  const auto& z = v["schwartz_zippel"];
  s << "\nrepaired runs (H known; repaired pairs or fallback queries; own column above, not counted as passes of claims 2 and 3): " << z["repaired_known_h"];
  s << "\nunrepaired degenerate draws (H known): " << z["degenerate_known_h"] << " of " << z["trials"] << ", observed rate "
    << fixed(z["observed_rate"].get<double>());
  if (z.value("bound_applies", true))
    s << "; Schwartz-Zippel bound (|S| = " << z["S"] << ", mean over trials) " << fmt(z["mean_bound"].get<double>())
      << (z["rate_within_bound"].get<bool>() ? " (rate within bound)" : " (RATE EXCEEDS BOUND)") << "; bound vacuous (>= 1) in " << z["vacuous_trials"]
      << " trials";
  else
    s << "; no Schwartz-Zippel bound for this schedule (" << z["derivation"].get<std::string>() << ")";
  s << "; H0 runs degenerate: " << z["degenerate_h0"] << " (same draws)\n";
  bool any = false;
  for (const auto& c : v["claims"])
    for (const auto& f : c["failing_trials"]) {
      if (!any) s << "\nfailing trials:\n";
      any = true;
      s << "  claim " << c["id"].get<std::string>() << ", trial " << f["trial"] << " (seed " << f["seed"] << ", d=" << f["d"] << ", H=" << f["H"]
        << "): " << f["reason"].get<std::string>() << "\n    replay: " << f["command"].get<std::string>() << "\n";
    }
  s << (v["status"] == "ok" ? "\nall claims hold on every non-degenerate trial\n" : "\nSOME CLAIMS FAILED\n");
  return s.str();
}

int verify_exit_code(const json& v) { return v["status"] == "ok" ? 0 : exit_code(ErrorKind::mismatch); }

json rate_study(const VerifyOptions& base, const std::vector<long>& ranges) {
  check_options(base);
  if (!bound_applies(base))
    throw Error(ErrorKind::usage, "--rates compares with the Schwartz-Zippel bound of the paper schedule (proofs/09); there is none for " +
                                      (base.bias ? std::string("--bias") : "--schedule " + std::string(schedule_name(base.schedule))));
  for (long R : ranges)
    if (R < 1) throw Error(ErrorKind::usage, "token ranges must be positive");
  // One item per (range, trial): the known-H run of that trial at that range.
  const size_t per = static_cast<size_t>(base.trials);
  auto options_at = [&](size_t r) {
    VerifyOptions o = base;
    o.token_range = ranges[r];
    o.unknown_h = false;
    return o;
  };
  const auto texts = distributed_map(ranges.size() * per, threads_of(base),
                                     [&](size_t k) { return verify_trial(options_at(k / per), static_cast<int>(k % per)).dump(); });
  if (!is_root()) return nullptr;
  json rows = json::array();
  bool all_within = true;
  int wrong = 0;
  json failing = json::array();
  for (size_t ri = 0; ri < ranges.size(); ++ri) {
    const long R = ranges[ri];
    const VerifyOptions o = options_at(ri);
    const long S = 2 * R + 1;
    int deg = 0, n = 0, unrepaired = 0;
    double bsum = 0;
    std::map<std::pair<int, int>, std::array<double, 3>> cells;  // (d,H) -> trials, degenerate, bound sum
    for (size_t i = 0; i < per; ++i) {
      const json rec = json::parse(texts[ri * per + i]);
      const TrialSpec t = spec_of(rec);
      const int H = t.H;
      const Outcome out = recovery_outcome(o, record_from_json(rec["known"]), H);
      const double b = schwartz_zippel_bound(t.d, H, S);
      ++n;
      bsum += b;
      // a repaired draw was degenerate too (the event the bound is about)
      const bool dg = out.v == TrialVerdict::degenerate || out.v == TrialVerdict::repaired;
      deg += dg;
      unrepaired += out.v == TrialVerdict::degenerate;
      auto& c = cells[{t.d, H}];
      c[0] += 1;
      c[1] += dg;
      c[2] += b;
      if (out.v == TrialVerdict::fail) {
        ++wrong;
        failing.push_back(json{{"R", R}, {"trial", t.index}, {"seed", t.seed}, {"reason", out.reason}, {"command", replay_command(o, t, 0)}});
      }
    }
    json cj = json::array();
    for (const auto& [k, c] : cells) {
      const double rate = c[1] / c[0], mb = c[2] / c[0];
      cj.push_back(json{{"d", k.first}, {"H", k.second}, {"trials", static_cast<int>(c[0])}, {"degenerate", static_cast<int>(c[1])},
                        {"observed_rate", rate}, {"bound", mb}, {"within", rate <= mb}});
      all_within = all_within && rate <= mb;
    }
    const double rate = n ? static_cast<double>(deg) / n : 0, mb = n ? bsum / n : 0;
    all_within = all_within && rate <= mb;
    rows.push_back(json{{"token_range", R}, {"S", S}, {"trials", n}, {"degenerate", deg}, {"unrepaired", unrepaired}, {"observed_rate", rate}, {"mean_bound", mb},
                        {"within", rate <= mb}, {"cells", cj}});
  }
  return json{{"command", "verify --rates"},
              {"status", all_within && wrong == 0 ? "ok" : "mismatch"},
              {"arith", arith_name(base.arith)},
              {"seed", base.seed},
              {"trials_per_range", base.trials},
              {"distribution", distribution_text(base, "[-R, R] for each R below", true)},
              {"rates", rows},
              {"all_within_bound", all_within},
              {"wrong_answers", wrong},
              {"failing_trials", failing},
              {"derivation", "proofs/09-schwartz-zippel.md"}};
}

std::string rate_report(const json& r) {
  std::ostringstream s;
  s << "mhaq verify --rates: " << r["trials_per_range"] << " trials per token range, seed " << r["seed"] << ", arith "
    << r["arith"].get<std::string>() << " (H known runs)\ndistribution: " << r["distribution"].get<std::string>() << "\n\n";
  char line[256];
  std::snprintf(line, sizeof line, "%4s %4s %7s %6s %9s %11s\n", "R", "|S|", "trials", "degen", "observed", "SZ bound");
  s << line;
  for (const auto& row : r["rates"]) {
    std::snprintf(line, sizeof line, "%4ld %4ld %7d %6d %9.3f %11.3f%s\n", row["token_range"].get<long>(), row["S"].get<long>(), row["trials"].get<int>(),
                  row["degenerate"].get<int>(), row["observed_rate"].get<double>(), row["mean_bound"].get<double>(),
                  row["within"].get<bool>() ? "" : "  EXCEEDS BOUND");
    s << line;
  }
  s << "\nper (d, H): observed rate / bound\n";
  // one line per cell, one column per R
  std::map<std::pair<int, int>, std::string> cl;
  for (const auto& row : r["rates"])
    for (const auto& c : row["cells"]) {
      std::snprintf(line, sizeof line, "  R=%ld: %d/%d = %.3f <= %.3f%s", row["token_range"].get<long>(), c["degenerate"].get<int>(), c["trials"].get<int>(),
                    c["observed_rate"].get<double>(), c["bound"].get<double>(), c["within"].get<bool>() ? "" : " EXCEEDS");
      cl[{c["d"].get<int>(), c["H"].get<int>()}] += line;
    }
  for (const auto& [k, txt] : cl) s << "  d=" << k.first << " H=" << k.second << ":" << txt << "\n";
  for (const auto& f : r["failing_trials"])
    s << "WRONG ANSWER at R=" << f["R"] << ", trial " << f["trial"] << ": " << f["reason"].get<std::string>() << "\n  replay: " << f["command"].get<std::string>() << "\n";
  s << (r["status"] == "ok" ? "\nevery observed rate is within its bound\n" : "\nFAILED: a rate exceeds its bound or an answer was wrong\n");
  return s.str();
}

int rate_exit_code(const json& r) { return r["status"] == "ok" ? 0 : exit_code(ErrorKind::mismatch); }

}  // namespace mhaq
