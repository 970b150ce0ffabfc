#include "options.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "mhaq/base/text.hpp"

namespace mhaq::cli {

namespace {
// Digits only, no leading zeros (except "0" itself).
bool plain_digits(const std::string& s, size_t from) {
  if (s.size() <= from || s.size() - from > 25) return false;
  for (size_t i = from; i < s.size(); ++i)
    if (s[i] < '0' || s[i] > '9') return false;
  return s[from] != '0' || s.size() == from + 1;
}
std::string range(long lo, long hi) { return std::string("[") + std::to_string(lo) + ", " + std::to_string(hi) + "]"; }
}  // namespace

bool parse_decimal(const std::string& s, long lo, long hi, long& out) {
  const bool neg = !s.empty() && s[0] == '-';
  if (!plain_digits(s, neg ? 1 : 0) || (neg && s == "-0")) return false;
  __int128 v = 0;
  for (size_t i = neg ? 1 : 0; i < s.size(); ++i) {
    v = v * 10 + (s[i] - '0');
    if (v > (static_cast<__int128>(1) << 64)) return false;
  }
  if (neg) v = -v;
  if (v < lo || v > hi) return false;
  out = static_cast<long>(v);
  return true;
}

CLI::Validator int_in(long lo, long hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        long v;
        if (parse_decimal(s, lo, hi, v)) return {};
        return "must be an integer in " + range(lo, hi) + ", got " + quote_text(s);
      },
      "INT in " + range(lo, hi));
}

CLI::Validator seed_value() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        static const std::string max = "18446744073709551615";
        const bool ok = plain_digits(s, 0) && (s.size() < max.size() || (s.size() == max.size() && s <= max));
        return ok ? std::string() : "must be an integer in [0, 2^64-1] = [0, " + max + "], got " + quote_text(s);
      },
      "UINT64");
}

CLI::Validator positive_number() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        const std::string bad = "must be a finite positive number, got " + quote_text(s);
        if (s.empty() || s.size() > 64 || s.find_first_not_of("0123456789.eE+-") != std::string::npos) return bad;
        char* end = nullptr;
        errno = 0;
        const double x = std::strtod(s.c_str(), &end);
        if (end != s.c_str() + s.size() || errno == ERANGE || !std::isfinite(x) || !(x > 0)) return bad;
        return {};
      },
      "NUMBER > 0");
}

}  // namespace mhaq::cli
