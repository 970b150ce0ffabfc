// golden export / golden check: golden test vectors (tests/golden/SCHEMA.md).
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "mhaq/base/error.hpp"
#include "mhaq/evidence/golden.hpp"
#include "mhaq/evidence/golden_certified.hpp"
#include "mhaq/base/io.hpp"
#include "mhaq/model/model.hpp"
#include "mhaq/model/transformer.hpp"
#include "mhaq/base/json_in.hpp"
#include "mhaq/base/parallel.hpp"
#include "mhaq/base/limits.hpp"
#include "mhaq/base/text.hpp"
#include "mhaq/run/recover.hpp"
#include "mhaq/run/recover_limits.hpp"
#include "options.hpp"

namespace mhaq::cli {

namespace {

struct GoldenState {
  CLI::App* exp = nullptr;
  CLI::App* chk = nullptr;
  CLI::App* ker = nullptr;
  std::string model_path, out, file;
  int d = 0, heads = 0, max_heads = 0, threads = 1, check_threads = 1;
  std::string arith = "exact", design = "paper";
  long bits = 256;
  std::uint64_t seed = 1;
  long digits = 60;
  bool share_w = false, cancel_v = false, bias = false, json = false, cjson = false;
  int ffn = 0;  // > 0: draw a one-layer transformer with this many neurons
  bool zero_neuron = false, parallel_neurons = false;
  bool certified = false, no_learner = false;  // certified golden files (cmd_golden_certified.cpp)
  std::string inputs;
  long max_bits = 1L << 14;
  CLI::Option* max_heads_opt = nullptr;
  CLI::Option* arith_opt = nullptr;
  CLI::Option* design_opt = nullptr;
  CLI::Option* bits_opt = nullptr;
  CLI::Option* d_opt = nullptr;
  CLI::Option* heads_opt = nullptr;
  CLI::Option* digits_opt = nullptr;
};

CLI::App* add_golden_options(CLI::App& app, GoldenState& st) {
  auto* g = app.add_subcommand("golden", "golden test vectors: export a self-contained vector set (exact, plus a ball or mpfr run), or re-derive and check one");
  g->require_subcommand(1);
  auto* e = g->add_subcommand("export", "run the exact learner and write every query, answer, pair value and head as JSON");
  using namespace limits;
  auto* mo = e->add_option("--model", st.model_path, "model file (JSON); otherwise a model is drawn from --d/--heads/--seed");
  st.d_opt = e->add_option("--d", st.d, "draw a model: token dimension")->check(int_in(1, max_d));
  st.heads_opt = e->add_option("--heads", st.heads, "heads of the drawn model; with --model, the learner's H (default: canonical count)")
                      ->check(int_in(1, max_heads));
  e->add_option("--seed", st.seed, "seed for the model draw and the learner's draws")->check(seed_value());
  st.digits_opt = e->add_option("--digits", st.digits, "significant digits of every decimal string (default 60; --certified: 30)")->check(int_in(1, max_digits));
  st.max_heads_opt = e->add_option("--max-heads", st.max_heads, "tell the learner only this upper bound H0 on the head count (claim 3)")->check(int_in(1, max_heads));
  st.arith_opt = e->add_option("--arith", st.arith, "exact (default) | ball | mpfr: also record a run in that arithmetic, exactly")
      ->check(CLI::IsMember({"exact", "ball", "mpfr"}));
  st.bits_opt = e->add_option("--bits", st.bits, "precision in bits for ball and mpfr (default 256)")->check(int_in(min_bits, max_bits));
  st.design_opt = e->add_option("--design", st.design,
                "paper (default) | scaled | tuned: B and Delta on the exact grid, scaled drawn from the seed, tuned chosen by a pilot on an MPFR oracle "
                "of the model at --bits (256 for exact files); golden check re-derives them")
      ->check(CLI::IsMember({"paper", "scaled", "tuned"}));
  e->add_option("--threads", st.threads, "learner threads (0 = all hardware threads); the output bytes do not depend on it")
      ->check(int_in(0, max_threads));
  e->add_flag("--share-w", st.share_w, "drawn model: heads 1 and 2 share W (the canonical form merges them)");
  e->add_flag("--bias", st.bias, "drawn model: biases, a c per head and beta (the learner recovers them)");
  e->add_flag("--cancel-v", st.cancel_v, "drawn model: the last two heads cancel");
  e->add_option("--ffn", st.ffn, "draw a one-layer transformer with this many FFN neurons (a transformer model file is recognised by its format)")
      ->check(int_in(1, max_neurons));
  e->add_flag("--zero-neuron", st.zero_neuron, "drawn transformer: one more neuron with U = 0 (the canonical form drops it)");
  e->add_flag("--parallel-neurons", st.parallel_neurons, "drawn transformer: one more neuron positively parallel to the first (merged)");
  e->add_flag("--certified", st.certified,
              "real weights: answers as correctly rounded decimals certified in Arb at rising precision (no Q(tau)); with --model");
  e->add_option("--inputs", st.inputs, "with --certified: your own sequences (JSON, format mhaq-inputs), answered after the learner's queries");
  e->add_flag("--no-learner", st.no_learner, "with --certified: only the --inputs sequences, no learner run");
  e->add_option("--max-bits", st.max_bits, "with --certified: precision cap of each answer (default 16384)")->check(int_in(min_bits, max_bits));
  e->add_option("-o,--output", st.out, "output file (default: standard output)");
  e->add_flag("--json", st.json, "with -o: print a one-object JSON summary");
  mo->excludes(st.d_opt);
  st.exp = e;
  auto* c = g->add_subcommand("check", "re-derive every field of a golden file; exit 10 on any mismatch");
  c->add_option("file", st.file, "golden JSON file")->required();
  c->add_flag("--json", st.cjson, "print one JSON object");
  c->add_option("--threads", st.check_threads, "threads for the learner re-runs (0 = all hardware threads)")->check(int_in(0, limits::max_threads));
  st.chk = c;
  st.ker = add_golden_kernel_options(*g);
  return g;
}

// golden export of a transformer: the file's (doc) or one drawn from
// --d/--heads/--ffn; the limits are checked before any work.
void transformer_golden_inputs(const GoldenState& st, const nlohmann::json& doc, bool file_transformer, GoldenInputs& in) {
  if (st.max_heads_opt->count() > 0 || st.arith_opt->count() > 0 || st.bits_opt->count() > 0 || st.design_opt->count() > 0 || st.cancel_v || st.bias ||
      (file_transformer && st.heads_opt->count() > 0))
    throw Error(ErrorKind::usage, "transformer golden files take --model FILE or --d/--heads/--ffn [--share-w --zero-neuron --parallel-neurons], "
                                  "--seed, --digits and --threads (exact, paper schedule, the canonical head count)");
  in.is_transformer = true;
  std::string what = "the drawn transformer";
  if (!st.model_path.empty()) {
    if (st.ffn > 0 || st.zero_neuron || st.parallel_neurons) throw Error(ErrorKind::usage, "--ffn and the neuron flags draw a model; not with --model");
    if (!file_transformer) throw Error(ErrorKind::usage, "--ffn draws a transformer; --model takes a transformer file as it is");
    try {
      in.transformer = transformer_from_json(doc);
    } catch (const Error& e) {
      throw Error(e.kind(), clean_text(st.model_path) + ": " + e.what());
    }
    in.model_source = "file";
    what = clean_text(st.model_path);
  } else {
    if (st.d_opt->count() == 0 || st.heads_opt->count() == 0 || st.ffn < 1)
      throw Error(ErrorKind::usage, "golden export of a drawn transformer needs --d D --heads H --ffn M [--seed S]");
    TransformerGenerateOptions g;
    g.d = st.d;
    g.heads = st.heads;
    g.neurons = st.ffn;
    g.seed = st.seed;
    g.share_w = st.share_w;
    g.zero_neuron = st.zero_neuron;
    g.parallel_neurons = st.parallel_neurons;
    in.transformer = generate_transformer(g);
    in.transformer_generate = g;
    in.model_source = "generated";
  }
  // limits before any work: the learner's H (the canonical count), its plan, exact tau degrees
  const long H = in.transformer.canonical().heads();
  const ErrorKind kind = st.model_path.empty() ? ErrorKind::usage : ErrorKind::input;
  if (H > limits::max_golden_heads)
    throw Error(kind, what + ": the canonical form has " + std::to_string(H) + " heads, more than the limit of " +
                          std::to_string(limits::max_golden_heads) + " for golden files");
  RecoverOptions o;
  o.arith = Arith::exact;
  check_transformer_limits(in.transformer, o, st.model_path);
}

// golden export of an attention model: the file's (doc) or one drawn from
// --d/--heads; the limits are checked before any work.
void attention_golden_inputs(const GoldenState& st, const nlohmann::json& doc, GoldenInputs& in) {
  if (!st.model_path.empty()) {
    try {
      in.model = model_from_json(doc, "");
    } catch (const Error& e) {
      throw Error(e.kind(), clean_text(st.model_path) + ": " + e.what());
    }
    in.model_source = "file";
    in.heads = st.heads;
  } else {
    if (st.d_opt->count() == 0 || st.heads_opt->count() == 0)
      throw Error(ErrorKind::usage, "golden export needs --model FILE or --d D --heads H [--seed S]");
    GenerateOptions g = default_generate(Arith::exact);
    g.d = st.d;
    g.heads = st.heads;
    g.seed = st.seed;
    g.share_w = st.share_w;
    g.cancel_v = st.cancel_v;
    g.bias = st.bias;
    in.model = generate_model(g);
    in.model_source = "generated";
    in.generate = g;
  }
  // limits before any work: the learner's H, the plan, exact tau degrees (golden runs are exact)
  const bool file = !st.model_path.empty();
  const std::string what = file ? clean_text(st.model_path) : std::string("the drawn model");
  const long H = in.max_heads > 0 ? in.max_heads : in.heads > 0 ? in.heads : in.model.canonical().num_heads();
  const bool told = in.max_heads > 0 || in.heads > 0;
  const ErrorKind kind = file && !told ? ErrorKind::input : ErrorKind::usage;
  if (H > limits::max_golden_heads)
    throw Error(kind, (told ? std::string("--heads/--max-heads") : what + ": the canonical form") + " has " + std::to_string(H) +
                          " heads, more than the limit of " + std::to_string(limits::max_golden_heads) + " for golden files");
  check_plan_size(in.model.d, H, true, 0, kind, told ? std::string("--heads/--max-heads") : what);
  try {
    check_exact_tau_degree(in.model, default_tokens(Arith::exact), file ? ErrorKind::input : ErrorKind::usage, what, "use smaller W entries");
  } catch (const Error& e) {  // real weights: point to the file kind that fits them
    throw Error(e.kind(), std::string(e.what()) + (file ? "; for real weights, golden export --certified certifies every answer without Q(tau)" : ""));
  }
}

int golden_export_command(const GoldenState& st) {
  GoldenInputs in;
  in.seed = st.seed;
  in.digits = st.digits;
  in.arith = parse_arith(st.arith);
  in.bits = st.bits;
  in.design = parse_design(st.design);
  in.max_heads = st.max_heads;
  in.threads = st.threads == 0 ? hardware_threads() : st.threads;
  // A transformer, decided as recover decides it: --ffn (or a
  // neuron flag) for a drawn model, the file's "format" for a file.
  nlohmann::json doc;
  bool file_transformer = false;
  if (!st.model_path.empty()) {
    const std::string text = read_file_text(st.model_path, "model file");
    try {
      doc = parse_json_text(text);
    } catch (const Error& e) {
      throw Error(e.kind(), clean_text(st.model_path) + ": " + e.what());
    }
    file_transformer = is_transformer_json(doc);
  }
  if (st.ffn > 0 || st.zero_neuron || st.parallel_neurons || file_transformer) transformer_golden_inputs(st, doc, file_transformer, in);
  else attention_golden_inputs(st, doc, in);
  const std::string text = golden_export(in);
  if (st.out.empty()) {
    std::cout << text;
    std::cout.flush();
    return 0;
  }
  write_file_atomic(st.out, text);
  const nlohmann::json j{{"status", "ok"}, {"path", st.out}, {"bytes", text.size()}};
  emit(st.json, j, "wrote " + st.out + " (" + std::to_string(text.size()) + " bytes)\n");
  return 0;
}

int golden_check_command(const GoldenState& st) {
  const int threads = st.check_threads == 0 ? hardware_threads() : st.check_threads;
  if (is_kernel_golden_file(st.file)) return golden_kernel_check_cli(st.file, st.cjson, threads);
  GoldenCheckResult r;
  try {
    // a certified file as mhaq writes it is read as a stream; any other golden file whole
    r = is_certified_golden_file(st.file) ? golden_check_certified_file(st.file, threads) : golden_check(read_file_text(st.file, "golden file"), threads);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::input) throw;
    throw Error(e.kind(), clean_text(st.file) + ": " + e.what());
  }
  nlohmann::json j{{"status", r.ok() ? "ok" : "checker_rejected"}, {"path", st.file}, {"fields_checked", r.fields_checked}, {"mismatches", r.mismatches}};
  std::string human = "mhaq golden check " + st.file + ": ";
  if (r.ok()) {
    human += "ok, " + std::to_string(r.fields_checked) + " fields re-derived independently\n";
  } else {
    human += std::to_string(r.mismatches.size()) + " mismatch(es)\n";
    for (size_t i = 0; i < r.mismatches.size() && i < 100; ++i) human += "  mismatch at " + r.mismatches[i] + "\n";
    if (r.mismatches.size() > 100) human += "  ... " + std::to_string(r.mismatches.size() - 100) + " more\n";
  }
  emit(st.cjson, j, human);
  return r.ok() ? 0 : exit_code(ErrorKind::rejected);
}

int golden_command(const GoldenState& st) {
  if (st.ker->parsed()) return golden_kernel_command();
  if (st.exp->parsed() && st.certified) {
    if (st.model_path.empty()) throw Error(ErrorKind::usage, "golden export --certified needs --model FILE");
    if (st.arith_opt->count() > 0 || st.max_heads_opt->count() > 0 || st.design_opt->count() > 0 || st.ffn > 0)
      throw Error(ErrorKind::usage, "golden export --certified takes --model, --heads, --seed, --digits, --bits (the learner's ball run), --max-bits, --inputs, --no-learner");
    return golden_export_certified_cli(st.model_path, st.inputs, st.out, st.json, st.seed, st.heads, !st.no_learner,
                                       st.bits, st.digits_opt->count() > 0 ? st.digits : 30, st.max_bits, st.threads == 0 ? hardware_threads() : st.threads);
  }
  if (st.exp->parsed() && (!st.inputs.empty() || st.no_learner)) throw Error(ErrorKind::usage, "--inputs and --no-learner go with --certified");
  if (st.exp->parsed()) return golden_export_command(st);
  return golden_check_command(st);
}

}  // namespace

Command make_golden() {
  auto st = std::make_shared<GoldenState>();
  return {[st](CLI::App& app) { return add_golden_options(app, *st); }, [st] { return golden_command(*st); }};
}

}  // namespace mhaq::cli
