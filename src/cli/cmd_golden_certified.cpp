// golden export --certified: a golden file for a model with real weights
// (answers certified in Arb, no Q(tau)); evidence/golden_certified.hpp.
#include <iostream>

#include "commands.hpp"
#include "mhaq/base/error.hpp"
#include "mhaq/base/io.hpp"
#include "mhaq/base/limits.hpp"
#include "mhaq/base/text.hpp"
#include "mhaq/evidence/golden_certified.hpp"
#include "mhaq/model/certified_eval.hpp"

namespace mhaq::cli {

int golden_export_certified_cli(const std::string& model_path, const std::string& inputs, const std::string& out, bool as_json, std::uint64_t seed, int heads,
                                bool learner, long bits, long digits, long max_bits, int threads) {
  check_digits_within_bits(digits, max_bits);
  CertifiedGoldenInputs in;
  in.model = read_model_file(model_path);
  in.seed = seed;
  in.heads = heads;
  in.learner = learner;
  in.bits = bits;
  in.digits = digits;
  in.max_bits = max_bits;
  in.threads = threads;
  if (learner) {
    const long H = heads > 0 ? heads : in.model.canonical().num_heads();
    if (H > limits::max_golden_heads)
      throw Error(heads > 0 ? ErrorKind::usage : ErrorKind::input, (heads > 0 ? std::string("--heads") : clean_text(model_path) + ": the canonical form") + " has " +
                                                                       std::to_string(H) + " heads, more than the limit of " +
                                                                       std::to_string(limits::max_golden_heads) + " for golden files (--no-learner has no such limit)");
  }
  if (!inputs.empty()) {
    try {
      in.user = read_inputs_text(read_file_text(inputs, "inputs file"), in.model.d);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::input) throw;
      throw Error(e.kind(), clean_text(inputs) + ": " + e.what());
    }
  }
  const std::string text = golden_export_certified(in);
  if (out.empty()) {
    std::cout << text;
    std::cout.flush();
    return 0;
  }
  write_file_atomic(out, text);
  const nlohmann::json j{{"status", "ok"}, {"path", out}, {"bytes", text.size()}};
  emit(as_json, j, "wrote " + out + " (" + std::to_string(text.size()) + " bytes)\n");
  return 0;
}

}  // namespace mhaq::cli
