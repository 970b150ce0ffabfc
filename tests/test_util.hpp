// Shared helpers for the doctest suites.
#pragma once
#include <array>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <functional>
#include <string>
#include <utility>

#include "mhaq/base/error.hpp"

namespace mhaq::test {

// FLINT_TEST_MULTIPLIER-style scaling: MHAQ_TEST_MULTIPLIER=10 for soak runs.
inline int multiplier() {
  const char* s = std::getenv("MHAQ_TEST_MULTIPLIER");
  const int m = s ? std::atoi(s) : 1;
  return m < 1 ? 1 : m;
}

struct RunResult {
  int code;
  std::string out;
};
// Runs a shell command, capturing stdout; returns the exit status.
inline RunResult run(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {-1, ""};
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int st = pclose(p);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

// The kind (as its exit code) and message of the mhaq::Error that f throws;
// {0, ""} when it throws none.
inline std::pair<int, std::string> error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return {static_cast<int>(e.kind()), e.what()};
  }
  return {0, ""};
}

}  // namespace mhaq::test
