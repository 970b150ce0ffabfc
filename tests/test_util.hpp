// Shared helpers for the doctest suites.
#pragma once
#include <doctest/doctest.h>

#include <array>
#include <cstdio>
#include <initializer_list>
#include <map>
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

// The outcomes of a randomised test's runs, counted as FLINT's tests count
// theirs (count_success, count_unable, count_domain): every run is counted
// under its outcome ("ok", "degenerate", "unable", ...), the counts are
// printed, and require() fails the test when fewer than its stated minimum
// ended in an outcome that let the test assert something (decided), so a
// test whose runs all end degenerate cannot pass by asserting nothing.
class Outcomes {
 public:
  explicit Outcomes(std::string what) : what_(std::move(what)) {}
  void count(const std::string& outcome) { ++n_[outcome]; }
  int of(const std::string& outcome) const {
    const auto it = n_.find(outcome);
    return it == n_.end() ? 0 : it->second;
  }
  int total() const {
    int t = 0;
    for (const auto& [k, v] : n_) t += v;
    return t;
  }
  std::string text() const {
    std::string s = what_ + ": " + std::to_string(total()) + " runs:";
    for (const auto& [k, v] : n_) s += " " + k + " " + std::to_string(v);
    return s;
  }
  // Prints the counts; at least `min` runs must have ended in `decided`.
  void require(int min, std::initializer_list<std::string> decided) const {
    int got = 0;
    std::string names;
    for (const std::string& k : decided) {
      got += of(k);
      names += (names.empty() ? "" : "/") + k;
    }
    std::printf("%s (decided, %s: %d; at least %d needed)\n", text().c_str(), names.c_str(), got, min);
    std::fflush(stdout);
    INFO(text());
    CHECK_MESSAGE(got >= min, "too few decided runs: " << got << " " << names << " of " << total() << ", at least " << min << " needed");
  }

 private:
  std::string what_;
  std::map<std::string, int> n_;
};

}  // namespace mhaq::test
