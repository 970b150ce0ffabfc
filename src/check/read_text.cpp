// Reading helpers shared by the checker's JSON readers (check_internal.hpp).
#include <string>

#include "check_internal.hpp"

namespace mhaq::check {

std::string clean(const std::string& s, size_t max) {
  std::string out;
  size_t i = 0;
  for (; i < s.size() && out.size() < max; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7F) {
      out.push_back(static_cast<char>(c));
    } else {
      static const char* hx = "0123456789abcdef";
      out += "\\x";
      out.push_back(hx[c >> 4]);
      out.push_back(hx[c & 15]);
    }
  }
  if (i < s.size()) out += "... (" + std::to_string(s.size()) + " characters)";
  return out;
}
std::string quote_str(const std::string& s) { return "\"" + clean(s) + "\""; }
std::string at(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }
std::string at(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }

}  // namespace mhaq::check
