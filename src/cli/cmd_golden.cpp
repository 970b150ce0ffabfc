// golden export / golden check: golden test vectors (tests/golden/SCHEMA.md).
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "mhaq/base/error.hpp"
#include "mhaq/tools/golden.hpp"
#include "mhaq/base/io.hpp"
#include "mhaq/model/model.hpp"
#include "mhaq/base/parallel.hpp"
#include "mhaq/base/limits.hpp"
#include "mhaq/base/text.hpp"
#include "mhaq/tools/recover.hpp"
#include "mhaq/tools/recover_limits.hpp"
#include "options.hpp"

namespace mhaq::cli {

Command make_golden() {
  struct State {
    CLI::App* exp = nullptr;
    CLI::App* chk = nullptr;
    std::string model_path, out, file;
    int d = 0, heads = 0, max_heads = 0, threads = 1, check_threads = 1;
    std::string arith = "exact", design = "paper";
    long bits = 256;
    std::uint64_t seed = 1;
    long digits = 60;
    bool share_w = false, cancel_v = false, json = false, cjson = false;
    CLI::Option* d_opt = nullptr;
    CLI::Option* heads_opt = nullptr;
  };
  auto st = std::make_shared<State>();
  return {[st](CLI::App& app) {
            auto* g = app.add_subcommand("golden", "golden test vectors: export a self-contained vector set (exact, plus a ball or mpfr run), or re-derive and check one");
            g->require_subcommand(1);
            auto* e = g->add_subcommand("export", "run the exact learner and write every query, answer, pair value and head as JSON");
            using namespace limits;
            auto* mo = e->add_option("--model", st->model_path, "model file (JSON); otherwise a model is drawn from --d/--heads/--seed");
            st->d_opt = e->add_option("--d", st->d, "draw a model: token dimension")->check(int_in(1, max_d));
            st->heads_opt = e->add_option("--heads", st->heads, "heads of the drawn model; with --model, the learner's H (default: canonical count)")
                                ->check(int_in(1, max_heads));
            e->add_option("--seed", st->seed, "seed for the model draw and the learner's draws")->check(seed_value());
            e->add_option("--digits", st->digits, "significant digits of every decimal string (default 60)")->check(int_in(1, max_digits));
            e->add_option("--max-heads", st->max_heads, "tell the learner only this upper bound H0 on the head count (claim 3)")->check(int_in(1, max_heads));
            e->add_option("--arith", st->arith, "exact (default) | ball | mpfr: also record a run in that arithmetic, exactly")
                ->check(CLI::IsMember({"exact", "ball", "mpfr"}));
            e->add_option("--bits", st->bits, "precision in bits for ball and mpfr (default 256)")->check(int_in(min_bits, max_bits));
            e->add_option("--design", st->design,
                          "paper (default) | scaled | tuned: B and Delta on the exact grid, scaled drawn from the seed, tuned chosen by a pilot on an MPFR oracle "
                          "of the model at --bits (256 for exact files); golden check re-derives them")
                ->check(CLI::IsMember({"paper", "scaled", "tuned"}));
            e->add_option("--threads", st->threads, "learner threads (0 = all hardware threads); the output bytes do not depend on it")
                ->check(int_in(0, max_threads));
            e->add_flag("--share-w", st->share_w, "drawn model: heads 1 and 2 share W (the canonical form merges them)");
            e->add_flag("--cancel-v", st->cancel_v, "drawn model: the last two heads cancel");
            e->add_option("-o,--output", st->out, "output file (default: standard output)");
            e->add_flag("--json", st->json, "with -o: print a one-object JSON summary");
            mo->excludes(st->d_opt);
            st->exp = e;
            auto* c = g->add_subcommand("check", "re-derive every field of a golden file; exit 10 on any mismatch");
            c->add_option("file", st->file, "golden JSON file")->required();
            c->add_flag("--json", st->cjson, "print one JSON object");
            c->add_option("--threads", st->check_threads, "threads for the learner re-runs (0 = all hardware threads)")->check(int_in(0, limits::max_threads));
            st->chk = c;
            return g;
          },
          [st] {
            if (st->exp->parsed()) {
              GoldenInputs in;
              in.seed = st->seed;
              in.digits = st->digits;
              in.arith = parse_arith(st->arith);
              in.bits = st->bits;
              in.design = parse_design(st->design);
              in.max_heads = st->max_heads;
              in.threads = st->threads == 0 ? hardware_threads() : st->threads;
              if (!st->model_path.empty()) {
                in.model = read_model_file(st->model_path);
                in.model_source = "file";
                in.heads = st->heads;
              } else {
                if (st->d_opt->count() == 0 || st->heads_opt->count() == 0)
                  throw Error(ErrorKind::usage, "golden export needs --model FILE or --d D --heads H [--seed S]");
                GenerateOptions g = default_generate(Arith::exact);
                g.d = st->d;
                g.heads = st->heads;
                g.seed = st->seed;
                g.share_w = st->share_w;
                g.cancel_v = st->cancel_v;
                in.model = generate_model(g);
                in.model_source = "generated";
                in.generate = g;
              }
              {  // limits before any work: the learner's H, the plan, exact tau degrees (golden runs are exact)
                const bool file = !st->model_path.empty();
                const std::string what = file ? clean_text(st->model_path) : std::string("the drawn model");
                const long H = in.max_heads > 0 ? in.max_heads : in.heads > 0 ? in.heads : in.model.canonical().num_heads();
                const bool told = in.max_heads > 0 || in.heads > 0;
                const ErrorKind kind = file && !told ? ErrorKind::input : ErrorKind::usage;
                if (H > limits::max_golden_heads)
                  throw Error(kind, (told ? std::string("--heads/--max-heads") : what + ": the canonical form") + " has " + std::to_string(H) +
                                        " heads, more than the limit of " + std::to_string(limits::max_golden_heads) + " for golden files");
                check_plan_size(in.model.d, H, true, 0, kind, told ? std::string("--heads/--max-heads") : what);
                check_exact_tau_degree(in.model, default_tokens(Arith::exact), file ? ErrorKind::input : ErrorKind::usage, what);
              }
              const std::string text = golden_export(in);
              if (st->out.empty()) {
                std::cout << text;
                std::cout.flush();
                return 0;
              }
              write_file_atomic(st->out, text);
              const nlohmann::json j{{"status", "ok"}, {"path", st->out}, {"bytes", text.size()}};
              emit(st->json, j, "wrote " + st->out + " (" + std::to_string(text.size()) + " bytes)\n");
              return 0;
            }
            const std::string text = read_file_text(st->file, "golden file");
            GoldenCheckResult r;
            try {
              r = golden_check(text, st->check_threads == 0 ? hardware_threads() : st->check_threads);
            } catch (const Error& e) {
              if (e.kind() != ErrorKind::input) throw;
              throw Error(e.kind(), clean_text(st->file) + ": " + e.what());
            }
            nlohmann::json j{{"status", r.ok() ? "ok" : "checker_rejected"}, {"path", st->file}, {"fields_checked", r.fields_checked}, {"mismatches", r.mismatches}};
            std::string human = "mhaq golden check " + st->file + ": ";
            if (r.ok()) {
              human += "ok, " + std::to_string(r.fields_checked) + " fields re-derived independently\n";
            } else {
              human += std::to_string(r.mismatches.size()) + " mismatch(es)\n";
              for (size_t i = 0; i < r.mismatches.size() && i < 100; ++i) human += "  mismatch at " + r.mismatches[i] + "\n";
              if (r.mismatches.size() > 100) human += "  ... " + std::to_string(r.mismatches.size() - 100) + " more\n";
            }
            emit(st->cjson, j, human);
            return r.ok() ? 0 : exit_code(ErrorKind::rejected);
          }};
}

}  // namespace mhaq::cli
