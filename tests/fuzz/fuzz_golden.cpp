// Harness: golden check on arbitrary bytes. It must return a result (ok or
// mismatches) or throw an mhaq input error, or unable when a well-formed
// file's learner run cannot decide at its precision (a stated outcome with
// its remedy); never an internal error.
#include <exception>
#include <string>

#include "fuzz.hpp"
#include "mhaq/base/error.hpp"
#include "mhaq/evidence/golden.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const mhaq::GoldenCheckResult r = mhaq::golden_check(text, 1);
    for (const auto& m : r.mismatches) mhaq::fuzz::check_message(m);
    // a flag, not the text: mismatch paths echo the file's own keys
    if (r.internal_error) mhaq::fuzz::finding("a mismatch that hides an internal error: " + r.mismatches.front());
  } catch (const mhaq::Error& e) {
    mhaq::fuzz::check_message(e.what());
    if (e.kind() != mhaq::ErrorKind::input && e.kind() != mhaq::ErrorKind::unable) mhaq::fuzz::finding(std::string("golden check: ") + mhaq::kind_name(e.kind()) + " error: " + e.what());
  } catch (const std::exception& e) {
    mhaq::fuzz::finding(std::string("an exception outside mhaq's own: ") + e.what());
  }
  return 0;
}
