// mhaq command-line program. Subcommands: generate, recover, demo.
// Human-readable output by default; --json prints exactly one JSON object.
#include <CLI/CLI.hpp>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "mhaq/base/distribute.hpp"
#include "mhaq/base/error.hpp"

namespace {
int run(int argc, char** argv) {
  CLI::App app{"mhaq: learn multi-head softmax attention from black-box value queries,\n"
               "exactly (Q(e^{1/L})), in Arb balls, in MPFR or in IEEE double."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "mhaq 0.1.0");
  std::vector<mhaq::cli::Command> cmds = mhaq::cli::all_commands();
  std::vector<CLI::App*> subs;
  for (auto& c : cmds) subs.push_back(c.setup(app));
  bool want_json = false;
  for (int i = 1; i < argc; ++i) want_json = want_json || std::string(argv[i]) == "--json";
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (want_json)
      std::cout << nlohmann::json{{"status", "error"}, {"error", "usage"}, {"message", e.what()}}.dump() << "\n";
    std::cerr << "mhaq: usage error: " << e.what() << "\n";
    return mhaq::exit_code(mhaq::ErrorKind::usage);
  }
  for (size_t i = 0; i < cmds.size(); ++i) {
    if (!subs[i]->parsed()) continue;
    try {
      const std::string name = subs[i]->get_name();
      if (mhaq::shard().size > 1 && name != "sweep" && name != "verify")
        throw mhaq::Error(mhaq::ErrorKind::usage, "only sweep and verify run on several MPI ranks; run " + name + " without mpirun");
      return cmds[i].run();
    } catch (const mhaq::Error& e) {
      if (want_json)
        std::cout << nlohmann::json{{"status", "error"}, {"error", mhaq::kind_name(e.kind())}, {"message", e.what()}}.dump() << "\n";
      std::cerr << "mhaq: " << mhaq::kind_name(e.kind()) << " error: " << e.what() << "\n";
      return mhaq::exit_code(e.kind());
    } catch (const std::exception& e) {
      if (want_json)
        std::cout << nlohmann::json{{"status", "error"}, {"error", "internal"}, {"message", e.what()}}.dump() << "\n";
      std::cerr << "mhaq: internal error: " << e.what() << "\n";
      return mhaq::exit_code(mhaq::ErrorKind::internal);
    }
  }
  return mhaq::exit_code(mhaq::ErrorKind::usage);
}
}  // namespace

// Under mpirun/srun (MHAQ_MPI builds) every rank runs the same command;
// sweep and verify shard their work, and rank 0 alone prints (distribute.hpp).
int main(int argc, char** argv) {
  mhaq::MpiSession mpi(&argc, &argv);
  return mpi.finish(run(argc, argv));
}
