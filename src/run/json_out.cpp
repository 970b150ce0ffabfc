#include "mhaq/run/json_out.hpp"

#include "mhaq/arith/qtau_access.hpp"

#include <arf.h>
#include <flint/fmpq.h>
#include <flint/fmpz_poly.h>

#include <cmath>
#include <unordered_map>

#include "mhaq/base/error.hpp"
#include "mhaq/base/limits.hpp"

namespace mhaq {

namespace {
const char* kind_str(PairKind k) { return k == PairKind::base ? "base" : k == PairKind::within ? "within" : "across"; }

// Writers produce only what the readers accept back (limits.hpp): a
// polynomial of degree at most max_tau_exponent, numbers of at most
// max_number_chars characters.
ojson poly_json(const fmpz_poly_struct* p) {
  if (fmpz_poly_length(p) > limits::max_tau_exponent + 1)
    throw_input("a value in Q(tau) of degree " + std::to_string(fmpz_poly_degree(p)) + " is beyond the tau-degree limit of " +
                std::to_string(limits::max_tau_exponent) + " that files may hold");
  ojson a = ojson::array();
  fmpz_t c;
  fmpz_init(c);
  for (long i = 0; i < fmpz_poly_length(p); ++i) {
    fmpz_poly_get_coeff_fmpz(c, p, i);
    if (fmpz_sizeinbase(c, 10) > static_cast<size_t>(limits::max_number_chars) - 1) {
      fmpz_clear(c);
      throw_input("a coefficient of a value in Q(tau) has more than the " + std::to_string(limits::max_number_chars) + " characters that files may hold");
    }
    a.push_back(fmpz_str(c));
  }
  fmpz_clear(c);
  return a;
}

Rational arf_rational(const arf_t x) {
  if (!arf_is_finite(x)) throw_internal("binary value is not finite");
  Rational q;
  if (arf_is_zero(x)) return q;
  fmpz_t m, e;
  fmpz_init(m);
  fmpz_init(e);
  arf_get_fmpz_2exp(m, e, x);  // x = m 2^e exactly, m odd
  // p/q must fit in max_number_chars characters (what the readers accept):
  // about (bits(m) + |e|) * log10(2) digits; refused before it is built.
  const bool small_e = fmpz_fits_si(e);
  const long ek = small_e ? fmpz_get_si(e) : 0;
  const double digits = small_e ? 0.30103 * (static_cast<double>(fmpz_bits(m)) + std::abs(static_cast<double>(ek))) + 4 : 1e300;
  if (digits > static_cast<double>(limits::max_number_chars)) {
    fmpz_clear(m);
    fmpz_clear(e);
    throw_input("a value of the run (about 2^" + (small_e ? std::to_string(ek) : std::string("huge")) +
                ") is too small or too large to record exactly in a file (more than " + std::to_string(limits::max_number_chars) + " characters)");
  }
  fmpz_set(fmpq_numref(q.raw()), m);  // m odd: m / 2^-e is already in lowest terms
  const long k = fmpz_get_si(e);
  if (k >= 0) fmpq_mul_2exp(q.raw(), q.raw(), static_cast<ulong>(k));
  else fmpq_div_2exp(q.raw(), q.raw(), static_cast<ulong>(-k));
  fmpz_clear(m);
  fmpz_clear(e);
  return q;
}
}  // namespace

std::string fmpz_str(const fmpz_t x) {
  char* s = fmpz_get_str(nullptr, 10, x);
  std::string out(s);
  flint_free(s);
  return out;
}

ojson qvec_json(const QVec& v) {
  ojson a = ojson::array();
  for (const auto& x : v) a.push_back(x.str());
  return a;
}
ojson qmat_json(const QMat& m) {
  ojson a = ojson::array();
  for (int i = 0; i < m.rows(); ++i) a.push_back(qvec_json(m.row(i)));
  return a;
}
ojson qtau_json(const QTau& x) {
  QTau c = x;
  fmpz_poly_q_canonicalise(QTauAccess::raw(c));
  return ojson{{"num", poly_json(QTauAccess::raw(c)->num)}, {"den", poly_json(QTauAccess::raw(c)->den)}};
}
ojson query_json(std::size_t index, const Query& q) {
  ojson runs = ojson::array();
  for (const auto& r : q) runs.push_back(ojson{{"token", qvec_json(r.token)}, {"count", r.count}});
  return ojson{{"index", index}, {"length", query_length(q)}, {"runs", runs}};
}
ojson model_json(const Model& m) {
  ojson heads = ojson::array();
  for (const auto& h : m.heads) {
    heads.push_back(ojson{{"W", qmat_json(h.W)}, {"v", qvec_json(h.v)}});
    if (!h.c.empty()) heads.back()["c"] = qvec_json(h.c);
  }
  ojson out{{"format", "mhaq-model"}, {"version", 1}, {"d", m.d}, {"heads", heads}};
  if (!m.beta.is_zero()) out["beta"] = m.beta.str();
  if (m.root != 1) out["scale"] = Surd{Rational(1), m.root}.str();  // every score times sqrt(root)
  return out;
}
ojson plan_json(const Plan& plan, int redraws) {
  return ojson{{"schedule", schedule_name(plan.schedule)}, {"d", plan.d}, {"H", plan.H}, {"redraws", redraws},
               {"B", qmat_json(plan.B)},                  {"Delta", qmat_json(plan.Delta)}};
}
ojson pair_spec_json(const Plan& plan, std::size_t p) {
  const PairSpec& s = plan.pairs[p];
  const long first = plan.query_index(static_cast<long>(p), 1), last = plan.query_index(static_cast<long>(p), s.samples - 1);
  return ojson{{"index", p},
               {"kind", kind_str(s.kind)},
               {"i", s.i},
               {"j", s.j},
               {"offset", qvec_json(s.offset)},
               {"final_token", qvec_json(s.final_token)},
               {"queries", ojson::array({first, last})}};
}

std::string dyadic_str(const arf_t x) { return arf_rational(x).str(); }

ojson binary_json(const Ball& x) {
  if (!arb_is_finite(x.raw())) throw_internal("binary_json: ball is not finite");
  arf_t r;
  arf_init(r);
  arf_set_mag(r, arb_radref(x.raw()));  // exact: a mag is a dyadic number
  ojson out{{"mid", dyadic_str(arb_midref(x.raw()))}, {"rad", dyadic_str(r)}};
  arf_clear(r);
  return out;
}
Rational binary_rational(const Mpfr& x) {
  arf_t a;
  arf_init(a);
  arf_set_mpfr(a, x.raw());
  Rational q = arf_rational(a);
  arf_clear(a);
  return q;
}
Rational binary_rational(double x) {
  arf_t a;
  arf_init(a);
  arf_set_d(a, x);
  Rational q = arf_rational(a);
  arf_clear(a);
  return q;
}
ojson binary_json(const Mpfr& x) { return binary_rational(x).str(); }
ojson binary_json(double x) { return binary_rational(x).str(); }

namespace {
// Characters of j.dump(), computed bottom-up once per node (dumping every
// subtree to measure it made the layout quadratic in the depth).
size_t compact_size(const ojson& j, std::unordered_map<const ojson*, size_t>& memo) {
  auto it = memo.find(&j);
  if (it != memo.end()) return it->second;
  size_t n;
  if (!j.is_structured()) {
    n = j.dump().size();
  } else {
    n = 2 + (j.empty() ? 0 : j.size() - 1);  // brackets and commas
    for (auto e = j.begin(); e != j.end(); ++e) {
      if (j.is_object()) n += ojson(e.key()).dump().size() + 1;  // "key":
      n += compact_size(e.value(), memo);
    }
  }
  memo.emplace(&j, n);
  return n;
}

void layout(const ojson& j, int indent, std::string& out, std::unordered_map<const ojson*, size_t>& memo) {
  bool scalars = j.is_array();
  if (scalars)
    for (const auto& e : j) scalars = scalars && !e.is_structured();
  if (!j.is_structured() || scalars || j.empty() || compact_size(j, memo) <= 100) {
    out += j.dump();
    return;
  }
  const std::string pad(static_cast<size_t>(indent + 1), ' ');
  out += j.is_object() ? "{\n" : "[\n";
  bool first = true;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!first) out += ",\n";
    first = false;
    out += pad;
    if (j.is_object()) {
      out.append(ojson(it.key()).dump());
      out.append(": ");
    }
    layout(it.value(), indent + 1, out, memo);
  }
  out.push_back('\n');
  out.append(static_cast<size_t>(indent), ' ');
  out.push_back(j.is_object() ? '}' : ']');
}
}  // namespace

std::string dump_layout(const ojson& doc) {
  std::string out;
  std::unordered_map<const ojson*, size_t> memo;
  layout(doc, 0, out, memo);
  return out + "\n";
}

}  // namespace mhaq
