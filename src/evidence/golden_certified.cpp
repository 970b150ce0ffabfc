#include "mhaq/evidence/golden_certified.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "mhaq/arith/numbers.hpp"
#include "mhaq/base/precision.hpp"
#include "mhaq/base/error.hpp"
#include "mhaq/base/json_in.hpp"
#include "mhaq/base/limits.hpp"
#include "mhaq/base/text.hpp"
#include "mhaq/check/golden_certified.hpp"
#include "mhaq/check/json_stream.hpp"
#include "mhaq/model/certified_eval.hpp"
#include "mhaq/model/factored.hpp"
#include "mhaq/oracle/oracle_stack.hpp"
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
  const json& runs = json_member(q, path, "runs");
  if (!runs.is_array() || runs.empty() || static_cast<long>(runs.size()) > check::limits::max_runs)
    throw_input(path + ".runs: expected 1 to " + std::to_string(check::limits::max_runs) + " runs");
  Query out;
  for (size_t r = 0; r < runs.size(); ++r) {
    const std::string rp = json_index_path(path + ".runs", r);
    const json& t = json_member(runs[r], rp, "token");
    if (!t.is_array() || static_cast<long>(t.size()) != d) throw_input(rp + ".token: expected " + std::to_string(d) + " entries");
    Run run;
    for (size_t i = 0; i < t.size(); ++i) run.token.push_back(rational_from_json(t[i], json_index_path(rp + ".token", i)));
    run.count = json_long(json_member(runs[r], rp, "count"), 1, 1L << 30, rp + ".count");
    out.push_back(std::move(run));
  }
  return out;
}
}  // namespace

namespace golden_internal {
const json& inputs_sequences(const json& j, const std::string& where, long max_d, int d, const char* holder) {
  if (!j.is_object()) throw_input(where + "top level must be an object {\"format\": \"mhaq-inputs\", \"version\": 1, \"d\": D, \"sequences\": [...]}");
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key() != "format" && it.key() != "version" && it.key() != "d" && it.key() != "sequences")
      throw_input(where + "unknown field " + quote_text(it.key()) + " (an inputs file has format, version, d, sequences)");
  if (const json* f = json_find(j, "format"); !f || *f != "mhaq-inputs") throw_input("format: must be \"mhaq-inputs\"");
  if (const json* v = json_find(j, "version"); v && !(v->is_number_integer() && *v == 1)) throw_input("version: must be 1");
  const long fd = json_long(json_member(j, "", "d"), 1, max_d, "d");
  if (fd != d) throw_input("d: the inputs have d = " + std::to_string(fd) + ", the " + holder + " has d = " + std::to_string(d));
  const json& s = json_member(j, "", "sequences");
  if (!s.is_array() || s.empty()) throw_input("sequences: expected a non-empty array of sequences");
  if (static_cast<long>(s.size()) > check::limits::max_golden_queries)
    throw_input("sequences: " + std::to_string(s.size()) + " sequences, more than the limit of " + std::to_string(check::limits::max_golden_queries));
  return s;
}
}  // namespace golden_internal

std::vector<Query> read_inputs_text(const std::string& text, int d) {
  const json j = parse_json_text(text);
  const json& s = golden_internal::inputs_sequences(j, "inputs file: ", limits::max_d, d, "model");
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

namespace {
// The option checks of export and the learner's H.
int certified_checks(const CertifiedGoldenInputs& in, const Model& canon) {
  in.model.validate();
  if (in.digits < 1 || in.digits > limits::max_digits) throw Error(ErrorKind::usage, "--digits must be in [1, " + std::to_string(limits::max_digits) + "]");
  check_option("--max-bits", in.max_bits, limits::min_bits, limits::max_bits);
  check_digits_within_bits(in.digits, in.max_bits);
  check_option("--bits", in.bits, limits::min_bits, limits::max_bits);
  if (canon.num_heads() == 0) throw_input("the model's canonical form has no heads (f is identically zero)");
  const int H = in.heads > 0 ? in.heads : canon.num_heads();
  if (in.learner && H > limits::max_golden_heads)
    throw_input("the learner's H = " + std::to_string(H) + " is more than the limit of " + std::to_string(limits::max_golden_heads) +
                " for golden files (--no-learner has no such limit)");
  return H;
}

// The learner's ball run: its queries, in order, and the file's "ball" member.
struct CertifiedLearnerRun {
  std::vector<Query> queries;
  ojson ball;
  bool contains_truth = false;
};
CertifiedLearnerRun certified_learner_run(const CertifiedGoldenInputs& in, int H, const Model& canon) {
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
  OracleStack<Ball> stack = OracleStack<Ball>::model(in.model, lo.tokens.den).recorded();
  const RecordingOracle<Ball>& rec = stack.record();
  Oracle<Ball>& black_box = stack.top();
  LearnResult<Ball> res;
  try {
    res = learn(black_box, lo);
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::internal || e.kind() == ErrorKind::usage) throw;
    throw Error(e.kind(), std::string("the learner's ball run: ") + e.what() +
                              "; the learner's queries are optional: golden export --certified --no-learner --inputs FILE writes the answers to your own sequences "
                              "without a learner run");
  }
  CertifiedLearnerRun run;
  run.queries = rec.queries.all();
  run.contains_truth = ball_heads_contain(res.heads, canon, res.beta ? &*res.beta : nullptr);
  run.ball = ojson{{"bits", in.bits},
                   {"queries", black_box.queries()},
                   {"max_length", black_box.max_length()},
                   {"heads_recovered", res.heads.size()},
                   {"heads", golden_internal::heads_binary_json(res.heads)}};
  if (res.beta) run.ball["beta"] = binary_json(*res.beta);
  run.ball["contains_truth"] = run.contains_truth;
  return run;
}

// The file's members before "queries".
ojson certified_head(const CertifiedGoldenInputs& in, int H, const Model& canon, size_t n_user) {
  ojson doc{{"format", "mhaq-golden"}, {"version", golden_version}, {"arith", "certified"}, {"digits", in.digits}, {"max_bits", in.max_bits},
            {"decimal_format", kCertifiedDecimal}};
  doc["inputs"] = ojson{{"model_source", "file"}, {"seed", in.seed}, {"learner_seed", learner_seed(in.seed)}, {"heads_learner", H}, {"schedule", "paper"},
                        {"learner", in.learner}, {"user_queries", n_user}};
  doc["model"] = model_json(in.model);
  doc["model_canonical"] = model_json(canon);
  return doc;
}

ojson certified_query_json(size_t i, const Query& q, bool learner) {
  ojson qj = query_json(i, q);
  qj["source"] = learner ? "learner" : "user";
  return qj;
}

ojson certified_answer_json(size_t i, const CertifiedValue& v) {
  return ojson{{"index", i}, {"decimal", v.decimal}, {"ball", ojson{{"mid", v.mid}, {"rad", v.rad}}}, {"bits", v.bits}};
}

ojson certified_summary(size_t n, size_t n_learner, size_t n_user, long most_bits, const CertifiedGoldenInputs& in, const CertifiedLearnerRun& run) {
  return ojson{{"queries", n},
               {"learner_queries", n_learner},
               {"user_queries", n_user},
               {"max_answer_bits", most_bits},
               {"ball_contains_canonical_heads", in.learner ? ojson(run.contains_truth) : ojson(nullptr)}};
}

void check_user_query(const Query& q, int d) {
  if (q.empty() || static_cast<long>(q.size()) > check::limits::max_runs) throw_input("inputs: a sequence of " + std::to_string(q.size()) + " tokens");
  for (const auto& r : q)
    if (static_cast<int>(r.token.size()) != d) throw_input("inputs: a token of " + std::to_string(r.token.size()) + " entries for d = " + std::to_string(d));
}

json plain(const ojson& j) { return json::parse(j.dump()); }
}  // namespace

std::string golden_export_certified(const CertifiedGoldenInputs& in) {
  const Model canon = in.model.canonical();
  const int H = certified_checks(in, canon);
  if (!in.learner && in.user.empty()) throw Error(ErrorKind::usage, "a certified golden file needs queries: the learner's, or --inputs FILE");
  CertifiedLearnerRun run;
  if (in.learner) run = certified_learner_run(in, H, canon);
  for (const auto& q : in.user) check_user_query(q, in.model.d);
  const size_t n = run.queries.size() + in.user.size();
  if (static_cast<long>(n) > check::limits::max_golden_queries)
    throw_input(std::to_string(n) + " queries, more than the limit of " + std::to_string(check::limits::max_golden_queries));
  ojson doc = certified_head(in, H, canon, in.user.size());
  ojson qs = ojson::array(), as = ojson::array();
  long most_bits = 0;
  for (size_t i = 0; i < n; ++i) {
    const bool learner = i < run.queries.size();
    const Query& q = learner ? run.queries[i] : in.user[i - run.queries.size()];
    qs.push_back(certified_query_json(i, q, learner));
    const CertifiedValue v = certified_answer(in.model, q, in.digits, in.max_bits);
    most_bits = std::max(most_bits, v.bits);
    as.push_back(certified_answer_json(i, v));
  }
  doc["queries"] = qs;
  doc["answers"] = as;
  if (in.learner) doc["ball"] = run.ball;
  doc["summary"] = certified_summary(n, run.queries.size(), in.user.size(), most_bits, in, run);
  return dump_layout(doc);
}

namespace {
// The inputs of the file's export, from its members (all but the queries).
CertifiedGoldenInputs certified_inputs(const json& doc, int threads) {
  CertifiedGoldenInputs in;
  in.threads = threads;
  in.digits = json_long(json_member(doc, "", "digits"), 1, limits::max_digits, "digits");
  in.max_bits = json_long(json_member(doc, "", "max_bits"), limits::min_bits, limits::max_bits, "max_bits");
  const json& inj = json_member(doc, "", "inputs");
  if (!inj.is_object()) throw_input("inputs: expected an object");
  in.seed = json_u64(json_member(inj, "inputs", "seed"), "inputs.seed");
  const json& lj = json_member(inj, "inputs", "learner");
  if (!lj.is_boolean()) throw_input("inputs.learner: expected true or false");
  in.learner = lj.get<bool>();
  // the check re-runs the learner: the same head limit as export
  in.heads = static_cast<int>(json_long(json_member(inj, "inputs", "heads_learner"), 1, in.learner ? limits::max_golden_heads : limits::max_file_heads,
                                        "inputs.heads_learner"));
  if (in.learner) {
    const json& b = json_member(doc, "", "ball");
    in.bits = json_long(json_member(b, "ball", "bits"), limits::min_bits, limits::max_bits, "ball.bits");
  }
  in.model = model_from_json(json_member(doc, "", "model"), "model");
  return in;
}

// Re-derives a certified file read as a stream: `read(s)` runs s over the
// file's text (twice: its members, then its queries one at a time); `checker`
// runs the separate checker on it.
GoldenCheckResult golden_check_certified_stream(const std::function<void(const check::JsonStream&)>& read,
                                                const std::function<check::CertifiedGoldenAnswers()>& checker, int threads) {
  json doc = json::object();
  std::vector<size_t> runs;
  std::vector<std::string> answers;  // each answer's text: far smaller than its parsed form
  bool have_answers = false;
  size_t n_learner = 0;
  check::JsonStream first;
  first.streamed = {"queries", "answers"};
  first.member = [&](const std::string& key, json&& v) { doc[key] = std::move(v); };
  first.array_end = [&](const std::string& key) { have_answers = have_answers || key == "answers"; };
  first.element = [&](const std::string& key, json&& q) {
    if (key == "answers") {
      if (static_cast<long>(answers.size()) >= check::limits::max_golden_queries)
        throw_input("answers: more than the limit of " + std::to_string(check::limits::max_golden_queries) + " answers");
      answers.push_back(q.dump());
      return;
    }
    const std::string p = json_index_path("queries", runs.size());
    if (static_cast<long>(runs.size()) >= check::limits::max_golden_queries)
      throw_input("queries: more than the limit of " + std::to_string(check::limits::max_golden_queries) + " queries");
    const json& r = json_member(q, p, "runs");
    runs.push_back(r.is_array() ? r.size() : 0);
    const json& src = json_member(q, p, "source");
    if (src == "learner") ++n_learner;
    else if (src != "user") throw_input(p + ".source: must be \"learner\" or \"user\", got " + json_shown(src));
  };
  read(first);
  CertifiedGoldenInputs in = certified_inputs(doc, threads);
  // Work before any evaluation (the checker bounds the same sum).
  long work = 0;
  for (size_t k : runs) {
    work += (static_cast<long>(k) + in.model.d) * in.model.d * in.model.num_heads();
    if (work > limits::max_golden_eval_work)
      throw_input("queries: re-deriving the answers takes more than the limit of " + std::to_string(limits::max_golden_eval_work) + " steps");
  }
  const Model canon = in.model.canonical();
  const int H = certified_checks(in, canon);
  CertifiedLearnerRun run;
  if (in.learner) run = certified_learner_run(in, H, canon);
  const size_t n = runs.size(), n_user = n - n_learner;
  GoldenCheckResult r;
  ojson want = certified_head(in, H, canon, n_user);
  if (in.learner) want["ball"] = run.ball;
  if (n_learner != run.queries.size())
    r.mismatches.push_back("queries: file has " + std::to_string(n_learner) + " learner queries, re-derived " + std::to_string(run.queries.size()));
  if (!have_answers || answers.size() != n) r.mismatches.push_back("answers: expected one answer per query (" + std::to_string(n) + ")");
  long most_bits = 0;
  size_t i = 0;
  check::JsonStream second;
  second.streamed = {"queries"};
  second.member = [](const std::string&, json&&) {};
  second.element = [&](const std::string&, json&& qj) {
    const std::string p = json_index_path("queries", i);
    const bool learner = i < run.queries.size();
    const Query q = learner ? run.queries[i] : query_of(qj, p, in.model.d);
    if (!learner) check_user_query(q, in.model.d);
    compare(plain(certified_query_json(i, q, learner)), qj, p, r);
    const CertifiedValue v = certified_answer(in.model, q, in.digits, in.max_bits);
    most_bits = std::max(most_bits, v.bits);
    if (i < answers.size()) compare(plain(certified_answer_json(i, v)), json::parse(answers[i]), json_index_path("answers", i), r);
    ++i;
  };
  read(second);
  want["summary"] = certified_summary(n, n_learner, n_user, most_bits, in, run);
  compare(plain(want), doc, "", r);
  // The separate checker, on the file's own model, queries and balls.
  check::CertifiedGoldenAnswers c;
  try {
    c = checker();
  } catch (const check::InputError& e) {
    throw_input(e.what());
  }
  for (const auto& f : c.failures) r.mismatches.push_back("checker: " + f.path + ": " + f.message);
  for (size_t k = 0; k < c.decimals.size() && k < answers.size(); ++k) {
    ++r.fields_checked;
    const json a = json::parse(answers[k]);
    const json* found = json_find(a, "decimal");
    const json dj = found ? *found : json(nullptr);
    if (!c.decimals[k].empty() && dj != c.decimals[k])
      r.mismatches.push_back(json_index_path("answers", k) + ".decimal: file has " + json_shown(dj) + ", the checker's evaluator gives \"" + c.decimals[k] + "\"");
  }
  r.fields_checked += c.checks;
  return r;
}
}  // namespace

GoldenCheckResult golden_check_certified(const json& doc, int threads) {
  const std::string text = doc.dump();
  return golden_check_certified_stream(
      [&](const check::JsonStream& s) {
        std::istringstream in(text);
        check::stream_json(in, s);
      },
      [&] { return check::certified_golden_answers(doc); }, threads);
}

GoldenCheckResult golden_check_certified_file(const std::string& path, int threads) {
  return golden_check_certified_stream(
      [&](const check::JsonStream& s) {
        std::ifstream in = check::open_json_file(path);
        check::stream_json(in, s);
      },
      [&] { return check::certified_golden_answers_file(path); }, threads);
}

}  // namespace mhaq
