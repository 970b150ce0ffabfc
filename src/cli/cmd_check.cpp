// check-certificate: the separate certificate checker (mhaq_check library).
#include <fstream>
#include <sstream>

#include "commands.hpp"
#include "mhaq/check/certificate_check.hpp"
#include "mhaq/base/error.hpp"

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
            std::ifstream f(st->file, std::ios::binary);
            if (!f) throw_input("cannot open certificate \"" + st->file + "\"");
            std::ostringstream ss;
            ss << f.rdbuf();
            check::CertificateReport r;
            try {
              r = check::check_certificate(ss.str());
            } catch (const check::InputError& e) {
              throw_input(e.what());
            }
            emit(st->json, check::report_json(r, st->file).dump(), check::report_text(r, st->file));
            return r.ok() ? 0 : exit_code(ErrorKind::rejected);
          }};
}

}  // namespace mhaq::cli
