// check-certificate: the separate certificate checker (mhaq_check library).
#include "commands.hpp"
#include "mhaq/base/error.hpp"
#include "mhaq/base/io.hpp"
#include "mhaq/base/text.hpp"
#include "mhaq/check/certificate_check.hpp"

namespace mhaq::cli {

Command make_check_certificate() {
  struct State {
    std::string file;
    bool json = false;
  };
  auto st = std::make_shared<State>();
  return {[st](CLI::App& app) {
            auto* s = app.add_subcommand("check-certificate",
                                         "re-check a certificate written by recover --certificate with a separate checker (exit 10 on any failure)");
            s->add_option("file", st->file, "certificate JSON file")->required();
            s->add_flag("--json", st->json, "print one JSON object");
            return s;
          },
          [st] {
            const std::string text = read_file_text(st->file, "certificate");
            check::CertificateReport r;
            try {
              r = check::check_certificate(text);
            } catch (const check::InputError& e) {
              throw_input(clean_text(st->file) + ": " + e.what());
            }
            emit(st->json, check::report_json(r, st->file), check::report_text(r, st->file));
            return r.ok() ? 0 : exit_code(ErrorKind::rejected);
          }};
}

}  // namespace mhaq::cli
