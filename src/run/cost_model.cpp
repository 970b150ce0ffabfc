#include "mhaq/run/cost_model.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "mhaq/base/error.hpp"
#include "mhaq/base/parallel.hpp"
#include "mhaq/base/text.hpp"

namespace mhaq {

namespace {

// Fitted by tests/bench/cost_model.sh on ball runs at 1024 bits (docs/studies/cost-model.md).
// Peak resident bytes: base + per query + per (pair x d) + per (head x d^2).
constexpr double kMemBase = 1.42616e+07, kMemQuery = 1127.34, kMemPairD = 207.436, kMemHeadD2 = 1053.01;
// Seconds on one thread: base + per (query x d) + per (query x H^2) + per (query x H d^2),
// the last the oracle's evaluation of every head at each query;
// the serial fraction of a run on more threads.
constexpr double kTimeBase = 0.0227287, kTimeQueryD = 1.88995e-06, kTimeQueryH2 = 6.11403e-06, kTimeQueryHD2 = 0, kSerial = 0.9514;
// A run across P ranks (docs/studies/cost-model.md): the answers, the pair
// fits and the self-check divide by P; the rest (the first column's fits,
// labelling, solving, the judge) stays on every rank, kRankSerial of the
// one-rank time, measured from the phases of a (64, 8) run. Every rank
// receives every answer (its image and error bound) and every fit: the bytes
// go to rank 0 and back out along a broadcast tree, at kLinkBytesPerSecond,
// an assumption (shared memory on one node; a cluster's network is slower).
constexpr double kRankSerial = 0.05, kLinkBytesPerSecond = 1e9;
// the precision the constants were fitted at, and the bytes of one ball at it
constexpr long kFitBits = 1024;
constexpr double kBallNumberBytes = 48 + 8 * (kFitBits / 64) + 16;
// A ball run's time at b bits over its time at kFitBits: c0 + (1 - c0) (b / kFitBits)^e,
// fitted on (32, 4) at 256 to 4096 bits (within 0.62 to 1.04 of each measured ratio).
constexpr double kBitsC0 = 0.143, kBitsExp = 1.5;

double precision_factor(long bits) {
  return kBitsC0 + (1 - kBitsC0) * std::pow(static_cast<double>(bits) / static_cast<double>(kFitBits), kBitsExp);
}

double number_bytes(Arith a, long bits) {
  const double limbs = std::ceil(static_cast<double>(arith_facts(a).bits(bits)) / 64.0);
  if (arith_facts(a).rigorous) return 48 + 8 * limbs + 16;  // arb_struct, its mantissa, the allocator's share
  if (arith_facts(a).chosen_bits) return 32 + 8 * limbs + 16;
  if (arith_facts(a).exact) return kBallNumberBytes;  // at least: exact answers grow with the tau-degree
  return 8;
}

long plan_pairs(const CostShape& s) {
  const long d = s.d, R = s.rank;
  switch (s.schedule) {
    case Schedule::paper: return 2 * d * d - 1 + (s.bias ? 2 * d : 0);
    case Schedule::rank: return rank_pair_count(d, R);
    case Schedule::lean:
    case Schedule::compact: return d * d + d - 1 + (s.bias ? d : 0);
  }
  return 0;
}

}  // namespace

RunCost predict_run_cost(const CostShape& s) {
  RunCost c;
  const double d = static_cast<double>(s.d), H = static_cast<double>(s.H);
  c.pairs = plan_pairs(s);
  c.queries = s.samples > 0 ? 1 + (static_cast<long>(s.samples) - 1) * c.pairs : schedule_query_count(s.schedule, s.d, s.H, s.rank, s.bias);
  const double Q = static_cast<double>(c.queries), P = static_cast<double>(c.pairs);
  const double scale = number_bytes(s.arith, s.bits) / kBallNumberBytes;
  c.peak_bytes = kMemBase + scale * (kMemQuery * Q + kMemPairD * P * d + kMemHeadD2 * H * d * d);
  const int hw = hardware_threads();
  c.threads = s.threads == 0 ? hw : s.threads;
  const double t_eff = std::min(c.threads, hw);
  const double one = kTimeBase + kTimeQueryD * Q * d + kTimeQueryH2 * Q * H * H + kTimeQueryHD2 * Q * H * d * d;
  const bool ball = arith_facts(s.arith).rigorous;
  c.ranks = std::max(s.ranks, 1);
  c.seconds = one * (kSerial + (1 - kSerial) / t_eff) * (ball ? precision_factor(s.bits) : 1.0);
  if (c.ranks > 1) {
    // an image: a length, and the value in hexadecimal digits with exponents and radius
    const double value = 8 + 40 + std::ceil(static_cast<double>(arith_facts(s.arith).bits(s.bits)) / 4.0);
    c.gathered_bytes = Q * (2 * value) + P * ((2 * H + 1) * value + 32);
    c.exchange_seconds = c.gathered_bytes * (1 + std::ceil(std::log2(static_cast<double>(c.ranks)))) / kLinkBytesPerSecond;
    c.seconds = c.seconds * (kRankSerial + (1 - kRankSerial) / c.ranks) + c.exchange_seconds;
    c.peak_bytes += 2 * P * ((2 * H + 1) * value + 32);  // every fit's image, twice on rank 0 (gathered, then broadcast)
  }
  if (arith_facts(s.arith).exact) {
    c.seconds = std::nan("");
    c.time_note = "exact mode: not modelled (its cost grows with the answers' tau-degree; see --max-degree); the memory is a floor";
  } else if (!ball) {
    c.time_note = "fitted on ball runs at " + std::to_string(kFitBits) + " bits; other arithmetics are not calibrated (the figure is the ball run's)";
  } else if (s.bits != kFitBits) {
    c.time_note = "fitted on ball runs at " + std::to_string(kFitBits) + " bits on this machine, scaled to " + std::to_string(s.bits) +
                  " bits by a factor fitted at 256 to 4096 bits";
  } else {
    c.time_note = "fitted on ball runs at " + std::to_string(kFitBits) + " bits on this machine";
  }
  if (s.external && !std::isnan(c.seconds))
    c.time_note += "; with an in-process oracle's answers: an external oracle's own time comes on top" +
                   std::string(c.ranks > 1 ? " and is not divided (rank 0 asks every query and broadcasts the answers)" : "");
  if (c.ranks > 1 && !std::isnan(c.seconds))
    c.time_note += "; on " + std::to_string(c.ranks) + " MPI ranks, a core each: " + (s.external ? "the pair fits" : "answers, pair fits") +
                   " and the self-check divided among them, the rest (" +
                   std::to_string(static_cast<int>(kRankSerial * 100)) + "%) on every rank, " + bytes_text(c.gathered_bytes) +
                   " gathered to every rank at an assumed 1 GB/s; the memory is per rank";
  return c;
}

double physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && size > 0 ? static_cast<double>(pages) * static_cast<double>(size) : 0.0;
}

std::string bytes_text(double b) {
  const char* unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (b >= 1024 && u < 5) b /= 1024, ++u;
  char s[64];
  std::snprintf(s, sizeof s, u == 0 ? "%.0f %s" : "%.3g %s", b, unit[u]);
  return s;
}

double parse_byte_count(const std::string& s, const std::string& option) {
  size_t n = 0;
  while (n < s.size() && s[n] >= '0' && s[n] <= '9') ++n;
  const std::string digits = s.substr(0, n), suffix = s.substr(n);
  double mult = 1;
  if (suffix == "K") mult = 1024.0;
  else if (suffix == "M") mult = 1024.0 * 1024;
  else if (suffix == "G") mult = 1024.0 * 1024 * 1024;
  else if (suffix == "T") mult = 1024.0 * 1024 * 1024 * 1024;
  else if (!suffix.empty()) n = 0;
  if (n == 0 || n > 15 || (digits.size() > 1 && digits[0] == '0'))
    throw Error(ErrorKind::usage, option + ": expected a byte count (digits, optionally followed by K, M, G or T), got " + quote_text(s));
  const double v = std::stod(digits) * mult;
  if (v <= 0) throw Error(ErrorKind::usage, option + " must be positive, got " + quote_text(s));
  return v;
}

}  // namespace mhaq
