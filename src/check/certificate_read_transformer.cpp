// The checker's strict reader of transformer certificates (docs/formats.md):
// every malformed field is an InputError naming its JSON path, and every
// size is bounded before anything is built or evaluated.
#include <string>
#include <vector>

#include "certificate_read.hpp"
#include "mhaq/check/limits.hpp"

namespace mhaq::check {

namespace {

using json = nlohmann::json;
using namespace cert_io;

constexpr size_t kEntry = static_cast<size_t>(limits::max_entry_chars);

// A d x d matrix, row-major, read entry by entry with `entry`.
template <class V, class F>
std::vector<V> read_matrix(const json& j, const std::string& path, int d, F&& entry) {
  if (!j.is_array() || static_cast<int>(j.size()) != d) bad(path, "expected " + std::to_string(d) + " rows");
  std::vector<V> out;
  for (int i = 0; i < d; ++i) {
    const std::string rp = at(path, static_cast<size_t>(i));
    if (!j[i].is_array() || static_cast<int>(j[i].size()) != d) bad(rp, "expected " + std::to_string(d) + " entries");
    for (int k = 0; k < d; ++k) out.push_back(entry(j[i][k], at(rp, static_cast<size_t>(k))));
  }
  return out;
}

std::vector<Num> read_nums(const json& j, const std::string& path, int d, Mode mode) {
  if (!j.is_array() || static_cast<int>(j.size()) != d) bad(path, "expected " + std::to_string(d) + " values");
  std::vector<Num> out;
  for (size_t i = 0; i < j.size(); ++i) out.push_back(read_num(j[i], at(path, i), mode));
  return out;
}

// One d-vector per head, H heads.
template <class V, class F>
std::vector<std::vector<V>> read_per_head(const json& j, const std::string& path, size_t H, F&& vec) {
  if (!j.is_array() || j.size() != H) bad(path, "expected one vector per head (" + std::to_string(H) + ")");
  std::vector<std::vector<V>> out;
  for (size_t h = 0; h < H; ++h) out.push_back(vec(j[h], at(path, h)));
  return out;
}

void read_facts(const json& doc, TfmCert& c) {
  using namespace limits;
  if (need_long(doc, "", "version", 0, 1000) != 1) bad("version", "unsupported (this checker reads version 1)");
  c.arith = need_str(doc, "", "arith");
  if (c.arith == "exact") c.mode = Mode::exact;
  else if (c.arith == "ball") c.mode = Mode::ball;
  else bad("arith", "must be exact or ball (transformer certificates record no other arithmetic)");
  if (c.mode == Mode::exact) c.L = need_long(doc, "", "L", 1, max_L);
  else c.bits = need_long(doc, "", "bits", min_bits, max_bits);
  const json& in = need(doc, "", "inputs");
  c.schedule = need_str(in, "inputs", "schedule");
  if (c.schedule != "paper" && c.schedule != "lean") bad("inputs.schedule", "must be paper or lean");
  c.heads_learner = need_long(in, "inputs", "heads_learner", 1, max_heads);
  c.neurons_told = need_long(in, "inputs", "neurons_told", 0, max_neurons);
  c.token_den = need_long(in, "inputs", "token_den", 1, max_token_den);
  const json& cl = need(doc, "", "claims");
  c.claim_queries = need_long(cl, "claims", "queries", 0, 1L << 40);
  c.claim_max_length = need_long(cl, "claims", "max_length", 0, 1L << 40);
  c.claim_heads = need_long(cl, "claims", "heads_recovered", 0, 1L << 20);
  c.claim_neurons = need_long(cl, "claims", "neurons_recovered", 0, 1L << 20);
  c.claim_crossings = need_long(cl, "claims", "crossings", 0, 1L << 20);
  const json& v = need(doc, "", "verification");
  c.verify_first = need_long(v, "verification", "first", 0, 1L << 40);
  c.verify_count = need_long(v, "verification", "count", 0, 1L << 40);
}

void read_model(const json& doc, TfmCert& c) {
  using namespace limits;
  const json& m = need(doc, "", "model");
  if (need_str(m, "model", "format") != "mhaq-transformer") bad("model.format", "must be \"mhaq-transformer\"");
  if (need_long(m, "model", "version", 0, 1000) != 1) bad("model.version", "must be 1");
  c.d = static_cast<int>(need_long(m, "model", "d", 1, max_d));
  const json& hs = need_array(m, "model", "heads", static_cast<size_t>(max_file_heads));
  const json& ns = need_array(m, "model", "neurons", static_cast<size_t>(max_neurons));
  if (hs.empty()) bad("model.heads", "empty");
  if (ns.empty()) bad("model.neurons", "empty");
  auto rat = [](const json& x, const std::string& p) { return read_rational(x, p, kEntry); };
  for (size_t h = 0; h < hs.size(); ++h) c.model_W.push_back(read_matrix<Qn>(need(hs[h], at("model.heads", h), "W"), at(at("model.heads", h), "W"), c.d, rat));
  for (size_t k = 0; k < ns.size(); ++k) {
    const std::string np = at("model.neurons", k);
    c.model_u.push_back(rat(need(ns[k], np, "u"), at(np, "u")));
    c.model_U.push_back(read_per_head<Qn>(need(ns[k], np, "U"), at(np, "U"), hs.size(),
                                          [&](const json& x, const std::string& p) { return read_qvec(x, p, c.d, kEntry); }));
  }
}

void read_queries(const json& doc, TfmCert& c) {
  using namespace limits;
  const json& qs = need_array(doc, "", "queries", static_cast<size_t>(max_golden_queries));
  const json& as = need_array(doc, "", "answers", static_cast<size_t>(max_golden_queries));
  if (as.size() != qs.size()) bad("answers", std::to_string(as.size()) + " answers for " + std::to_string(qs.size()) + " queries");
  // evaluation work, bounded before any query is read: every run of every
  // query costs about d^2 H per neuron, for the model and the recovered transformer
  long runs_total = 0;
  for (size_t i = 0; i < qs.size(); ++i) {
    const std::string p = at("queries", i);
    runs_total += static_cast<long>(need_array(qs[i], p, "runs", static_cast<size_t>(max_runs)).size()) + c.d;
  }
  const long per_run = static_cast<long>(c.d) * c.d * static_cast<long>(c.model_W.size()) * (static_cast<long>(c.model_u.size()) + max_neurons);
  if (runs_total > max_golden_eval_work / per_run)
    bad("queries", "the evaluation work (runs + d) d^2 H (neurons) exceeds the checker's limit of " + std::to_string(max_golden_eval_work));
  for (size_t i = 0; i < qs.size(); ++i) {
    const std::string p = at("queries", i);
    QueryRec r;
    r.index = need_long(qs[i], p, "index", 0, 1L << 40);
    r.length = need_long(qs[i], p, "length", 0, 1L << 40);
    const json& runs = need_array(qs[i], p, "runs", static_cast<size_t>(max_runs));
    if (runs.empty()) bad(at(p, "runs"), "empty");
    for (size_t k = 0; k < runs.size(); ++k) {
      const std::string rp = at(at(p, "runs"), k);
      Run run;
      run.token = read_qvec(need(runs[k], rp, "token"), at(rp, "token"), c.d, kEntry);
      run.count = need_long(runs[k], rp, "count", 1, 1L << 30);
      r.q.push_back(std::move(run));
    }
    c.queries.push_back(std::move(r));
  }
  for (size_t i = 0; i < as.size(); ++i) {
    if (c.mode == Mode::exact) c.exact_answers.push_back(read_qtau(as[i], at("answers", i)));
    else c.answers.push_back(read_num(as[i], at("answers", i), c.mode));
  }
}

void read_recovered(const json& doc, TfmCert& c) {
  using namespace limits;
  const json& hs = need_array(doc, "", "heads", static_cast<size_t>(max_heads));
  const json& ns = need_array(doc, "", "neurons", static_cast<size_t>(max_neurons));
  const json& cs = need_array(doc, "", "crossings", static_cast<size_t>(max_neurons));
  auto num = [&](const json& x, const std::string& p) { return read_num(x, p, c.mode); };
  auto nums = [&](const json& x, const std::string& p) { return read_nums(x, p, c.d, c.mode); };
  for (size_t h = 0; h < hs.size(); ++h) c.W.push_back(read_matrix<Num>(need(hs[h], at("heads", h), "W"), at(at("heads", h), "W"), c.d, num));
  for (size_t j = 0; j < ns.size(); ++j) {
    const std::string np = at("neurons", j);
    TfmNeuron n;
    n.u = num(need(ns[j], np, "u"), at(np, "u"));
    n.U = read_per_head<Num>(need(ns[j], np, "U"), at(np, "U"), hs.size(), nums);
    c.neurons.push_back(std::move(n));
  }
  for (size_t k = 0; k < cs.size(); ++k) {
    const std::string cp = at("crossings", k);
    TfmCrossing x;
    x.before = read_qvec(need(cs[k], cp, "before"), at(cp, "before"), c.d, kEntry);
    x.after = read_qvec(need(cs[k], cp, "after"), at(cp, "after"), c.d, kEntry);
    x.jump = read_per_head<Num>(need(cs[k], cp, "jump"), at(cp, "jump"), hs.size(), nums);
    c.crossings.push_back(std::move(x));
  }
}

}  // namespace

TfmCert read_transformer_certificate(const json& doc) {
  TfmCert c;
  read_facts(doc, c);
  read_model(doc, c);
  read_queries(doc, c);
  read_recovered(doc, c);
  return c;
}

}  // namespace mhaq::check
