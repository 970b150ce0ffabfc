// One run across MPI ranks, the parts a single process can test: the exact
// byte images the ranks exchange, the cost model's term for P ranks, and the
// progress lines' estimates. tests/mpi_check.sh runs recover under mpirun.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "mhaq/arith/qtau_access.hpp"
#include "mhaq/arith/value_bytes.hpp"
#include "mhaq/base/distribute.hpp"
#include "mhaq/base/precision.hpp"
#include "mhaq/base/progress.hpp"
#include "mhaq/run/cost_model.hpp"

using namespace mhaq;

namespace {
template <class T>
T round_trip(const T& x) {
  std::string b;
  ValueBytes<T>::write(b, x);
  ByteReader in(b);
  T y;
  ValueBytes<T>::read(in, y);
  CHECK(in.done());
  return y;
}
}  // namespace

TEST_CASE("value bytes: every number type comes back bit for bit, precision included") {
  PrecisionScope scope(300);
  const Rational third(1, 3);
  const Ball b = Ball(third) * Ball(Rational(7, 5));
  const Ball b2 = round_trip(b);
  CHECK(arb_equal(b.raw(), b2.raw()));
  CHECK(arb_rel_accuracy_bits(b2.raw()) > 250);
  Mpfr m(1);
  mpfr_div_ui(m.raw(), m.raw(), 3, MPFR_RNDN);
  const Mpfr m2 = round_trip(m);
  CHECK(mpfr_get_prec(m2.raw()) == 300);
  CHECK(mpfr_equal_p(m.raw(), m2.raw()) != 0);
  Mpfr nan;
  mpfr_set_nan(nan.raw());
  CHECK(mpfr_nan_p(round_trip(nan).raw()) != 0);
  Mpfr neg_inf;
  mpfr_set_inf(neg_inf.raw(), -1);
  CHECK(mpfr_inf_p(round_trip(neg_inf).raw()) != 0);
  CHECK(mpfr_sgn(round_trip(neg_inf).raw()) < 0);
  for (double x : {0.1, -0.0, 1e-300, std::numeric_limits<double>::infinity()}) {
    const double y = round_trip(x);
    CHECK(std::memcmp(&x, &y, sizeof x) == 0);
  }
  const QTau q = QTauAccess::tau_pow(-3) + QTau(third);
  CHECK(QTauAccess::equal(round_trip(q), q));
  flint::Mag g;
  mag_set_ui_2exp_si(g.v, 12345, -400);
  std::string bytes;
  write_value(bytes, g);
  ByteReader in(bytes);
  flint::Mag g2;
  read_value(in, g2);
  CHECK(mag_equal(g.v, g2.v));
  // a vector, and a short image refused
  std::vector<Ball> v{b, Ball(Rational(2))}, w;
  std::string vb;
  write_values(vb, v);
  ByteReader vr(vb);
  read_values(vr, w);
  REQUIRE(w.size() == 2);
  CHECK(arb_equal(w[1].raw(), v[1].raw()));
  const std::string short_image = vb.substr(0, vb.size() - 3);
  ByteReader cut(short_image);
  CHECK_THROWS_AS(read_values(cut, w), Error);
}

TEST_CASE("one process is one rank: no run is shared out, and map_across_ranks is an ordered map") {
  const RunAcrossRanks across;
  CHECK_FALSE(run_across_ranks());
  const std::vector<std::string> r = map_across_ranks(5, 2, [](std::size_t i) { return std::string(i, 'x'); });
  REQUIRE(r.size() == 5);
  for (std::size_t i = 0; i < 5; ++i) CHECK(r[i] == std::string(i, 'x'));
}

TEST_CASE("gather_across_ranks: every item written once, read back in index order from its piece") {
  const RunAcrossRanks across;
  for (std::size_t piece : {1, 3, 10, 64}) {
    CAPTURE(piece);
    std::vector<int> written(10, 0);
    std::vector<std::string> got(10);
    std::vector<std::size_t> order;
    gather_across_ranks(
        10, piece, 2,
        [&](std::size_t i, std::string& b) {
          ++written[i];
          write_text(b, std::string(i, 'y'));
        },
        [&](std::size_t i, ByteReader& in) {
          order.push_back(i);
          got[i] = in.text();
        });
    for (std::size_t i = 0; i < 10; ++i) {
      CHECK(written[i] == 1);
      CHECK(got[i] == std::string(i, 'y'));
    }
    REQUIRE(order.size() == 10);
    for (std::size_t i = 0; i < 10; ++i) CHECK(order[i] == i);
  }
  // a reader that leaves an item's bytes unread is an internal error
  try {
    gather_across_ranks(4, 2, 1, [](std::size_t, std::string& b) { write_text(b, "z"); }, [](std::size_t, ByteReader&) {});
    FAIL("bytes left over were not noticed");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::internal);
  }
}

TEST_CASE("cost model: P ranks divide the shared work, keep the serial part, and add the exchange") {
  CostShape s;
  s.d = 64;
  s.H = 8;
  s.arith = Arith::ball;
  s.bits = 1024;
  const RunCost one = predict_run_cost(s);
  s.ranks = 2;
  const RunCost two = predict_run_cost(s);
  s.ranks = 64;
  const RunCost many = predict_run_cost(s);
  CHECK(one.ranks == 1);
  CHECK(one.gathered_bytes == 0);
  CHECK(two.ranks == 2);
  CHECK(two.queries == one.queries);
  CHECK(two.gathered_bytes > 131057.0 * 2 * 256);  // every answer, at least its 256 hexadecimal digits and the error's
  CHECK(two.seconds < one.seconds);
  CHECK(two.seconds > one.seconds / 2);
  CHECK(many.seconds < two.seconds);
  CHECK(many.seconds > one.seconds * 0.05);  // the part every rank runs
  CHECK(many.exchange_seconds > two.exchange_seconds);
  CHECK(two.peak_bytes > one.peak_bytes);
  CHECK(two.time_note.find("2 MPI ranks") != std::string::npos);
}

TEST_CASE("progress: the phase's time left at its rate so far, and the run's by the cost model") {
  std::ostringstream out;
  Progress p(out, 0.0, 0.0);
  p.expect(1e6);
  p.plan(1000, 10);
  p.phase("answering queries");
  p.answered(100);
  const std::string s = out.str();
  INFO(s);
  CHECK(s.find("queries answered 100 of 1000, pairs fitted 0 of 10, about ") != std::string::npos);
  CHECK(s.find(" left in this phase") != std::string::npos);
  CHECK(s.find(" left in the run by the cost model") != std::string::npos);
  std::ostringstream none;
  Progress q(none, 0.0, 0.0);
  q.plan(1000, 10);
  q.phase("answering queries");  // nothing counted yet: no estimate
  CHECK(none.str().find("left") == std::string::npos);
}
