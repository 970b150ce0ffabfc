#include "mhaq/evidence/golden_certified.hpp"

#include <algorithm>

#include "mhaq/arith/numbers.hpp"
#include "mhaq/base/precision.hpp"
#include "mhaq/base/error.hpp"
#include "mhaq/base/json_in.hpp"
#include "mhaq/base/limits.hpp"
#include "mhaq/base/text.hpp"
#include "mhaq/check/golden_certified.hpp"
#include "mhaq/model/certified_eval.hpp"
#include "mhaq/model/factored.hpp"
#include "mhaq/model/model_oracle.hpp"
#include "mhaq/stages/1-oracle/recording_oracle.hpp"
#include "mhaq/stages/learner.hpp"
#include "mhaq/run/json_out.hpp"
#include "mhaq/run/recover.hpp"

#include "golden_internal.hpp"

namespace mhaq {

namespace {
using json = nlohmann::json;

const char* kCertifiedDecimal =
    "scientific [-]d.ddd...e[+-]XX with exactly `digits` significant digits, correctly rounded to nearest (ties to even, possible only for "
    "rational values), decided by the Arb ball `ball` (mid and rad exact dyadic rationals) computed at `bits` bits; bits 0: f is rational "
    "and the ball is its exact value";

// Leaves of `want` and `got` compared; mismatches name the path.
void compare(const json& want, const json& got, const std::string& path, GoldenCheckResult& r) {
  if (r.mismatches.size() >= 50) return;
  if (want.is_object() && got.is_object()) {
    for (auto it = want.begin(); it != want.end(); ++it) {
      const std::string p = json_key_path(path, it.key());
      if (!got.contains(it.key())) r.mismatches.push_back(p + ": missing from the file");
      else compare(*it, got[it.key()], p, r);
    }
    for (auto it = got.begin(); it != got.end(); ++it)
      if (!want.contains(it.key())) r.mismatches.push_back(json_key_path(path, clean_text(it.key())) + ": not a field of a certified golden file");
    return;
  }
  if (want.is_array() && got.is_array()) {
    if (want.size() != got.size()) {
      r.mismatches.push_back(path + ": file has " + std::to_string(got.size()) + " entries, re-derived " + std::to_string(want.size()));
      return;
    }
    for (size_t i = 0; i < want.size(); ++i) compare(want[i], got[i], json_index_path(path, i), r);
    return;
  }
  ++r.fields_checked;
  if (want != got) r.mismatches.push_back(path + ": file has " + json_shown(got) + ", re-derived " + json_shown(want));
}

Query query_of(const json& q, const std::string& path, int d) {
  const json& runs = json_member(q, "runs", path);
  if (!runs.is_array() || runs.empty() || static_cast<long>(runs.size()) > check::limits::max_runs)
    throw_input(path + ".runs: expected 1 to " + std::to_string(check::limits::max_runs) + " runs");
  Query out;
  for (size_t r = 0; r < runs.size(); ++r) {
    const std::string rp = json_index_path(path + ".runs", r);
    const json& t = json_member(runs[r], "token", rp);
    if (!t.is_array() || static_cast<long>(t.size()) != d) throw_input(rp + ".token: expected " + std::to_string(d) + " entries");
    Run run;
    for (size_t i = 0; i < t.size(); ++i) run.token.push_back(rational_from_json(t[i], json_index_path(rp + ".token", i)));
    run.count = json_long(json_member(runs[r], "count", rp), 1, 1L << 30, rp + ".count");
    out.push_back(std::move(run));
  }
  return out;
}
}  // namespace

std::vector<Query> read_inputs_text(const std::string& text, int d) {
  const json j = parse_json_text(text);
  if (!j.is_object()) throw_input("inputs file: top level must be an object {\"format\": \"mhaq-inputs\", \"version\": 1, \"d\": D, \"sequences\": [...]}");
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key() != "format" && it.key() != "version" && it.key() != "d" && it.key() != "sequences")
      throw_input("inputs file: unknown field " + quote_text(it.key()) + " (an inputs file has format, version, d, sequences)");
  if (!j.contains("format") || j["format"] != "mhaq-inputs") throw_input("format: must be \"mhaq-inputs\"");
  if (j.contains("version") && !(j["version"].is_number_integer() && j["version"] == 1)) throw_input("version: must be 1");
  const long fd = json_long(json_member(j, "d", ""), 1, limits::max_d, "d");
  if (fd != d) throw_input("d: the inputs have d = " + std::to_string(fd) + ", the model has d = " + std::to_string(d));
  const json& s = json_member(j, "sequences", "");
  if (!s.is_array() || s.empty()) throw_input("sequences: expected a non-empty array of sequences");
  if (static_cast<long>(s.size()) > check::limits::max_golden_queries)
    throw_input("sequences: " + std::to_string(s.size()) + " sequences, more than the limit of " + std::to_string(check::limits::max_golden_queries));
  std::vector<Query> out;
  for (size_t i = 0; i < s.size(); ++i) {
    const std::string p = json_index_path("sequences", i);
    if (!s[i].is_array() || s[i].empty() || static_cast<long>(s[i].size()) > check::limits::max_runs)
      throw_input(p + ": expected a sequence of 1 to " + std::to_string(check::limits::max_runs) + " tokens");
    Query q;
    for (size_t t = 0; t < s[i].size(); ++t) {
      const std::string tp = json_index_path(p, t);
      const json& tok = s[i][t];
      if (!tok.is_array() || static_cast<long>(tok.size()) != d) throw_input(tp + ": expected a token of d = " + std::to_string(d) + " exact entries");
      Run run;
      for (size_t k = 0; k < tok.size(); ++k) run.token.push_back(rational_from_json(tok[k], json_index_path(tp, k)));
      q.push_back(std::move(run));
    }
    out.push_back(std::move(q));
  }
  return out;
}

std::string golden_export_certified(const CertifiedGoldenInputs& in) {
  in.model.validate();
  if (in.digits < 1 || in.digits > limits::max_digits) throw Error(ErrorKind::usage, "--digits must be in [1, " + std::to_string(limits::max_digits) + "]");
  check_option("--max-bits", in.max_bits, limits::min_bits, limits::max_bits);
  check_option("--bits", in.bits, limits::min_bits, limits::max_bits);
  if (!in.learner && in.user.empty()) throw Error(ErrorKind::usage, "a certified golden file needs queries: the learner's, or --inputs FILE");
  const Model canon = in.model.canonical();
  if (canon.num_heads() == 0) throw_input("the model's canonical form has no heads (f is identically zero)");
  const int H = in.heads > 0 ? in.heads : canon.num_heads();

  std::vector<Query> queries;
  std::vector<const char*> source;
  ojson run;
  if (in.learner) {
    if (H > limits::max_golden_heads)
      throw_input("the learner's H = " + std::to_string(H) + " is more than the limit of " + std::to_string(limits::max_golden_heads) +
                  " for golden files (--no-learner has no such limit)");
    check_plan_size(in.model.d, H, true, 0, ErrorKind::usage, "golden export");
    LearnOptions lo;
    lo.H = H;
    lo.schedule = Schedule::paper;
    lo.seed = learner_seed(in.seed);
    lo.tokens = default_tokens(Arith::ball);
    lo.threads = in.threads;
    lo.repair = false;
    lo.bias = in.model.has_bias();
    PrecisionScope scope(in.bits);
    ModelOracle<Ball> oracle(in.model, lo.tokens.den);
    RecordingOracle<Ball> rec(oracle);
    Oracle<Ball>& black_box = rec;
    const LearnResult<Ball> res = learn(black_box, lo);
    for (const auto& q : rec.queries) {
      queries.push_back(q);
      source.push_back("learner");
    }
    run = ojson{{"bits", in.bits},
                {"queries", black_box.queries()},
                {"max_length", black_box.max_length()},
                {"heads_recovered", res.heads.size()},
                {"heads", golden_internal::heads_binary_json(res.heads)}};
    if (res.beta) run["beta"] = binary_json(*res.beta);
    run["contains_truth"] = ball_heads_contain(res.heads, canon, res.beta ? &*res.beta : nullptr);
  }
  for (const auto& q : in.user) {
    if (q.empty() || static_cast<long>(q.size()) > check::limits::max_runs) throw_input("inputs: a sequence of " + std::to_string(q.size()) + " tokens");
    for (const auto& r : q)
      if (static_cast<int>(r.token.size()) != in.model.d) throw_input("inputs: a token of " + std::to_string(r.token.size()) + " entries for d = " + std::to_string(in.model.d));
    queries.push_back(q);
    source.push_back("user");
  }
  if (static_cast<long>(queries.size()) > check::limits::max_golden_queries)
    throw_input(std::to_string(queries.size()) + " queries, more than the limit of " + std::to_string(check::limits::max_golden_queries));

  ojson doc{{"format", "mhaq-golden"}, {"version", golden_version}, {"arith", "certified"}, {"digits", in.digits}, {"max_bits", in.max_bits},
            {"decimal_format", kCertifiedDecimal}};
  ojson inputs{{"model_source", "file"}, {"seed", in.seed}, {"learner_seed", learner_seed(in.seed)}, {"heads_learner", H}, {"schedule", "paper"},
               {"learner", in.learner}, {"user_queries", in.user.size()}};
  doc["inputs"] = inputs;
  doc["model"] = model_json(in.model);
  doc["model_canonical"] = model_json(canon);
  ojson qs = ojson::array(), as = ojson::array();
  long most_bits = 0;
  for (size_t i = 0; i < queries.size(); ++i) {
    ojson qj = query_json(i, queries[i]);
    qj["source"] = source[i];
    qs.push_back(qj);
    const CertifiedValue v = certified_answer(in.model, queries[i], in.digits, in.max_bits);
    most_bits = std::max(most_bits, v.bits);
    as.push_back(ojson{{"index", i}, {"decimal", v.decimal}, {"ball", ojson{{"mid", v.mid}, {"rad", v.rad}}}, {"bits", v.bits}});
  }
  doc["queries"] = qs;
  doc["answers"] = as;
  if (in.learner) doc["ball"] = run;
  const long learner_n = in.learner ? static_cast<long>(queries.size() - in.user.size()) : 0;
  doc["summary"] = ojson{{"queries", queries.size()},
                         {"learner_queries", learner_n},
                         {"user_queries", in.user.size()},
                         {"max_answer_bits", most_bits},
                         {"ball_contains_canonical_heads", in.learner ? ojson(run["contains_truth"].get<bool>()) : ojson(nullptr)}};
  return dump_layout(doc);
}

GoldenCheckResult golden_check_certified(const json& doc, int threads) {
  CertifiedGoldenInputs in;
  in.threads = threads;
  in.digits = json_long(json_member(doc, "digits", ""), 1, limits::max_digits, "digits");
  in.max_bits = json_long(json_member(doc, "max_bits", ""), limits::min_bits, limits::max_bits, "max_bits");
  const json& inj = json_member(doc, "inputs", "");
  if (!inj.is_object()) throw_input("inputs: expected an object");
  in.seed = json_u64(json_member(inj, "seed", "inputs"), "inputs.seed");
  const json& lj = json_member(inj, "learner", "inputs");
  if (!lj.is_boolean()) throw_input("inputs.learner: expected true or false");
  in.learner = lj.get<bool>();
  // the check re-runs the learner: the same head limit as export
  in.heads = static_cast<int>(json_long(json_member(inj, "heads_learner", "inputs"), 1, in.learner ? limits::max_golden_heads : limits::max_file_heads,
                                        "inputs.heads_learner"));
  if (in.learner) {
    const json& b = json_member(doc, "ball", "");
    in.bits = json_long(json_member(b, "bits", "ball"), limits::min_bits, limits::max_bits, "ball.bits");
  }
  in.model = model_from_json(json_member(doc, "model", ""), "model");
  const json& qs = json_member(doc, "queries", "");
  if (!qs.is_array() || static_cast<long>(qs.size()) > check::limits::max_golden_queries)
    throw_input("queries: expected an array of at most " + std::to_string(check::limits::max_golden_queries) + " queries");
  // Work before any evaluation (the checker bounds the same sum).
  long work = 0;
  for (size_t i = 0; i < qs.size(); ++i) {
    const json& runs = json_member(qs[i], "runs", json_index_path("queries", i));
    work += (static_cast<long>(runs.is_array() ? runs.size() : 0) + in.model.d) * in.model.d * in.model.num_heads();
    if (work > limits::max_golden_eval_work)
      throw_input("queries: re-deriving the answers takes more than the limit of " + std::to_string(limits::max_golden_eval_work) + " steps");
  }
  for (size_t i = 0; i < qs.size(); ++i) {
    const std::string p = json_index_path("queries", i);
    const json& src = json_member(qs[i], "source", p);
    if (src == "user") in.user.push_back(query_of(qs[i], p, in.model.d));
    else if (src != "learner") throw_input(p + ".source: must be \"learner\" or \"user\", got " + json_shown(src));
  }
  GoldenCheckResult r;
  const json want = json::parse(golden_export_certified(in));
  compare(want, doc, "", r);
  // The separate checker, on the file's own model, queries and balls.
  check::CertifiedGoldenAnswers c;
  try {
    c = check::certified_golden_answers(doc);
  } catch (const check::InputError& e) {
    throw_input(e.what());
  }
  const json& as = json_member(doc, "answers", "");
  for (const auto& f : c.failures) r.mismatches.push_back("checker: " + f.path + ": " + f.message);
  for (size_t i = 0; i < c.decimals.size() && i < as.size(); ++i) {
    ++r.fields_checked;
    const json& dj = as[i].contains("decimal") ? as[i]["decimal"] : json(nullptr);
    if (!c.decimals[i].empty() && dj != c.decimals[i])
      r.mismatches.push_back(json_index_path("answers", i) + ".decimal: file has " + json_shown(dj) + ", the checker's evaluator gives \"" + c.decimals[i] + "\"");
  }
  r.fields_checked += c.checks;
  return r;
}

}  // namespace mhaq
