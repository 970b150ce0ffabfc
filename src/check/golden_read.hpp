// The checker's strict readers for golden files (transformer and certified):
// every malformed field is an InputError naming its JSON path. Nothing here
// comes from mhaq_lib (tests/check_separation.sh).
#pragma once
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "check_internal.hpp"

namespace mhaq::check {

[[noreturn]] void bad(const std::string& path, const std::string& what);
const nlohmann::json& need(const nlohmann::json& j, const std::string& path, const std::string& key);
const nlohmann::json& need_array(const nlohmann::json& j, const std::string& path, const std::string& key, size_t max);
long need_long(const nlohmann::json& j, const std::string& path, const std::string& key, long lo, long hi);
std::string need_str(const nlohmann::json& j, const std::string& path, const std::string& key);
// "p/q" or "p" (decimal digits, an optional minus sign), at most `max` characters.
Qn read_rational(const nlohmann::json& j, const std::string& path, size_t max);
std::vector<Qn> read_qvec(const nlohmann::json& j, const std::string& path, int d, size_t max);

}  // namespace mhaq::check
