// verify's documents as JSON (evidence/verify.hpp): the --json results of the
// claims table and the rate study, and a trial as the message that carries
// it between threads and ranks.
#include <cmath>

#include "mhaq/evidence/verify.hpp"
#include "mhaq/run/record_json.hpp"

namespace mhaq {

using nlohmann::json;

namespace {

json number_or_null(const std::optional<double>& x) { return x ? json(*x) : json(nullptr); }

json failing_json(const std::vector<FailingTrial>& fs) {
  json out = json::array();
  for (const FailingTrial& f : fs) {
    json j{{"trial", f.trial}, {"seed", f.seed}, {"reason", f.reason}, {"command", f.command}};
    if (f.R) j["R"] = *f.R;
    if (f.d) j["d"] = *f.d;
    if (f.H) j["H"] = *f.H;
    out.push_back(std::move(j));
  }
  return out;
}

json claim_json(const ClaimRow& c) {
  return json{{"claim", c.id + ". " + c.text}, {"id", c.id}, {"trials", c.trials}, {"passes", c.passes}, {"failures", c.failures},
              {"degenerate", c.degenerate}, {"repaired", c.repaired}, {"unable", c.unable}, {"not_identifiable", c.not_identifiable},
              {"worst", c.worst}, {"worst_value", number_or_null(c.worst_value)}, {"failing_trials", failing_json(c.failing)}};
}

json trial_row_json(const TrialRow& t, bool claim4) {
  json j{{"trial", t.trial}, {"seed", t.seed}, {"d", t.d}, {"H", t.H}};
  if (claim4) {
    j["eps"] = t.eps;
    j["status"] = status_name(t.status);
    if (t.kappa_times_eps) {
      j["kappa_times_eps"] = *t.kappa_times_eps;
      j["certified_bound"] = number_or_null(t.certified_bound);
    }
    return j;
  }
  j.update(json{{"raw_heads", t.raw_heads}, {"share_w", t.share_w}, {"cancel_v", t.cancel_v}, {"status_known_h", status_name(t.status)},
                {"bound", number_or_null(t.bound)}});
  if (t.H0) j["H0"] = *t.H0;
  if (t.status_h0) j["status_h0"] = status_name(*t.status_h0);
  return j;
}

json summary_json(const DegenerateSummary& z) {
  return json{{"token_range", z.token_range}, {"S", z.S}, {"trials", z.trials}, {"degenerate_known_h", z.degenerate_known_h},
              {"degenerate_h0", z.degenerate_h0}, {"repaired_known_h", z.repaired_known_h}, {"observed_rate", z.observed_rate},
              {"mean_bound", number_or_null(z.mean_bound)}, {"vacuous_trials", z.vacuous_trials}, {"rate_within_bound", z.rate_within_bound},
              {"bound_applies", z.bound_applies}, {"derivation", z.derivation}};
}

const char* status_word(bool ok) { return ok ? "ok" : "mismatch"; }

}  // namespace

json verify_json(const VerifyResult& v) {
  json claims = json::array(), trials = json::array();
  for (const ClaimRow& c : v.claims) claims.push_back(claim_json(c));
  for (const TrialRow& t : v.trial_list) trials.push_back(trial_row_json(t, v.claim == 4));
  json j{{"command", "verify"}, {"status", status_word(v.ok)},      {"arith", arith_name(v.arith)}, {"bits", v.bits},
         {"seed", v.seed},      {"trials", v.trials},               {"distribution", v.distribution}, {"claims", claims},
         {"trial_list", trials}};
  if (v.claim == 4) {
    j.update(json{{"claim", 4}, {"design", design_name(v.design)}, {"worst_bound_ratio", v.worst_bound_ratio},
                  {"worst_observed_over_bound", v.worst_observed_over_bound}});
    return j;
  }
  j.update(json{{"tolerance", number_or_null(v.tolerance)}, {"model_kind", v.model_kind}, {"schedule", schedule_name(v.schedule)},
                {"schwartz_zippel", summary_json(v.schwartz_zippel)}});
  return j;
}

json rate_json(const RateStudy& r) {
  json rows = json::array();
  for (const RateRow& row : r.rates) {
    json cells = json::array();
    for (const RateCell& c : row.cells)
      cells.push_back(json{{"d", c.d}, {"H", c.H}, {"trials", c.trials}, {"degenerate", c.degenerate}, {"observed_rate", c.observed_rate},
                           {"bound", c.bound}, {"within", c.within}});
    rows.push_back(json{{"token_range", row.token_range}, {"S", row.S}, {"trials", row.trials}, {"degenerate", row.degenerate}, {"unrepaired", row.unrepaired},
                        {"observed_rate", row.observed_rate}, {"mean_bound", row.mean_bound}, {"within", row.within}, {"cells", cells}});
  }
  return json{{"command", "verify --rates"},
              {"status", status_word(r.ok)},
              {"arith", arith_name(r.arith)},
              {"seed", r.seed},
              {"trials_per_range", r.trials_per_range},
              {"distribution", r.distribution},
              {"rates", rows},
              {"all_within_bound", r.all_within_bound},
              {"wrong_answers", r.wrong_answers},
              {"failing_trials", failing_json(r.failing)},
              {"derivation", "proofs/09-schwartz-zippel.md"}};
}

json verify_trial_json(const VerifyTrial& t) {
  const TrialSpec& s = t.spec;
  json j{{"trial", s.index}, {"seed", s.seed}};
  if (t.attention)
    j.update(json{{"d", s.d}, {"H", s.H}, {"raw_heads", s.raw_heads}, {"share_w", s.share_w}, {"cancel_v", s.cancel_v}});
  if (t.known) j["known"] = record_json(*t.known);
  if (t.h0) j.update(json{{"H0", t.H0}, {"h0", record_json(*t.h0)}});
  if (t.eps) j["eps"] = *t.eps;
  if (t.uniform) j["uniform"] = record_json(*t.uniform);
  if (t.worst) j["worst"] = record_json(*t.worst);
  if (const auto& tr = t.transformer)
    j["transformer"] = json{{"d", tr->spec.d}, {"H", tr->spec.H}, {"m", tr->spec.m}, {"share_w", tr->spec.share_w}, {"zero_neuron", tr->spec.zero_neuron},
                            {"parallel_neurons", tr->spec.parallel_neurons}, {"result", record_json(tr->result)}, {"condition", tr->condition}};
  return j;
}

VerifyTrial verify_trial_from_json(const json& j) {
  VerifyTrial t;
  TrialSpec& s = t.spec;
  s.index = j.at("trial").get<int>();
  s.seed = j.at("seed").get<std::uint64_t>();
  t.attention = j.contains("d");
  if (t.attention) {
    s.d = j.at("d").get<int>();
    s.H = j.at("H").get<int>();
    s.raw_heads = j.at("raw_heads").get<int>();
    s.share_w = j.at("share_w").get<bool>();
    s.cancel_v = j.at("cancel_v").get<bool>();
  }
  if (j.contains("known")) t.known = record_from_json(j.at("known"));
  if (j.contains("h0")) {
    t.H0 = j.at("H0").get<int>();
    t.h0 = record_from_json(j.at("h0"));
  }
  if (j.contains("eps")) t.eps = j.at("eps").get<std::string>();
  if (j.contains("uniform")) t.uniform = record_from_json(j.at("uniform"));
  if (j.contains("worst")) t.worst = record_from_json(j.at("worst"));
  if (j.contains("transformer")) {
    const json& tj = j.at("transformer");
    TransformerTrial tr;
    tr.spec.d = tj.at("d").get<int>();
    tr.spec.H = tj.at("H").get<int>();
    tr.spec.m = tj.at("m").get<int>();
    tr.spec.share_w = tj.at("share_w").get<bool>();
    tr.spec.zero_neuron = tj.at("zero_neuron").get<bool>();
    tr.spec.parallel_neurons = tj.at("parallel_neurons").get<bool>();
    tr.result = record_from_json(tj.at("result"));
    tr.condition = tj.at("condition").get<std::string>();
    t.transformer = std::move(tr);
  }
  return t;
}

}  // namespace mhaq
