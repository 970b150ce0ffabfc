// Precision-loss study: see sweep.hpp.
#include "mhaq/evidence/sweep.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "mhaq/base/distribute.hpp"
#include "mhaq/base/error.hpp"
#include "mhaq/base/io.hpp"
#include "mhaq/base/limits.hpp"
#include "mhaq/stages/learner.hpp"
#include "mhaq/model/model.hpp"
#include "mhaq/oracle/oracle_stack.hpp"
#include "mhaq/run/recover.hpp"
#include "mhaq/analysis/design_search.hpp"
#include "mhaq/analysis/sensitivity.hpp"

namespace mhaq {

namespace {

std::uint64_t mix(std::uint64_t x) {  // splitmix64 finaliser
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}
std::uint64_t derive(std::uint64_t seed, std::initializer_list<std::uint64_t> parts) {
  std::uint64_t h = mix(seed);
  for (auto p : parts) h = mix(h ^ p);
  return h;
}

constexpr long kScaleDen = 1L << 20;

std::string fmt(const char* f, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, x);
  return buf;
}
// 2^l2 in scientific notation, for any exponent (errors at 1024 bits underflow doubles).
std::string pow2_sci(double l2) {
  if (!std::isfinite(l2)) return l2 < 0 ? "0" : "";
  const double x = l2 * std::log10(2.0);
  double e = std::floor(x);
  double m = std::pow(10.0, x - e);
  if (m >= 9.99995) { m /= 10; e += 1; }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4fe%+d", m, static_cast<int>(e));
  return buf;
}

struct Unit {
  int d, H, trial;
  size_t scale, schedule, design;
};
Unit unit_at(const SweepGrid& g, size_t u) {
  Unit x{};
  x.trial = static_cast<int>(u % g.trials);
  u /= g.trials;
  x.design = u % g.design.size();
  u /= g.design.size();
  x.schedule = u % g.schedule.size();
  u /= g.schedule.size();
  x.scale = u % g.scale.size();
  u /= g.scale.size();
  x.H = g.H[u % g.H.size()];
  u /= g.H.size();
  x.d = g.d[u];
  return x;
}

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) { out.push_back(cur); cur.clear(); }
    else cur.push_back(c);
  }
  out.push_back(cur);
  return out;
}

// Formatting then parsing makes a row's stored numbers exactly those printed,
// so a resumed run writes the same bytes as an uninterrupted one.
SweepRow normalised(const SweepRow& r) {
  SweepRow out;
  if (!sweep_parse_line(sweep_csv_line(r), out)) throw_internal("sweep: a row does not survive its own CSV format");
  return out;
}

}  // namespace

size_t sweep_units(const SweepGrid& g) {
  return g.d.size() * g.H.size() * g.scale.size() * g.schedule.size() * g.design.size() * static_cast<size_t>(g.trials);
}
size_t sweep_rows(const SweepGrid& g) { return sweep_units(g) * g.bits.size(); }

double SweepRow::predicted_bits_lost() const { return kappa_rms > 0 ? std::log2(kappa_rms) : NAN; }
bool SweepRow::saturated() const { return status != Status::ok || log2_error > -10; }

std::string sweep_csv_header() {
  return "row,d,H,bits,token_scale,schedule,design,trial,model_seed,learner_seed,status,queries,pilot_queries,error,log2_error,bits_lost,kappa,"
         "kappa_rel,kappa_rms,predicted_bits_lost,saturated";
}

std::string sweep_csv_line(const SweepRow& r) {
  std::ostringstream o;
  const bool ok = r.status == Status::ok;
  const bool k = r.kappa > 0;
  o << r.row << ',' << r.d << ',' << r.H << ',' << r.bits << ',' << r.scale << ',' << r.schedule << ',' << r.design << ',' << r.trial << ','
    << r.model_seed << ',' << r.learner_seed << ',' << status_name(r.status) << ',' << r.queries << ',' << r.pilot_queries << ',' << (ok ? pow2_sci(r.log2_error) : "") << ','
    << (ok ? fmt("%.4f", r.log2_error) : "") << ',' << (ok ? fmt("%.4f", r.bits_lost()) : "") << ',' << (k ? fmt("%.6e", r.kappa) : "") << ','
    << (k ? fmt("%.6e", r.kappa_rel) : "") << ',' << (k ? fmt("%.6e", r.kappa_rms) : "") << ','
    << (k ? fmt("%.4f", r.predicted_bits_lost()) : "") << ',' << (r.saturated() ? 1 : 0);
  return o.str();
}

bool sweep_parse_line(const std::string& line, SweepRow& r) {
  const auto f = split(line, ',');
  if (f.size() != 21) return false;
  try {
    size_t pos = 0;
    auto ul = [&](const std::string& s) { return std::stoull(s, &pos); };
    r.row = ul(f[0]);
    r.d = std::stoi(f[1]);
    r.H = std::stoi(f[2]);
    r.bits = std::stol(f[3]);
    r.scale = f[4];
    r.schedule = f[5];
    r.design = f[6];
    r.trial = std::stoi(f[7]);
    r.model_seed = ul(f[8]);
    r.learner_seed = ul(f[9]);
    const std::optional<Status> status = find_status(f[10]);
    if (!status) return false;
    r.status = *status;
    r.queries = std::stol(f[11]);
    r.pilot_queries = std::stol(f[12]);
    r.log2_error = f[14].empty() ? NAN : std::stod(f[14]);
    r.kappa = f[16].empty() ? 0 : std::stod(f[16]);
    r.kappa_rel = f[17].empty() ? 0 : std::stod(f[17]);
    r.kappa_rms = f[18].empty() ? 0 : std::stod(f[18]);
    if (f[20] != "0" && f[20] != "1") return false;
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

std::vector<SweepRow> sweep_unit(const SweepGrid& g, size_t unit) {
  const Unit u = unit_at(g, unit);
  const Rational& sc = g.scale[u.scale];
  const Rational range_q = sc * Rational(kScaleDen);
  if (!range_q.is_integer() || range_q.sign() <= 0) throw Error(ErrorKind::usage, "token scale " + sc.str() + " is not a positive multiple of 2^-20");
  GenerateOptions gen = default_generate(Arith::mpfr);
  gen.d = u.d;
  gen.heads = u.H;
  gen.seed = derive(g.seed, {static_cast<std::uint64_t>(u.d), static_cast<std::uint64_t>(u.H), static_cast<std::uint64_t>(u.trial)});
  const Model m = generate_model(gen);
  const Model canon = m.canonical();
  LearnOptions lo;
  lo.H = u.H;
  lo.schedule = g.schedule[u.schedule];
  lo.seed = derive(gen.seed, {0x5eedULL});
  lo.tokens = {range_q.to_long(), kScaleDen};
  const Design design = g.design[u.design];
  SweepRow base;
  base.d = u.d;
  base.H = u.H;
  base.trial = u.trial;
  base.scale = sc.str();
  base.schedule = schedule_name(lo.schedule);
  base.design = design_name(design);
  base.model_seed = gen.seed;
  base.learner_seed = lo.seed;
  std::vector<SweepRow> rows;
  const bool heads_ok = canon.num_heads() == u.H;
  // kappa of a design at the truth (the same sensitivity for every design)
  auto set_kappa = [&](SweepRow& r, const LearnOptions& l) {
    try {
      const Sensitivity S = sensitivity_from_model(canon, l, l.tokens.den);
      r.kappa = S.kappa;
      r.kappa_rel = S.kappa_rel;
      r.kappa_rms = S.kappa_rms;
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::degenerate && e.kind() != ErrorKind::unable) throw;
    }
  };
  if (design == Design::scaled) {
    Rng rng(lo.seed);
    lo.draws = draw_scaled(rng, u.d, u.H, lo.tokens);
  }
  if (heads_ok && design != Design::tuned) set_kappa(base, lo);
  for (size_t b = 0; b < g.bits.size(); ++b) {
    SweepRow r = base;
    r.row = unit * g.bits.size() + b;
    r.bits = g.bits[b];
    if (!heads_ok) {
      r.status = Status::degenerate;  // the drawn model merged heads: not a trial of H heads
    } else {
      PrecisionScope scope(r.bits);
      LearnOptions l = lo;
      if (design == Design::tuned) {
        // the pilot at this row's precision, on its own oracle of the same model
        OracleStack<Mpfr> pilot_oracle = OracleStack<Mpfr>::model(m, lo.tokens.den);
        TunedOptions t;
        t.H = u.H;
        t.seed = lo.seed;
        t.tokens = lo.tokens;
        t.pilot_bits = r.bits;
        const TunedDesign td = choose_tuned_design<Mpfr>(pilot_oracle.top(), t);
        l.draws = td.draws;
        r.pilot_queries = td.pilot_queries;
        set_kappa(r, l);
      }
      OracleStack<Mpfr> oracle = OracleStack<Mpfr>::model(m, lo.tokens.den);
      try {
        const LearnResult<Mpfr> res = learn<Mpfr>(oracle.top(), l);
        r.log2_error = param_error_log2(res.heads, canon);
        r.status = std::isfinite(r.log2_error) || r.log2_error < 0 ? Status::ok : Status::inconsistent;
      } catch (const Error& e) {
        if (e.kind() != ErrorKind::degenerate && e.kind() != ErrorKind::unable && e.kind() != ErrorKind::inconsistent) throw;
        r.status = status_of(e.kind());
      }
      r.queries = oracle.source().queries() + r.pilot_queries;
      if (r.status == Status::ok && !std::isfinite(r.log2_error)) r.log2_error = -1e9;  // exact hit: no error at all
    }
    rows.push_back(normalised(r));
  }
  return rows;
}

std::vector<SweepRow> sweep_run(const SweepGrid& g, const std::string& csv_path, bool resume, int threads,
                                const std::function<void(size_t, size_t)>& progress) {
  if (g.trials < 1 || g.d.empty() || g.H.empty() || g.bits.empty() || g.scale.empty() || g.schedule.empty() || g.design.empty())
    throw Error(ErrorKind::usage, "sweep: every grid dimension needs at least one value and trials >= 1");
  for (int d : g.d)
    if (d < 1 || d > sweep_max_d) throw Error(ErrorKind::usage, "sweep: d must be in [1, " + std::to_string(sweep_max_d) + "]");
  for (int H : g.H)
    if (H < 1 || H > sweep_max_heads) throw Error(ErrorKind::usage, "sweep: H must be in [1, " + std::to_string(sweep_max_heads) + "]");
  for (long b : g.bits)
    if (b < limits::min_bits || b > limits::max_bits)
      throw Error(ErrorKind::usage, "sweep: bits must be in [" + std::to_string(limits::min_bits) + ", " + std::to_string(limits::max_bits) + "]");
  const size_t nunits = sweep_units(g), nb = g.bits.size();
  // Rank 0 owns the file: it reads what is there, writes the journal and the
  // final file. Every rank gets the list of units still to run from it.
  std::map<size_t, SweepRow> have;
  std::ofstream journal;
  const std::string todo_text = root_computes([&] {
    std::ifstream in(csv_path);
    if (in) {
      if (!resume) throw Error(ErrorKind::usage, "sweep: \"" + csv_path + "\" exists; pass --resume to continue it, or remove it");
      std::string line;
      if (!std::getline(in, line) || line != sweep_csv_header())
        throw_input("sweep: \"" + csv_path + "\" is not a sweep CSV of this version (header differs)");
      while (std::getline(in, line)) {
        SweepRow r;
        if (!sweep_parse_line(line, r)) continue;  // a line cut short by an interruption: recomputed
        if (r.row >= nunits * nb) throw_input("sweep: \"" + csv_path + "\" belongs to a different grid (row " + std::to_string(r.row) + ")");
        const Unit u = unit_at(g, r.row / nb);
        if (r.d != u.d || r.H != u.H || r.trial != u.trial || r.bits != g.bits[r.row % nb] || r.scale != g.scale[u.scale].str() ||
            r.schedule != schedule_name(g.schedule[u.schedule]) || r.design != design_name(g.design[u.design]))
          throw_input("sweep: \"" + csv_path + "\" belongs to a different grid (row " + std::to_string(r.row) + " differs)");
        have[r.row] = r;
      }
    }
    std::string todo;
    for (size_t u = 0; u < nunits; ++u) {
      bool complete = true;
      for (size_t b = 0; b < nb; ++b) complete = complete && have.count(u * nb + b);
      if (!complete) todo += std::to_string(u) + "\n";
    }
    // journal: the file as read (complete lines only), then finished units appended as they come
    std::string text = sweep_csv_header() + "\n";
    for (const auto& [k, r] : have) text += sweep_csv_line(r) + "\n";
    write_file_atomic(csv_path, text);
    journal.open(csv_path, std::ios::app);
    if (!journal) throw_input("sweep: cannot append to \"" + csv_path + "\"");
    return todo;
  });
  std::vector<size_t> todo;
  {
    std::istringstream ts(todo_text);
    for (std::string line; std::getline(ts, line);) todo.push_back(std::stoull(line));
  }
  size_t done = nunits - todo.size();
  if (progress && is_root()) progress(done, nunits);
  // A unit's result is its CSV lines: rows are normalised, so parsing them
  // back gives the same rows whichever process computed them.
  const std::vector<std::string> results = distributed_map(
      todo.size(), threads,
      [&](size_t i) {
        std::string text;
        for (const auto& r : sweep_unit(g, todo[i])) text += sweep_csv_line(r) + "\n";
        return text;
      },
      [&](size_t, const std::string& text) {
        journal << text;
        journal.flush();
        if (!journal) throw_input("sweep: cannot append to \"" + csv_path + "\"");
        ++done;
        if (progress) progress(done, nunits);
      });
  if (!is_root()) return {};
  journal.close();
  for (const auto& text : results) {
    std::istringstream rs(text);
    for (std::string line; std::getline(rs, line);) {
      SweepRow r;
      if (!sweep_parse_line(line, r)) throw_internal("sweep: a unit's row does not parse");
      have[r.row] = r;
    }
  }
  std::vector<SweepRow> all;
  std::string text = sweep_csv_header() + "\n";
  for (const auto& [k, r] : have) {
    all.push_back(r);
    text += sweep_csv_line(r) + "\n";
  }
  write_file_atomic(csv_path, text);
  return all;
}

std::vector<SweepSummary> sweep_summary(const std::vector<SweepRow>& rows) {
  long top = 0;
  for (const auto& r : rows) top = std::max(top, r.bits);
  // (schedule, design) in the order the rows first show them (the grid's order), H ascending
  using Key = std::pair<std::string, std::string>;
  std::vector<Key> order;
  std::map<std::pair<Key, int>, std::vector<const SweepRow*>> by;
  for (const auto& r : rows) {
    const Key k{r.schedule, r.design};
    if (std::find(order.begin(), order.end(), k) == order.end()) order.push_back(k);
    by[{k, r.H}].push_back(&r);
  }
  std::vector<SweepSummary> out;
  for (const auto& sd : order)
    for (const auto& [key, rs] : by) {
      if (key.first != sd) continue;
      SweepSummary s;
      s.schedule = sd.first;
      s.design = sd.second;
      s.H = key.second;
      std::vector<double> ob, pr, qs, ph;
      for (const SweepRow* r : rs) {
        ++s.rows;
        if (r->status == Status::ok) {
          ++s.ok;
          qs.push_back(static_cast<double>(r->queries));
        }
        if (r->bits == top && r->kappa_rms > 0) ph.push_back(r->predicted_bits_lost() / r->H);
        if (r->saturated() || !(r->kappa_rms > 0)) continue;
        ++s.used;
        ob.push_back(r->bits_lost());
        pr.push_back(r->predicted_bits_lost());
      }
      s.observed = median(ob);
      s.predicted = median(pr);
      s.queries = median(qs);
      s.units = static_cast<long>(ph.size());
      s.per_head = median(ph);
      out.push_back(s);
    }
  return out;
}

DesignComparison sweep_compare(const std::vector<SweepRow>& rows, const std::string& a, const std::string& b, long bits) {
  // a failed run counts as relative error 1 (all bits lost), as in the plots
  auto err = [](const SweepRow& r) { return r.status == Status::ok ? std::min(0.0, r.log2_error) : 0.0; };
  std::map<std::tuple<int, int, std::string, std::string, int>, std::pair<const SweepRow*, const SweepRow*>> units;
  for (const auto& r : rows) {
    if (r.bits != bits || r.status == Status::degenerate) continue;
    auto& slot = units[{r.d, r.H, r.scale, r.schedule, r.trial}];
    if (r.design == a) slot.first = &r;
    if (r.design == b) slot.second = &r;
  }
  DesignComparison c;
  for (const auto& [k, p] : units) {
    if (!p.first || !p.second) continue;
    ++c.units;
    if (err(*p.first) < err(*p.second)) ++c.wins;
  }
  return c;
}

std::vector<std::string> sweep_plots(const std::vector<SweepRow>& rows, const std::string& dir, std::string& note) {
  if (rows.empty()) throw Error(ErrorKind::usage, "sweep: no rows to plot");
  // one panel: the first (d, token scale, schedule) of the grid
  const SweepRow& f = rows.front();
  std::map<int, std::map<long, std::vector<double>>> err;  // H -> bits -> log10 errors
  for (const auto& r : rows) {
    if (r.d != f.d || r.scale != f.scale || r.schedule != f.schedule || r.design != f.design) continue;
    // a failed or meaningless run counts as relative error 1 (all bits lost)
    const double l10 = r.status == Status::ok ? std::min(0.0, r.log2_error * std::log10(2.0)) : 0.0;
    err[r.H][r.bits].push_back(l10);
  }
  std::ostringstream e;
  e << "# median log10 relative error over trials; d=" << f.d << ", token scale " << f.scale << ", " << f.schedule << " schedule\n";
  bool first = true;
  for (const auto& [H, byb] : err) {
    if (!first) e << "\n\n";
    first = false;
    e << "# H=" << H << "\n";
    for (const auto& [b, v] : byb) e << b << ' ' << fmt("%.4f", median(v)) << "\n";
  }
  std::ostringstream l;
  l << "# H, median observed bits lost, median predicted bits lost (log2 kappa_rms); unsaturated ok rows\n";
  std::vector<std::string> designs;
  for (const auto& s : sweep_summary(rows)) {
    if (std::find(designs.begin(), designs.end(), s.design) == designs.end()) designs.push_back(s.design);
    if (s.used > 0 && s.design == f.design && s.schedule == f.schedule) l << s.H << ' ' << fmt("%.4f", s.observed) << ' ' << fmt("%.4f", s.predicted) << "\n";
  }
  // bits lost per head, one data block per design
  std::ostringstream ph;
  ph << "# median predicted bits lost per head, log2(kappa_rms) / H, at the grid's highest precision; one block per design\n";
  for (size_t i = 0; i < designs.size(); ++i) {
    if (i) ph << "\n\n";
    ph << "# design " << designs[i] << "\n";
    for (const auto& s : sweep_summary(rows))
      if (s.design == designs[i] && s.schedule == f.schedule && s.units > 0) ph << s.H << ' ' << fmt("%.4f", s.per_head) << "\n";
  }
  std::string gp3 = "reset\nset terminal svg size 800,560 font 'sans,12' background rgb 'white'\nset output 'bits_lost_per_head_vs_H.svg'\n"
                    "set title 'mhaq sweep: bits lost per head by query design (d=" + std::to_string(f.d) + ", median over trials)'\n"
                    "set xlabel 'H (heads)'\nset ylabel 'log2(kappa_{rms}) / H'\nset key inside bottom right\nset grid\nset xtics 1\n"
                    "set yrange [0:*]\nset offsets 0.5, 0.5, 0, 0\nplot ";
  for (size_t i = 0; i < designs.size(); ++i)
    gp3 += std::string(i ? ", " : "") + "'bits_lost_per_head_vs_H.dat' index " + std::to_string(i) + " using 1:2 with linespoints pt " +
           std::to_string(7 + i) + " title '" + designs[i] + "'";
  gp3 += "\n";
  const bool third = designs.size() > 1;
  std::string gp1 = "reset\nset terminal svg size 800,560 font 'sans,12' background rgb 'white'\nset output 'error_vs_bits.svg'\n"
                    "set title 'mhaq sweep: relative parameter error vs precision (d=" + std::to_string(f.d) + ", " + f.schedule + " schedule)'\n"
                    "set xlabel 'precision (bits)'\nset ylabel 'log10 of max relative error (median over trials)'\n"
                    "set logscale x 2\nset key outside right\nset grid\nplot ";
  int idx = 0;
  for (const auto& [H, byb] : err) {
    gp1 += std::string(idx ? ", " : "") + "'error_vs_bits.dat' index " + std::to_string(idx) + " using 1:2 with linespoints title 'H=" + std::to_string(H) + "'";
    ++idx;
  }
  gp1 += "\n";
  const std::string gp2 = "reset\nset terminal svg size 800,560 font 'sans,12' background rgb 'white'\nset output 'bits_lost_vs_H.svg'\n"
                          "set title 'mhaq sweep: bits lost vs number of heads (d=" + std::to_string(f.d) + ")'\n"
                          "set xlabel 'H (heads)'\nset ylabel 'bits lost = p + log2(error)'\nset key inside top left\nset grid\nset xtics 1\nset offsets 0.5, 0.5, 0, 0\n"
                          "plot 'bits_lost_vs_H.dat' using 1:2 with linespoints pt 7 title 'observed (median)', "
                          "'bits_lost_vs_H.dat' using 1:3 with linespoints pt 4 dt 2 title 'predicted: log2 kappa_{rms}'\n";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw_input("sweep: cannot create the plot directory \"" + dir + "\": " + ec.message());
  write_file_atomic(dir + "/error_vs_bits.dat", e.str());
  write_file_atomic(dir + "/bits_lost_vs_H.dat", l.str());
  write_file_atomic(dir + "/error_vs_bits.gp", gp1);
  write_file_atomic(dir + "/bits_lost_vs_H.gp", gp2);
  if (third) {
    write_file_atomic(dir + "/bits_lost_per_head_vs_H.dat", ph.str());
    write_file_atomic(dir + "/bits_lost_per_head_vs_H.gp", gp3);
  }
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
    note = "gnuplot not found: wrote the .dat and .gp files; run 'gnuplot *.gp' in " + dir;
    return {};
  }
  const std::string cmd = "cd '" + dir + "' && gnuplot error_vs_bits.gp bits_lost_vs_H.gp" + (third ? " bits_lost_per_head_vs_H.gp" : "");
  if (std::system(cmd.c_str()) != 0) throw_input("sweep: gnuplot failed on the scripts in " + dir);
  note = "plots written with gnuplot";
  std::vector<std::string> out{dir + "/error_vs_bits.svg", dir + "/bits_lost_vs_H.svg"};
  if (third) out.push_back(dir + "/bits_lost_per_head_vs_H.svg");
  return out;
}

}  // namespace mhaq
