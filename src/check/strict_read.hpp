// The checker's strict JSON field readers, one copy for the certificate and
// the golden-file readers: every malformed field is an InputError
// "<path>: <what>" naming its JSON path ("top level" for the document);
// check_certificate says "malformed certificate: " in front. The library has
// its own reader (base/json_in.hpp): the checker shares no code with it
// (tests/check_separation.sh), so these two are the only copies.
#pragma once
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "check_internal.hpp"
#include "mhaq/check/limits.hpp"

namespace mhaq::check {

[[noreturn]] void bad(const std::string& path, const std::string& what);
const nlohmann::json& need(const nlohmann::json& j, const std::string& path, const std::string& key);
const nlohmann::json& need_array(const nlohmann::json& j, const std::string& path, const std::string& key,
                                 size_t max = static_cast<size_t>(limits::max_plan_queries));
long need_long(const nlohmann::json& j, const std::string& path, const std::string& key, long lo, long hi);
std::string need_str(const nlohmann::json& j, const std::string& path, const std::string& key);
bool need_bool(const nlohmann::json& j, const std::string& path, const std::string& key);
// Golden files' numbers (the certificate reader has its own, cert_io):
// "p/q" or "p" (decimal digits, an optional minus sign), at most `max`
// characters, and vectors of d of them.
namespace golden_io {
Qn read_rational(const nlohmann::json& j, const std::string& path, size_t max);
std::vector<Qn> read_qvec(const nlohmann::json& j, const std::string& path, int d, size_t max);
}  // namespace golden_io

}  // namespace mhaq::check
