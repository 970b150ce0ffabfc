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
#include "mhaq/run/run_result.hpp"
#include "mhaq/stages/2-schedule/schedule.hpp"
#include "verify_internal.hpp"

namespace mhaq {

using nlohmann::json;
using namespace verify_internal;

namespace {

void check_options(const VerifyOptions& o) {
  if (o.trials < 0) throw Error(ErrorKind::usage, "--trials must be non-negative");
  if (o.min_d < 1 || o.max_d < o.min_d || o.max_d > verify_max_d)
    throw Error(ErrorKind::usage, "need 1 <= --min-d <= --max-d <= " + std::to_string(verify_max_d));
  if (o.max_h < 1 || o.max_h > verify_max_h) throw Error(ErrorKind::usage, "--max-h must be in [1, " + std::to_string(verify_max_h) + "]");
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
  if (o.bias && o.rank != 0) throw Error(ErrorKind::usage, "verify: --rank learns heads without biases: leave out --bias or --rank");
  if ((o.rank != 0) != (o.schedule == Schedule::rank)) throw Error(ErrorKind::usage, "verify: --rank R and the rank schedule go together");
  if (o.rank != 0 && (o.rank < 1 || o.min_d <= o.rank))
    throw Error(ErrorKind::usage, "verify --rank R needs 1 <= R < --min-d (every drawn d must exceed the bound)");
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
      case Schedule::rank: break;  // refused with biases (check_options)
    }
  switch (s) {
    case Schedule::paper: return "4" + h + "d^2 - 2" + h + " + 1";
    case Schedule::lean: return "1 + 2" + h + "(d^2 + d - 1)";
    case Schedule::compact: return "1 + 2" + h + "d + (d - 1) + s_" + h + " d(d - 1)";
    case Schedule::rank: return "1 + 2" + h + "(2dR - R^2 + 2d - R - 1)";
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
  g.rank = o.rank;
  return generate_model(g);
}

RecoverOptions recover_options(const VerifyOptions& o, const TrialSpec& t, int max_heads) {
  RecoverOptions r;
  r.arith = o.arith;
  r.bits = o.bits;
  r.heads = 0;
  r.max_heads = max_heads;
  r.schedule = o.schedule;
  r.rank = o.rank;
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
  c.failing.push_back(FailingTrial{std::nullopt, t.index, t.seed, t.d, t.H, reason, replay_command(o, t, max_heads)});
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
  if (o.rank > 0) s << " --rank " << o.rank;
  else if (o.schedule != Schedule::paper) s << " --schedule " << schedule_name(o.schedule);
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
    << " (mhaq generate defaults for " << arith_name(o.arith) << ")"
    << (o.rank > 0 ? "; every W of rank exactly " + std::to_string(o.rank) + " (generate --rank " + std::to_string(o.rank) + ")" : "")
    << "; learner: " << schedule_name(o.schedule) << (o.rank > 0 ? " schedule told --rank " + std::to_string(o.rank) : " schedule")
    << ", B and Delta entries uniform integers in "
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

SchwartzZippel schwartz_zippel(int d, int H, long S) {
  // Events and degrees in the entries of B and Delta (proofs/09).
  SchwartzZippel z;
  z.d = d, z.H = H, z.S = S;
  z.pairs = 2L * d * d - 1;                         // base + within + across pairs of the paper schedule
  const long offsets = 2L * d - 1;                  // distinct offsets: delta_i, delta_1 + delta_i
  const long links = static_cast<long>(d) * d - 1;  // d(d-1) within + (d-1) across links
  z.residue_events = static_cast<long>(H) * offsets;                          // v_h^T offset = 0, degree 1
  z.collision_events = z.pairs * (static_cast<long>(H) * (H - 1) / 2);        // offset^T (W_h - W_g) b = 0, degree 2
  z.link_events = links * static_cast<long>(H) * (H - 1) * std::max(0, H - 2);  // spurious link match, degree 2
  z.degree_sum = z.residue_events * 1 + z.collision_events * 2 + z.link_events * 2;
  z.unconditioned = static_cast<double>(z.degree_sum) / static_cast<double>(S);
  // Redrawing singular B/Delta conditions the draw on det B det Delta != 0:
  // P(E | nonsingular) <= P(E) / P(nonsingular), P(one matrix singular) <= sum_{k=1..d} S^-k.
  double sing = 0;
  for (int k = 1; k <= d; ++k) sing += std::pow(static_cast<double>(S), -k);
  z.nonsingular_lower = (1 - sing) * (1 - sing);
  z.bound = std::min(1.0, z.nonsingular_lower > 0 ? z.unconditioned / z.nonsingular_lower : 1.0);
  return z;
}

double schwartz_zippel_bound(int d, int H, long S) { return schwartz_zippel(d, H, S).bound; }

namespace {
// A recover result as the tally sees it: everything but the heads (a trial
// crosses process boundaries, and the verdicts never read the heads).
RecoverResult without_heads(RecoverResult r) {
  r.evidence.heads.reset();
  return r;
}

int threads_of(const VerifyOptions& o) { return o.threads == 0 ? hardware_threads() : o.threads; }

// Trials items(0..n-1), computed across threads and ranks, each through its
// message; on ranks other than 0 the list is empty.
template <class Item>
std::vector<VerifyTrial> distributed_trials(size_t n, int threads, Item item) {
  auto texts = distributed_map(n, threads, [&](size_t i) { return verify_trial_json(item(i)).dump(); });
  std::vector<VerifyTrial> trials;
  trials.reserve(texts.size());
  for (auto& t : texts) {
    trials.push_back(verify_trial_from_json(json::parse(t)));
    std::string().swap(t);  // about 0.7 kB a trial: do not hold text and record at once
  }
  return trials;
}
}  // namespace

VerifyTrial verify_trial(const VerifyOptions& o, int index) {
  VerifyTrial rec;
  TrialSpec& t = rec.spec;
  t = draw_trial(o, index);
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
    rec.attention = true;
    rec.eps = eps;
    rec.uniform = without_heads(run_recover(m, ro));
    ro.noise_pattern = NoisePattern::signs;
    RecoverResult none;
    none.judge.status = Status::degenerate;
    rec.worst = without_heads(t.H > 0 ? run_recover(m, ro) : none);
    return rec;
  }
  if (runs_attention(o)) {
    const Model m = trial_model(o, t);
    t.H = m.canonical().num_heads();
    rec.attention = true;
    rec.known = without_heads(run_recover(m, recover_options(o, t, 0)));
    if (o.unknown_h) {
      rec.H0 = t.H + o.h0_extra;
      rec.h0 = without_heads(run_recover(m, recover_options(o, t, t.H + o.h0_extra)));
    }
  }
  if (runs_transformer(o)) rec.transformer = transformer_trial(o, index, t.seed);
  return rec;
}

namespace {
// The claim-4 row (VerifyOptions::claim == 4).
VerifyResult claim4_tally(const VerifyOptions& o, const std::vector<VerifyTrial>& records) {
  ClaimTally c{"4", "approximate answers, every answer off by at most eps (uniform and worst-case noise): the observed parameter error never exceeds "
                    "the certified bound, and the bound is at most 4 kappa eps wherever kappa eps <= 1e-6"};
  VerifyResult out;
  double worst_ratio = 0, worst_obs = 0;
  long asserted = 0, beyond = 0, beyond_bound = 0;
  for (const VerifyTrial& rec : records) {
    const TrialSpec& t = rec.spec;
    const RecoverResult& u = rec.uniform.value();
    const RecoverResult& w = rec.worst.value();
    TrialRow tj;
    tj.trial = t.index, tj.seed = t.seed, tj.d = t.d, tj.H = t.H;
    tj.eps = rec.eps.value();
    tj.status = u.judge.status;
    if (u.judge.status == Status::degenerate || w.judge.status == Status::degenerate || !u.study.kappa) {
      c.add(TrialVerdict::degenerate);
      out.trial_list.push_back(tj);
      continue;
    }
    const double ke = u.study.kappa_times_eps.value();
    const bool has_bound = u.study.certified_bound.has_value();
    const double cb = u.study.certified_bound.value_or(INFINITY);
    const bool first = ke <= 1e-6;
    tj.kappa_times_eps = ke;
    if (has_bound) tj.certified_bound = cb;
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
      VerifyOptions m = o;
      m.arith = Arith::mpfr;
      c.failing.push_back(FailingTrial{std::nullopt, t.index, t.seed, t.d, t.H, why,
                                       replay_command(m, t, 0) + " --noise " + *rec.eps + " --noise-seed " + std::to_string(t.seed)});
    }
    out.trial_list.push_back(tj);
  }
  if (asserted) c.value(worst_ratio);
  c.worst_text = "bound / (kappa eps) <= " + fixed(worst_ratio, 6) + " over the " + std::to_string(asserted) + " trials with kappa eps <= 1e-6; observed / bound <= " +
                 fixed(worst_obs, 6) + "; beyond 1e-6 a bound in " + std::to_string(beyond_bound) + " of " + std::to_string(beyond);
  out.ok = c.failures == 0 && c.passes > 0;
  out.claim = 4;
  out.arith = Arith::mpfr;
  out.bits = o.bits;
  out.design = o.design;
  out.seed = o.seed;
  out.trials = static_cast<int>(records.size());
  out.distribution = verify_distribution(o);
  out.claims = {c.row()};
  out.worst_bound_ratio = worst_ratio;
  out.worst_observed_over_bound = worst_obs;
  return out;
}
// A run that asked a fallback's or a repair's extra queries, whatever its
// status (a repair that failed ends degenerate after asking them).
bool asked_extra(const RecoverResult& r) { return r.evidence.fallback_queries.value_or(0) > 0 || r.evidence.repair_queries.value_or(0) > 0; }

// The running figures of claims 2-4 over the trials.
struct CountFigures {
  long max_dev2 = 0, max_excess3 = -1000000, max_len3 = 0, max_dev4 = 0, max_excess4 = -1000000;
};

// Claim 4 for one trial: the run told only H0 = H + h0_extra, its count,
// lengths (unrepaired runs) and recovery; the trial's row gets H0 and status.
void tally_h0(const VerifyOptions& o, const VerifyTrial& rec, ClaimTally& c4, CountFigures& f, DegenerateSummary& z, TrialRow& tj) {
  const TrialSpec& t = rec.spec;
  const int H = t.H;
  const int H0 = rec.H0;
  const RecoverResult& r4 = rec.h0.value();
  const bool sent4 = r4.evidence.queries.value_or(0) > 0;
  // a small grid's witnesses (stages/grid_guard.hpp) are counted apart: the claim is about the plan
  const long q4 = r4.design.design_queries.value_or(r4.evidence.queries.value_or(0)) - r4.evidence.grid_witness_queries.value_or(0), l4 = r4.evidence.max_length.value_or(0);
  const long want4 = schedule_query_count(o.schedule, t.d, H0, o.rank, o.bias);
  Outcome rec4 = recovery_outcome(o, r4, H);
  const bool rep4 = rec4.v == TrialVerdict::repaired || asked_extra(r4);
  if (sent4 && !rep4) {
    f.max_dev4 = std::max(f.max_dev4, std::labs(q4 - want4));
    f.max_excess4 = std::max(f.max_excess4, l4 - (2L * H0 + 1));
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
  z.degenerate_h0 += rec4.v == TrialVerdict::degenerate;
  tj.H0 = H0;
  tj.status_h0 = r4.judge.status;
}

// Claims 1-3 for one trial: the run told H, its recovery, count and lengths.
void tally_known(const VerifyOptions& o, const VerifyTrial& rec, ClaimTally& c1, ClaimTally& c2, ClaimTally& c3, CountFigures& f, DegenerateSummary& z) {
  const TrialSpec& t = rec.spec;
  const int H = t.H;
  const RecoverResult& r1 = rec.known.value();
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
  z.degenerate_known_h += deg1;
  z.repaired_known_h += rep1;
  // claim 2
  const long want2 = schedule_query_count(o.schedule, t.d, H, o.rank, o.bias);
  if (sent1 && !rep1) {  // repaired runs ask extra queries (repair_queries): not part of the claim
    f.max_dev2 = std::max(f.max_dev2, std::labs(q1 - want2));
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
    f.max_excess3 = std::max(f.max_excess3, l1 - (2L * H + 1));
    f.max_len3 = std::max(f.max_len3, l1);
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
}

}  // namespace

VerifyResult verify_tally(const VerifyOptions& o, const std::vector<VerifyTrial>& records) {
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
  CountFigures f;
  VerifyResult out;
  DegenerateSummary& z = out.schwartz_zippel;
  double bound_sum = 0;
  Claim5Tally c5(o);
  for (const VerifyTrial& rec : records) {
    if (rec.transformer) c5.add(o, rec.spec, *rec.transformer);
    if (!rec.known) continue;
    const TrialSpec& t = rec.spec;
    tally_known(o, rec, c1, c2, c3, f, z);
    TrialRow tj;
    tj.trial = t.index, tj.seed = t.seed, tj.d = t.d, tj.H = t.H, tj.raw_heads = t.raw_heads;
    tj.share_w = t.share_w, tj.cancel_v = t.cancel_v;
    tj.status = rec.known->judge.status;
    if (bound_applies(o)) {
      tj.bound = schwartz_zippel_bound(t.d, t.H, S);
      bound_sum += *tj.bound;
      z.vacuous_trials += *tj.bound >= 1.0;
    }
    if (o.unknown_h) tally_h0(o, rec, c4, f, z, tj);  // claim 4
    out.trial_list.push_back(tj);
  }
  c1.worst_text = recovery_worst_text(o, c1);
  c2.worst_text = c2.any_value ? "max |queries - formula| = " + std::to_string(f.max_dev2) : "-";
  c3.worst_text = c3.any_value ? "max (longest - (2H+1)) = " + std::to_string(f.max_excess3) + " (longest query seen " + std::to_string(f.max_len3) + ")" : "-";
  c4.worst_text = c4.trials ? recovery_worst_text(o, c4) + "; max |queries - formula| = " + std::to_string(f.max_dev4) +
                                  "; max (longest - (2H0+1)) = " + (f.max_excess4 > -1000000 ? std::to_string(f.max_excess4) : std::string("-"))
                            : "-";
  if (runs_attention(o)) {
    out.claims = {c1.row(), c2.row(), c3.row()};
    if (o.unknown_h) out.claims.push_back(c4.row());
  }
  if (runs_transformer(o)) out.claims.push_back(c5.row(o));
  const int n = static_cast<int>(records.size());
  z.token_range = R;
  z.S = S;
  z.trials = n;
  z.observed_rate = n ? static_cast<double>(z.degenerate_known_h) / n : 0.0;
  if (bound_applies(o)) z.mean_bound = n ? bound_sum / n : 0.0;
  z.rate_within_bound = !bound_applies(o) || n == 0 || static_cast<double>(z.degenerate_known_h) / n <= bound_sum / n;
  z.bound_applies = bound_applies(o);
  z.derivation = bound_applies(o) ? "proofs/09-schwartz-zippel.md"
                 : o.bias       ? "none: with biases the schedule has one more final token and affine across links, which proofs/09 does not count"
                                : "none: the compact schedule's link and pole-choice events are not polynomial in the draws (proofs/19)";
  int total_fail = 0;
  for (const ClaimRow& c : out.claims) total_fail += c.failures;
  out.ok = total_fail == 0;
  out.arith = o.arith;
  out.bits = bits_of(o);
  out.design = o.design;
  out.seed = o.seed;
  out.trials = n;
  if (arith_facts(o.arith).floats) out.tolerance = tolerance_of(o);
  out.model_kind = o.model_kind;
  out.schedule = o.schedule;
  out.distribution = verify_distribution(o);
  return out;
}

std::optional<VerifyResult> verify(const VerifyOptions& o) {
  check_options(o);
  const std::vector<VerifyTrial> recs = distributed_trials(static_cast<size_t>(o.trials), threads_of(o), [&](size_t i) { return verify_trial(o, static_cast<int>(i)); });
  if (!is_root()) return std::nullopt;
  return verify_tally(o, recs);
}

namespace {
void failing_lines(std::ostringstream& s, const std::vector<ClaimRow>& claims, bool name_claim) {
  bool any = false;
  for (const ClaimRow& c : claims)
    for (const FailingTrial& f : c.failing) {
      if (!any) s << "\nfailing trials:\n";
      any = true;
      s << "  " << (name_claim ? "claim " + c.id + ", " : std::string()) << "trial " << f.trial << " (seed " << f.seed << ", d=" << f.d.value_or(0)
        << ", H=" << f.H.value_or(0) << "): " << f.reason << "\n    replay: " << f.command << "\n";
    }
}
}  // namespace

std::string verify_report(const VerifyResult& v) {
  std::ostringstream s;
  s << "mhaq verify: " << v.trials << " trials, seed " << v.seed << ", arith " << arith_name(v.arith);
  if (v.schedule != Schedule::paper) s << ", schedule " << schedule_name(v.schedule);
  if (!arith_facts(v.arith).exact) s << " (" << v.bits << " bits)";
  s << "\ndistribution: " << v.distribution << "\n\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-4s %6s %6s %6s %6s %6s %6s  %s\n", "", "trials", "passes", "repair", "fail", "degen", "unable", "worst");
  s << line;
  for (const ClaimRow& c : v.claims) {
    s << c.id << ". " << c.text << "\n";
    std::snprintf(line, sizeof line, "%-4s %6d %6d %6d %6d %6d %6d  %s\n", "", c.trials, c.passes, c.repaired, c.failures, c.degenerate, c.unable, c.worst.c_str());
    s << line;
  }
  if (v.claim == 4) {
    failing_lines(s, {v.claims.at(0)}, false);
    s << (v.ok ? "\nclaim 4 holds on every trial\n" : "\nCLAIM 4 FAILED\n");
    return s.str();
  }
  if (v.model_kind == "transformer") {
    // the attention claims' footer (repairs, degenerate draws, Schwartz-Zippel) does not apply
    for (const ClaimRow& c : v.claims)
      s << "\nnot identifiable: " << c.not_identifiable << " (each one a model that violates a stated condition; any other is a failure)\n";
    failing_lines(s, v.claims, true);
    s << (v.ok ? "\nclaim 5 holds on every trial that is not degenerate\n" : "\nCLAIM 5 FAILED\n");
    return s.str();
  }
  const DegenerateSummary& z = v.schwartz_zippel;
  s << "\nrepaired runs (H known; repaired pairs or fallback queries; own column above, not counted as passes of claims 2 and 3): " << z.repaired_known_h;
  s << "\nunrepaired degenerate draws (H known): " << z.degenerate_known_h << " of " << z.trials << ", observed rate " << fixed(z.observed_rate);
  if (z.bound_applies)
    s << "; Schwartz-Zippel bound (|S| = " << z.S << ", mean over trials) " << fmt(z.mean_bound.value_or(0))
      << (z.rate_within_bound ? " (rate within bound)" : " (RATE EXCEEDS BOUND)") << "; bound vacuous (>= 1) in " << z.vacuous_trials << " trials";
  else
    s << "; no Schwartz-Zippel bound for this schedule (" << z.derivation << ")";
  s << "; H0 runs degenerate: " << z.degenerate_h0 << " (same draws)\n";
  failing_lines(s, v.claims, true);
  s << (v.ok ? "\nall claims hold on every non-degenerate trial\n" : "\nSOME CLAIMS FAILED\n");
  return s.str();
}

int verify_exit_code(const VerifyResult& v) { return v.ok ? 0 : exit_code(ErrorKind::mismatch); }

std::optional<RateStudy> rate_study(const VerifyOptions& base, const std::vector<long>& ranges) {
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
  const std::vector<VerifyTrial> trials =
      distributed_trials(ranges.size() * per, threads_of(base), [&](size_t k) { return verify_trial(options_at(k / per), static_cast<int>(k % per)); });
  if (!is_root()) return std::nullopt;
  RateStudy out;
  for (size_t ri = 0; ri < ranges.size(); ++ri) {
    const long R = ranges[ri];
    const VerifyOptions o = options_at(ri);
    RateRow row;
    row.token_range = R;
    row.S = 2 * R + 1;
    double bsum = 0;
    std::map<std::pair<int, int>, std::array<double, 3>> cells;  // (d,H) -> trials, degenerate, bound sum
    for (size_t i = 0; i < per; ++i) {
      const VerifyTrial& rec = trials[ri * per + i];
      const TrialSpec& t = rec.spec;
      const Outcome got = recovery_outcome(o, rec.known.value(), t.H);
      const double b = schwartz_zippel_bound(t.d, t.H, row.S);
      ++row.trials;
      bsum += b;
      // a repaired draw was degenerate too (the event the bound is about)
      const bool dg = got.v == TrialVerdict::degenerate || got.v == TrialVerdict::repaired;
      row.degenerate += dg;
      row.unrepaired += got.v == TrialVerdict::degenerate;
      auto& c = cells[{t.d, t.H}];
      c[0] += 1;
      c[1] += dg;
      c[2] += b;
      if (got.v == TrialVerdict::fail) {
        ++out.wrong_answers;
        out.failing.push_back(FailingTrial{R, t.index, t.seed, std::nullopt, std::nullopt, got.reason, replay_command(o, t, 0)});
      }
    }
    for (const auto& [k, c] : cells) {
      const double rate = c[1] / c[0], mb = c[2] / c[0];
      row.cells.push_back(RateCell{k.first, k.second, static_cast<int>(c[0]), static_cast<int>(c[1]), rate, mb, rate <= mb});
      out.all_within_bound = out.all_within_bound && rate <= mb;
    }
    row.observed_rate = row.trials ? static_cast<double>(row.degenerate) / row.trials : 0;
    row.mean_bound = row.trials ? bsum / row.trials : 0;
    row.within = row.observed_rate <= row.mean_bound;
    out.all_within_bound = out.all_within_bound && row.within;
    out.rates.push_back(std::move(row));
  }
  out.ok = out.all_within_bound && out.wrong_answers == 0;
  out.arith = base.arith;
  out.seed = base.seed;
  out.trials_per_range = base.trials;
  out.distribution = distribution_text(base, "[-R, R] for each R below", true);
  return out;
}

std::string rate_report(const RateStudy& r) {
  std::ostringstream s;
  s << "mhaq verify --rates: " << r.trials_per_range << " trials per token range, seed " << r.seed << ", arith " << arith_name(r.arith)
    << " (H known runs)\ndistribution: " << r.distribution << "\n\n";
  char line[256];
  std::snprintf(line, sizeof line, "%4s %4s %7s %6s %9s %11s\n", "R", "|S|", "trials", "degen", "observed", "SZ bound");
  s << line;
  for (const RateRow& row : r.rates) {
    std::snprintf(line, sizeof line, "%4ld %4ld %7d %6d %9.3f %11.3f%s\n", row.token_range, row.S, row.trials, row.degenerate, row.observed_rate, row.mean_bound,
                  row.within ? "" : "  EXCEEDS BOUND");
    s << line;
  }
  s << "\nper (d, H): observed rate / bound\n";
  // one line per cell, one column per R
  std::map<std::pair<int, int>, std::string> cl;
  for (const RateRow& row : r.rates)
    for (const RateCell& c : row.cells) {
      std::snprintf(line, sizeof line, "  R=%ld: %d/%d = %.3f <= %.3f%s", row.token_range, c.degenerate, c.trials, c.observed_rate, c.bound, c.within ? "" : " EXCEEDS");
      cl[{c.d, c.H}] += line;
    }
  for (const auto& [k, txt] : cl) s << "  d=" << k.first << " H=" << k.second << ":" << txt << "\n";
  for (const FailingTrial& f : r.failing)
    s << "WRONG ANSWER at R=" << f.R.value_or(0) << ", trial " << f.trial << ": " << f.reason << "\n  replay: " << f.command << "\n";
  s << (r.ok ? "\nevery observed rate is within its bound\n" : "\nFAILED: a rate exceeds its bound or an answer was wrong\n");
  return s.str();
}

int rate_exit_code(const RateStudy& r) { return r.ok ? 0 : exit_code(ErrorKind::mismatch); }

}  // namespace mhaq
