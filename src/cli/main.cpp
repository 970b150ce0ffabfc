// mhaq command-line program. Subcommands: generate, recover, demo, ...
// Human-readable output by default; --json prints exactly one JSON object.
// Every way out is an exit code with a message: usage 2, input 3, ..., and 7
// only for a violated internal invariant; no exception escapes main.
#include <CLI/CLI.hpp>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "mhaq/base/distribute.hpp"
#include "mhaq/base/error.hpp"
#include "mhaq/base/text.hpp"
#include "mhaq/base/version.hpp"

namespace {

int report(bool want_json, const char* kind, const std::string& what, int code) {
  const std::string msg = mhaq::clean_text(what);  // messages may quote input bytes
  try {
    if (want_json) std::cout << mhaq::cli::json_text(nlohmann::json{{"status", "error"}, {"error", kind}, {"message", msg}}) << "\n";
    std::cout.flush();
    std::cerr << "mhaq: " << kind << " error: " << msg << "\n";
  } catch (...) {
  }
  return code;
}

// The name of an unknown subcommand at argv[k] (CLI11 only says that one is
// required), or empty.
std::string unknown_subcommand(const CLI::App& app, int argc, char** argv, int k) {
  if (argc <= k) return {};
  const std::string a = argv[k];
  if (a.empty() || a[0] == '-') return {};
  for (const CLI::App* s : app.get_subcommands([](const CLI::App*) { return true; }))
    if (s->check_name(a)) return {};
  std::string names;
  for (const CLI::App* s : app.get_subcommands([](const CLI::App*) { return true; })) names += (names.empty() ? "" : ", ") + s->get_name();
  return "unknown subcommand " + mhaq::quote_text(a) + " (expected one of: " + names + ")";
}

int run(int argc, char** argv) {
  bool want_json = false;
  for (int i = 1; i < argc; ++i) want_json = want_json || std::string(argv[i]) == "--json";
  try {
    CLI::App app{"mhaq: learn multi-head softmax attention from black-box value queries,\n"
                 "exactly (Q(e^{1/L})), in Arb balls, in MPFR or in IEEE double."};
    app.require_subcommand(1);
    app.set_version_flag("--version", std::string("mhaq ") + mhaq::mhaq_version_string);
    std::vector<mhaq::cli::Command> cmds = mhaq::cli::all_commands();
    std::vector<CLI::App*> subs;
    for (auto& c : cmds) subs.push_back(c.setup(app));
    std::string unknown = unknown_subcommand(app, argc, argv, 1);
    if (unknown.empty() && argc > 2)  // golden export | check
      for (CLI::App* s : subs)
        if (s->check_name(argv[1]) && !s->get_subcommands([](const CLI::App*) { return true; }).empty()) unknown = unknown_subcommand(*s, argc, argv, 2);
    if (!unknown.empty()) return report(want_json, "usage", unknown, mhaq::exit_code(mhaq::ErrorKind::usage));
    try {
      app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
      return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
      return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
      return app.exit(e);
    } catch (const CLI::ParseError& e) {
      return report(want_json, "usage", e.what(), mhaq::exit_code(mhaq::ErrorKind::usage));
    }
    for (size_t i = 0; i < cmds.size(); ++i) {
      if (!subs[i]->parsed()) continue;
      try {
        const std::string name = subs[i]->get_name();
        if (mhaq::shard().size > 1 && name != "sweep" && name != "verify" && name != "recover")
          throw mhaq::Error(mhaq::ErrorKind::usage, "only sweep, verify and recover run on several MPI ranks; run " + name + " without mpirun");
        return cmds[i].run();
      } catch (const mhaq::Error& e) {
        return report(want_json, mhaq::kind_name(e.kind()), e.what(), mhaq::exit_code(e.kind()));
      } catch (const std::bad_alloc&) {
        return report(want_json, "internal", "out of memory", mhaq::exit_code(mhaq::ErrorKind::internal));
      }
    }
    return mhaq::exit_code(mhaq::ErrorKind::usage);
  } catch (const std::exception& e) {
    return report(want_json, "internal", e.what(), mhaq::exit_code(mhaq::ErrorKind::internal));
  } catch (...) {
    return report(want_json, "internal", "unknown exception", mhaq::exit_code(mhaq::ErrorKind::internal));
  }
}

}  // namespace

// Under mpirun/srun (MHAQ_MPI builds) every rank runs the same command;
// sweep and verify shard their work, recover shares out one run's answers and
// pair fits, and rank 0 alone prints (distribute.hpp).
int main(int argc, char** argv) {
  mhaq::MpiSession mpi(&argc, &argv);
  return mpi.finish(run(argc, argv));
}
