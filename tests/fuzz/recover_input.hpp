// The recover harnesses' shared input: the bytes choose a tiny model (d <= 2,
// at most 3 heads with small rational entries, equal W and cancelling v
// possible) and the run's options (arithmetic, bits, seed, schedule, an H0
// bound, token range). fuzz_recover and fuzz_recover_fast read the same
// bytes the same way but for the exact runs' degree cap, so either corpus
// feeds the other.
#pragma once
#include <flint/fmpz.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz.hpp"
#include "mhaq/check/certificate_check.hpp"
#include "mhaq/model/model.hpp"
#include "mhaq/run/recover.hpp"
#include "mhaq/run/recover_limits.hpp"

namespace mhaq::fuzz {

struct Bytes {
  const uint8_t* p;
  size_t n;
  unsigned next() { return n ? (--n, *p++) : 0u; }
};

struct RecoverInput {
  Model model;
  RecoverOptions options;
  long degree_bound = 0;  // exact runs: the a-priori tau-degree bound of one answer
};

inline HeadQ read_head(Bytes& b, const Model& m, int h) {
  const unsigned dens[4] = {1, 2, 4, 3};  // W takes the first three: L stays a power of two
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
  return hd;
}

// Exact runs are kept to small tau degrees: the a-priori bound of one answer
// at most max_degree (token range 1 or 2, or the default 5 when its degrees
// stay small), else the run is made a ball run.
inline RecoverInput read_recover_input(const uint8_t* data, size_t size, long max_degree = 256) {
  RecoverInput in;
  Bytes b{data, size};
  Model& m = in.model;
  const unsigned shape = b.next();
  m.d = (shape & 7) == 7 ? 2 : 1;  // d = 2 one time in eight: its runs take ten times longer
  const int heads = 1 + static_cast<int>((shape >> 3) % 3);
  for (int h = 0; h < heads; ++h) m.heads.push_back(read_head(b, m, h));
  const unsigned opt = b.next();
  RecoverOptions& o = in.options;
  o.arith = opt & 1 ? Arith::ball : Arith::exact;
  o.bits = 64 + 32 * static_cast<long>((opt >> 1) & 3);
  o.schedule = opt & 8 ? Schedule::lean : Schedule::paper;
  o.seed = b.next() | (b.next() << 8);
  const unsigned more = b.next();
  if ((more & 3) == 1) o.max_heads = m.canonical().num_heads() + 1;
  if (o.arith == Arith::exact) {
    fmpz_t bound;
    fmpz_init(bound);
    long R = (more & 12) == 4 ? 5 : 1 + static_cast<long>((more >> 4) % 2);
    exact_tau_degree_bound(bound, m, R);
    if (fmpz_cmp_si(bound, max_degree) > 0) {
      R = 1;
      exact_tau_degree_bound(bound, m, R);
    }
    if (fmpz_cmp_si(bound, max_degree) > 0) {
      o.arith = Arith::ball;
    } else {
      in.degree_bound = fmpz_get_si(bound);
      if (R != 5) o.tokens = TokenSpec{R, 1};
    }
    fmpz_clear(bound);
  }
  return in;
}

// An ok run's certificate: written (or a reason given in certificate_note),
// and accepted by the checker. `record` is the run's JSON, for the message.
template <class Dump>
void check_ok_certificate(const std::string& cert, bool has_note, const Dump& record) {
  // Repaired pairs and the lean schedule's fallback links are outside the
  // certificate format; recover must then say so (certificate_note).
  if (cert.empty() && !has_note) finding("an ok run wrote no certificate and gave no reason: " + record());
  if (cert.empty()) return;
  try {
    const check::CertificateReport rep = check::check_certificate(cert);
    if (!rep.ok()) finding("the checker rejects an ok certificate: " + rep.failures.front().path + ": " + rep.failures.front().message);
  } catch (const check::InputError& e) {
    finding(std::string("the checker cannot read an ok certificate: ") + e.what());
  }
}

}  // namespace mhaq::fuzz
