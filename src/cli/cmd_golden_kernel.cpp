// golden kernel: a kernel golden file from a safetensors layer and your
// sequences (evidence/golden_kernel.hpp); golden check of such a file runs
// the separate checker's streaming check (mhaq/check/golden_kernel.hpp).
#include <fstream>
#include <iostream>

#include "commands.hpp"
#include "mhaq/base/error.hpp"
#include "mhaq/base/io.hpp"
#include "mhaq/base/limits.hpp"
#include "mhaq/base/parallel.hpp"
#include "mhaq/base/text.hpp"
#include "mhaq/check/certificate_check.hpp"
#include "mhaq/check/golden_kernel.hpp"
#include "mhaq/evidence/golden_kernel.hpp"
#include "mhaq/model/certified_eval.hpp"
#include "options.hpp"

namespace mhaq::cli {

namespace {
struct KernelState {
  std::string safetensors, map, inputs, out, positions = "all", round;
  bool causal = false, head_outputs = false, attention_weights = false, json = false;
  long digits = 20, max_bits = 1L << 14;
  int threads = 1;
};
std::shared_ptr<KernelState> kernel_state = std::make_shared<KernelState>();

StDtype round_dtype(const std::string& s) {
  if (s == "F64") return StDtype::f64;
  if (s == "F32") return StDtype::f32;
  if (s == "F16") return StDtype::f16;
  return StDtype::bf16;
}
}  // namespace

CLI::App* add_golden_kernel_options(CLI::App& golden) {
  KernelState& st = *kernel_state;
  auto* k = golden.add_subcommand("kernel",
                                  "certified outputs of a whole attention layer (biases, any scale, grouped heads, rotary embeddings, masks) for your "
                                  "sequences: every entry a correctly rounded decimal with its ball");
  using namespace limits;
  k->add_option("--safetensors", st.safetensors, "safetensors file holding the layer")->required();
  k->add_option("--map", st.map, "map naming the layer's tensors (docs/formats.md, \"The map\")")->required();
  k->add_option("--inputs", st.inputs, "your sequences (format mhaq-inputs; a sequence may carry key_padding_mask, attn_mask, position_ids)")->required();
  k->add_flag("--causal", st.causal, "row n attends to keys 0..n only");
  k->add_option("--query-positions", st.positions, "rows with outputs: all (default), last, or a comma list such as 0,5,-1");
  k->add_flag("--head-outputs", st.head_outputs, "also each head's output before the output projection");
  k->add_flag("--attention-weights", st.attention_weights, "also every attention weight");
  k->add_option("--digits", st.digits, "significant digits of every decimal (default 20)")->check(int_in(1, max_digits));
  k->add_option("--max-bits", st.max_bits, "precision cap of each entry (default 16384)")->check(int_in(min_bits, max_bits));
  k->add_option("--round-tokens", st.round, "round every token entry to this dtype first (F64, F32, F16, BF16), as your kernel reads it; the file says so")
      ->check(CLI::IsMember({"F64", "F32", "F16", "BF16"}));
  k->add_option("--threads", st.threads, "threads (0 = all hardware threads); the output bytes do not depend on it")->check(int_in(0, max_threads));
  k->add_option("-o,--output", st.out, "output file (default: standard output)");
  k->add_flag("--json", st.json, "with -o: print a one-object JSON summary");
  return k;
}

int golden_kernel_command() {
  const KernelState& st = *kernel_state;
  KernelGoldenInputs in;
  in.positions = parse_query_positions(st.positions);
  in.eval.causal = st.causal;
  in.eval.head_outputs = st.head_outputs;
  in.eval.attention_weights = st.attention_weights;
  in.eval.digits = st.digits;
  in.eval.max_bits = st.max_bits;
  check_digits_within_bits(st.digits, st.max_bits);
  in.threads = st.threads == 0 ? hardware_threads() : st.threads;
  const SafetensorsMap map = read_safetensors_map(st.map);
  in.layer = safetensors_to_kernel(SafetensorsFile::open(st.safetensors), map);
  try {
    in.sequences = read_kernel_inputs_text(read_file_text(st.inputs, "inputs file"), in.layer.d);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::input) throw;
    throw Error(e.kind(), "inputs file " + clean_text(st.inputs) + ": " + e.what());
  }
  if (!st.round.empty()) {
    in.tokens_rounded_to = st.round;
    try {
      in.tokens_changed = round_tokens(in.sequences, round_dtype(st.round));
    } catch (const Error& e) {
      throw Error(e.kind(), "inputs file " + clean_text(st.inputs) + ": " + e.what() + " (--round-tokens " + st.round + ")");
    }
  }
  try {
    check_kernel_golden_limits(in);
  } catch (const Error& e) {
    throw Error(e.kind(), "inputs file " + clean_text(st.inputs) + ": " + e.what());
  }
  std::string text;
  KernelGoldenSummary sum;
  if (st.out.empty()) {
    sum = golden_kernel_export(in, [&](const std::string& s) { text += s; });
    std::cout << text;
    std::cout.flush();
    return 0;
  }
  AtomicFileWriter w(st.out);
  sum = golden_kernel_export(in, [&](const std::string& s) { w.write(s); });
  const long bytes = w.commit();
  const nlohmann::json j{{"status", "ok"},         {"path", st.out},        {"bytes", bytes}, {"sequences", sum.sequences}, {"rows", sum.rows},
                         {"undefined_rows", sum.undefined_rows}, {"entries", sum.entries}, {"rational_entries", sum.rational_entries},
                         {"max_bits", sum.max_bits}, {"tokens_changed", in.tokens_changed}};
  std::string human = "wrote " + st.out + " (" + std::to_string(bytes) + " bytes): " + std::to_string(sum.sequences) + " sequences, " + std::to_string(sum.rows) +
                      " rows, " + std::to_string(sum.entries) + " certified entries (" + std::to_string(sum.rational_entries) + " rational), up to " +
                      std::to_string(sum.max_bits) + " bits\n";
  if (sum.undefined_rows > 0) human += "  " + std::to_string(sum.undefined_rows) + " rows have no key to attend (null in the file; torch gives NaN)\n";
  if (!st.round.empty()) human += "  tokens rounded to " + st.round + ": " + std::to_string(in.tokens_changed) + " entries changed\n";
  emit(st.json, j, human);
  return 0;
}

namespace {
std::string first_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char buf[256] = {};
  in.read(buf, sizeof buf);
  return std::string(buf, static_cast<size_t>(in.gcount()));
}
}  // namespace

bool is_kernel_golden_file(const std::string& path) { return check::starts_as_kernel_golden(first_bytes(path)); }

bool is_certified_golden_file(const std::string& path) {
  // {"format": "mhaq-golden", "version": 1, "arith": "certified", as golden export --certified writes it
  std::string h = first_bytes(path), compact;
  bool in_string = false;
  for (char c : h) {
    if (c == '"') in_string = !in_string;
    if (in_string || (c != ' ' && c != '\n' && c != '\r' && c != '\t')) compact += c;
  }
  return compact.rfind(R"({"format":"mhaq-golden","version":1,"arith":"certified")", 0) == 0;
}

int golden_kernel_check_cli(const std::string& path, bool as_json, int threads) {
  check::KernelGoldenReport r;
  try {
    r = check::check_kernel_golden_file(path, threads);
  } catch (const check::InputError& e) {
    throw Error(ErrorKind::input, clean_text(path) + ": " + e.what());
  }
  nlohmann::json j{{"status", r.ok() ? "ok" : "checker_rejected"}, {"path", path},       {"fields_checked", r.checks},
                   {"sequences", r.sequences},                    {"entries", r.entries}, {"mismatches", r.failures}};
  std::string human = "mhaq golden check " + path + ": ";
  if (r.ok()) {
    human += "ok, " + std::to_string(r.entries) + " entries of " + std::to_string(r.sequences) + " sequences re-derived by the separate checker (" +
             std::to_string(r.checks) + " checks)\n";
  } else {
    human += std::to_string(r.failures.size()) + " mismatch(es)\n";
    for (size_t i = 0; i < r.failures.size() && i < 100; ++i) human += "  mismatch at " + r.failures[i] + "\n";
  }
  emit(as_json, j, human);
  return r.ok() ? 0 : exit_code(ErrorKind::rejected);
}

}  // namespace mhaq::cli
