// generate, recover, demo.
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "mhaq/base/distribute.hpp"
#include "mhaq/base/error.hpp"
#include "mhaq/base/io.hpp"
#include "mhaq/base/json_in.hpp"
#include "mhaq/base/limits.hpp"
#include "mhaq/base/progress.hpp"
#include "mhaq/base/text.hpp"
#include "mhaq/model/factored.hpp"
#include "mhaq/model/model.hpp"
#include "mhaq/model/transformer.hpp"
#include "mhaq/evidence/baseline.hpp"
#include "mhaq/oracle/external_oracle.hpp"
#include "mhaq/run/record_json.hpp"
#include "mhaq/run/recover.hpp"
#include "mhaq/run/recover_limits.hpp"
#include "options.hpp"


namespace mhaq::cli {

GenerateOptions with_defaults_for(GenerateOptions g, Arith a) {
  const GenerateOptions def = default_generate(a), ex = default_generate(Arith::exact);
  if (g.w_range == ex.w_range) g.w_range = def.w_range;
  if (g.w_den == ex.w_den) g.w_den = def.w_den;
  if (g.v_range == ex.v_range) g.v_range = def.v_range;
  if (g.v_den == ex.v_den) g.v_den = def.v_den;
  return g;
}
std::string slurp_file(const std::string& path) { return read_file_text(path, "file"); }  // bounded (base/io.hpp)

namespace {
// Options that make the drawn model a one-layer transformer (claim 5).
struct TransformerShape {
  int ffn = 0;  // neurons; 0: an attention model
  bool zero_neuron = false, parallel_neurons = false;
};
void add_transformer_shape(CLI::App* s, TransformerShape& t) {
  s->add_option("--ffn", t.ffn, "draw a one-layer transformer with this many FFN neurons (attention followed by a bias-free ReLU FFN)")
      ->check(int_in(1, limits::max_neurons));
  s->add_flag("--zero-neuron", t.zero_neuron, "transformer: one more neuron with U = 0 (the canonical form drops it)");
  s->add_flag("--parallel-neurons", t.parallel_neurons, "transformer: one more neuron positively parallel to the first (merged)");
}
// The --certificate file, written only for a run that ended ok and agrees
// with the truth (its path then recorded in r); the report's line either way,
// "" without --certificate.
std::string write_certificate(const std::string& path, const std::string& certificate, int code, RecoverResult& r) {
  if (path.empty()) return "";
  if (code == 0 && !certificate.empty()) {
    if (is_root()) write_file_atomic(path, certificate);  // one writer in a run across MPI ranks
    r.output.certificate = path;
    return "  certificate      " + path + " (" + std::to_string(certificate.size()) + " bytes)\n";
  }
  return "  certificate      not written (" + r.output.certificate_note.value_or("the run did not end ok") + ")\n";
}
TransformerModel draw_transformer(const GenerateOptions& g, const TransformerShape& t) {
  if (t.ffn < 1) throw Error(ErrorKind::usage, "--zero-neuron and --parallel-neurons need --ffn M");
  if (g.cancel_v) throw Error(ErrorKind::usage, "--cancel-v applies to attention models, not to transformers");
  TransformerGenerateOptions o;
  o.d = g.d;
  o.heads = g.heads;
  o.neurons = t.ffn;
  o.seed = g.seed;
  o.w_range = g.w_range;
  o.w_den = g.w_den;
  o.share_w = g.share_w;
  o.zero_neuron = t.zero_neuron;
  o.parallel_neurons = t.parallel_neurons;
  return generate_transformer(o);
}
// --tolerance: zero (not given) means the run's default; given, it must be a
// positive exact number, and only float runs have one.
Rational parse_tolerance(const std::string& text, const CLI::Option* opt, Arith a) {
  if (opt->count() == 0) return Rational(0);
  Rational t;
  try {
    t = Rational::parse(text);
  } catch (const Error& e) {
    throw Error(ErrorKind::usage, std::string("--tolerance: ") + e.what());
  }
  if (t.sign() <= 0) throw Error(ErrorKind::usage, "--tolerance must be positive");
  if (arith_facts(a).decides_equality())
    throw Error(ErrorKind::usage, "--tolerance applies to --arith mpfr or double (exact runs are equal, ball runs contain the truth)");
  return t;
}

void add_model_shape(CLI::App* s, GenerateOptions& g) {
  const auto R = int_in(1, limits::max_entry_range);
  s->add_option("--w-range", g.w_range, "W entries: integers in [-R, R] divided by --w-den")->check(R);
  s->add_option("--w-den", g.w_den, "denominator of W entries")->check(R);
  s->add_option("--v-range", g.v_range, "v entries: integers in [-R, R] divided by --v-den")->check(R);
  s->add_option("--v-den", g.v_den, "denominator of v entries")->check(R);
  s->add_flag("--share-w", g.share_w, "heads 1 and 2 share W (the canonical form merges them)");
  s->add_flag("--cancel-v", g.cancel_v, "the last two heads share W with opposite v (the canonical form drops them)");
  s->add_flag("--bias", g.bias, "biases: each head gets c (its scores gain c^T x_i) and every answer beta (recover: the learner allows them)");
}
}  // namespace

Command make_generate() {
  struct State {
    GenerateOptions g;
    TransformerShape t;
    std::string out;
    bool json = false;
    std::string arith = "exact";
    bool orthogonal = false;
  };
  auto st = std::make_shared<State>();
  return {[st](CLI::App& app) {
            auto* s = app.add_subcommand("generate", "write a random model file");
            s->add_flag("--orthogonal", st->orthogonal,
                        "heads in pairwise orthogonal subspaces (the prior work's assumption); the file gets their bases (\"bases\")");
            s->add_option("--d", st->g.d, "token dimension")->required()->check(int_in(1, limits::max_d));
            s->add_option("--heads", st->g.heads, "number of heads")->required()->check(int_in(1, limits::max_heads));
            s->add_option("--rank", st->g.rank, "heads of rank R: W_h = A_h B_h^T with A_h, B_h d x R (entries drawn as W's), rank exactly R (1 <= R <= d)")
                ->check(int_in(1, limits::max_d));
            s->add_option("--seed", st->g.seed, "random seed")->required()->check(seed_value());
            s->add_option("--for", st->arith, "entry distribution suited to an arithmetic (exact: small rationals; others: fine dyadic grid)")
                ->check(CLI::IsMember({"exact", "ball", "mpfr", "double"}));
            add_model_shape(s, st->g);
            add_transformer_shape(s, st->t);
            s->add_option("-o,--output", st->out, "output file (default: standard output)");
            s->add_flag("--json", st->json, "print one JSON object (the model, or a summary when -o is given)");
            return s;
          },
          [st] {
            if (st->t.ffn > 0 || st->t.zero_neuron || st->t.parallel_neurons) {
              if (st->g.bias) throw Error(ErrorKind::usage, "--bias: the one-layer transformer (--ffn) is bias-free");
              const TransformerModel m = draw_transformer(st->g, st->t);
              check_entry_sizes(m, "not writing the transformer");
              const std::string text = transformer_to_json_text(m);
              if (st->out.empty()) {
                std::cout << text;
                return 0;
              }
              write_file_atomic(st->out, text);
              const TransformerModel c = m.canonical();
              nlohmann::json j{{"status", "ok"}, {"path", st->out}, {"model_kind", "transformer"}, {"d", m.d}, {"heads", m.heads()},
                               {"neurons", m.neurons()}, {"heads_canonical", c.heads()}, {"neurons_canonical", c.neurons()}};
              emit(st->json, j,
                   "wrote " + st->out + ": transformer, d=" + std::to_string(m.d) + ", " + std::to_string(m.heads()) + " heads (" + std::to_string(c.heads()) +
                       " canonical), " + std::to_string(m.neurons()) + " neurons (" + std::to_string(c.neurons()) + " canonical)\n");
              return 0;
            }
            std::vector<QMat> bases;
            const GenerateOptions g = with_defaults_for(st->g, parse_arith(st->arith));
            if (st->orthogonal && g.bias) throw Error(ErrorKind::usage, "--bias: the orthogonal models of the prior work are bias-free");
            const Model m = st->orthogonal ? generate_orthogonal_model(g, bases) : generate_model(g);
            const std::string text = st->orthogonal ? model_with_bases_to_json_text(m, bases) : model_to_json_text(m);
            if (st->out.empty()) {
              std::cout << text;
              return 0;
            }
            write_file_atomic(st->out, text);
            const auto c = m.canonical();
            nlohmann::json j{{"status", "ok"}, {"path", st->out}, {"d", m.d}, {"heads", m.num_heads()}, {"heads_canonical", c.num_heads()}};
            emit(st->json, j,
                 "wrote " + st->out + ": d=" + std::to_string(m.d) + ", " + std::to_string(m.num_heads()) + " heads (" +
                     std::to_string(c.num_heads()) + " canonical)\n");
            return 0;
          }};
}

namespace {

struct RecoverState {
  std::string model_path;
  GenerateOptions g;
  TransformerShape t;
  int learner_neurons = 0;
  bool drew = false;
  std::string arith = "exact", schedule = "paper", design = "paper";
  long bits = 256;
  int learner_heads = 0;
  int max_heads = 0;
  long oracle_bits = 0;
  std::string noise = "0";
  std::uint64_t noise_seed = 1;
  std::uint64_t seed = 1;
  int threads = 1;
  std::string noise_pattern = "uniform", target_error = "0", tolerance = "0";
  int samples_per_pair = 0;
  long max_bits = 1L << 14;
  long token_range = 0, token_den = 0;
  std::string exact_solver = "sparse";
  long max_degree = 0;
  bool no_repair = false;
  bool no_bias = false;
  std::string certificate;
  std::string oracle, oracle_error, transcript, resume;
  std::string model_kind;  // empty: the model file's kind, or transformer when --ffn draws one
  double oracle_timeout = oracle_protocol::default_timeout_seconds;
  long max_queries = 0;
  bool json = false, quiet = false, dry_run = false;
  std::string max_memory;
  int ranks = 0;  // --ranks of a dry run
  std::string checkpoint, resume_checkpoint;
  std::string model_text;  // the model file's bytes (the checkpoint's fingerprint)
  CLI::App* app = nullptr;
  CheckpointSpec ck;
  CLI::Option* d_opt = nullptr;
  CLI::Option* heads_opt = nullptr;
  CLI::Option* schedule_opt = nullptr;
  CLI::Option* noise_opt = nullptr;
  CLI::Option* target_opt = nullptr;
  CLI::Option* tol_opt = nullptr;
};

CLI::App* add_recover_options(CLI::App& app, RecoverState& st) {
  auto* s = app.add_subcommand("recover", "recover the canonical heads of a hidden model from value queries");
  auto* mo = s->add_option("--model", st.model_path, "model file (JSON)");
  using namespace limits;
  st.d_opt = s->add_option("--d", st.g.d, "draw a model: token dimension (a model file holds d <= " + std::to_string(max_d) + ")")
                 ->check(int_in(1, max_recover_d));
  st.heads_opt = s->add_option("--heads", st.g.heads, "number of heads of the drawn model; with --model, the learner's H")
                      ->check(int_in(1, max_heads));
  s->add_option("--seed", st.seed, "seed for the learner's draws (and for drawing the model)")->check(seed_value());
  s->add_option("--arith", st.arith, "exact | ball | mpfr | double")->check(CLI::IsMember({"exact", "ball", "mpfr", "double"}));
  s->add_option("--bits", st.bits, "precision in bits for ball and mpfr")->check(int_in(min_bits, max_bits));
  st.schedule_opt = s->add_option("--schedule", st.schedule, "paper | lean | compact | rank (the one --rank R selects)")
                        ->check(CLI::IsMember({"paper", "lean", "compact", "rank"}));
  s->add_option("--rank", st.g.rank,
                "a bound R on every head's rank (1 <= R < d): the rank schedule, 1+2H(2dR-R^2+2d-R-1) queries; a drawn model gets heads of rank R "
                "(W_h = A_h B_h^T, A_h and B_h d x R)")
      ->check(int_in(1, max_recover_d));
  s->add_option("--design", st.design,
                "how B and Delta are chosen: paper (default) | scaled (non-adaptive, better conditioned) | tuned (a counted pilot run chooses them) | "
                "placed (float64 answers: a pilot places every head's pole, pairs asked at ratios of copy counts up to 2^16; mpfr, or ball with the last round certified); not exact")
      ->check(CLI::IsMember({"paper", "scaled", "tuned", "placed"}));
  s->add_option("--learner-heads", st.learner_heads, "override the learner's H (default: canonical head count of the truth)")
      ->check(int_in(1, max_heads));
  s->add_option("--max-heads", st.max_heads, "only an upper bound H0 on the head count is known (claim 3)")->check(int_in(1, max_heads));
  s->add_option("--oracle-bits", st.oracle_bits, "approximate oracle: round every answer to this many bits")->check(int_in(1, max_bits));
  st.noise_opt = s->add_option("--noise", st.noise, "approximate oracle: add seeded noise uniform in [-EPS, EPS] (exact decimal or p/q)");
  s->add_option("--noise-seed", st.noise_seed, "seed of the oracle's noise")->check(seed_value());
  s->add_option("--noise-pattern", st.noise_pattern, "uniform (seeded, in [-EPS, EPS]) | worst (EPS times the sign pattern that attains kappa)")
      ->check(CLI::IsMember({"uniform", "worst"}));
  s->add_option("--samples-per-pair", st.samples_per_pair, "oversampling: K > 2H+1 values per pair, fitted by least squares (default exactly 2H+1)")
      ->check(int_in(1, max_samples_per_pair));
  st.tol_opt = s->add_option("--tolerance", st.tolerance,
                              "mpfr/double: tolerance on max_rel_error a run must meet to end ok (default 2^(acc/4), acc = log2 of the answers' accuracy)");
  st.target_opt = s->add_option("--target-error", st.target_error, "ball: raise the precision until the balls certify this relative error (e.g. 1e-30)");
  s->add_option("--max-bits", st.max_bits, "cap of the precision doubling for --target-error (default 16384)")->check(int_in(64, max_bits));
  s->add_option("--threads", st.threads, "threads for the pair fits (0 = all hardware threads); output bytes do not depend on it")
      ->check(int_in(0, max_threads));
  s->add_option("--token-range", st.token_range, "learner's token entries: integers in [-R, R] / --token-den")->check(int_in(1, max_token_range));
  s->add_option("--token-den", st.token_den, "denominator of the learner's token entries")->check(int_in(1, max_token_den));
  s->add_option("--exact-solver", st.exact_solver, "exact: Q(tau) linear solver fflu | modular | sparse (default; same result, different time)")
      ->check(CLI::IsMember({"fflu", "modular", "sparse"}));
  s->add_option("--max-degree", st.max_degree,
                "exact cost guard: largest tau-degree an answer may have (default " + std::to_string(kDefaultMaxDegree) +
                    "); a plan beyond it is refused before any query (exit 11)")
      ->check(int_in(1, max_tau_exponent));
  s->add_flag("--no-repair", st.no_repair, "do not repair degenerate pairs: such a draw ends degenerate (exit 4)");
  s->add_flag("--no-bias", st.no_bias, "the learner assumes a model without biases, even when the model file has some");
  s->add_option("--certificate", st.certificate,
                "write a replayable certificate of the run to FILE (only when it ends ok; check it with mhaq check-certificate)");
  add_model_shape(s, st.g);
  add_transformer_shape(s, st.t);
  s->add_option("--learner-neurons", st.learner_neurons, "transformers: tell the learner the neuron count (default: found; balls are told the canonical count)")
      ->check(int_in(1, max_neurons));
  s->add_option("--oracle", st.oracle,
                "learn from an external oracle: a command (run by /bin/sh -c) speaking docs/oracle-protocol.md; --model is then only the truth "
                "compared with afterwards, without it give --d and the learner's --heads");
  s->add_option("--model-kind", st.model_kind,
                "--oracle without --model: what the oracle is, attention (default) | transformer (then give --d, --heads and, in ball mode, "
                "--learner-neurons)")
      ->check(CLI::IsMember({"attention", "transformer"}));
  s->add_option("--oracle-error", st.oracle_error, "--oracle: the bound on |answer - f(X)|: EPS (absolute), rel:EPS or abs:EPS,rel:EPS");
  s->add_option("--oracle-timeout", st.oracle_timeout, "--oracle: seconds to wait for each reply (default 60)")->check(positive_number());
  s->add_option("--transcript", st.transcript, "--oracle: append every query and answer to FILE, flushed per batch");
  s->add_option("--resume", st.resume, "--oracle: answer from this transcript first and ask only the missing queries");
  s->add_option("--max-queries", st.max_queries,
                "--oracle: ask at most N queries; a run that surely needs more is refused before asking, one that turns out to need more "
                "stops at N (over_budget, exit 11)")
      ->check(int_in(1, max_recover_queries));
  s->add_flag("--dry-run", st.dry_run,
              "attention: print the plan's queries, the predicted peak memory and time, and stop (exit 13): no model drawn, no query asked");
  s->add_option("--ranks", st.ranks, "--dry-run: cost the run on P MPI ranks (default: mpirun's -np, else 1)")->check(int_in(1, limits::max_ranks));
  s->add_option("--max-memory", st.max_memory,
                "refuse a run whose predicted peak memory exceeds BYTES (suffix K, M, G or T: powers of 1024; default: the machine's memory) "
                "before any work (over_budget, exit 11)");
  auto* cko = s->add_option("--checkpoint", st.checkpoint,
                             "attention: journal every answer to FILE as it arrives (a new file), so that a killed run continues with "
                             "--resume-checkpoint FILE");
  auto* rco = s->add_option("--resume-checkpoint", st.resume_checkpoint,
                             "continue the run that FILE (from --checkpoint) belongs to: its answers are served again, the rest asked, and FILE "
                             "grows; the output equals an uninterrupted run's");
  cko->excludes(rco);
  s->add_flag("--json", st.json, "print one JSON object");
  s->add_flag("--quiet", st.quiet, "no progress lines on standard error (a run over about 10 s prints them; MHAQ_PROGRESS_AFTER=S sets the 10 s)");
  mo->excludes(st.d_opt);
  st.app = s;
  return s;
}

// The options of a run against an external oracle (recover --oracle).
ExternalRun external_run_options(const RecoverState& st) {
  ExternalRun ext;
  if (st.oracle.empty()) return ext;
  ext.transport.command = st.oracle;
  ext.transport.timeout_seconds = st.oracle_timeout;
  ext.transport.transcript = st.transcript;
  ext.transport.resume = st.resume;
  if (!st.oracle_error.empty()) ext.error = parse_error_statement(st.oracle_error);
  ext.truth_known = !st.model_path.empty();
  ext.max_queries = st.max_queries;
  return ext;
}

// recover on a one-layer transformer: the file's, or one drawn from --d/--heads/--ffn.
int recover_transformer_command(const RecoverState& st, const nlohmann::json& doc, Arith a, ExternalRun& ext) {
  const bool oracle = !st.oracle.empty();
  TransformerModel truth;
  if (!st.model_path.empty()) {
    try {
      truth = transformer_from_json(doc);
    } catch (const Error& e) {
      throw Error(e.kind(), clean_text(st.model_path) + ": " + e.what());
    }
  } else if (oracle) {
    // no truth: only d; the learner's H comes from --heads
    if (st.d_opt->count() == 0 || (st.heads_opt->count() == 0 && st.learner_heads == 0))
      throw Error(ErrorKind::usage, "--oracle without --model needs --d D and the learner's --heads H");
    truth.d = st.g.d;
  } else {
    if (st.d_opt->count() == 0) throw Error(ErrorKind::usage, "recover needs --model FILE or --d/--heads/--seed to draw a model");
    GenerateOptions g = st.g;
    g.seed = st.seed;
    truth = draw_transformer(g, st.t);
  }
  if (st.noise_opt->count() > 0 || st.oracle_bits != 0 || st.target_opt->count() > 0 || st.samples_per_pair != 0 || st.g.rank != 0 ||
      st.max_heads != 0 || st.token_range != 0 || st.token_den != 0 || (st.design != "paper" && st.design != "scaled") || st.g.bias || st.no_bias ||
      st.dry_run || !st.max_memory.empty() || st.ranks != 0 || !st.checkpoint.empty() || !st.resume_checkpoint.empty())
    throw Error(ErrorKind::usage,
                "transformers support --arith, --bits, --seed, --schedule, --design paper|scaled, --learner-heads, --learner-neurons, --tolerance, --threads and --certificate");
  RecoverOptions o;
  o.arith = a;
  o.bits = st.bits;
  o.schedule = parse_schedule(st.schedule);
  o.seed = st.seed;
  o.heads = st.learner_heads;
  if ((!st.model_path.empty() || oracle) && o.heads == 0 && st.heads_opt->count() > 0) o.heads = st.g.heads;
  o.neurons = st.learner_neurons;
  o.threads = st.threads;
  o.design = parse_design(st.design);
  o.tolerance = parse_tolerance(st.tolerance, st.tol_opt, a);
  check_transformer_limits(truth, o, st.model_path);
  if (oracle) o.external = &ext;
  std::string certificate;
  if (!st.certificate.empty()) o.certificate = &certificate;
  RecoverResult r = recover_transformer_run(truth, o);
  const int code = r.exit_code();
  const std::string note = write_certificate(st.certificate, certificate, code, r);
  emit(st.json, record_json(r), transformer_report(r) + note);
  if (oracle && is_root()) std::cerr << "mhaq: the oracle was asked " << ext.asked << " queries" << (ext.exit_note.empty() ? "" : "; " + ext.exit_note) << "\n";
  if (code != 0 && !st.json) std::cerr << "mhaq: recover finished with status " << status_name(r.judge.status) << "\n";
  return code;
}

// recover on an attention model: the file's, one drawn, or (--oracle without
// --model) none, only its dimension.
int recover_attention_command(const RecoverState& st, const nlohmann::json& doc, Arith a, ExternalRun& ext) {
  const bool oracle = !st.oracle.empty();
  Model truth;
  ModelFileInfo file_info;
  if (!st.model_path.empty()) {
    try {
      truth = model_from_json(doc, "", &file_info);
    } catch (const Error& e) {
      throw Error(e.kind(), clean_text(st.model_path) + ": " + e.what());
    }
  } else if (oracle) {
    // no truth: only d; the learner's H comes from --heads
    if (st.d_opt->count() == 0 || st.heads_opt->count() == 0) throw Error(ErrorKind::usage, "--oracle without --model needs --d D and the learner's --heads H");
    truth.d = st.g.d;
  } else if (st.d_opt->count() == 0) {
    throw Error(ErrorKind::usage, "recover needs --model FILE or --d/--heads/--seed to draw a model");
  }
  RecoverOptions o;
  o.arith = a;
  o.bits = st.bits;
  o.schedule = parse_schedule(st.schedule);
  if (st.g.rank > 0) {
    if (st.schedule_opt->count() > 0 && o.schedule != Schedule::rank)
      throw Error(ErrorKind::usage, "--rank selects the rank schedule: leave out --schedule " + st.schedule);
    o.schedule = Schedule::rank;
    o.rank = st.g.rank;
  }
  o.design = parse_design(st.design);
  o.seed = st.seed;
  o.heads = st.learner_heads;
  // with a model file, --heads states the learner's H
  if ((!st.model_path.empty() || oracle) && o.heads == 0 && st.heads_opt->count() > 0) o.heads = st.g.heads;
  o.max_heads = st.max_heads;
  if (oracle) o.external = &ext;
  o.oracle_bits = st.oracle_bits;
  try {
    o.noise_eps = Rational::parse(st.noise);
  } catch (const Error& e) {
    throw Error(ErrorKind::usage, std::string("--noise: ") + e.what());
  }
  o.noise_seed = st.noise_seed;
  o.threads = st.threads;
  o.noise_pattern = parse_noise_pattern(st.noise_pattern);
  o.samples_per_pair = st.samples_per_pair;
  o.max_bits = st.max_bits;
  try {
    o.target_error = Rational::parse(st.target_error);
  } catch (const Error& e) {
    throw Error(ErrorKind::usage, std::string("--target-error: ") + e.what());
  }
  // Given explicitly, a zero is an error, not "off" or "default".
  if (st.target_opt->count() > 0 && o.target_error.sign() <= 0) throw Error(ErrorKind::usage, "--target-error must be positive");
  if (st.noise_opt->count() > 0 && o.noise_eps.sign() < 0) throw Error(ErrorKind::usage, "--noise must be non-negative");
  o.tolerance = parse_tolerance(st.tolerance, st.tol_opt, a);
  if (st.token_range != 0 || st.token_den != 0) {
    const TokenSpec def = default_tokens(a);
    o.tokens = {st.token_range ? st.token_range : def.range, st.token_den ? st.token_den : def.den};
  }
  o.exact_solver = parse_exact_solver(st.exact_solver);
  o.max_degree = st.max_degree;
  o.repair = !st.no_repair;
  if (st.g.bias && st.no_bias) throw Error(ErrorKind::usage, "--bias and --no-bias contradict each other");
  if (st.g.bias) o.bias = true;
  if (st.no_bias) o.bias = false;
  if (st.max_degree < 0) throw Error(ErrorKind::usage, "--max-degree must be positive");
  std::string certificate;
  if (!st.certificate.empty()) o.certificate = &certificate;
  const bool draw = st.model_path.empty() && !oracle;
  double predicted = 0;  // seconds, by the cost model
  {  // costed before a model is drawn: a drawn model at d = 1024 alone takes gigabytes
    const long d = draw ? st.g.d : truth.d;
    const long H = o.max_heads > 0 ? o.max_heads : o.heads > 0 ? o.heads : draw ? st.g.heads : truth.canonical().num_heads();
    const int gate = recover_cost_gate(o, d, H, CostGate{st.dry_run, st.json, st.max_memory, st.ranks, oracle}, predicted);
    if (gate >= 0) return gate;
  }
  if (draw) {
    GenerateOptions g = with_defaults_for(st.g, a);
    g.seed = st.seed;
    truth = generate_model(g, limits::max_recover_d);
  }
  check_recover_limits(truth, o, st.model_path);
  if (!st.ck.path.empty()) {
    o.checkpoint = &st.ck;
    if (oracle) checkpoint_external(ext, st.ck);
  }
  Progress progress(std::cerr, Progress::after_from_env());
  progress.expect(predicted);
  if (!st.quiet) o.progress = &progress;
  RecoverResult r = recover_run(truth, o);
  std::string human_extra;
  if (file_info.factored()) {  // say how the factored file became (W_h, v_h)
    r.output.model_conversion = file_info;
    human_extra += "  model file       " + file_info.summary() + "\n";
  }
  const int code = r.exit_code();
  const std::string note = write_certificate(st.certificate, certificate, code, r);
  emit(st.json, record_json(r), recover_report(r) + human_extra + note);
  if (oracle && is_root()) {
    // on standard error: a resumed run's output must equal an uninterrupted one's
    // (rank 0's counts: it alone asks the oracle in a run across MPI ranks)
    std::cerr << "mhaq: the oracle was asked " << ext.asked << " queries";
    if (!ext.transport.resume.empty()) std::cerr << ", " << ext.replayed << " answered from " << clean_text(ext.transport.resume);
    std::cerr << (ext.exit_note.empty() ? std::string() : "; " + ext.exit_note) << "\n";
  }
  if (st.ck.resume && !oracle)
    std::cerr << "mhaq: " << st.ck.replayed << " answers served from the checkpoint " << clean_text(st.ck.path) << ", and " << st.ck.fits_replayed
              << " pair fits\n";
  if (st.ck.resume && oracle) std::cerr << "mhaq: " << st.ck.fits_replayed << " pair fits served from the checkpoint " << clean_text(st.ck.path) << "\n";
  if (code != 0 && !st.json) std::cerr << "mhaq: recover finished with status " << status_name(r.judge.status) << "\n";
  return code;
}

int recover_command(RecoverState& st) {
  const Arith a = parse_arith(st.arith);
  // The file is parsed once, strictly; its "format" says whether it is a transformer.
  nlohmann::json doc;
  bool file_transformer = false;
  if (!st.model_path.empty()) {
    const std::string text = read_file_text(st.model_path, "model file");
    st.model_text = text;
    try {
      doc = parse_json_text(text);
    } catch (const Error& e) {
      throw Error(e.kind(), clean_text(st.model_path) + ": " + e.what());
    }
    file_transformer = is_transformer_json(doc);
  }
  const bool oracle = !st.oracle.empty();
  if (!oracle && (!st.oracle_error.empty() || !st.transcript.empty() || !st.resume.empty() || st.max_queries != 0))
    throw Error(ErrorKind::usage, "--oracle-error, --transcript, --resume and --max-queries go with --oracle CMD");
  if (oracle && arith_facts(a).exact)
    throw Error(ErrorKind::usage, "exact mode refuses --oracle: the answers are reals, not elements of Q(tau); use --arith ball, mpfr or double");
  if (oracle && (st.t.ffn > 0 || st.t.zero_neuron || st.t.parallel_neurons))
    throw Error(ErrorKind::usage,
                "--oracle does not draw a model: give the truth as --model FILE, or --model-kind transformer with --d, --heads and "
                "--learner-neurons");
  if (!st.model_kind.empty() && (!oracle || !st.model_path.empty()))
    throw Error(ErrorKind::usage, "--model-kind states what an --oracle is when there is no --model (a model file says its own kind)");
  if ((!st.checkpoint.empty() || !st.resume_checkpoint.empty()) && shard().size > 1)
    throw Error(ErrorKind::usage, "--checkpoint and --resume-checkpoint run on one process: run them without mpirun");
  const RunAcrossRanks across;  // under mpirun: one run, its answers and pair fits shared out among the ranks
  ExternalRun ext = external_run_options(st);
  if (!st.checkpoint.empty() || !st.resume_checkpoint.empty()) {
    st.ck.resume = !st.resume_checkpoint.empty();
    st.ck.path = st.ck.resume ? st.resume_checkpoint : st.checkpoint;
    st.ck.fingerprint = recover_fingerprint(*st.app, st.model_text);
  }
  if (st.t.ffn > 0 || st.t.zero_neuron || st.t.parallel_neurons || file_transformer || st.model_kind == "transformer")
    return recover_transformer_command(st, doc, a, ext);
  return recover_attention_command(st, doc, a, ext);
}

}  // namespace

Command make_recover() {
  auto st = std::make_shared<RecoverState>();
  return {[st](CLI::App& app) { return add_recover_options(app, *st); }, [st] { return recover_command(*st); }};
}

// The built-in model: two heads on R^3 with small rational parameters.
Model demo_model() {
  return model_from_json_text(R"({"format":"mhaq-model","version":1,"d":3,"heads":[
    {"W":[["1/2","-1/4","0"],["1/4","3/4","-1/2"],["0","1/2","1/4"]],"v":["1","-1/2","3/2"]},
    {"W":[["-3/4","0","1/4"],["1/2","-1/4","0"],["1/4","1/4","-1/2"]],"v":["-1","2","1/2"]}]})");
}

// The built-in transformer: the same heads' W on R^2 (d = 2, H = 2) with two
// ReLU neurons, small enough for an exact run of a few seconds.
TransformerModel demo_transformer() {
  return transformer_from_json_text(R"({"format":"mhaq-transformer","version":1,"d":2,
    "heads":[{"W":[["1/2","-1/4"],["1/4","3/4"]]},{"W":[["-3/4","1/4"],["1/2","-1/4"]]}],
    "neurons":[{"u":"1","U":[["1","-1/2"],["1/2","1/4"]]},{"u":"-1","U":[["-1/4","1"],["3/4","1/2"]]}]})");
}

Command make_demo() {
  struct State {
    bool json = false;
    // Seed 2 draws queries on which neither the exact nor the ball run needs a
    // repair, so the showcase sends exactly the paper's 4Hd^2-2H+1 = 69 queries
    // (tests/cli_smoke.sh asserts it); other seeds may repair a pair, which
    // costs extra queries and would hide the claim the demo shows.
    std::uint64_t seed = 2;
  };
  auto st = std::make_shared<State>();
  return {[st](CLI::App& app) {
            auto* s = app.add_subcommand("demo", "recover a built-in model exactly and in Arb balls, and report");
            s->add_option("--seed", st->seed, "seed for the learner's draws")->check(seed_value());
            s->add_flag("--json", st->json, "print one JSON object");
            return s;
          },
          [st] {
            const Model m = demo_model();
            RecoverOptions ex;
            ex.arith = Arith::exact;
            ex.seed = st->seed;
            RecoverOptions ba = ex;
            ba.arith = Arith::ball;
            ba.bits = 128;
            // A degenerate learner draw is reported and redrawn with the next seed
            // (each attempt is a fresh, complete run of the paper schedule).
            std::string redraw_note;
            auto run_until_ok = [&](RecoverOptions o) {
              for (int attempt = 0;; ++attempt) {
                RecoverResult r = recover_run(m, o);
                if (r.judge.status != Status::degenerate || attempt == 7) return r;
                redraw_note += "  (" + std::string(arith_name(o.arith)) + " learner seed " + std::to_string(o.seed) +
                               " drew a degenerate query set: " + r.judge.message + "; redrawn)\n";
                ++o.seed;
              }
            };
            const auto re = run_until_ok(ex);
            const auto rb = run_until_ok(ba);
            // claim 5: a one-layer transformer, exact
            RecoverResult rt;
            {
              RecoverOptions o = ex;
              for (int attempt = 0;; ++attempt) {
                rt = recover_transformer_run(demo_transformer(), o);
                if (rt.judge.status != Status::degenerate || attempt == 7) break;
                redraw_note += "  (transformer learner seed " + std::to_string(o.seed) + " drew a degenerate path: " + rt.judge.message +
                               "; redrawn)\n";
                ++o.seed;
              }
            }
            std::string human =
                "mhaq demo: a hidden 2-head attention model on R^3 is queried as a black box.\n"
                "The learner sends [a x k, b] pair queries, interpolates each pair's type-(H,H)\n"
                "rational function, reads poles and residues, links heads across pairs and\n"
                "solves for the canonical (W_h, v_h).\n\n" +
                redraw_note + recover_report(re) + "\n" + recover_report(rb) +
                "\nA hidden one-layer transformer (2 heads on R^2, then two ReLU neurons) is\n"
                "recovered from value queries too: W from the odd part T(X) - T(-X), then the\n"
                "regions along a path and the signs of the neurons' jumps (claim 5).\n\n" +
                transformer_report(rt);
            const nlohmann::json j{{"exact", record_json(re)}, {"ball", record_json(rb)}, {"transformer", record_json(rt)}};
            emit(st->json, j, human);
            return std::max({re.exit_code(), rb.exit_code(), rt.exit_code()});
          }};
}

}  // namespace mhaq::cli
