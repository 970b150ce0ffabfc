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

}  // namespace mhaq::cli
