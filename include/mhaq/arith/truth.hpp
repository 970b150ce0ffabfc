// Three-valued truth, as Calcium's truth_t and CGAL's Uncertain<bool>: every
// decision the arithmetic makes is yes, no, or unknown ("could not decide at
// this precision / tolerance"). It never converts silently to bool; callers
// say what they do with unknown.
#pragma once

namespace mhaq {

enum class Truth { no, yes, unknown };

constexpr Truth truth_not(Truth t) { return t == Truth::yes ? Truth::no : t == Truth::no ? Truth::yes : Truth::unknown; }
constexpr Truth truth_and(Truth a, Truth b) {
  if (a == Truth::no || b == Truth::no) return Truth::no;
  return a == Truth::yes && b == Truth::yes ? Truth::yes : Truth::unknown;
}
constexpr Truth truth_or(Truth a, Truth b) {
  if (a == Truth::yes || b == Truth::yes) return Truth::yes;
  return a == Truth::no && b == Truth::no ? Truth::no : Truth::unknown;
}
constexpr Truth truth_of(bool b) { return b ? Truth::yes : Truth::no; }
constexpr const char* truth_name(Truth t) { return t == Truth::yes ? "yes" : t == Truth::no ? "no" : "unknown"; }

}  // namespace mhaq
