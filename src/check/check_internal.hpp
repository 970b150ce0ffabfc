// Checker internals: its own value types and evaluators of f. Nothing here
// includes an mhaq_lib header (tests/check_separation.sh).
#pragma once
#include <arb.h>
#include <flint/fmpq.h>
#include <flint/fmpz.h>
#include <flint/fmpz_poly_q.h>

#include <string>
#include <vector>

namespace mhaq::check {

struct Qn {  // a rational
  fmpq_t v;
  Qn() { fmpq_init(v); }
  explicit Qn(long n) { fmpq_init(v); fmpq_set_si(v, n, 1); }
  Qn(const Qn& o) { fmpq_init(v); fmpq_set(v, o.v); }
  Qn(Qn&& o) noexcept { fmpq_init(v); fmpq_swap(v, o.v); }
  Qn& operator=(const Qn& o) { fmpq_set(v, o.v); return *this; }
  Qn& operator=(Qn&& o) noexcept { fmpq_swap(v, o.v); return *this; }
  ~Qn() { fmpq_clear(v); }
  bool operator==(const Qn& o) const { return fmpq_equal(v, o.v); }
  std::string str() const;
};

struct Ab {  // an Arb ball
  arb_t v;
  Ab() { arb_init(v); }
  Ab(const Ab& o) { arb_init(v); arb_set(v, o.v); }
  Ab(Ab&& o) noexcept { arb_init(v); arb_swap(v, o.v); }
  Ab& operator=(const Ab& o) { arb_set(v, o.v); return *this; }
  Ab& operator=(Ab&& o) noexcept { arb_swap(v, o.v); return *this; }
  ~Ab() { arb_clear(v); }
};

struct Pq {  // an element of Q(tau) as a rational function of tau
  fmpz_poly_q_t v;
  Pq() { fmpz_poly_q_init(v); }
  Pq(const Pq& o) { fmpz_poly_q_init(v); fmpz_poly_q_set(v, o.v); }
  Pq(Pq&& o) noexcept { fmpz_poly_q_init(v); fmpz_poly_q_swap(v, o.v); }
  Pq& operator=(const Pq& o) { fmpz_poly_q_set(v, o.v); return *this; }
  Pq& operator=(Pq&& o) noexcept { fmpz_poly_q_swap(v, o.v); return *this; }
  ~Pq() { fmpz_poly_q_clear(v); }
};

// ---- reading helpers shared by the checker's JSON readers
// s for a message: printable ASCII (other bytes as \xNN), cut after about
// `max` characters with the full length noted.
std::string clean(const std::string& s, size_t max = 80);
std::string quote_str(const std::string& s);  // clean(s) in double quotes
// JSON paths for messages: path.key (key alone at the top level) and path[i].
std::string at(const std::string& path, const std::string& key);
std::string at(const std::string& path, size_t i);

struct Run {
  std::vector<Qn> token;
  long count = 1;
};
using Query = std::vector<Run>;

// Exact parameters; W row-major. c (empty: zero) enters the scores:
// s_i = x_i^T (W x_N + c), the canonical form of a query bias.
struct RatHead {
  std::vector<Qn> W, v, c = {};
};
struct BallHead {
  std::vector<Ab> W, v, c = {};
};

// Heads with equal (W, c) merged (v summed), heads with v = 0 dropped, in
// first-occurrence order (an empty c equals a zero one).
std::vector<RatHead> canonical(const std::vector<RatHead>& heads);
std::vector<BallHead> to_balls(const std::vector<RatHead>& heads, slong prec);
Pq pq_of(const Qn& q);

// f at the last token, exactly in Q(tau), tau = e^{1/L}: scores are exact
// rationals and e^s = tau^(L s). Returns false and sets `why` when a score
// is not a multiple of 1/L or an exponent exceeds 2^20 (then f is not
// computed here; the caller reports it). beta (null: zero) is added.
bool eval_exact(Pq& out, const std::vector<RatHead>& heads, int d, const Query& q, long L, std::string& why, const Qn* beta = nullptr);

// The exact sign of x in Q(tau), tau = e^{1/L}: -1, 0 or 1, certified with
// Arb at doubling precision; 2 when 2^22 bits do not decide it.
int qtau_sign(const Pq& x, long L);

// The correctly rounded decimal, scientific "[-]d.ddd...e[+-]XX" with D
// significant digits (zero "0.000...e+00"): of an exact rational (ties to
// even), and of every point of a ball at `prec` bits ("" when they differ).
std::string decimal_exact(const fmpq_t x, long D);
std::string decimal_ball(const arb_t v, long D, slong prec);

// Encloses f at the last token for ball parameters, working at `prec` bits;
// beta (null: zero) is added, and every score is multiplied by sqrt(root)
// (an irrational scale kept as that factor).
void eval_arb(Ab& out, const std::vector<BallHead>& heads, int d, const Query& q, slong prec, const Ab* beta = nullptr, long root = 1);

}  // namespace mhaq::check
