// recover --dry-run and --max-memory: the run's cost, predicted from its
// shape before a model is drawn or an oracle started (run/cost_model.hpp).
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "mhaq/base/distribute.hpp"
#include "mhaq/base/error.hpp"
#include "mhaq/base/limits.hpp"
#include "mhaq/run/cost_model.hpp"
#include "mhaq/run/recover_limits.hpp"
#include "mhaq/run/recover_options.hpp"

namespace mhaq::cli {

namespace {

std::string duration_text(double s) {
  char b[64];
  if (std::isnan(s)) return "not modelled";
  if (s < 120) std::snprintf(b, sizeof b, "%.3g s", s);
  else if (s < 7200) std::snprintf(b, sizeof b, "%.3g s (%.3g min)", s, s / 60);
  else std::snprintf(b, sizeof b, "%.3g s (%.3g h)", s, s / 3600);
  return b;
}

}  // namespace

int recover_cost_gate(const RecoverOptions& o, long d, long H, const CostGate& g, double& seconds) {
  const bool dry_run = g.dry_run, json = g.json;
  const std::string& max_memory = g.max_memory;
  if (g.ranks != 0 && !dry_run) throw Error(ErrorKind::usage, "--ranks P costs a dry run on P MPI ranks: it goes with --dry-run (a run's ranks are mpirun's -np)");
  check_recover_d(d, o);
  check_plan_size(d, H, o.schedule == Schedule::paper, o.samples_per_pair, ErrorKind::usage, "--d/--heads", limits::max_recover_queries);
  CostShape s;
  s.d = d;
  s.H = H;
  s.schedule = o.schedule;
  s.rank = o.rank;
  s.samples = o.samples_per_pair;
  s.bias = o.bias.value_or(false);
  s.arith = o.arith;
  s.bits = o.bits;
  s.threads = o.threads;
  s.ranks = g.ranks > 0 ? g.ranks : shard().size;
  s.external = g.external;
  const RunCost c = predict_run_cost(s);
  seconds = c.seconds;
  const bool stated = !max_memory.empty();
  const double bound = stated ? parse_byte_count(max_memory, "--max-memory") : physical_memory_bytes();
  const std::string bound_text = bound > 0 ? bytes_text(bound) + (stated ? " (--max-memory)" : " (the machine's memory)") : std::string("none (the machine's memory is unknown)");
  const bool fits = bound <= 0 || c.peak_bytes <= bound;
  if (dry_run) {
    nlohmann::json j{{"status", "dry_run"},
                     {"d", d},
                     {"H", H},
                     {"schedule", schedule_name(o.schedule)},
                     {"arith", arith_name(o.arith)},
                     {"threads", c.threads},
                     {"queries", c.queries},
                     {"pairs", c.pairs},
                     {"predicted_peak_bytes", std::llround(c.peak_bytes)},
                     {"max_memory_bytes", std::llround(bound)},
                     {"fits_memory", fits},
                     {"time_note", c.time_note}};
    if (o.rank > 0) j["rank"] = o.rank;
    if (c.ranks > 1) j["ranks"] = c.ranks;
    if (arith_facts(o.arith).chosen_bits) j["bits"] = o.bits;
    j["predicted_seconds"] = std::isnan(c.seconds) ? nlohmann::json(nullptr) : nlohmann::json(c.seconds);
    std::string h = "recover --dry-run: the plan costed from its shape; no model drawn, no query asked\n";
    h += "  shape            d=" + std::to_string(d) + ", H=" + std::to_string(H) + ", schedule " + schedule_name(o.schedule) +
         (o.rank > 0 ? " (R = " + std::to_string(o.rank) + ")" : std::string()) + ", " + arith_name(o.arith) +
         (arith_facts(o.arith).chosen_bits ? " " + std::to_string(o.bits) + " bits" : std::string()) + ", " + std::to_string(c.threads) + " thread(s)" +
         (c.ranks > 1 ? " on each of " + std::to_string(c.ranks) + " MPI ranks" : std::string()) + "\n";
    h += "  queries          " + std::to_string(c.queries) + " (" + std::to_string(c.pairs) + " pairs)\n";
    h += "  peak memory      " + bytes_text(c.peak_bytes) + " predicted; bound " + bound_text + (fits ? "" : ": the run would be refused") + "\n";
    h += "  time             " + duration_text(c.seconds) + " predicted (" + c.time_note + ")\n";
    h += "  status           dry_run (exit " + std::to_string(exit_dry_run) + "): nothing was learned; leave out --dry-run to run\n";
    emit(json, j, h);
    return exit_dry_run;
  }
  if (!fits)
    throw Error(ErrorKind::budget, "the run's predicted peak memory, " + bytes_text(c.peak_bytes) + " (d = " + std::to_string(d) + ", H = " +
                                       std::to_string(H) + ", " + std::to_string(c.queries) + " queries), exceeds " + bound_text +
                                       ": refused before any work. Use a smaller --d or H, the rank schedule (--rank R) when the heads' rank is below d, "
                                       "or a larger --max-memory if the machine has it (recover --dry-run prints the prediction)");
  return -1;
}

}  // namespace mhaq::cli
