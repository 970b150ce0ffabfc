// Scales q sqrt(m) (include/mhaq/arith/surd.hpp).
#include "mhaq/arith/surd.hpp"

#include <flint/fmpz_factor.h>

#include "mhaq/base/error.hpp"

namespace mhaq {

namespace {
std::string fmpz_text(const fmpz_t z) {
  char* s = fmpz_get_str(nullptr, 10, z);
  std::string out(s);
  flint_free(s);
  return out;
}

// "text" without spaces
std::string squeeze(const std::string& t) {
  std::string s;
  for (char c : t)
    if (c != ' ') s.push_back(c);
  return s;
}
}  // namespace

std::string Surd::str() const {
  if (m == 1) return q.str();
  std::string out = q.sign() < 0 ? "-" : "";
  fmpz_t p;
  fmpz_init(p);
  fmpz_abs(p, fmpq_numref(q.raw()));
  if (!fmpz_is_one(p)) out += fmpz_text(p) + "*";
  out += "sqrt(" + std::to_string(m) + ")";
  if (!fmpz_is_one(fmpq_denref(q.raw()))) out += "/" + fmpz_text(fmpq_denref(q.raw()));
  fmpz_clear(p);
  return out;
}

Surd surd_of(const Rational& q, const Rational& x, const std::string& where) {
  if (x.sign() <= 0) throw_input(where + ": the square root of " + x.str() + ", which is not positive");
  // sqrt(n/d) = sqrt(n d) / d; n d = s^2 m with m squarefree
  fmpz_t nd, s, m;
  fmpz_init(nd);
  fmpz_init_set_ui(s, 1);
  fmpz_init_set_ui(m, 1);
  fmpz_mul(nd, fmpq_numref(x.raw()), fmpq_denref(x.raw()));
  if (fmpz_bits(nd) > 256) {
    fmpz_clear(nd), fmpz_clear(s), fmpz_clear(m);
    throw_input(where + ": the square root of " + x.str() + " has too large a numerator and denominator (at most 256 bits in their product)");
  }
  // Small primes by trial division (p < 2^16), then the cofactor c: a
  // perfect square, or factored when it fits in 62 bits (fast there). A
  // larger non-square c is refused: factoring it could take very long.
  bool factored = true;
  {
    fmpz_t pw, pz;
    fmpz_init(pw);
    fmpz_init(pz);
    for (ulong p = 2; p < (1UL << 16) && !fmpz_is_one(nd); ++p) {  // composite p divide nothing left
      fmpz_set_ui(pz, p);
      const slong e = fmpz_remove(nd, nd, pz);
      if (e == 0) continue;
      fmpz_pow_ui(pw, pz, static_cast<ulong>(e / 2));
      fmpz_mul(s, s, pw);
      if (e % 2) fmpz_mul_ui(m, m, p);
    }
    if (fmpz_is_square(nd)) {
      fmpz_sqrt(pw, nd);
      fmpz_mul(s, s, pw);
    } else if (fmpz_bits(nd) <= 62) {
      fmpz_factor_t f;
      fmpz_factor_init(f);
      fmpz_factor(f, nd);
      for (slong i = 0; i < f->num; ++i) {
        fmpz_pow_ui(pw, f->p + i, f->exp[i] / 2);
        fmpz_mul(s, s, pw);
        if (f->exp[i] % 2) fmpz_mul(m, m, f->p + i);
      }
      fmpz_factor_clear(f);
    } else {
      factored = false;
    }
    fmpz_clear(pw);
    fmpz_clear(pz);
  }
  const bool fits = factored && fmpz_bits(m) <= 62;
  Surd out;
  if (fits) {
    out.m = fmpz_get_si(m);
    Rational k;  // q s / d
    fmpq_set_fmpz_frac(k.raw(), s, fmpq_denref(x.raw()));
    out.q = q * k;
  }
  fmpz_clear(nd), fmpz_clear(s), fmpz_clear(m);
  if (!fits)
    throw_input(where + ": the square root of " + x.str().substr(0, 200) +
                " leaves an irrational factor sqrt(m) with m beyond 62 bits (mhaq takes out the square factors of primes below 2^16 and of a cofactor of at most 62 bits)");
  return out;
}

Surd parse_surd(const std::string& text, const std::string& where) {
  const std::string t = squeeze(text);
  const std::string form = " (a scale is a rational such as \"1/2\", or \"1/sqrt(8)\", \"sqrt(2)/4\", \"3*sqrt(2)\", ...)";
  auto rational = [&](const std::string& s, const char* what) {
    try {
      return Rational::parse(s, 200);
    } catch (const Error& e) {
      throw_input(where + ": " + what + " \"" + s.substr(0, 80) + "\" is not an exact rational" + form);
    }
  };
  const size_t open = t.find("sqrt(");
  if (open == std::string::npos) return Surd{rational(t, "the scale"), 1};
  const size_t close = t.find(')', open);
  if (close == std::string::npos || t.find("sqrt(", open + 1) != std::string::npos) throw_input(where + ": \"" + t.substr(0, 80) + "\" is not a scale" + form);
  const Rational x = rational(t.substr(open + 5, close - open - 5), "the square root's argument");
  std::string pre = t.substr(0, open), post = t.substr(close + 1);
  // a*sqrt(x), a/sqrt(x), sqrt(x)/b, a*sqrt(x)/b
  bool divide = false;
  Rational a(1), b(1);
  if (pre == "-") {
    a = Rational(-1);
  } else if (!pre.empty()) {
    const char op = pre.back();
    if (op != '*' && op != '/') throw_input(where + ": \"" + t.substr(0, 80) + "\" is not a scale" + form);
    divide = op == '/';
    pre.pop_back();
    a = pre == "-" ? Rational(-1) : rational(pre, "the factor");  // "-*sqrt(x)"
  }
  if (!post.empty()) {
    if (post[0] != '/') throw_input(where + ": \"" + t.substr(0, 80) + "\" is not a scale" + form);
    b = rational(post.substr(1), "the divisor");
    if (b.is_zero()) throw_input(where + ": a scale divided by zero");
  }
  if (x.sign() <= 0) throw_input(where + ": the square root of " + x.str() + ", which is not positive");
  // a / sqrt(x) = a sqrt(1/x)
  Surd s = surd_of(a / b, divide ? Rational(1) / x : x, where);
  if (s.q.is_zero()) throw_input(where + ": the scale is zero");
  return s;
}

}  // namespace mhaq
