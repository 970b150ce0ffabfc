// Harness: the recover round trip of fuzz_recover on the same inputs
// (recover_input.hpp), at a fraction of the cost, so that a campaign reaches
// millions of executions:
// - the run's record is read as a RecoverResult (no JSON written and re-read;
//   fuzz_recover covers that);
// - exact runs are kept to tau degrees <= 64 (else a ball run), where about
//   four in five exact runs of fuzz_recover fall;
// - the certificate is written and checked for one input in 16, chosen by a
//   hash of the bytes, so a saved input replays the same way.
// What a finding is stays: an internal or mismatch error, an ok run that
// disagrees with the truth (every input), an ok run without a certificate or
// a reason, or whose certificate the checker rejects (the sampled inputs).
#include <exception>
#include <string>

#include "fuzz.hpp"
#include "mhaq/base/error.hpp"
#include "mhaq/run/record_json.hpp"
#include "recover_input.hpp"

namespace {
// FNV-1a over the input: the certificate sample.
bool sampled(const uint8_t* data, size_t size) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 0x100000001b3ULL;
  return (h >> 60) == 0;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mhaq;
  fuzz::RecoverInput in = fuzz::read_recover_input(data, size, 64);
  const Model& m = in.model;
  RecoverOptions& o = in.options;
  std::string cert;
  const bool with_certificate = sampled(data, size);
  if (with_certificate) o.certificate = &cert;
  try {
    check_recover_limits(m, o);
    const RecoverResult r = recover_run(m, o);
    auto dump = [&] { return record_json(r).dump(); };
    const int code = r.exit_code();
    if (code == exit_code(ErrorKind::mismatch)) fuzz::finding("recover ended ok but disagrees with the truth: " + dump());
    if (code == exit_code(ErrorKind::internal)) fuzz::finding("recover: unknown status " + dump());
    if (code == 0 && r.judge.status == Status::ok && with_certificate) fuzz::check_ok_certificate(cert, r.output.certificate_note.has_value(), dump);
  } catch (const Error& e) {
    fuzz::check_message(e.what());
    if (e.kind() == ErrorKind::internal || e.kind() == ErrorKind::mismatch) fuzz::finding(std::string(kind_name(e.kind())) + " error: " + e.what());
  } catch (const std::exception& e) {
    fuzz::finding(std::string("an exception outside mhaq's own: ") + e.what());
  }
  return 0;
}
