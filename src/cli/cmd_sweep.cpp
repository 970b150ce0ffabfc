// sweep: the precision-loss study (docs/studies/precision.md).
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "commands.hpp"
#include "mhaq/base/distribute.hpp"
#include "mhaq/base/error.hpp"
#include "mhaq/base/parallel.hpp"
#include "mhaq/base/text.hpp"
#include "mhaq/base/limits.hpp"
#include "mhaq/evidence/sweep.hpp"
#include "options.hpp"

namespace mhaq::cli {

namespace {
// "1-8" or "1,2,4" or "53,64,113" (ranges and lists mixed), every value in [lo, hi].
std::vector<long> parse_longs(const std::string& s, const char* what, long lo, long hi) {
  const std::string bad = std::string(what) + ": expected a list like 1,2,4 or a range like 1-8 of integers in [" + std::to_string(lo) + ", " +
                          std::to_string(hi) + "], got " + quote_text(s);
  std::vector<long> out;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, ',')) {
    const auto dash = part.find('-', 1);
    long a = 0, b = 0;
    if (dash == std::string::npos) {
      if (!parse_decimal(part, lo, hi, a)) throw Error(ErrorKind::usage, bad);
      b = a;
    } else if (!parse_decimal(part.substr(0, dash), lo, hi, a) || !parse_decimal(part.substr(dash + 1), lo, hi, b) || b < a) {
      throw Error(ErrorKind::usage, bad);
    }
    if (b - a >= limits::max_list_values || static_cast<long>(out.size()) + (b - a + 1) > limits::max_list_values)
      throw Error(ErrorKind::usage, std::string(what) + ": more than " + std::to_string(limits::max_list_values) + " values");
    for (long x = a; x <= b; ++x) out.push_back(x);
  }
  if (out.empty()) throw Error(ErrorKind::usage, std::string(what) + ": empty list");
  return out;
}
}  // namespace

Command make_sweep() {
  struct State {
    std::string d = "4", heads = "1-4", bits = "53,64,113,128,256,512,1024", scale = "1", schedule = "paper", design = "paper";
    SweepGrid g;
    std::string out, plots;
    bool resume = false, quiet = false, json = false;
    int threads = 1;
  };
  auto st = std::make_shared<State>();
  return {[st](CLI::App& app) {
            auto* s = app.add_subcommand("sweep", "precision-loss study: observed error and bits lost vs kappa's prediction over a grid");
            s->add_option("--d", st->d, "token dimensions, e.g. 4 or 2,4,8 (default 4)");
            s->add_option("--heads", st->heads, "head counts, e.g. 1-8 (default 1-4)");
            s->add_option("--bits", st->bits, "precisions in bits (default 53,64,113,128,256,512,1024)");
            s->add_option("--token-scale", st->scale, "token scales: entries uniform on [-s, s] (exact decimals, default 1)");
            s->add_option("--schedule", st->schedule, "schedules, comma separated: paper, lean, compact (default paper)");
            s->add_option("--design", st->design, "query designs: paper, scaled, tuned or a list such as paper,scaled,tuned (default paper)");
            s->add_option("--trials", st->g.trials, "trials per grid point (default 3)")->check(int_in(1, limits::max_trials));
            s->add_option("--seed", st->g.seed, "seed; model and learner seeds are derived from it")->check(seed_value());
            s->add_option("-o,--output", st->out, "CSV file, one row per trial and precision")->required();
            s->add_option("--plots", st->plots, "directory for the two plots (SVG through gnuplot) and their data");
            s->add_flag("--resume", st->resume, "continue an interrupted sweep: keep the rows already in the CSV");
            s->add_option("--threads", st->threads, "worker threads (0 = all hardware threads); output bytes do not depend on it")
                ->check(int_in(0, limits::max_threads));
            s->add_flag("--quiet", st->quiet, "no progress on standard error");
            s->add_flag("--json", st->json, "print one JSON object (summary)");
            return s;
          },
          [st] {
            SweepGrid g = st->g;
            g.d.clear();
            g.H.clear();
            for (long x : parse_longs(st->d, "--d", 1, sweep_max_d)) g.d.push_back(static_cast<int>(x));
            for (long x : parse_longs(st->heads, "--heads", 1, sweep_max_heads)) g.H.push_back(static_cast<int>(x));
            g.bits = parse_longs(st->bits, "--bits", limits::min_bits, limits::max_bits);
            g.scale.clear();
            std::stringstream ss(st->scale);
            for (std::string part; std::getline(ss, part, ',');) {
              try {
                g.scale.push_back(Rational::parse(part));
              } catch (const Error& e) {
                throw Error(ErrorKind::usage, std::string("--token-scale: ") + e.what());
              }
              // tokens are integers in [-s 2^20, s 2^20] / 2^20: s 2^20 is the token range
              const Rational R = g.scale.back() * Rational(1L << 20);
              if (!R.is_integer() || R.sign() <= 0 || Rational(limits::max_token_range) < R)
                throw Error(ErrorKind::usage, "--token-scale: " + quote_text(part) + " must be a positive multiple of 2^-20 of at most " +
                                                  std::to_string(limits::max_token_range >> 20));
            }
            g.schedule.clear();
            std::stringstream sc(st->schedule);
            for (std::string part; std::getline(sc, part, ',');) g.schedule.push_back(parse_schedule(part));
            g.design.clear();
            std::stringstream sd(st->design);
            for (std::string part; std::getline(sd, part, ',');) g.design.push_back(parse_design(part));
            check_option("--design: the number of values", static_cast<long>(g.design.size()), 1, limits::max_list_values);
            check_option("--token-scale: the number of values", static_cast<long>(g.scale.size()), 1, limits::max_list_values);
            check_option("--schedule: the number of values", static_cast<long>(g.schedule.size()), 1, limits::max_list_values);
            {  // the grid's size, before any row is allocated
              const __int128 rows = static_cast<__int128>(g.d.size()) * g.H.size() * g.scale.size() * g.schedule.size() * g.design.size() * g.trials * g.bits.size();
              if (rows > limits::max_sweep_rows)
                throw Error(ErrorKind::usage, "sweep: the grid has " + std::to_string(static_cast<long long>(rows)) + " rows, more than the limit of " +
                                                  std::to_string(limits::max_sweep_rows));
              for (int d : g.d)
                for (int H : g.H)
                  for (Schedule sch : g.schedule) check_plan_size(d, H, sch == Schedule::paper, 0, ErrorKind::usage, "sweep --d/--heads");
            }
            if (st->plots.find('\'') != std::string::npos) throw Error(ErrorKind::usage, "--plots: the directory name may not contain a quote");
            const int threads = st->threads == 0 ? hardware_threads() : st->threads;
            const bool tty = isatty(2);
            const auto t0 = std::chrono::steady_clock::now();
            size_t last_decile = 0;
            auto progress = [&](size_t done, size_t total) {
              if (st->quiet) return;
              const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
              const size_t decile = total ? done * 10 / total : 10;
              if (!tty && decile == last_decile && done != total) return;
              last_decile = decile;
              std::fprintf(stderr, "%ssweep: %zu/%zu units (%.0f%%), %.0f s%s", tty ? "\r" : "", done, total, total ? 100.0 * done / total : 100.0,
                           secs, tty && done != total ? "" : "\n");
              std::fflush(stderr);
            };
            const std::vector<SweepRow> rows = sweep_run(g, st->out, st->resume, threads, progress);
            if (!is_root()) return 0;  // MPI: rank 0 reports
            nlohmann::json j{{"status", "ok"}, {"csv", st->out}, {"rows", rows.size()}};
            std::ostringstream h;
            h << "mhaq sweep: " << rows.size() << " rows in " << st->out << "\n";
            h << "bits lost = p + log2(observed error); predicted = log2(kappa_rms); medians over ok rows with error < 2^-10\n";
            h << "schedule design    H   rows     ok   used   queries   observed  predicted  pred/obs  per-head(log2 kappa_rms/H, top bits)\n";
            nlohmann::json summ = nlohmann::json::array();
            auto num = [](double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); };
            for (const auto& s : sweep_summary(rows)) {
              char buf[200];
              std::snprintf(buf, sizeof buf, "%-8s %-6s %4d %6ld %6ld %6ld %9.0f %10.2f %10.2f %9.3f %10.2f\n", s.schedule.c_str(), s.design.c_str(), s.H,
                            s.rows, s.ok, s.used, s.queries, s.observed, s.predicted, s.predicted / s.observed, s.per_head);
              h << buf;
              summ.push_back({{"schedule", s.schedule}, {"design", s.design}, {"H", s.H}, {"rows", s.rows}, {"ok", s.ok}, {"used", s.used},
                              {"median_queries", num(s.queries)}, {"observed_bits_lost", num(s.observed)}, {"predicted_bits_lost", num(s.predicted)},
                              {"bits_lost_per_head", num(s.per_head)}});
            }
            j["summary"] = summ;
            if (!st->plots.empty()) {
              std::string note;
              const auto imgs = sweep_plots(rows, st->plots, note);
              j["plots"] = imgs;
              j["plots_note"] = note;
              h << note;
              for (size_t i = 0; i < imgs.size(); ++i) h << (i ? ", " : ": ") << imgs[i];
              h << "\n";
            }
            emit(st->json, j, h.str());
            return 0;
          }};
}

}  // namespace mhaq::cli
