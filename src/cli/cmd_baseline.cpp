// baseline, compare (and compare --study): the prior-work baselines beside mhaq.
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "mhaq/base/limits.hpp"
#include "options.hpp"
#include "mhaq/base/error.hpp"
#include "mhaq/evidence/baseline.hpp"
#include "mhaq/run/record_json.hpp"
#include "mhaq/run/recover_limits.hpp"

namespace mhaq::cli {

namespace {
// What both commands take: the model (a file, or drawn) and the run's arithmetic.
struct Common {
  std::string model_path, bases_path, arith = "exact", noise = "0", tolerance = "0";
  GenerateOptions g;
  bool orthogonal = false, json = false;
  long bits = 256, oracle_bits = 0, max_degree = 0;
  std::uint64_t seed = 1, noise_seed = 1;
  CLI::Option* d_opt = nullptr;
  CLI::Option* tol_opt = nullptr;
};
// An exact decimal or p/q option; malformed is a usage error naming the option.
Rational decimal_option(const std::string& flag, const std::string& text) {
  try {
    return Rational::parse(text);
  } catch (const Error& e) {
    throw Error(ErrorKind::usage, flag + ": " + e.what());
  }
}
void add_common(CLI::App* s, Common& c) {
  auto* mo = s->add_option("--model", c.model_path, "model file (JSON; an \"bases\" field gives the head subspaces)");
  c.d_opt = s->add_option("--d", c.g.d, "draw a model: token dimension")->check(int_in(1, limits::max_d));
  s->add_option("--heads", c.g.heads, "draw a model: number of heads")->check(int_in(1, limits::max_heads));
  s->add_option("--seed", c.seed, "seed for the draws (model and learner)")->check(seed_value());
  s->add_flag("--orthogonal", c.orthogonal, "draw a model with heads in orthogonal subspaces (generate --orthogonal); its bases are known");
  s->add_flag("--share-w", c.g.share_w, "draw: heads 1 and 2 share W");
  s->add_flag("--cancel-v", c.g.cancel_v, "draw: the last two heads share W with opposite v");
  s->add_option("--bases", c.bases_path, "file with the head subspaces' bases (mhaq-bases, or a model file with \"bases\")");
  s->add_option("--arith", c.arith, "exact | ball | mpfr | double")->check(CLI::IsMember({"exact", "ball", "mpfr", "double"}));
  s->add_option("--bits", c.bits, "precision in bits for ball and mpfr")->check(int_in(limits::min_bits, limits::max_bits));
  s->add_option("--oracle-bits", c.oracle_bits, "approximate oracle: round every answer to this many bits")->check(int_in(1, limits::max_bits));
  s->add_option("--noise", c.noise, "approximate oracle: seeded noise uniform in [-EPS, EPS]");
  s->add_option("--noise-seed", c.noise_seed, "seed of the oracle's noise")->check(seed_value());
  c.tol_opt = s->add_option("--tolerance", c.tolerance, "mpfr/double: tolerance on max_rel_error (default 2^(acc/4))");
  s->add_option("--max-degree", c.max_degree, "exact cost guard: largest tau-degree an answer may have (default 20000); a plan beyond it is refused before any query (exit 11)")
      ->check(int_in(1, limits::max_tau_exponent));
  s->add_flag("--json", c.json, "print one JSON object");
  mo->excludes(c.d_opt);
}
// The model, and the bases when known (from --bases, the model file or the draw).
Model load(const Common& c, std::vector<QMat>& bases, bool& have_bases, std::string& source) {
  const Arith a = parse_arith(c.arith);
  Model m;
  have_bases = false;
  if (!c.model_path.empty()) {
    const std::string text = slurp_file(c.model_path);
    m = read_model_file(c.model_path);
    try {
      if (bases_from_json_text(text, m.d, bases)) have_bases = true, source = "model file";
    } catch (const Error& e) {
      throw Error(e.kind(), c.model_path + ": " + e.what());
    }
  } else {
    if (c.d_opt->count() == 0) throw Error(ErrorKind::usage, "needs --model FILE or --d/--heads/--seed to draw a model");
    GenerateOptions g = with_defaults_for(c.g, a);
    g.seed = c.seed;
    if (c.orthogonal) {
      m = generate_orthogonal_model(g, bases);
      have_bases = true;
      source = "drawn with the model (generate --orthogonal)";
    } else {
      m = generate_model(g);
    }
  }
  if (!c.bases_path.empty()) {
    try {
      if (!bases_from_json_text(slurp_file(c.bases_path), m.d, bases)) throw_input("no \"bases\" field");
    } catch (const Error& e) {
      throw Error(e.kind(), c.bases_path + ": " + e.what());
    }
    have_bases = true;
    source = "file " + c.bases_path;
  }
  return m;
}
RecoverOptions options(const Common& c);
// The model and the options against recover's stated limits, naming the file.
Model load_checked(const Common& c, std::vector<QMat>& bases, bool& have_bases, std::string& source) {
  Model m = load(c, bases, have_bases, source);
  check_recover_limits(m, options(c), c.model_path, true);
  return m;
}
RecoverOptions options(const Common& c) {
  RecoverOptions o;
  o.arith = parse_arith(c.arith);
  o.bits = c.bits;
  o.seed = c.seed;
  o.oracle_bits = c.oracle_bits;
  o.noise_eps = decimal_option("--noise", c.noise);
  if (o.noise_eps.sign() < 0) throw Error(ErrorKind::usage, "--noise must be non-negative");
  o.noise_seed = c.noise_seed;
  o.tolerance = decimal_option("--tolerance", c.tolerance);
  // given explicitly, zero is an error, not the default
  if (c.tol_opt->count() > 0 && o.tolerance.sign() <= 0) throw Error(ErrorKind::usage, "--tolerance must be positive");
  o.max_degree = c.max_degree;
  return o;
}
}  // namespace

Command make_baseline() {
  struct State {
    Common c;
    std::string method = "single-head";
    bool axis = false;
    std::string w_bound = "1";
  };
  auto st = std::make_shared<State>();
  return {[st](CLI::App& app) {
            auto* s = app.add_subcommand("baseline", "run a prior-work baseline (Bhattamishra et al.) through the oracle and compare with the truth");
            s->add_option("--method", st->method, "single-head | orthogonal")->check(CLI::IsMember({"single-head", "orthogonal"}));
            s->add_flag("--axis-bases", st->axis, "orthogonal: guess axis-aligned bases (coordinates split into H blocks) instead of known ones");
            s->add_option("--w-bound", st->w_bound, "the prior work's assumed bound on |W_ij|, for its logit scaling (balls, floats)");
            add_common(s, st->c);
            return s;
          },
          [st] {
            std::vector<QMat> bases;
            bool have = false;
            std::string source;
            const Model m = load_checked(st->c, bases, have, source);
            BaselineRun b{parse_baseline_method(st->method), {}, "", decimal_option("--w-bound", st->w_bound)};
            if (b.w_bound.sign() <= 0) throw Error(ErrorKind::usage, "--w-bound must be positive");
            if (b.method == BaselineMethod::orthogonal) {
              if (st->axis) {
                b.bases = axis_bases(m.d, m.canonical().num_heads());
                b.bases_source = "axis-aligned guess";
              } else if (have) {
                b.bases = bases;
                b.bases_source = source;
              } else {
                throw Error(ErrorKind::usage, "--method orthogonal needs the head subspaces' bases: --bases FILE, a model file with \"bases\", --orthogonal, or --axis-bases");
              }
            }
            const RecoverResult r = baseline_run(m, b, options(st->c));
            emit(st->c.json, record_json(r), baseline_report(r));
            return r.exit_code();
          }};
}

Command make_compare() {
  struct State {
    Common c;
    bool study = false;
    int trials = 20;
    std::string baseline_arith;
    std::vector<std::string> families;
  };
  auto st = std::make_shared<State>();
  return {[st](CLI::App& app) {
            auto* s = app.add_subcommand("compare", "run mhaq (paper, lean) and the prior-work baselines on the same model, one row per method");
            s->add_flag("--study", st->study, "the contrast study: single-head, orthogonal and general model families, rates per method");
            s->add_option("--trials", st->trials, "study: models per family")->check(int_in(1, limits::max_trials));
            s->add_option("--baseline-arith", st->baseline_arith, "study: the baselines' arithmetic (default mpfr; mhaq runs at --arith)")
                ->check(CLI::IsMember({"exact", "ball", "mpfr", "double"}));
            s->add_option("--family", st->families, "study: families to run (single, orthogonal, general; default all)");
            add_common(s, st->c);
            return s;
          },
          [st] {
            if (st->study) {
              StudyOptions so;
              so.trials = st->trials;
              so.seed = st->c.seed;
              so.arith = parse_arith(st->c.arith);
              so.baseline_arith = st->baseline_arith.empty() ? Arith::mpfr : parse_arith(st->baseline_arith);
              so.bits = st->c.bits;
              if (!st->families.empty()) so.families = st->families;
              const StudyResult j = compare_study(so);
              emit(st->c.json, study_json(j), study_report(j));
              return 0;
            }
            std::vector<QMat> bases;
            bool have = false;
            std::string source;
            const Model m = load_checked(st->c, bases, have, source);
            const CompareResult c = compare_methods(m, have ? &bases : nullptr, options(st->c));
            emit(st->c.json, compare_json(c), compare_report(c));
            return 0;
          }};
}

}  // namespace mhaq::cli
