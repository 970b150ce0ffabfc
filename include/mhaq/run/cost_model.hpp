// The cost of a recover run predicted from its shape alone, before anything
// large is built: the plan's queries, the peak resident memory and the wall
// time. The constants were fitted on measured ball runs (1024 bits) by
// tests/bench/cost_model.sh; docs/studies/cost-model.md shows the fit and
// how far it may be trusted. `recover --dry-run` prints this, and
// `--max-memory` (by default the machine's memory) refuses a run whose
// predicted peak exceeds it.
#pragma once
#include <string>

#include "mhaq/arith/field.hpp"
#include "mhaq/stages/2-schedule/schedule.hpp"

namespace mhaq {

struct CostShape {
  long d = 1, H = 1;
  Schedule schedule = Schedule::paper;
  long rank = 0;     // the rank schedule's R
  long samples = 0;  // values per pair (0: 2H+1)
  bool bias = false;
  Arith arith = Arith::ball;
  long bits = 256;  // ball, mpfr
  int threads = 1;  // 0: all hardware threads
  int ranks = 1;    // MPI ranks of one run, each with `threads` threads on cores of its own
  bool external = false;  // answers from an external oracle (--oracle): its own time is not modelled
};

struct RunCost {
  long queries = 0;         // the plan's (no repair or fallback queries)
  long pairs = 0;           // the plan's pairs
  double peak_bytes = 0;    // predicted peak resident memory
  double seconds = 0;       // predicted wall time; NaN where not modelled (exact mode)
  int threads = 1;          // the threads the time is for (per rank)
  int ranks = 1;            // the MPI ranks the time is for
  double gathered_bytes = 0;  // a run across ranks: the answers' and fits' images every rank receives
  double exchange_seconds = 0;  // their share of `seconds`
  std::string time_note;    // what the time figure assumes, or why there is none
};

RunCost predict_run_cost(const CostShape& s);

// The machine's physical memory in bytes (0 when unknown).
double physical_memory_bytes();

// "1.5 GiB", "320 MiB", "12 KiB", "100 B".
std::string bytes_text(double b);

// --max-memory: a byte count with an optional K, M, G or T suffix (powers of
// 1024). Error(usage) naming the option for anything else, zero included.
double parse_byte_count(const std::string& s, const std::string& option);

}  // namespace mhaq
