// recover --checkpoint and --resume-checkpoint: the fingerprint that names a
// run in its checkpoint (oracle/checkpoint.hpp, docs/formats.md#checkpoint).
#include "commands.hpp"
#include "mhaq/oracle/checkpoint.hpp"

namespace mhaq::cli {

namespace {

// Options that change neither an answer asked nor a byte of the output: how
// the run is carried out (threads), where its by-products go, how it prints.
bool outside_fingerprint(const std::string& name) {
  for (const char* n : {"--checkpoint", "--resume-checkpoint", "--threads", "--quiet", "--json", "--transcript", "--oracle-timeout", "--certificate", "--max-memory"})
    if (name == n) return true;
  return false;
}

}  // namespace

std::string recover_fingerprint(const CLI::App& recover, const std::string& model_text) {
  // in the order the options are defined, not as typed: the same run in
  // another order of options is the same run
  std::string f = "recover";
  for (const CLI::Option* opt : recover.get_options()) {
    if (opt->count() == 0 || outside_fingerprint(opt->get_name())) continue;
    f += " " + opt->get_name();
    for (const std::string& v : opt->results()) f += "=" + v;
  }
  if (!model_text.empty()) f += " model-file-fnv1a=" + fnv1a_hex(model_text);
  return f;
}

}  // namespace mhaq::cli
