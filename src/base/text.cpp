#include "mhaq/base/text.hpp"

namespace mhaq {

namespace {
// Length of the valid UTF-8 sequence at s[i] (RFC 3629: no overlong forms,
// no surrogates, nothing above U+10FFFF), or 0 if it is not one.
std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return 1;
  std::size_t n;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c == 0xE0) { n = 3; lo = 0xA0; }
  else if (c == 0xED) { n = 3; hi = 0x9F; }
  else if (c >= 0xE1 && c <= 0xEF) n = 3;
  else if (c == 0xF0) { n = 4; lo = 0x90; }
  else if (c == 0xF4) { n = 4; hi = 0x8F; }
  else if (c >= 0xF1 && c <= 0xF3) n = 4;
  else return 0;
  if (i + n > s.size()) return 0;
  if (b(i + 1) < lo || b(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (b(i + k) < 0x80 || b(i + k) > 0xBF) return 0;
  return n;
}

void hex_byte(std::string& out, unsigned char c) {
  static const char* digits = "0123456789abcdef";
  out += "\\x";
  out.push_back(digits[c >> 4]);
  out.push_back(digits[c & 15]);
}

// Appends the cleaned form of s to out; stops once out holds more than `max`
// bytes (max = npos: no limit). Returns the input position reached.
std::size_t clean_into(std::string& out, std::string_view s, std::size_t max, bool escape_quotes) {
  std::size_t i = 0;
  while (i < s.size() && (max == std::string::npos || out.size() < max)) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const std::size_t n = utf8_length(s, i);
    if (n == 0 || (c < 0x20 && c != '\n' && c != '\t') || c == 0x7F) {
      hex_byte(out, c);
      ++i;
    } else if (escape_quotes && (c == '"' || c == '\\')) {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
      ++i;
    } else if (escape_quotes && (c == '\n' || c == '\t')) {
      out += c == '\n' ? "\\n" : "\\t";
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return i;
}
}  // namespace

std::string clean_text(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  clean_into(out, s, std::string::npos, false);
  return out;
}

std::string quote_text(std::string_view s, std::size_t max) {
  std::string out = "\"";
  const std::size_t reached = clean_into(out, s, max + 1, true);
  if (reached < s.size()) return out + "...\" (" + std::to_string(s.size()) + " characters)";
  return out + "\"";
}

}  // namespace mhaq
