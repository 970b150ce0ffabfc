// Harness: a small exact or ball recovery round trip, through recover()'s
// JSON record. The bytes (recover_input.hpp) choose a tiny model and the
// run's options. recover must end in a status or an mhaq error other than
// internal; a run that ends ok must agree with the truth, and the checker
// must accept its certificate, on every input. Exact runs are kept to small
// tau degrees (a-priori bound <= 256, else the run is made a ball run).
// fuzz_recover_fast runs the same inputs at a fraction of the cost.
#include <exception>
#include <string>

#include "fuzz.hpp"
#include "mhaq/run/record_json.hpp"
#include "mhaq/base/error.hpp"
#include "recover_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mhaq;
  fuzz::RecoverInput in = fuzz::read_recover_input(data, size);
  const Model& m = in.model;
  RecoverOptions& o = in.options;
  std::string cert;
  o.certificate = &cert;
  try {
    check_recover_limits(m, o);
    const RecoverResult r = recover(m, o);
    auto dump = [&] { return record_json(r).dump(); };
    const int code = r.exit_code();
    if (code == exit_code(ErrorKind::mismatch)) fuzz::finding("recover ended ok but disagrees with the truth: " + dump());
    if (code == exit_code(ErrorKind::internal)) fuzz::finding("recover: unknown status " + dump());
    if (code == 0 && r.judge.status == Status::ok) fuzz::check_ok_certificate(cert, r.output.certificate_note.has_value(), dump);
  } catch (const Error& e) {
    fuzz::check_message(e.what());
    if (e.kind() == ErrorKind::internal || e.kind() == ErrorKind::mismatch) fuzz::finding(std::string(kind_name(e.kind())) + " error: " + e.what());
  } catch (const std::exception& e) {
    fuzz::finding(std::string("an exception outside mhaq's own: ") + e.what());
  }
  return 0;
}
