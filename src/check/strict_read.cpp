// The checker's strict JSON field readers (strict_read.hpp).
#include "strict_read.hpp"

#include "mhaq/check/certificate_check.hpp"

namespace mhaq::check {

using json = nlohmann::json;

namespace {
bool digits_only(const std::string& s, size_t from) {
  return s.size() > from && s.find_first_not_of("0123456789", from) == std::string::npos;
}
}  // namespace

[[noreturn]] void bad(const std::string& path, const std::string& what) {
  throw InputError((path.empty() ? std::string("top level") : path) + ": " + what);
}

const json& need(const json& j, const std::string& path, const std::string& key) {
  if (!j.is_object()) bad(path, "not an object");
  auto it = j.find(key);
  if (it == j.end()) bad(at(path, key), "missing");
  return *it;
}
const json& need_array(const json& j, const std::string& path, const std::string& key, size_t max) {
  const json& a = need(j, path, key);
  if (!a.is_array()) bad(at(path, key), "not an array");
  if (a.size() > max) bad(at(path, key), std::to_string(a.size()) + " entries, more than the limit of " + std::to_string(max));
  return a;
}
long need_long(const json& j, const std::string& path, const std::string& key, long lo, long hi) {
  const json& a = need(j, path, key);
  if (a.is_number_float()) bad(at(path, key), "a floating-point number where an integer is expected");
  if (!a.is_number_integer()) bad(at(path, key), "not an integer");
  const std::string range = "out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  if (a.is_number_unsigned()) {
    const unsigned long u = a.get<unsigned long>();
    if (u > static_cast<unsigned long>(hi) || (lo > 0 && u < static_cast<unsigned long>(lo))) bad(at(path, key), range);
    return static_cast<long>(u);
  }
  const long v = a.get<long>();
  if (v < lo || v > hi) bad(at(path, key), range);
  return v;
}
std::string need_str(const json& j, const std::string& path, const std::string& key) {
  const json& a = need(j, path, key);
  if (!a.is_string()) bad(at(path, key), "not a string");
  return a.get<std::string>();
}
bool need_bool(const json& j, const std::string& path, const std::string& key) {
  const json& a = need(j, path, key);
  if (!a.is_boolean()) bad(at(path, key), "not a boolean");
  return a.get<bool>();
}

namespace golden_io {

Qn read_rational(const json& j, const std::string& path, size_t max) {
  if (!j.is_string()) bad(path, "not a rational string \"p/q\"");
  const std::string& s = j.get_ref<const std::string&>();
  if (s.size() > max) bad(path, "number of " + std::to_string(s.size()) + " characters, more than the limit of " + std::to_string(max));
  const size_t slash = s.find('/');
  const std::string ns = s.substr(0, slash), ds = slash == std::string::npos ? std::string("1") : s.substr(slash + 1);
  if (!digits_only(ns, !ns.empty() && ns[0] == '-' ? 1 : 0) || !digits_only(ds, 0)) bad(path, "not a rational: \"" + clean(s) + "\"");
  Qn q;
  fmpz_t n, d;
  fmpz_init(n);
  fmpz_init(d);
  fmpz_set_str(n, ns.c_str(), 10);
  fmpz_set_str(d, ds.c_str(), 10);
  const bool zero_den = fmpz_is_zero(d);
  if (!zero_den) fmpq_set_fmpz_frac(q.v, n, d);
  fmpz_clear(n);
  fmpz_clear(d);
  if (zero_den) bad(path, "zero denominator");
  return q;
}
std::vector<Qn> read_qvec(const json& j, const std::string& path, int d, size_t max) {
  if (!j.is_array() || static_cast<long>(j.size()) != d) bad(path, "expected an array of " + std::to_string(d) + " rationals");
  std::vector<Qn> out;
  for (size_t i = 0; i < j.size(); ++i) out.push_back(read_rational(j[i], at(path, i), max));
  return out;
}

}  // namespace golden_io

}  // namespace mhaq::check
