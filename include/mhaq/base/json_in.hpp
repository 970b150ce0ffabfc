// Strict JSON input shared by mhaq's readers (model files, golden files, the
// oracle protocol). The certificate checker shares no code with the library
// and has the one other copy (src/check/strict_read.hpp), with the same
// arguments in the same order: the object, its path, the member's key. nlohmann-json accepts things a
// verification tool must not: duplicate keys (the last one wins), integers in
// [2^63, 2^64) that wrap when read as signed, and it throws a range error
// (not a parse error) for numbers beyond a double. Everything here turns those
// into Error(input) naming the JSON path.
#pragma once
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "mhaq/base/limits.hpp"

namespace mhaq {

// Deepest nesting of arrays and objects a file may have (mhaq's formats need 6).
inline constexpr int max_json_depth = 64;

// Parses one JSON document. Error(input) for: more than limits::max_file_bytes,
// invalid JSON or UTF-8, a duplicate key, a number beyond a double, nesting
// deeper than max_json_depth. Messages name the JSON path and quote at most
// about 80 characters of the input.
nlohmann::json parse_json_text(const std::string& text);

// "a.b" (or "b" when path is empty) and "a[3]".
std::string json_key_path(const std::string& path, const std::string& key);
std::string json_index_path(const std::string& path, std::size_t i);
// A value as shown in messages: its JSON text, cut to about 80 characters.
std::string json_shown(const nlohmann::json& e);

// An integer field in [lo, hi]: a JSON integer (not 2.0, not "2"), read
// without wrapping (18446744073709551615 is out of range, never -1).
// Error(input) "<path>: ..." otherwise.
long json_long(const nlohmann::json& e, long lo, long hi, const std::string& path);
// A non-negative integer below 2^64 (seeds).
std::uint64_t json_u64(const nlohmann::json& e, const std::string& path);

// The member `key` of object j, or Error(input) "<path>.<key>: missing".
const nlohmann::json& json_member(const nlohmann::json& j, const std::string& path, const std::string& key);
// The member `key` of j, or null when j is no object or has no such member
// (an optional field).
const nlohmann::json* json_find(const nlohmann::json& j, const std::string& key);

// Required members of a given type, each Error(input) "<path>.<key>: ..."
// when missing or of another type: need = json_member; an array of at most
// max entries; an integer in [lo, hi] (json_long); a seed (json_u64); a
// string; true or false.
const nlohmann::json& need(const nlohmann::json& j, const std::string& path, const std::string& key);
const nlohmann::json& need_array(const nlohmann::json& j, const std::string& path, const std::string& key,
                                 std::size_t max = static_cast<std::size_t>(limits::max_plan_queries));
long need_int(const nlohmann::json& j, const std::string& path, const std::string& key, long lo, long hi);
std::uint64_t need_u64(const nlohmann::json& j, const std::string& path, const std::string& key);
std::string need_str(const nlohmann::json& j, const std::string& path, const std::string& key);
bool need_bool(const nlohmann::json& j, const std::string& path, const std::string& key);

}  // namespace mhaq
