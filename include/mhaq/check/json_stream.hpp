// A JSON file read as a stream: the top-level object's members are handed
// over one by one, and the elements of chosen top-level arrays one element at
// a time, so a large golden file is never held whole. Part of the checker
// library (no mhaq_lib code); golden check's streaming readers use it.
// Strict as the other readers: invalid JSON, a duplicate key, nesting deeper
// than 64 and a top level that is not an object are InputError.
#pragma once
#include <fstream>
#include <functional>
#include <istream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace mhaq::check {

struct JsonStream {
  std::vector<std::string> streamed;  // top-level arrays whose elements go to `element`
  std::function<void(const std::string& key, nlohmann::json&& value)> member;
  std::function<void(const std::string& key, nlohmann::json&& element)> element;
  std::function<void(const std::string& key)> array_end;  // a streamed array closed (optional)
};

void stream_json(std::istream& in, const JsonStream& s);
// The file at `path`, opened for stream_json: InputError unless it is a
// regular file of at most max_file_bytes.
std::ifstream open_json_file(const std::string& path);
// The first bytes of a file open an object whose first key is "format" with this value.
bool starts_with_format(const std::string& head, const std::string& format);

}  // namespace mhaq::check
