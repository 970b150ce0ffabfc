// Precision-loss study (docs/studies/precision.md): a grid over d, H, precision, token scale,
// schedule and trials. Every trial draws a model and the learner's queries,
// runs the MPFR learner (oracle and learner at p bits) and records the
// observed error next to the first-order prediction from kappa
// (sensitivity.hpp). One CSV row per (grid point, trial, precision).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "mhaq/arith/rational.hpp"
#include "mhaq/stages/2-schedule/design.hpp"
#include "mhaq/run/judge.hpp"
#include "mhaq/stages/2-schedule/schedule.hpp"

namespace mhaq {

// A sweep runs every precision on every cell, so its d and H stay below the
// program's general limits (docs/limits.md).
inline constexpr int sweep_max_d = 32, sweep_max_heads = 32;

struct SweepGrid {
  std::vector<int> d{4};
  std::vector<int> H{1, 2, 3, 4};
  std::vector<long> bits{53, 64, 113, 128, 256, 512, 1024};
  std::vector<Rational> scale{Rational(1)};  // token entries uniform on [-scale, scale] (grid 2^-20)
  std::vector<Schedule> schedule{Schedule::paper};
  // How B and Delta are chosen (stages/2-schedule/design.hpp). Every design
  // sees the same models (drawn from seed, d, H and trial), so rows compare
  // designs on equal terms. A tuned row runs its pilot at the row's own
  // precision (its queries in pilot_queries), so its design, and kappa, are
  // the row's own.
  std::vector<Design> design{Design::paper};
  int trials = 3;
  std::uint64_t seed = 1;
};

// Units: one (d, H, scale, schedule, design, trial), run at every precision; rows are
// numbered unit * bits.size() + precision index.
std::size_t sweep_units(const SweepGrid& g);
std::size_t sweep_rows(const SweepGrid& g);

struct SweepRow {
  std::size_t row = 0;
  int d = 0, H = 0, trial = 0;
  long bits = 0;
  std::string scale, schedule, design = "paper";
  std::uint64_t model_seed = 0, learner_seed = 0;
  Status status = Status::ok;   // ok, degenerate, unable, inconsistent
  long queries = 0;             // every query, the pilot's included
  long pilot_queries = 0;       // tuned: the pilot's share
  double log2_error = 0;        // observed entrywise relative error (sensitivity.hpp), log2
  double kappa = 0, kappa_rel = 0, kappa_rms = 0;
  // bits lost = bits + log2_error; predicted = log2(kappa_rms): independent
  // relative answer errors of 2^-bits amplified by the first-order map.
  double bits_lost() const { return static_cast<double>(bits) + log2_error; }
  double predicted_bits_lost() const;
  bool saturated() const;       // error above 2^-10: past the first-order regime
};

std::string sweep_csv_header();
std::string sweep_csv_line(const SweepRow& r);
// Parses one CSV line written by sweep_csv_line; false for a partial or foreign line.
bool sweep_parse_line(const std::string& line, SweepRow& r);

// Runs one unit (every precision). Deterministic in (grid, unit).
std::vector<SweepRow> sweep_unit(const SweepGrid& g, std::size_t unit);

// Runs the grid, appending each finished unit's rows to `csv_path` as they
// complete (so an interrupted run loses no finished row), then rewrites the
// file in row order atomically. With resume, rows already in the file are
// kept and not recomputed. progress(done, total) is called after each unit.
// Units are spread over `threads` threads and the MPI ranks
// (base/distribute.hpp); only rank 0 touches the file, calls progress and
// returns the rows (other ranks return an empty list). The bytes written do
// not depend on the thread or rank count, or on interruptions.
std::vector<SweepRow> sweep_run(const SweepGrid& g, const std::string& csv_path, bool resume, int threads,
                                const std::function<void(std::size_t, std::size_t)>& progress);

// Per-(schedule, design, H) summary over unsaturated ok rows: median observed
// and predicted bits lost, the median query count of the ok rows (the
// trade-off between schedules: fewer queries against more bits lost), and the
// median predicted bits lost per head (log2 kappa_rms / H) over the rows at
// the grid's highest precision.
struct SweepSummary {
  std::string schedule;
  std::string design = "paper";
  int H = 0;
  long units = 0;             // rows at the highest precision with a kappa
  double per_head = 0;        // median log2(kappa_rms) / H over them
  long rows = 0, ok = 0, used = 0;
  double observed = 0, predicted = 0, queries = 0;  // medians
};
std::vector<SweepSummary> sweep_summary(const std::vector<SweepRow>& rows);

// Designs compared on the same units (d, H, scale, schedule, trial) at one
// precision: rows where `a`'s observed error is below `b`'s (a failed run
// counts as error 1, and a tie is not a win), of the units where both ran.
struct DesignComparison {
  long units = 0, wins = 0;
};
DesignComparison sweep_compare(const std::vector<SweepRow>& rows, const std::string& a, const std::string& b, long bits);

// Writes error_vs_bits.{dat,gp} and bits_lost_vs_H.{dat,gp} into dir (and,
// with more than one design, bits_lost_per_head_vs_H.{dat,gp}: the median
// predicted bits lost per head against H, one line per design) and runs
// gnuplot on them when it is installed (SVG output). Returns the image paths
// written, or an empty list when gnuplot is missing.
std::vector<std::string> sweep_plots(const std::vector<SweepRow>& rows, const std::string& dir, std::string& note);

}  // namespace mhaq
