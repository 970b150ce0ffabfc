// The kernel golden checker's streaming read (mhaq/check/golden_kernel.hpp):
// the top-level members are kept, and each element of "sequences" is checked
// as soon as it is complete (mhaq/check/json_stream.hpp), so the file is
// never held whole.
// Nothing here comes from mhaq_lib (tests/check_separation.sh).
#include "mhaq/check/golden_kernel.hpp"
#include "mhaq/check/json_stream.hpp"

#include <algorithm>
#include <climits>
#include <exception>
#include <fstream>
#include <functional>
#include <set>
#include <thread>

#include "golden_kernel_internal.hpp"
#include "strict_read.hpp"
#include "mhaq/check/limits.hpp"

namespace mhaq::check {

namespace {
using json = nlohmann::json;

const char* kTopKeys[] = {"format", "version", "mhaq_version", "digits", "max_bits", "entry_format", "layer", "options", "sequences", "summary"};

struct Checking {
  int threads = 1;
  json top = json::object();
  kernel::Layer layer;
  kernel::Options options;
  bool started = false, ended = false;
  size_t next = 0;
  std::vector<json> batch;
  kernel::Tally tally;
  long work = 0;

  void start() {
    for (const char* k : {"format", "version", "digits", "max_bits", "layer", "options"})
      if (!top.contains(k)) bad(k, "missing before the sequences (the layer, options, digits and max_bits come first)");
    if (top["format"] != "mhaq-golden-kernel") bad("format", "must be \"mhaq-golden-kernel\"");
    if (top["version"] != 1) bad("version", "must be 1");
    options = kernel::read_options(top, top["options"]);
    started = true;
  }
  void take(json&& seq) {
    if (!started) start();
    // the evaluation work, from the shapes, before any evaluation
    const kernel::Layer& L = layer;
    const long n = seq.is_object() && seq.contains("tokens") && seq["tokens"].is_array() ? static_cast<long>(seq["tokens"].size()) : 0;
    const long rows = options.positions == "all" ? n : 1 + static_cast<long>(std::count(options.positions.begin(), options.positions.end(), ','));
    work += n * (static_cast<long>(L.heads + 2 * L.kv_heads) * L.d_k + static_cast<long>(L.kv_heads) * L.d_v) * L.d +
            rows * L.heads * n * (L.d_k + L.d_v) + rows * static_cast<long>(L.d_out) * L.heads * L.d_v;
    if (work > limits::max_golden_eval_work)
      bad(at("sequences", next), "re-deriving the sequences up to this one takes more than the limit of " + std::to_string(limits::max_golden_eval_work) + " steps");
    batch.push_back(std::move(seq));
    ++next;
    if (static_cast<int>(batch.size()) >= threads) flush();
  }
  // Checks the batch, in parallel; tallies merge in order, and an input error
  // of the lowest sequence wins.
  void flush() {
    const size_t first = next - batch.size();
    std::vector<kernel::Tally> part(batch.size());
    std::vector<std::exception_ptr> err(batch.size());
    auto one = [&](size_t i) {
      try {
        kernel::check_sequence(layer, options, batch[i], first + i, part[i]);
      } catch (...) {
        err[i] = std::current_exception();
      }
    };
    if (batch.size() == 1) {
      one(0);
    } else {
      std::vector<std::thread> pool;
      for (size_t i = 0; i < batch.size(); ++i)
        pool.emplace_back([&, i] {
          one(i);
          flint_cleanup();
        });
      for (auto& th : pool) th.join();
    }
    for (size_t i = 0; i < batch.size(); ++i) {
      if (err[i]) std::rethrow_exception(err[i]);
      kernel::Tally& p = part[i];
      tally.entries += p.entries, tally.checks += p.checks, tally.rows += p.rows, tally.undefined_rows += p.undefined_rows;
      tally.rational += p.rational, tally.max_bits = std::max(tally.max_bits, p.max_bits), tally.failures_total += p.failures_total;
      for (auto& f : p.failures)
        if (tally.failures.size() < 100) tally.failures.push_back(std::move(f));
    }
    batch.clear();
  }
};

void check_summary(const json& s, long sequences, const kernel::Tally& t, long exact_entries, kernel::Tally& out) {
  const std::pair<const char*, long> want[] = {{"sequences", sequences}, {"rows", t.rows}, {"undefined_rows", t.undefined_rows},
                                               {"entries", t.entries},   {"rational_entries", exact_entries}, {"max_bits", t.max_bits}};
  for (const auto& [k, v] : want) {
    const long got = need_long(s, "summary", k, 0, LONG_MAX);
    if (got != v) out.fail(at("summary", k), "file has " + std::to_string(got) + ", the sequences give " + std::to_string(v));
    else ++out.checks;
  }
}
}  // namespace

bool starts_as_kernel_golden(const std::string& head) { return starts_with_format(head, "mhaq-golden-kernel"); }

KernelGoldenReport check_kernel_golden_stream(std::istream& in, int threads) {
  Checking run;
  run.threads = std::max(1, threads);
  long exact_entries = 0;
  JsonStream js;
  js.streamed = {"sequences"};
  js.member = [&](const std::string& key, json&& v) {
    if (std::find(std::begin(kTopKeys), std::end(kTopKeys), key) == std::end(kTopKeys)) bad(clean(key), "not a field of a kernel golden file");
    if (run.started && key != "summary") bad(key, "must come before the sequences");
    if (key == "layer") run.layer = kernel::read_layer(v);
    run.top[key] = key == "layer" ? json(true) : std::move(v);
  };
  js.element = [&](const std::string&, json&& seq) {
    // entries recorded exact (rad "0"), counted as the file is read
    for (const char* k : {"output", "head_outputs", "attention_weights"}) {
      if (!seq.is_object() || !seq.contains(k) || !seq[k].is_array()) continue;
      std::function<void(const json&)> count = [&](const json& a) {
        if (a.is_array() && a.size() == 3 && a[0].is_string() && a[2] == "0") ++exact_entries;
        else if (a.is_array())
          for (const auto& x : a) count(x);
      };
      count(seq[k]);
    }
    run.take(std::move(seq));
  };
  js.array_end = [&](const std::string&) {
    if (!run.started) run.start();
    run.flush();
    run.ended = true;
  };
  stream_json(in, js);
  if (!run.ended) bad("sequences", "missing");
  if (!run.top.contains("summary")) bad("summary", "missing");
  kernel::Tally& t = run.tally;
  check_summary(run.top["summary"], static_cast<long>(run.next), t, exact_entries, t);
  KernelGoldenReport r;
  r.sequences = static_cast<long>(run.next);
  r.entries = t.entries;
  r.checks = t.checks;
  r.failures = t.failures;
  r.failures_total = t.failures_total;
  return r;
}

KernelGoldenReport check_kernel_golden_file(const std::string& path, int threads) {
  std::ifstream in = open_json_file(path);
  return check_kernel_golden_stream(in, threads);
}

}  // namespace mhaq::check
