// prove: run the machine check of every lemma in proofs/.
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "mhaq/base/error.hpp"
#include "mhaq/base/limits.hpp"
#include "mhaq/evidence/prove.hpp"
#include "options.hpp"

namespace mhaq::cli {

Command make_prove() {
  struct State {
    bool json = false;
    ProveOptions o;
    std::string only;
  };
  auto st = std::make_shared<State>();
  return {[st](CLI::App& app) {
            auto* s = app.add_subcommand("prove", "run the machine check of every lemma in proofs/ (exit 10 if any fails)");
            s->add_flag("--json", st->json, "print one JSON object {\"lemmas\":[...],\"all_pass\":bool}");
            s->add_option("--lemma", st->only, "check one lemma only (page stem or number, e.g. 02)");
            s->add_option("--break", st->o.break_lemma,
                          "deliberately check a wrong variant of this lemma's statement (the check must then FAIL)");
            s->add_option("--multiplier", st->o.multiplier, "scale the randomized case counts")->check(int_in(1, limits::max_multiplier));
            s->add_option("--seed", st->o.seed, "seed of the randomized checks")->check(seed_value());
            return s;
          },
          [st] {
            std::vector<LemmaCheck> res;
            if (st->only.empty()) res = run_proof_checks(st->o);
            else res.push_back(run_proof_check(st->only, st->o));
            bool all = true;
            nlohmann::json lemmas = nlohmann::json::array();
            std::string human;
            for (const auto& r : res) {
              all = all && r.pass;
              lemmas.push_back({{"id", r.id}, {"title", r.title}, {"method", r.method}, {"cases", r.cases}, {"pass", r.pass}, {"detail", r.detail}});
              human += std::string(r.pass ? "PASS" : "FAIL") + "  " + r.id + "  " + r.title + "  (" + r.method + ", " + std::to_string(r.cases) +
                       " cases)\n";
              if (!r.pass) human += "      " + r.detail + "\n";
            }
            human += all ? "all lemma checks pass\n" : "some lemma checks FAILED\n";
            nlohmann::json j{{"lemmas", lemmas}, {"all_pass", all}};
            emit(st->json, j, human);
            return all ? 0 : exit_code(ErrorKind::rejected);
          }};
}

}  // namespace mhaq::cli
