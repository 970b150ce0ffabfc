// The lemma checks in page order, and the entry points of
// include/mhaq/evidence/prove.hpp: each check runs with its statement true,
// or with its broken variant, which must make it fail.
#include "prove_common.hpp"

namespace mhaq {

namespace {

struct Entry {
  const char* id;
  const char* title;
  const char* method;
  proof::CheckFn fn;
};
const std::vector<Entry>& registry() {
  static const std::vector<Entry> r = {
      {"01-pair-identity", "pair identity f(k) = P + sum c_h/(1 + r_h k)", "symbolic + exact randomized", proof::check_pair_identity},
      {"02-interpolation", "type-(H,H) interpolation: determinant, formulas, exact roots", "symbolic + exact randomized", proof::check_interpolation},
      {"03-bilinearity-and-links", "bilinear poles, link pairs, rigorous matcher", "symbolic + exact randomized", proof::check_bilinearity},
      {"04-chaining", "one length-1 query gives every f(0)", "symbolic + exact randomized", proof::check_chaining},
      {"05-query-count", "4Hd^2-2H+1 queries of length <= 2H+1; lean 1+2H(d^2+d-1)", "exhaustive", proof::check_query_count},
      {"06-canonical-form", "canonical form preserves f; recovery returns it", "exact randomized", proof::check_canonical},
      {"07-unknown-H", "rank H0+H+1 and unique minimal-degree interpolant", "exact randomized", proof::check_unknown_H},
      {"08-exactness-of-Q-tau", "Q(e^{1/L}) arithmetic decides real-number questions", "exact randomized + Arb", proof::check_exactness},
      {"11-first-order-sensitivity", "J = d(parameters)/d(answers) from the learner on jets; kappa", "finite differences at 1024 bits",
       proof::check_sensitivity},
      {"12-unique-assignment", "one assignment routine: none / unique / several matchings, by augmenting paths and alternating cycles", "exhaustive",
       proof::check_assignment},
      {"13-odd-part", "T(X) - T(-X) is attention with v_h = sum_j u_j U_{h,j}", "exact randomized", proof::check_odd_part},
      {"14-region-values", "sign-stable pairs: f(k) - f(0) = sum_h alpha_h(k) e_h(S)^T delta", "exact randomized", proof::check_region_values},
      {"15-path-crossings", "p -> q -> -p crosses each hyperplane once; the sign system", "exact randomized", proof::check_path_crossings},
      {"16-transformer-canonical", "the transformer's canonical form preserves T", "exact randomized", proof::check_transformer_canonical},
      {"17-baselines", "prior-work baselines: two-token sigmoid identity, isolation in orthogonal subspaces, the lift", "exact randomized", proof::check_baselines},
      {"18-compact-query-count", "compact schedule: 1+2Hd+(d-1)+s_H d(d-1) queries of length <= 2H+1, and its labelling graph", "exhaustive",
       proof::check_compact_count},
      {"19-known-residue-poles", "known residues and 2H-2 values fix the H poles: the common roots of the R_h are 0 and t* only", "symbolic + exact randomized",
       proof::check_known_residues},
      {"20-compact-limits", "what blocks further savings: the ratio's closed form, s = H values not enough, the m = 2 eliminant", "exhaustive + exact randomized",
       proof::check_compact_limits},
      {"21-repair-witness", "distinct canonical models differ at a random sequence of length 2H+1: a repaired run's witnesses", "exact randomized",
       proof::check_repair_witness},
      {"22-single-crossing", "a crossing accepted by the single-crossing test is one hyperplane up to the certified angle", "exact randomized + blind run",
       proof::check_single_crossing},
      {"23-head-split", "heads attending to different tokens on a neuron's hyperplane separate two neurons that share it", "exact randomized + blind run",
       proof::check_head_split},
      {"30-pair-sensitivity-closed-form", "a pair's inverse Jacobian in closed form; the predicted kappa of a design", "Arb balls + MPFR + jets",
       proof::check_pair_closed_form},
      {"31-mean-value-certified-bound", "verified ball solves; the mean-value bound holds and is first-order tight", "exact + Arb + MPFR randomized",
       proof::check_mean_value_bound},
      {"32-low-precision-estimate", "the float judge's kappa from jets at low precision, accepted when the replay's heads agree with the run's",
       "MPFR randomized", proof::check_low_precision_estimate},
      {"33-double-derivative-estimate", "the float judge's jets with double derivatives and running error bounds: the bounds hold, the estimate matches",
       "MPFR randomized", proof::check_double_derivative_estimate},
      {"34-placed-poles", "[a x k, b x m] answers f(k/m); an offset placed through M G^{-1} t plus a part orthogonal to the W_h b hits every target",
       "exact randomized", proof::check_placed_poles},
      {"35-replay-reuses-fits", "the float judge's replay at the run's precision takes the run's own pair fits: the same values and derivatives bit for bit",
       "MPFR randomized", proof::check_replay_reuses_fits},
      {"36-scaled-queries", "T([(c y) x k]) = c T([y x k]) for c > 0; a pair moved to c x with offset c delta keeps the region-value identity at S(x)",
       "exact randomized", proof::check_scaled_queries},
      {"37-placed-certified", "the pair system at ratios: its closed-form inverse Jacobian (for Krawczyk's test); labels by the residues' linear relation across offsets",
       "ball + exact randomized", proof::check_placed_certified},
      {"38-composed-estimate", "the float judge's kappa composed from the pairs' closed-form derivatives and the final solves equals the replay's",
       "MPFR randomized", proof::check_composed_estimate},
      {"39-grid-witness", "two distinct models agree at all 2H+1 pair witnesses (x, y) only on a degree-2 hypersurface: the small-grid guard",
       "exhaustive + exact", proof::check_grid_witness},
      {"40-float-judge", "a float ok: the run's heads within the tolerance of every model that fits the answers within their stated errors",
       "MPFR and double randomized + model 1", proof::check_float_judge},
      {"41-rank-schedule", "rank schedule: 1+2H(2dR-R^2+2d-R-1) queries; a skeleton completes every head of rank <= R, the check column refuses one above R",
       "exhaustive + exact randomized", proof::check_rank_schedule},
      {"42-bias-canonical", "biases: scores x_i^T (W_h x_N + c_h), beta added; the canonical form merges on (W, c); an affine across link",
       "exact randomized", proof::check_bias_canonical},
  };
  return r;
}

bool matches(const std::string& want, const std::string& id) { return !want.empty() && (want == id || want == id.substr(0, 2)); }

}  // namespace

std::vector<std::string> proof_lemma_ids() {
  std::vector<std::string> ids;
  for (const auto& e : registry()) ids.push_back(e.id);
  return ids;
}

LemmaCheck run_proof_check(const std::string& id, const ProveOptions& opt) {
  for (const auto& e : registry()) {
    if (id != e.id && id != std::string(e.id).substr(0, 2)) continue;
    LemmaCheck out;
    out.id = e.id;
    out.title = e.title;
    out.method = e.method;
    try {
      e.fn(opt, matches(opt.break_lemma, e.id), out);
      out.pass = true;
    } catch (const proof::CheckFailure& f) {
      out.pass = false;
      out.detail = "FAILED after " + std::to_string(out.cases) + " cases: " + f.what;
    } catch (const Error& err) {
      out.pass = false;
      out.detail = std::string("FAILED after ") + std::to_string(out.cases) + " cases with " + kind_name(err.kind()) + " error: " + err.what();
    }
    return out;
  }
  throw Error(ErrorKind::usage, "unknown lemma \"" + id + "\"");
}

std::vector<LemmaCheck> run_proof_checks(const ProveOptions& opt) {
  if (!opt.break_lemma.empty()) {
    bool known = false;
    for (const auto& e : registry()) known = known || matches(opt.break_lemma, e.id);
    if (!known) throw Error(ErrorKind::usage, "unknown lemma \"" + opt.break_lemma + "\" for --break");
  }
  std::vector<LemmaCheck> out;
  for (const auto& e : registry()) out.push_back(run_proof_check(e.id, opt));
  return out;
}

}  // namespace mhaq
