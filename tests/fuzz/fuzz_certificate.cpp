// Harness: the certificate checker on arbitrary bytes. It must report (ok or
// failures) or throw check::InputError, with short, printable messages.
#include <exception>
#include <string>

#include "fuzz.hpp"
#include "mhaq/check/certificate_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const mhaq::check::CertificateReport r = mhaq::check::check_certificate(text);
    for (const auto& f : r.failures) {
      mhaq::fuzz::check_message(f.path);
      mhaq::fuzz::check_message(f.message);
    }
    (void)mhaq::check::report_json(r, "fuzz.json").dump();  // strict dump: throws on invalid UTF-8
    mhaq::fuzz::check_message(mhaq::check::report_text(r, "fuzz.json").substr(0, 8000));
  } catch (const mhaq::check::InputError& e) {
    mhaq::fuzz::check_message(e.what());
  } catch (const std::exception& e) {
    mhaq::fuzz::finding(std::string("an exception outside the checker's InputError: ") + e.what());
  }
  return 0;
}
