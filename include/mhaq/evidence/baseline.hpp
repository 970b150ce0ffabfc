// Running the prior-work baselines (baselines/prior_work.hpp) on a hidden
// model, and `mhaq compare`: mhaq's schedules and every applicable baseline
// on the same model, one row per method, judged against the same truth.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "mhaq/baselines/prior_work.hpp"
#include "mhaq/model/model.hpp"
#include "mhaq/run/recover.hpp"

namespace mhaq {

// Head bases, from a model file's "bases" field or a bases file
// {"format": "mhaq-bases", "version": 1, "d": D, "bases": [[v, ...], ...]}
// (one list of basis vectors per head, entries exact as in model files).
// Returns false when the text holds no bases; Error(input) when malformed.
bool bases_from_json_text(const std::string& text, int d, std::vector<QMat>& bases);
std::string bases_json(const std::vector<QMat>& bases);  // the "bases" value

// A model whose heads occupy pairwise orthogonal subspaces (generate
// --orthogonal): a random orthogonal basis with entries in {0, 1, -1} (random
// coordinate order and signs, random pairs mixed as (e_a + e_b, e_a - e_b)),
// its vectors split among the H heads (as evenly as possible); head h has
// W_h = P_h A_h P_h^T and v_h = P_h b_h with A_h, b_h drawn as W and v are.
Model generate_orthogonal_model(const GenerateOptions& g, std::vector<QMat>& bases);
std::string model_with_bases_to_json_text(const Model& m, const std::vector<QMat>& bases);

struct BaselineRun {
  BaselineMethod method = BaselineMethod::single_head;
  std::vector<QMat> bases;  // orthogonal
  std::string bases_source; // "file", "model file", "axis-aligned guess"
  Rational w_bound{1};      // the prior work's bound on |W_ij| for its logit scaling
};

// One baseline run, in the record recover fills (run/run_result.hpp: status by the judge,
// queries, max_length, query_bound, max_length_bound = 2, heads, the
// comparison with the truth, wrong = returned heads that disagree with the
// truth), plus method, bases_source and, for balls and floats, the
// baseline's own kappa (its heads differentiated on jets; noise
// amplification comparable with mhaq's kappa).
RecoverResult baseline_run(const Model& truth, const BaselineRun& b, const RecoverOptions& o);
std::string baseline_report(const RecoverResult& r);

// One method's run on a model, as compare lists it: the run's status, cost
// and comparison with the truth. max_rel_error is +inf for a wrong head
// count, 0 for exact equality and NaN when no parameters were compared;
// wrong: parameters returned that disagree with the known truth.
struct CompareRow {
  std::string method;
  Arith arith = Arith::exact;
  Status status = Status::ok;
  long queries = 0, max_length = 0, heads_true = 0, heads_recovered = 0;
  std::string error;  // the comparison with the truth, in words
  double max_rel_error = 0;
  bool wrong = false;
  std::optional<std::string> message;  // a status other than ok: why
  std::optional<bool> exact_match, contains_truth;
  std::optional<double> kappa, observed_error;
  std::optional<long> query_bound, paper_bound;
  std::optional<std::string> bases_source;
};
struct CompareResult {
  int d = 0, heads_true = 0;
  Arith arith = Arith::exact;
  std::uint64_t seed = 0;
  std::optional<std::string> noise_eps;
  std::vector<CompareRow> rows;
};

// mhaq (paper, lean) and the baselines that apply (single-head always;
// orthogonal with the known bases when given, and with axis-aligned guessed
// bases when 2 <= H <= d), all at o.arith, one row per method. As JSON
// {"format": "mhaq-compare", ..., "rows": [...]} (schema in
// docs/studies/baselines.md).
CompareResult compare_methods(const Model& truth, const std::vector<QMat>* bases, const RecoverOptions& o);
nlohmann::json compare_json(const CompareResult& c);
std::string compare_report(const CompareResult& c);

// The contrast study: three families (single-head models, orthogonal models
// with known bases, general multi-head models including shared W and
// cancelling v), `trials` models each; mhaq at `arith`, the baselines at
// `baseline_arith` (bits for ball/mpfr). Per family and method: runs, ok,
// wrong, off_0_1 (returned parameters off by more than 0.1 relative, or
// equality failing in exact mode), failed (no parameters), median queries
// and median max_rel_error.
struct StudyOptions {
  int trials = 20;
  std::uint64_t seed = 1;
  Arith arith = Arith::exact;
  Arith baseline_arith = Arith::mpfr;
  long bits = 256;
  std::vector<std::string> families{"single", "orthogonal", "general"};
};
// A method's tally over a family's runs; the medians are absent when there
// is nothing to take them of, +inf when the middle run is infinitely off.
struct StudyMethod {
  std::string method;
  Arith arith = Arith::exact;
  int runs = 0, ok = 0, wrong = 0, off_0_1 = 0, failed = 0, degenerate = 0;
  std::optional<double> median_queries, median_error;
};
struct StudyTrial {
  int trial = 0, d = 0, heads = 0;
  std::string kind;  // plain, share_w, cancel_v
  std::uint64_t model_seed = 0;
  std::vector<CompareRow> rows;
};
struct StudyFamily {
  std::string family;
  int trials = 0;
  std::vector<StudyMethod> methods;
  std::vector<StudyTrial> runs;
};
struct StudyResult {
  std::uint64_t seed = 0;
  Arith arith = Arith::exact, baseline_arith = Arith::exact;
  long bits = 0;
  std::vector<StudyFamily> families;
};
StudyResult compare_study(const StudyOptions& s);
nlohmann::json study_json(const StudyResult& r);  // {"format": "mhaq-compare-study", ...}
std::string study_report(const StudyResult& r);

}  // namespace mhaq
