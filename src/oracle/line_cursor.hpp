#pragma once
// A cursor over one protocol line in the compact form mhaq writes, shared by
// the fast readers of batch and answers lines: each step matches and
// advances, or returns false, and the reader then hands the whole line to
// the general JSON reader.
#include <cstring>
#include <string>

namespace mhaq::oracle_detail {

class LineCursor {
 protected:
  explicit LineCursor(const std::string& line) : s_(line) {}
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  bool lit(const char* t) {
    const size_t n = std::strlen(t);
    if (s_.compare(i_, n, t) != 0) return false;
    i_ += n;
    return true;
  }
  static bool digit(char c) { return c >= '0' && c <= '9'; }
  // a JSON integer in [lo, hi]: no sign, no leading zero, at most 18 digits
  bool integer(long lo, long hi, long& v) {
    const size_t b = i_;
    long x = 0;
    while (i_ < s_.size() && digit(s_[i_]) && i_ - b < 18) x = 10 * x + (s_[i_++] - '0');
    const size_t n = i_ - b;
    if (n == 0 || (n > 1 && s_[b] == '0') || digit(peek()) || x < lo || x > hi) return false;
    v = x;
    return true;
  }

  const std::string& s_;
  size_t i_ = 0;
};

}  // namespace mhaq::oracle_detail
