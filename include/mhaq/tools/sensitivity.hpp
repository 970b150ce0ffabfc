// First-order sensitivity of the recovered parameters to the oracle's answers
// (claim 4, ALGORITHM.md section 9, proofs/11).
//
// Parameters are the canonical heads' entries, in head order: for head h the
// d*d entries of W_h (row-major), then the d entries of v_h. The error of a
// recovery is measured entrywise against a per-head scale:
//
//     err = max over heads h, entries k of |theta'_k - theta_k| / s_k,
//     s_k = ||W_h||_F for entries of W_h,  s_k = ||v_h||_2 for entries of v_h.
//
// J = d theta / d answers at the true answers is composed from the per-pair
// Jacobians of the map samples -> (P, r, c) (implicit function theorem on
// P + sum_h c_h/(1 + r_h k) = f(k)), the chaining of f(0) through the limits
// P, and the exact linear final solves. With it:
//
//   kappa     = max_k sum_j |J_kj| / s_k: err <= kappa * eps + O(eps^2) when
//               every answer is off by at most eps, and the sign pattern
//               sign(J_{k*, j}) of the maximising row attains it to first order;
//   kappa_rel = max_k sum_j |J_kj| |f_j| / s_k: the same per unit *relative*
//               answer error (worst case);
//   kappa_rms = max_k sqrt(sum_j (J_kj f_j)^2) / s_k: per unit relative error
//               when the answer errors are independent (typical of rounding).
//
// Rigor: J is evaluated in Arb balls at increasing precision until every row
// sum is certified to relative accuracy 2^-40; the stored doubles are the
// midpoints (approx_, but accurate to about 12 digits).
#pragma once
#include <cstdint>
#include <vector>

#include "mhaq/stages/learner.hpp"
#include "mhaq/model/model.hpp"
#include "mhaq/arith/numbers.hpp"
#include "mhaq/stages/2-schedule/schedule.hpp"

namespace mhaq {

struct Sensitivity {
  int d = 0, H = 0;
  long columns = 0;  // one per query of the plan, in the order sent
  long bits = 0;     // Arb precision at which the row sums were certified
  std::vector<double> J;           // rows() x columns, row-major
  std::vector<double> scale;       // s_k per row
  std::vector<double> answer_abs;  // |f_j| per column
  double kappa = 0, kappa_rel = 0, kappa_rms = 0;
  long kappa_row = 0;              // the row attaining kappa
  double pair_cond = 0;            // max over base pairs of ||d(P,r,c)/d(samples)||_inf (a pair fit's own amplification)

  int rows() const { return H * (d * d + d); }
  int row_W(int h, int i, int j) const { return h * (d * d + d) + i * d + j; }
  int row_v(int h, int i) const { return h * (d * d + d) + d * d + i; }
  // sign(J[kappa_row][j]) per answer (+1 where the entry is zero): the answer
  // perturbation eps * signs that attains kappa to first order.
  std::vector<signed char> worst_signs() const;
};

// J at the true answers of `canon` (canonical heads, in their order) for the
// queries of `plan` (known H = canon's head count; any schedule, any samples).
// ignore_chaining (for the broken variant of proofs/11's machine check only)
// treats every pair's f(0) as exact, dropping the chaining through the limits.
Sensitivity sensitivity_from_model(const Model& canon, const Plan& plan, bool ignore_chaining = false);

// J at a float learner's own fitted values (no access to the model): the
// estimate a black-box user can compute from one approximate run.
Sensitivity sensitivity_from_fits(const LearnResult<Mpfr>& res);

// log2 of the entrywise error metric above (-inf when zero); heads are
// matched to the truth by least error (each true head to a distinct recovered
// head). approx_ for floats; for balls the midpoints are used. +inf when the
// head counts differ. (log2, because errors at 1024 bits underflow doubles.)
template <class T>
double param_error_log2(const std::vector<LearnedHead<T>>& got, const Model& canon);

// log2 of a certified upper bound of sup |x - theta_k| / s_k over every x in
// the balls, each true head paired with the recovered head whose balls
// contain it. Returns false when some true head is contained in no recovered head.
bool certified_param_error_log2(const std::vector<LearnedHead<Ball>>& got, const Model& canon, double& bound);

// log2 of the certified relative radius: max over entries of rad_k / (lower
// bound of the head's scale computed from the balls themselves). Needs no
// truth: it bounds the relative error of the midpoints, and it is what
// --target-error certifies. +inf when a scale is not certainly positive.
double certified_relative_radius_log2(const std::vector<LearnedHead<Ball>>& got);

}  // namespace mhaq
