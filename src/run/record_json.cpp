// The run record's JSON (run/record_json.hpp): one list of the record's keys,
// fields(), walked by the writer and by the reader, so that what is written
// is what is read back.
#include "mhaq/run/record_json.hpp"

#include "mhaq/model/factored.hpp"

namespace mhaq {

using nlohmann::json;

const char* self_check_name(SelfCheck s) {
  switch (s) {
    case SelfCheck::no: return "no";
    case SelfCheck::yes: return "yes";
    case SelfCheck::unknown: return "unknown";
    case SelfCheck::none: return "none";
  }
  return "unknown";
}

const char* heads_known_name(HeadsKnown h) { return h == HeadsKnown::exact ? "exact" : "upper bound H0"; }

namespace {

json num(double x) { return std::isfinite(x) ? json(x) : json(nullptr); }

// An enumeration's JSON name and its reading.
template <class E>
struct EnumCodec;
template <class E, const char* (*Name)(E), E (*Parse)(const std::string&)>
struct NamedEnum {
  static std::string name(E e) { return Name(e); }
  static E parse(const std::string& s) { return Parse(s); }
};
template <class E, const char* (*Name)(E), E... All>
struct ListedEnum {
  static std::string name(E e) { return Name(e); }
  static E parse(const std::string& s) {
    for (E e : {All...})
      if (s == Name(e)) return e;
    throw Error(ErrorKind::input, "unknown value \"" + s + "\" in a run record");
  }
};
template <> struct EnumCodec<Arith> : NamedEnum<Arith, arith_name, parse_arith> {};
template <> struct EnumCodec<Schedule> : NamedEnum<Schedule, schedule_name, parse_schedule> {};
template <> struct EnumCodec<Design> : NamedEnum<Design, design_name, parse_design> {};
template <> struct EnumCodec<NoisePattern> : NamedEnum<NoisePattern, noise_pattern_name, parse_noise_pattern> {};
template <> struct EnumCodec<ExactSolver> : NamedEnum<ExactSolver, exact_solver_name, parse_exact_solver> {};
template <> struct EnumCodec<BaselineMethod> : NamedEnum<BaselineMethod, baseline_method_name, parse_baseline_method> {};
template <> struct EnumCodec<Status> : NamedEnum<Status, status_name, parse_status> {};
constexpr const char* truth_text(Truth t) { return truth_name(t); }
template <> struct EnumCodec<Truth> : ListedEnum<Truth, truth_text, Truth::no, Truth::yes, Truth::unknown> {};
template <> struct EnumCodec<SelfCheck> : ListedEnum<SelfCheck, self_check_name, SelfCheck::no, SelfCheck::yes, SelfCheck::unknown, SelfCheck::none> {};
template <> struct EnumCodec<HeadsKnown> : ListedEnum<HeadsKnown, heads_known_name, HeadsKnown::exact, HeadsKnown::upper_bound> {};

// A nested record's keys, in the order of its struct.
template <class V> void nested(ExactCostRecord& x, V& v) {
  v("L", x.L), v("max_answer_degree", x.max_answer_degree), v("total_answer_degree", x.total_answer_degree), v("max_degree_budget", x.max_degree_budget);
}
template <class V> void nested(PrecisionAttempt& x, V& v) {
  v("bits", x.bits), v("status", x.status), v("certified_relative_error", x.certified_relative_error);
}
template <class V> void nested(RepairRecord& x, V& v) { v("pair", x.pair), v("reason", x.reason), v("route", x.route), v("queries", x.queries); }
template <class V> void nested(HeadRecord& x, V& v) { v("W", x.W), v("v", x.v), v("c", x.c); }
template <class V> void nested(TransformerRecord::Neuron& x, V& v) { v("u", x.u), v("U", x.U); }
template <class V> void nested(PhaseQueries& x, V& v) { v("attention", x.attention), v("regions", x.regions), v("verification", x.verification); }
template <class V> void nested(PathRecord& x, V& v) {
  v("probes", x.probes), v("crossings", x.crossings), v("undecided_flats", x.undecided_flats), v("test_probes", x.test_probes);
}
template <class V> void nested(FunctionalCheck& x, V& v) {
  std::string lengths = "1-8";  // the fresh sequences' lengths, fixed
  v("sequences", x.sequences), v("lengths", lengths), v("zero_differences", x.zero_differences), v("all_zero", x.all_zero);
}

// Every key of the record, with the member that holds it.
template <class R, class V>
void fields(R& r, V&& v) {
  RunRecord& run = r.run;
  v("model_kind", run.kind), v("method", run.method), v("arith", run.arith), v("bits", run.bits), v("d", run.d), v("H", run.H),
      v("heads_known", run.heads_known), v("neurons_told", run.neurons_told), v("seed", run.seed), v("bias", run.bias), v("token_range", run.token_range),
      v("token_den", run.token_den), v("samples_per_pair", run.samples_per_pair), v("note", run.note), v("exact_solver", run.exact_solver),
      v("bases_source", run.bases_source), v("subspace_dims", run.subspace_dims), v("scale_log2_max", run.scale_log2_max);
  PlanRecord& p = r.plan;
  v("schedule", p.schedule), v("paper_bound", p.paper_bound), v("attention_paper_bound", p.attention_paper_bound),
      v("schedule_count", p.schedule_count), v("rank_bound", p.rank_bound), v("parameter_floor", p.parameter_floor), v("query_bound", p.query_bound),
      v("max_length_bound", p.max_length_bound), v("exact_cost", p.exact_cost);
  DesignRecord& g = r.design;
  v("design", g.kind), v("pilot_queries", g.pilot_queries), v("design_queries", g.design_queries), v("pilot_status", g.pilot_status),
      v("pilot_schedule", g.pilot_schedule), v("pilot_heads", g.pilot_heads), v("design_evaluations", g.design_evaluations),
      v("design_searched", g.design_searched), v("kappa_predicted", g.kappa_predicted), v("kappa_rms_predicted", g.kappa_rms_predicted),
      v("kappa_rms_predicted_start", g.kappa_rms_predicted_start), v("pilot_kind", g.pilot_kind), v("misplaced", g.misplaced),
      v("query_budget", g.query_budget), v("placed_rounds", g.placed_rounds), v("placed_reestimates", g.placed_reestimates),
      v("max_pole_shift", g.max_pole_shift), v("pair_log2_cond_max", g.pair_log2_cond_max), v("offsets_log2_cond_max", g.offsets_log2_cond_max),
      v("max_rel_radius_log2", g.max_rel_radius_log2);
  OracleRecord& o = r.oracle;
  v("oracle", o.name), v("oracle_error", o.error), v("oracle_bits", o.bits), v("noise_eps", o.noise_eps), v("noise_seed", o.noise_seed),
      v("noise_pattern", o.noise_pattern);
  EvidenceRecord& e = r.evidence;
  v("queries", e.queries), v("max_length", e.max_length), v("L", e.L), v("heads_recovered", e.heads_recovered), v("heads_found", e.heads_found),
      v("ranks", e.ranks), v("neurons_recovered", e.neurons_recovered), v("redraws", e.redraws), v("self_check", e.self_check), v("self_check_note", e.self_check_note),
      v("verification", e.verification), v("fallback_pairs", e.fallback_pairs), v("fallback_queries", e.fallback_queries),
      v("repairs", e.repairs), v("repair_queries", e.repair_queries), v("grid_witness_queries", e.grid_witness_queries),
      v("repaired_pairs", e.repaired_pairs), v("heads", e.heads), v("beta", e.beta), v("model", e.model), v("queries_by_phase", e.queries_by_phase),
      v("path", e.path), v("angular_resolution_deg", e.angular_resolution_deg), v("queries_targeted", e.queries_targeted);
  JudgeRecord& j = r.judge;
  v("status", j.status), v("remedy", j.remedy), v("blind_status", j.blind_status), v("tolerance", j.tolerance),
      v("tolerance_decimal", j.tolerance_decimal), v("decision_tolerance", j.decision_tolerance), v("error_estimate", j.error_estimate),
      v("error_estimate_decimal", j.error_estimate_decimal), v("estimate_note", j.estimate_note), v("certified_error", j.certified_error),
      v("certified_error_decimal", j.certified_error_decimal), v("answer_assumption", j.answer_assumption), v("judge_route", j.judge_route),
      v("judge_bits", j.judge_bits), v("judge_note", j.judge_note);
  TruthRecord& t = r.truth;
  v("heads_true", t.heads_true), v("neurons_true", t.neurons_true), v("exact_match", t.exact_match), v("contains_truth", t.contains_truth),
      v("functional_check", t.functional_check), v("max_radius", t.max_radius), v("max_radius_decimal", t.max_radius_decimal),
      v("max_rel_error", t.max_rel_error), v("max_rel_error_decimal", t.max_rel_error_decimal), v("wrong", t.wrong),
      v("observed_error", t.observed_error), v("certified_relative_error", t.certified_relative_error);
  StudyRecord& s = r.study;
  v("kappa", s.kappa), v("kappa_times_eps", s.kappa_times_eps), v("kappa_rel", s.kappa_rel), v("kappa_rms", s.kappa_rms),
      v("kappa_pair", s.kappa_pair), v("kappa_note", s.kappa_note), v("certified_bits", s.certified_bits), v("certified_bound", s.certified_bound),
      v("ball_bound", s.ball_bound), v("certified_note", s.certified_note), v("ball_note", s.ball_note), v("target_error", s.target_error),
      v("kappa_estimate", s.kappa_estimate), v("estimate_bits", s.estimate_bits), v("bits_start", s.bits_start), v("bits_used", s.bits_used),
      v("oracle_calls", s.oracle_calls), v("attempts", s.attempts);
  OutputRecord& out = r.output;
  v("certificate_note", out.certificate_note), v("model_conversion", out.model_conversion), v("certificate", out.certificate);
}

template <class T>
concept Enum = requires(T x) { EnumCodec<T>::name(x); };
template <class T>
concept Record = requires(T& x, int& v) { nested(x, v); };
template <class T>
concept Scalar = std::integral<T> || std::same_as<T, std::string>;

// ---- the writer: each set field under its key
json value(double x);
template <Scalar T> json value(const T& x);
template <Enum E> json value(E x);
json value(const ModelFileInfo& x);
json value(const TransformerRecord& x);
template <class T> json value(const std::vector<T>& xs);
template <Record T> json value(const T& x);

struct Writer {
  json& j;
  template <class T>
  void operator()(const char* key, const T& x) { j[key] = value(x); }
  template <class T>
  void operator()(const char* key, const std::optional<T>& x) {
    if (x) j[key] = value(*x);
  }
  void operator()(const char* key, const oracle_protocol::ModelKind& k) {  // written for transformers only
    if (k == oracle_protocol::ModelKind::transformer) j[key] = oracle_protocol::model_kind_name(k);
  }
};

json value(double x) { return num(x); }
template <Scalar T> json value(const T& x) { return x; }
template <Enum E> json value(E x) { return EnumCodec<E>::name(x); }
json value(const ModelFileInfo& x) { return conversion_json(x); }
json value(const TransformerRecord& x) {
  json heads = json::array();
  for (const auto& W : x.W) heads.push_back({{"W", value(W)}});
  return {{"heads", heads}, {"neurons", value(x.neurons)}};
}
template <class T> json value(const std::vector<T>& xs) {
  json a = json::array();
  for (const T& x : xs) a.push_back(value(x));
  return a;
}
template <Record T> json value(const T& x) {
  json o = json::object();
  Writer w{o};
  nested(const_cast<T&>(x), w);  // the walk only reads
  return o;
}

// ---- the reader: each key present (and not null) into its field
void read(const json& j, double& x);
template <Scalar T> void read(const json& j, T& x);
template <Enum E> void read(const json& j, E& x);
void read(const json& j, ModelFileInfo& x);
void read(const json& j, TransformerRecord& x);
template <class T> void read(const json& j, std::vector<T>& xs);
template <Record T> void read(const json& j, T& x);

struct Reader {
  const json& j;
  template <class T>
  void operator()(const char* key, T& x) {
    if (j.contains(key) && !j[key].is_null()) read(j[key], x);
  }
  template <class T>
  void operator()(const char* key, std::optional<T>& x) {
    if (!j.contains(key) || j[key].is_null()) return;
    T v{};
    read(j[key], v);
    x = v;
  }
  void operator()(const char* key, std::optional<double>& x) {
    if (j.contains(key) && j[key].is_number()) x = j[key].get<double>();
  }
  void operator()(const char* key, oracle_protocol::ModelKind& k) {
    k = j.value(key, "") == "transformer" ? oracle_protocol::ModelKind::transformer : oracle_protocol::ModelKind::attention;
  }
};

void read(const json& j, double& x) { x = j.is_number() ? j.get<double>() : NAN; }
template <Scalar T> void read(const json& j, T& x) { x = j.get<T>(); }
template <Enum E> void read(const json& j, E& x) { x = EnumCodec<E>::parse(j.get<std::string>()); }
void read(const json& j, ModelFileInfo& x) {
  x.format = j.value("format", x.format);
  x.d = j.value("d", 0);
  x.heads = j.value("heads", 0);
  x.d_k = j.value("d_k", 0);
  x.d_v = j.value("d_v", 0);
  x.d_out = j.value("d_out", 0);
  x.projection = j.value("output_projection", "");
  x.scale = j.value("scale", "");
  x.conversion = j.value("conversion", "");
}
void read(const json& j, TransformerRecord& x) {
  for (const json& h : j.value("heads", json::array())) read(h.value("W", json::array()), x.W.emplace_back());
  read(j.value("neurons", json::array()), x.neurons);
}
template <class T> void read(const json& j, std::vector<T>& xs) {
  for (const json& e : j) read(e, xs.emplace_back());
}
template <Record T> void read(const json& j, T& x) {
  Reader r{j};
  nested(x, r);
}

}  // namespace

json record_json(const RecoverResult& r) {
  json j = json::object();
  fields(const_cast<RecoverResult&>(r), Writer{j});  // the walk only reads
  if (r.judge.status != Status::ok) j["message"] = r.judge.message;
  return j;
}

RecoverResult record_from_json(const json& doc) {
  RecoverResult r;
  fields(r, Reader{doc});
  r.judge.message = doc.value("message", "");
  if (!doc.contains("status")) throw Error(ErrorKind::input, "a run record without a status");
  return r;
}

std::string json_text(double x) { return num(x).dump(); }
std::string json_text(const std::vector<std::string>& xs) { return json(xs).dump(); }
std::string json_text(const std::vector<std::vector<std::string>>& xs) { return json(xs).dump(); }
std::string json_text(const std::vector<long>& xs) { return json(xs).dump(); }

}  // namespace mhaq
