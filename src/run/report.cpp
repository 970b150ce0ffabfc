#include "mhaq/run/report.hpp"

#include <arb.h>

#include <cmath>
#include <cstdio>

#include "mhaq/arith/numbers.hpp"
#include "mhaq/stages/grid_guard.hpp"

namespace mhaq {

std::string decimal_of_log2(double l2) {
  if (std::isnan(l2)) return "nan";
  if (std::isinf(l2)) return l2 < 0 ? "0" : "inf";
  const double e10 = l2 * std::log10(2.0);
  double ex = std::floor(e10), m = std::pow(10.0, e10 - ex);
  if (m >= 9.995) { m /= 10; ex += 1; }
  char b[48];
  std::snprintf(b, sizeof b, "%.2fe%+.0f", m, ex);
  return b;
}

double pow2_value(double l2) {
  if (std::isinf(l2) && l2 < 0) return 0.0;
  const double x = std::exp2(l2);
  return std::isfinite(l2) && std::isnormal(x) ? x : std::nan("");
}

double log2_abs(const Rational& q) {
  PrecisionScope scope(128);
  Ball t(q);
  arb_abs(t.raw(), t.raw());
  arb_log_base_ui(t.raw(), t.raw(), 2, 128);
  return t.mid_double();
}

void report_verdict(RecoverResult& r, const Verdict& v) {
  r.judge.status = v.status;
  if (v.status != Status::ok) {
    r.judge.message = v.message;
    r.judge.remedy = status_remedy(v.status);
    // the small-grid guard (stages/grid_guard.hpp): another seed draws from the same small grid
    if (v.message.find(grid_guard_marker()) != std::string::npos && v.status == Status::degenerate)
      r.judge.remedy = "on this small token grid the plan's answers fit more than one model: try another --seed or a larger --token-range";
  }
}

}  // namespace mhaq
