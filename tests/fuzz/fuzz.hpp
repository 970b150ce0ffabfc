// Shared by the fuzz harnesses (tests/fuzz/README.md). Each harness defines
// LLVMFuzzerTestOneInput; built with -fsanitize=fuzzer it is a libFuzzer
// target, built with replay.cpp it replays a committed corpus under ctest.
// A finding (an internal error, an exception type outside mhaq's own, a
// model that changes when re-read, an ok certificate the checker rejects)
// prints what happened and aborts, which both libFuzzer and ctest report.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "mhaq/base/text.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace mhaq::fuzz {

[[noreturn]] inline void finding(const std::string& what) {
  std::fprintf(stderr, "FUZZ FINDING: %s\n", clean_text(what.substr(0, 4000)).c_str());
  std::fflush(stderr);
  std::abort();
}

// Messages are printable UTF-8 and short, whatever the input held (they
// quote about 80 characters of it; JSON paths can add a little).
inline void check_message(const std::string& m) {
  if (m.size() > 8192) finding("a message of " + std::to_string(m.size()) + " characters: " + m.substr(0, 200));
  if (clean_text(m) != m) finding("a message that is not printable UTF-8: " + m);
}

}  // namespace mhaq::fuzz
