// Registry of subcommands. Each command file adds one entry to all_commands().
#pragma once
#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mhaq/arith/field.hpp"
#include "mhaq/model/model.hpp"

namespace mhaq {
struct RecoverOptions;
}

namespace mhaq::cli {

struct Command {
  std::function<CLI::App*(CLI::App&)> setup;  // adds the subcommand and its options
  std::function<int()> run;                   // runs it after parsing; returns the exit code
};

std::vector<Command> all_commands();

// Shared by commands: print result as JSON (one object) or human text.
void emit(bool json, const nlohmann::json& j, const std::string& human);
// Deleted: a dumped string would be printed as one JSON string, and j.dump()
// throws on invalid UTF-8; pass the object itself.
void emit(bool json, const std::string& json_text, const std::string& human) = delete;
// JSON text for output: never throws on invalid UTF-8 in a string (such bytes
// are replaced by U+FFFD; messages are cleaned before they get here anyway).
std::string json_text(const nlohmann::json& j);
// Entry ranges left at their exact-mode defaults take the defaults of arithmetic a.
GenerateOptions with_defaults_for(GenerateOptions g, Arith a);
std::string slurp_file(const std::string& path);  // Error(input) when unreadable
// convert --safetensors (cmd_convert_safetensors.cpp); returns the exit code.
int convert_safetensors(const std::string& path, const std::string& map_path, const std::string& out, bool as_json);
// golden export --certified (cmd_golden_certified.cpp); returns the exit code.
int golden_export_certified_cli(const std::string& model_path, const std::string& inputs, const std::string& out, bool as_json, std::uint64_t seed, int heads,
                                bool learner, long bits, long digits, long max_bits, int threads);

// golden kernel (cmd_golden_kernel.cpp): its options under `golden`, and the run.
CLI::App* add_golden_kernel_options(CLI::App& golden);
int golden_kernel_command();
// golden check of a kernel golden file: recognised by its first bytes, checked by the separate checker, streaming.
bool is_kernel_golden_file(const std::string& path);
// A certified golden file as golden export --certified writes it (its first members in order): checked as a stream.
bool is_certified_golden_file(const std::string& path);
int golden_kernel_check_cli(const std::string& path, bool as_json, int threads);

// recover (cmd_recover_cost.cpp): the run's cost predicted from d, the
// learner's H and the options, before a model is drawn or an oracle started.
// A dry run prints it and returns exit_dry_run; otherwise Error(budget) when
// the predicted peak exceeds --max-memory (default: the machine's memory),
// else -1 (go on), with the predicted seconds in `seconds` (NaN: none).
struct CostGate {
  bool dry_run = false, json = false;
  std::string max_memory;
  int ranks = 0;  // --ranks P of a dry run; 0: the run's own (the MPI launcher's size, else 1)
  bool external = false;  // --oracle: the answers come from an external oracle
};
int recover_cost_gate(const RecoverOptions& o, long d, long H, const CostGate& g, double& seconds);

// recover --checkpoint (cmd_recover_checkpoint.cpp): what names the run in its
// checkpoint, from the options given (those that change no answer and no
// output byte left out: --threads, --json, --quiet, --transcript, ...) and a
// hash of the model file's bytes.
std::string recover_fingerprint(const CLI::App& recover, const std::string& model_text);

}  // namespace mhaq::cli
