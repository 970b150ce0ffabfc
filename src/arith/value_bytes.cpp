// Exact byte images of the field values: see value_bytes.hpp.
#include "mhaq/arith/value_bytes.hpp"

#include <flint/flint.h>

#include <cstdint>
#include <cstring>

#include "mhaq/arith/field.hpp"
#include "mhaq/arith/qtau_access.hpp"
#include "mhaq/base/error.hpp"

namespace mhaq {

std::string ByteReader::bytes(std::size_t n) {
  if (n > s_.size() - at_) throw_internal("value bytes: a short image");
  std::string out = s_.substr(at_, n);
  at_ += n;
  return out;
}

std::string ByteReader::text() {
  const std::string len = bytes(8);
  std::uint64_t n = 0;
  std::memcpy(&n, len.data(), 8);
  return bytes(static_cast<std::size_t>(n));
}

void write_text(std::string& out, const std::string& s) {
  const std::uint64_t n = s.size();
  char len[8];
  std::memcpy(len, &n, 8);
  out.append(len, 8);
  out += s;
}

namespace {
// A FLINT/Arb string (freed with flint_free) as a length-prefixed text.
void write_flint_text(std::string& out, char* s) {
  write_text(out, s);
  flint_free(s);
}
}  // namespace

void write_value(std::string& out, const QTau& x) { write_flint_text(out, fmpz_poly_q_get_str(QTauAccess::raw(x))); }
void read_value(ByteReader& in, QTau& x) {
  const std::string s = in.text();
  if (fmpz_poly_q_set_str(QTauAccess::raw(x), s.c_str()) != 0) throw_internal("value bytes: a malformed element of Q(tau)");
}

void write_value(std::string& out, const Ball& x) { write_flint_text(out, arb_dump_str(x.raw())); }
void read_value(ByteReader& in, Ball& x) {
  const std::string s = in.text();
  if (arb_load_str(x.raw(), s.c_str()) != 0) throw_internal("value bytes: a malformed ball");
}

void write_value(std::string& out, const flint::Mag& x) { write_flint_text(out, mag_dump_str(x.v)); }
void read_value(ByteReader& in, flint::Mag& x) {
  const std::string s = in.text();
  if (mag_load_str(x.v, s.c_str()) != 0) throw_internal("value bytes: a malformed magnitude");
}

// An MPFR value as its precision and an arf image (exact at any precision: an
// arf holds any binary floating-point value, and NaN and the infinities).
void write_value(std::string& out, const Mpfr& x) {
  write_text(out, std::to_string(static_cast<long>(mpfr_get_prec(x.raw()))));
  flint::Arb a;
  arf_set_mpfr(arb_midref(a.v), x.raw());
  write_flint_text(out, arf_dump_str(arb_midref(a.v)));
}
void read_value(ByteReader& in, Mpfr& x) {
  const long prec = std::stol(in.text());
  const std::string s = in.text();
  flint::Arb a;
  if (arf_load_str(arb_midref(a.v), s.c_str()) != 0) throw_internal("value bytes: a malformed MPFR value");
  x.set_precision(static_cast<mpfr_prec_t>(prec));
  arf_get_mpfr(x.raw(), arb_midref(a.v), MPFR_RNDN);
}

void write_value(std::string& out, double x) {
  char b[8];
  std::memcpy(b, &x, 8);
  out.append(b, 8);
}
void read_value(ByteReader& in, double& x) {
  const std::string b = in.bytes(8);
  std::memcpy(&x, b.data(), 8);
}

std::string field_key(const Field<QTau>& F) { return "L=" + std::to_string(QTauAccess::L(F)); }
std::string field_key(const Field<Ball>&) { return "p=" + std::to_string(working_precision()); }
std::string field_key(const Field<Mpfr>& F) { return "p=" + std::to_string(F.precision()); }
std::string field_key(const Field<double>&) { return "p=53"; }

}  // namespace mhaq
