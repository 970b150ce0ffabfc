// Deterministic JSON output shared by golden files and certificates: exact
// rationals as strings, Q(tau) elements as coefficient lists, queries as runs,
// binary floats and balls as exact dyadic rationals, and one fixed layout, so
// the same inputs always give the same bytes.
#pragma once
#include <flint/fmpz.h>

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

#include "mhaq/model/model.hpp"
#include "mhaq/arith/numbers.hpp"
#include "mhaq/stages/1-oracle/oracle.hpp"
#include "mhaq/arith/rational.hpp"
#include "mhaq/stages/2-schedule/schedule.hpp"

namespace mhaq {

using ojson = nlohmann::ordered_json;

std::string fmpz_str(const fmpz_t x);
ojson qvec_json(const QVec& v);
ojson qmat_json(const QMat& m);
// {"num": [...], "den": [...]}: coefficients (constant term first) of the
// canonical fmpz_poly_q form, as decimal strings.
ojson qtau_json(const QTau& x);
ojson query_json(std::size_t index, const Query& q);
ojson model_json(const Model& m);
ojson plan_json(const Plan& plan, int redraws);
// index, kind, i, j, offset, final_token and the pair's query range [first, last].
ojson pair_spec_json(const Plan& plan, std::size_t p);  // pair p of the plan, with its query index range

// Binary values written exactly: the dyadic rational "p/q" (q a power of two)
// that the float or ball endpoint stores. A ball is {"mid": ..., "rad": ...}.
std::string dyadic_str(const arf_t x);
ojson binary_json(const Ball& x);
ojson binary_json(const Mpfr& x);
ojson binary_json(double x);
// The exact rational value of a binary float (reading back binary_json).
Rational binary_rational(const Mpfr& x);
Rational binary_rational(double x);

// Layout: each scalar-only array, and each value whose compact form fits in
// 100 characters, on one line; anything else one member per line.
std::string dump_layout(const ojson& doc);

}  // namespace mhaq
