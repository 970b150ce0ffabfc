#include "mhaq/stages/2-schedule/design.hpp"

#include "mhaq/base/error.hpp"

namespace mhaq {

const char* design_name(Design d) {
  return d == Design::paper ? "paper" : d == Design::scaled ? "scaled" : d == Design::tuned ? "tuned" : "placed";
}
Design parse_design(const std::string& s) {
  if (s == "paper") return Design::paper;
  if (s == "scaled") return Design::scaled;
  if (s == "tuned") return Design::tuned;
  if (s == "placed") return Design::placed;
  throw Error(ErrorKind::usage, "unknown design \"" + s + "\" (expected paper, scaled, tuned or placed)");
}

Rational design_offset_scale(int H) {
  if (H < 1) throw Error(ErrorKind::usage, "design: H must be at least 1");
  if (H == 1) return Rational(2);
  if (H <= 5) return Rational(5, 2);
  return Rational(3);
}

QMat orthogonal_on_grid(Rng& rng, int d, const Rational& norm, long den) {
  if (d < 1 || den < 1) throw Error(ErrorKind::usage, "design: d and the token denominator must be positive");
  const long R = 1L << 20;
  QMat IS(d, d), IpS(d, d);  // I - S, I + S
  for (int i = 0; i < d; ++i) {
    IS(i, i) = IpS(i, i) = Rational(1);
    for (int j = i + 1; j < d; ++j) {
      const Rational s(rng.uniform_int(-R, R), static_cast<unsigned long>(R));
      IS(i, j) = -s;
      IS(j, i) = s;
      IpS(i, j) = s;
      IpS(j, i) = -s;
    }
  }
  QMat inv;
  if (!inverse(IpS, inv)) throw_internal("design: I + S singular for a skew S");  // impossible: its eigenvalues are 1 + i t
  QMat M(d, d);
  const Rational scale = norm * Rational(den), half(1, 2);
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j) {
      Rational q(0);
      for (int t = 0; t < d; ++t) q += IS(i, t) * inv(t, j);
      M(i, j) = (q * scale + half).floor() / Rational(den);
    }
  return M;
}

Draws draw_scaled(Rng& rng, int d, int H, const TokenSpec& tokens) {
  if (tokens.range < 1 || tokens.den < 1) throw Error(ErrorKind::usage, "token range and denominator must be positive");
  // sqrt(d/3) range/den, to 20 bits: floor(sqrt(d 2^40 / 3)) / 2^20
  const Rational root = (Rational(static_cast<long>(d)) * Rational(1L << 40) / Rational(3)).isqrt_floor() / Rational(1L << 20);
  const Rational nb = root * Rational(tokens.range) / Rational(tokens.den);
  const Rational nd = nb * design_offset_scale(H);
  Draws out;
  for (int attempt = 0;; ++attempt) {
    if (attempt == 64) throw_degenerate("64 consecutive singular draws of B/Delta (the token grid is too coarse for the scaled design)");
    out.B = orthogonal_on_grid(rng, d, nb, tokens.den);
    out.Delta = orthogonal_on_grid(rng, d, nd, tokens.den);
    if (!det(out.B).is_zero() && !det(out.Delta).is_zero()) break;
    ++out.redraws;
  }
  return out;
}

}  // namespace mhaq
