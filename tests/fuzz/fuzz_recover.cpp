// Harness: a small exact or ball recovery round trip. The bytes choose a tiny
// model (d <= 2, at most 3 heads with small rational entries, equal W and
// cancelling v possible) and the run's options (arithmetic, bits, seed,
// schedule, an H0 bound, token range). recover must end in a status or an
// mhaq error other than internal; a run that ends ok must agree with the
// truth, and the checker must accept its certificate. Exact runs are kept to
// small tau degrees (a-priori bound <= 256, else the run is made a ball run),
// so that an execution takes about a millisecond (1e6 of them under ASan).
#include <exception>
#include <string>

#include "fuzz.hpp"
#include "mhaq/base/error.hpp"
#include "mhaq/check/certificate_check.hpp"
#include "mhaq/model/model.hpp"
#include "mhaq/run/recover.hpp"
#include "mhaq/run/recover_limits.hpp"

namespace {
struct Bytes {
  const uint8_t* p;
  size_t n;
  unsigned next() { return n ? (--n, *p++) : 0u; }
};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mhaq;
  Bytes b{data, size};
  const unsigned shape = b.next();
  Model m;
  m.d = (shape & 7) == 7 ? 2 : 1;  // d = 2 one time in eight: its runs take ten times longer
  const int heads = 1 + static_cast<int>((shape >> 3) % 3);
  const unsigned dens[4] = {1, 2, 4, 3};  // W takes the first three: L stays a power of two
  for (int h = 0; h < heads; ++h) {
    HeadQ hd{QMat(m.d, m.d), QVec(static_cast<size_t>(m.d))};
    const unsigned how = b.next();
    if (h > 0 && (how & 3) == 0) {
      hd.W = m.heads[static_cast<size_t>(h - 1)].W;  // equal W: merged by the canonical form
    } else {
      for (int i = 0; i < m.d; ++i)
        for (int j = 0; j < m.d; ++j) {
          const unsigned x = b.next();
          hd.W(i, j) = Rational(static_cast<long>(x % 5) - 2, dens[(x >> 4) % 3]);
        }
    }
    if (h > 0 && (how & 12) == 0) {
      hd.v = QVec(static_cast<size_t>(m.d)) - m.heads[static_cast<size_t>(h - 1)].v;  // cancelling v
    } else {
      for (int i = 0; i < m.d; ++i) {
        const unsigned x = b.next();
        hd.v[static_cast<size_t>(i)] = Rational(static_cast<long>(x % 17) - 8, dens[(x >> 5) % 4]);
      }
    }
    m.heads.push_back(std::move(hd));
  }
  const unsigned opt = b.next();
  RecoverOptions o;
  o.arith = opt & 1 ? Arith::ball : Arith::exact;
  o.bits = 64 + 32 * static_cast<long>((opt >> 1) & 3);
  o.schedule = opt & 8 ? Schedule::lean : Schedule::paper;
  o.seed = b.next() | (b.next() << 8);
  const unsigned more = b.next();
  const int canon = m.canonical().num_heads();
  if ((more & 3) == 1) o.max_heads = canon + 1;
  if (o.arith == Arith::exact) {
    // token range 1 or 2, or the default (5) when its tau degrees stay small; else balls
    fmpz_t bound;
    fmpz_init(bound);
    long R = (more & 12) == 4 ? 5 : 1 + static_cast<long>((more >> 4) % 2);
    exact_tau_degree_bound(bound, m, R);
    if (fmpz_cmp_si(bound, 256) > 0) {
      R = 1;
      exact_tau_degree_bound(bound, m, R);
    }
    if (fmpz_cmp_si(bound, 256) > 0) o.arith = Arith::ball;
    else if (R != 5) o.tokens = TokenSpec{R, 1};
    fmpz_clear(bound);
  }
  std::string cert;
  o.certificate = &cert;
  try {
    check_recover_limits(m, o);
    const nlohmann::json r = recover(m, o);
    const int code = recover_exit_code(r);
    if (code == exit_code(ErrorKind::mismatch)) fuzz::finding("recover ended ok but disagrees with the truth: " + r.dump());
    if (code == exit_code(ErrorKind::internal)) fuzz::finding("recover: unknown status " + r.dump());
    if (code == 0 && r["status"] == "ok") {
      // Repaired pairs and the lean schedule's fallback links are outside the
      // certificate format; recover must then say so (certificate_note).
      if (cert.empty() && !r.contains("certificate_note")) fuzz::finding("an ok run wrote no certificate and gave no reason: " + r.dump());
      if (!cert.empty()) {
        try {
          const check::CertificateReport rep = check::check_certificate(cert);
          if (!rep.ok()) fuzz::finding("the checker rejects an ok certificate: " + rep.failures.front().path + ": " + rep.failures.front().message);
        } catch (const check::InputError& e) {
          fuzz::finding(std::string("the checker cannot read an ok certificate: ") + e.what());
        }
      }
    }
  } catch (const Error& e) {
    fuzz::check_message(e.what());
    if (e.kind() == ErrorKind::internal || e.kind() == ErrorKind::mismatch) fuzz::finding(std::string(kind_name(e.kind())) + " error: " + e.what());
  } catch (const std::exception& e) {
    fuzz::finding(std::string("an exception outside mhaq's own: ") + e.what());
  }
  return 0;
}
