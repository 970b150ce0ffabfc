// verify: the theorem checker (docs/studies/verify.md).
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "mhaq/base/error.hpp"
#include "mhaq/base/limits.hpp"
#include "mhaq/evidence/verify.hpp"
#include "options.hpp"

namespace mhaq::cli {

Command make_verify() {
  struct State {
    VerifyOptions o;
    std::string arith = "exact", design = "paper", schedule = "paper";
    bool rates = false;
    std::vector<long> ranges{1, 2, 4, 8};
    bool no_h0 = false;
    bool json = false;
  };
  auto st = std::make_shared<State>();
  return {[st](CLI::App& app) {
            auto* s = app.add_subcommand("verify", "check the paper's claims on random trials and compare degenerate rates with the Schwartz-Zippel bound");
            using namespace limits;
            s->add_option("--trials", st->o.trials, "number of trials (per token range with --rates)")->required()->check(int_in(1, max_trials));
            s->add_option("--seed", st->o.seed, "seed; trial seeds are derived from it")->required()->check(seed_value());
            s->add_option("--arith", st->arith, "exact | ball | mpfr | double")->check(CLI::IsMember({"exact", "ball", "mpfr", "double"}));
            s->add_option("--bits", st->o.bits, "precision in bits for ball and mpfr")->check(int_in(min_bits, max_bits));
            s->add_option("--schedule", st->schedule, "the learner's schedule for claims 1-4: paper (default) | lean | compact")
                ->check(CLI::IsMember({"paper", "lean", "compact"}));
            s->add_option("--rank", st->o.rank, "heads of rank R, learned with the rank schedule told --rank R (claims 1-4; needs --min-d above R)")
                ->check(int_in(1, verify_max_d - 1));
            s->add_option("--min-d", st->o.min_d, "smallest token dimension d (default 2)")->check(int_in(1, verify_max_d));
            s->add_option("--max-d", st->o.max_d, "largest token dimension d (default 4)")->check(int_in(1, verify_max_d));
            s->add_option("--max-h", st->o.max_h, "largest canonical head count H (default 3)")->check(int_in(1, verify_max_h));
            s->add_option("--h0-extra", st->o.h0_extra, "claim-3 runs use the bound H0 = H + this (default 2)")->check(int_in(0, max_heads - 1));
            s->add_option("--token-range", st->o.token_range, "learner's token entries: integers in [-R, R] (default: the arithmetic's default)")
                ->check(int_in(1, max_token_range));
            s->add_option("--tol", st->o.tolerance, "mpfr/double: tolerance on max_rel_error (default 2^(-bits/4))")->check(positive_number());
            s->add_flag("--no-h0", st->no_h0, "skip the unknown-H (H0) runs");
            s->add_option("--model-kind", st->o.model_kind, "attention (claims 1-4, default) | transformer (claim 5) | all")
                ->check(CLI::IsMember({"attention", "transformer", "all"}));
            s->add_option("--claim", st->o.claim, "4: only the claim-4 study (approximate answers: the certified bound against the observed error and kappa eps; "
                                                  "MPFR learner at --bits, eps log-uniform on [1e-40, 1e-14])")
                ->check(CLI::IsMember({4}));
            s->add_option("--design", st->design, "query design of every run: paper (default) | scaled | tuned (not exact)")
                ->check(CLI::IsMember({"paper", "scaled", "tuned"}));
            s->add_flag("--bias", st->o.bias, "models with biases (generate --bias), learned with them: claim 1 is about (W_h, c_h, v_h) and beta, "
                                              "claims 2 and 4 count the schedule with biases (docs/math/biases.md)");
            s->add_flag("--rates", st->rates, "rate study: degenerate rate vs Schwartz-Zippel bound for each --ranges value (H known runs)");
            s->add_option("--ranges", st->ranges, "token ranges R for --rates (default 1 2 4 8)")->delimiter(',')->check(int_in(1, limits::max_token_range));
            s->add_option("--threads", st->o.threads, "trials in parallel (0 = all hardware threads); output bytes do not depend on it")
                ->check(int_in(0, max_threads));
            s->add_flag("--json", st->json, "print one JSON object");
            return s;
          },
          [st] {
            VerifyOptions o = st->o;
            o.arith = parse_arith(st->arith);
            o.design = parse_design(st->design);
            if (o.claim == 4 && st->rates) throw Error(ErrorKind::usage, "--claim 4 and --rates are separate studies");
            o.schedule = parse_schedule(st->schedule);
            if (o.rank > 0) {
              if (o.schedule != Schedule::paper) throw Error(ErrorKind::usage, "--rank selects the rank schedule: leave out --schedule");
              o.schedule = Schedule::rank;
            }
            if (o.min_d > o.max_d) throw Error(ErrorKind::usage, "--min-d must not exceed --max-d");
            check_option("--max-h plus --h0-extra", o.max_h + (st->no_h0 ? 0 : o.h0_extra), 1, limits::max_heads);
            check_option("--ranges: the number of values", static_cast<long>(st->ranges.size()), 1, limits::max_list_values);
            o.unknown_h = !st->no_h0;
            if (st->rates) {
              const std::optional<RateStudy> r = rate_study(o, st->ranges);
              if (!r) return 0;  // MPI: rank 0 reports
              emit(st->json, rate_json(*r), rate_report(*r));
              return rate_exit_code(*r);
            }
            const std::optional<VerifyResult> v = verify(o);
            if (!v) return 0;  // MPI: rank 0 reports
            emit(st->json, verify_json(*v), verify_report(*v));
            return verify_exit_code(*v);
          }};
}

}  // namespace mhaq::cli
