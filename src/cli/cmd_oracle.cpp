// oracle: the reference oracle of the protocol (docs/oracle-protocol.md),
// served from a model file on standard input and output, or, with --inputs,
// one evaluation of the sequences in a file: in ball mode certified decimals,
// correctly rounded for attention models (model/certified_eval.hpp).
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "mhaq/base/io.hpp"
#include "mhaq/base/limits.hpp"
#include "mhaq/base/text.hpp"
#include "mhaq/oracle/server.hpp"
#include "options.hpp"

namespace mhaq::cli {

namespace {
// One line of the human listing: the index, the value, and its radius if any.
std::string answer_report(size_t i, const ServedAnswer& ans, bool certified) {
  const std::string v = ans.f64 ? nlohmann::json(*ans.f64).dump() : ans.value;
  // a correctly rounded decimal alone; a ball (or an mpfr/double answer with a radius) with it
  const bool rounded = certified && ans.correctly_rounded.value_or(false);
  const std::string note = !rounded && ans.radius ? " +/- " + *ans.radius + (certified ? "  (ball)" : "") : "";
  return "  " + std::to_string(i) + "  " + v + note + "\n";
}
}  // namespace

Command make_oracle() {
  struct State {
    std::string model_path, arith = "ball", inputs;
    long bits = 512, digits = 20, max_bits = 16384;
    bool json = false;
    CLI::Option *digits_opt = nullptr, *max_bits_opt = nullptr;
  };
  auto st = std::make_shared<State>();
  return {[st](CLI::App& app) {
            auto* s = app.add_subcommand("oracle",
                                         "serve the oracle protocol (docs/oracle-protocol.md) from a model file on standard input and output; "
                                         "with --inputs, evaluate the sequences of a file and print certified decimals");
            s->add_option("--model", st->model_path, "model file: attention (plain or factored) or a one-layer transformer")->required();
            s->add_option("--arith", st->arith, "answers: ball (certified decimal and radius), mpfr (decimal at --bits), double (JSON number)");
            s->add_option("--bits", st->bits, "precision of ball and mpfr answers")->check(int_in(limits::min_bits, limits::max_bits));
            s->add_option("--inputs", st->inputs, "one-shot: a JSON file {\"queries\": [[{\"token\": [...], \"count\": n}, ...], ...]}");
            st->digits_opt = s->add_option("--digits", st->digits,
                          "with --inputs and ball: significant digits of each certified decimal, correctly rounded (attention; default 20)")
                ->check(int_in(1, limits::max_digits));
            st->max_bits_opt = s->add_option("--max-bits", st->max_bits, "with --inputs and ball: precision cap of each certified evaluation (default 16384)")
                ->check(int_in(limits::min_bits, limits::max_bits));
            s->add_flag("--json", st->json, "with --inputs: print one JSON object");
            return s;
          },
          [st] {
            const Arith a = parse_arith(st->arith);
            if (arith_facts(a).exact) throw Error(ErrorKind::usage, "mhaq oracle answers in ball, mpfr or double (exact answers are not numbers the protocol carries)");
            if (st->inputs.empty() && (st->digits_opt->count() > 0 || st->max_bits_opt->count() > 0))
              throw Error(ErrorKind::usage, "--digits and --max-bits apply to --inputs (the certified one-shot evaluation)");
            const std::string text = read_file_text(st->model_path, "model file");
            std::unique_ptr<ServedModel> m;
            try {
              if (is_transformer_text(text)) m = std::make_unique<ServedModel>(transformer_from_json_text(text), a, st->bits);
              else m = std::make_unique<ServedModel>(model_from_json_text(text), a, st->bits);
            } catch (const Error& e) {
              throw Error(e.kind(), clean_text(st->model_path) + ": " + e.what());
            }
            const std::string name = "mhaq oracle (" + m->describe() + ", model file " + clean_text(st->model_path) + ")";
            if (st->inputs.empty()) {
              // C++ streams unsynchronised from stdio read a batch line in
              // blocks rather than a character at a time
              std::ios::sync_with_stdio(false);
              return serve_oracle(std::cin, std::cout, *m, name);
            }
            std::vector<Query> qs;
            try {
              qs = read_oracle_inputs(read_file_text(st->inputs, "inputs file"), m->dim());
            } catch (const Error& e) {
              throw Error(e.kind(), clean_text(st->inputs) + ": " + e.what());
            }
            nlohmann::json answers = nlohmann::json::array();
            std::string human = name + "\n";
            // ball: certified evaluation (correctly rounded decimals for attention);
            // mpfr and double: the served answers, rounded as the protocol sends them
            const bool cert = arith_facts(a).rigorous;
            if (cert) human += "certified: attention values correctly rounded to " + std::to_string(st->digits) + " digits (Arb, rising precision up to " +
                               std::to_string(st->max_bits) + " bits); other values as balls containing them\n";
            for (size_t i = 0; i < qs.size(); ++i) {
              const ServedAnswer ans = cert ? m->certified(static_cast<long>(i), qs[i], st->digits, st->max_bits) : m->answer_value(static_cast<long>(i), qs[i]);
              human += answer_report(i, ans, cert);
              answers.push_back(served_answer_json(ans));
            }
            emit(st->json, nlohmann::json{{"status", "ok"}, {"oracle", name}, {"answers", answers}}, human);
            return 0;
          }};
}

}  // namespace mhaq::cli
