// The checkpoint's exact texts (oracle/checkpoint.hpp): every answer reads
// back as the same binary value or the same element of Q(tau), and a text
// that mhaq would not write is an input error, never a crash. The runs
// killed and resumed: ctest checkpoint (tests/checkpoint.sh). Fit lines
// read back for their key alone.
#include <arb.h>
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "mhaq/arith/qtau_access.hpp"
#include "mhaq/base/io.hpp"
#include "mhaq/base/precision.hpp"
#include "mhaq/base/random.hpp"
#include "mhaq/oracle/checkpoint.hpp"

using namespace mhaq;

namespace {
int multiplier() {
  const char* m = std::getenv("MHAQ_TEST_MULTIPLIER");
  return m ? std::max(1, std::atoi(m)) : 1;
}
}  // namespace

TEST_CASE("checkpoint texts: balls, MPFR values and doubles read back exactly") {
  PrecisionScope scope(256);
  Rng rng(42);
  int checked = 0;
  for (int i = 0; i < 200 * multiplier(); ++i) {
    const Rational q(rng.uniform_int(-1000000, 1000000), static_cast<unsigned long>(rng.uniform_int(1, 999983)));
    Ball e;  // inexact midpoints, radii of every size
    arb_exp(e.raw(), Ball(q).raw(), 256);
    arb_mul_2exp_si(e.raw(), e.raw(), (i % 120) - 60);
    Ball b;
    answer_from_text(answer_text(e), b);
    CHECK(arb_equal(b.raw(), e.raw()));
    const Mpfr m(q);
    Mpfr mb;
    answer_from_text(answer_text(m), mb);
    CHECK(mpfr_equal_p(mb.raw(), m.raw()));
    const double x = std::ldexp(q.approx_double(), (i % 200) - 100);
    double xb = 1;
    answer_from_text(answer_text(x), xb);
    CHECK(xb == x);
    ++checked;
  }
  CHECK(checked == 200 * multiplier());
  // the zeros keep their signs, the smallest subnormal its value
  for (const double x : {0.0, -0.0, 5e-324, -1.7976931348623157e308}) {
    double xb = 1;
    answer_from_text(answer_text(x), xb);
    CHECK(xb == x);
    CHECK(std::signbit(xb) == std::signbit(x));
  }
  Mpfr z;
  mpfr_set_zero(z.raw(), -1);
  Mpfr zb(1);
  answer_from_text(answer_text(z), zb);
  CHECK(mpfr_zero_p(zb.raw()));
  CHECK(mpfr_signbit(zb.raw()));
  flint::Mag err;
  mag_set_ui_2exp_si(err.v, 3, -70);
  flint::Mag eb;
  error_from_text(error_text(err), eb);
  CHECK(mag_equal(eb.v, err.v));
}

TEST_CASE("checkpoint texts: elements of Q(tau) read back exactly") {
  std::vector<QTau> xs{QTau(Rational(0)), QTau(Rational(-7, 3)), QTauAccess::tau_pow(5), QTauAccess::tau_pow(-3)};
  xs.push_back(xs[1] * xs[2] + xs[3]);
  xs.push_back(QTau(Rational(1)) / (xs[2] + QTau(Rational(2))));
  for (const QTau& x : xs) {
    QTau y;
    answer_from_text(answer_text(x), y);
    CHECK(QTauAccess::equal(x, y));
    CHECK(answer_text(y) == answer_text(x));
  }
}

TEST_CASE("checkpoint texts: what mhaq would not write is an input error") {
  PrecisionScope scope(128);
  const std::vector<std::string> bad{"", "x", "1 2 3", "0 0 0", "1 0 0 0 extra", "nan", "-1", std::string(1000, '7')};
  int refused = 0;
  for (const std::string& s : bad) {
    Ball b;
    Mpfr m;
    double x = 0;
    flint::Mag e;
    CHECK_THROWS_AS(answer_from_text(s, b), Error);
    CHECK_THROWS_AS(answer_from_text(s, m), Error);
    CHECK_THROWS_AS(answer_from_text(s, x), Error);
    CHECK_THROWS_AS(error_from_text(s, e), Error);
    ++refused;
  }
  CHECK(refused == static_cast<int>(bad.size()));
  // a ball is not a float, a float with more bits than this run's is not one of its values
  Ball wide;
  arb_exp(wide.raw(), Ball(Rational(1, 3)).raw(), 128);
  Mpfr m;
  double x = 0;
  CHECK_THROWS_AS(answer_from_text(answer_text(wide), m), Error);
  CHECK_THROWS_AS(answer_from_text(answer_text(wide), x), Error);
  {
    PrecisionScope more(512);
    const Mpfr fine(Rational(1, 3));
    const std::string t = answer_text(fine);
    PrecisionScope fewer(64);
    Mpfr coarse;
    CHECK_THROWS_AS(answer_from_text(t, coarse), Error);
  }
  for (const std::string s : {"1  1/1  0", "2  1 0", "2  1 2/1  -1", "1  2/1  2", "abc", "1  1/"}) {
    QTau q;
    CHECK_THROWS_AS(answer_from_text(s, q), Error);
  }
  try {
    QTau q;
    answer_from_text("1  1/1  0", q);
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::input);
  }
}

TEST_CASE("journals are read by lines: a line at the bound is read, one past it refused, an unfinished last line left out") {
  // (each test runs in a fresh temporary directory)
  {
    std::ofstream out("j.txt", std::ios::binary);
    out << std::string(16, 'a') << "\n" << "b\n" << "unfinished";
  }
  long bytes = 0;
  const std::vector<std::string> lines = read_complete_lines("j.txt", "journal", 16, &bytes);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == std::string(16, 'a'));
  CHECK(lines[1] == "b");
  CHECK(bytes == 19);
  CHECK_THROWS_AS(read_complete_lines("j.txt", "journal", 15), Error);
  CHECK_THROWS_AS(read_complete_lines("missing.txt", "journal", 15), Error);
  CHECK_THROWS_AS(read_complete_lines(".", "journal", 15), Error);
}

TEST_CASE("fit lines: a stored fit is served again for its key only, with any bytes, from 2 threads") {
  CheckpointSpec spec;
  spec.path = "fits.ck";
  spec.fingerprint = "test run";
  std::remove(spec.path.c_str());
  Rng rng(7);
  std::vector<std::string> keys, images;
  for (int i = 0; i < 40; ++i) {
    std::string k, v;
    const int nk = 1 + static_cast<int>(rng.uniform_int(0, 63)), nv = static_cast<int>(rng.uniform_int(0, 299));
    for (int j = 0; j < nk; ++j) k.push_back(static_cast<char>(rng.uniform_int(0, 255)));
    for (int j = 0; j < nv; ++j) v.push_back(static_cast<char>(rng.uniform_int(0, 255)));  // tabs, newlines and zero bytes too
    keys.push_back(k + std::to_string(i));                                          // distinct keys
    images.push_back(v);
  }
  {
    CheckpointJournal j(spec, "ball");
    CHECK(j.find_fit(keys[0]) == nullptr);
    // the learner stores fits from its threads
    std::thread other([&] {
      for (size_t i = 1; i < keys.size(); i += 2) j.put_fit(keys[i], images[i]);
    });
    for (size_t i = 0; i < keys.size(); i += 2) j.put_fit(keys[i], images[i]);
    other.join();
    CHECK(j.find_fit(keys[0]) == nullptr);  // a run serves only the fits it read
  }
  spec.resume = true;
  CheckpointJournal j(spec, "ball");
  CHECK(j.replayable() == 0);
  for (size_t i = 0; i < keys.size(); ++i) {
    const std::string* got = j.find_fit(keys[i]);
    REQUIRE(got != nullptr);
    CHECK(*got == images[i]);
  }
  CHECK(j.fits_served() == static_cast<long>(keys.size()));
  CHECK(j.find_fit(keys[0] + "x") == nullptr);
  CHECK(j.find_fit(std::string()) == nullptr);
  CHECK(j.fits_served() == static_cast<long>(keys.size()));
}
