// Internals of the placed design (analysis/placed_design.hpp), shared by
// its three files: the weighted pair fit on the grid (placed_fit.cpp), the
// pilots (placed_pilot.cpp) and the placement with its rounds
// (placed_design.cpp). Small dense double algebra is for the design's own
// choices (offsets, first-order error bounds); learned values are MPFR.
#pragma once
#include <arb.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "mhaq/analysis/placed_design.hpp"
#include "mhaq/arith/all_fields.hpp"
#include "mhaq/base/random.hpp"
#include "mhaq/stages/2-schedule/design.hpp"

namespace mhaq::placed_detail {

using DMat = std::vector<std::vector<double>>;

// A fit that leaves a residual above this many stated answer errors does not
// fit; residues of one head that differ by more than this many of their
// first-order errors across final tokens are not one head's.
constexpr double kResidualLimit = 8;

// The inverse of a square double matrix, empty when singular.
DMat dinverse(const DMat& A);
Mpfr md(double x);
double uniform(Rng& rng);  // uniform on [-1, 1], 20 bits
// |A| |A^{-1}| in the max-row-sum norm, log2 (+inf when singular).
double log2_cond(const DMat& A);
// The Euclidean norm of a rational vector, to 20 bits.
Rational norm_of(const QVec& x);
QVec on_grid(const std::vector<double>& x, long den);
std::vector<double> to_doubles(const QVec& q);
// Whether every entry of b + delta lies within max_entry (none: always).
bool within_entry(const QVec& b, const QVec& delta, const std::optional<Rational>& max_entry);
// delta when b + delta lies within max_entry; else 2^-k delta, each entry
// rounded toward zero on the grid 1/den, for the least k >= 1 whose token
// lies within it (b itself must: then a small enough k fits, since b + x
// lies within it for every x between 0 and a fitting offset). k into
// *k_out when given; Error(unable) when the offset would vanish first.
QVec offset_within(const QVec& b, const QVec& delta, const std::optional<Rational>& max_entry, long den, int* k_out = nullptr);

// An estimate of the heads (W[h][r][c], v[h], and with biases c[h]).
struct Estimate {
  int d = 0;
  std::vector<DMat> W;
  std::vector<std::vector<double>> v;
  std::vector<std::vector<double>> c;  // empty without biases
};
// W_h b + c_h (c_h only with biases): the vector whose product with an
// offset is the pole's log r at the final token b.
std::vector<double> column_of(const Estimate& est, int h, const std::vector<double>& b);
// The matrix of the final tokens' solve: B itself (d x d), or with biases
// A = [B; 1 ... 1] ((d + 1) x (d + 1)) for B's d + 1 columns; its inverse in
// doubles (empty when singular) and in MPFR (once per run: B is drawn once).
QMat finals_matrix(const QMat& B);
DMat finals_inverse(const QMat& B);
Mat<Mpfr> finals_inverse(const Field<Mpfr>& F, const QMat& B);
Estimate estimate_of(const std::vector<LearnedHead<Mpfr>>& heads, int d);

// One pair's weighted least-squares fit of f(k) = P + sum_h c_h / (1 + exp(l_h)
// k) (Levenberg-Marquardt from the placed log r), in MPFR. Weights: 1 / (|f(k)|
// 2^-p + abs), so a residual of 1 is one stated answer error (relative part
// 2^-p, absolute part abs).
struct GridFit {
  Mpfr P;
  std::vector<Mpfr> c, l;
  double max_resid = 0;  // largest weighted residual
  double cost = 0;       // sum of squared weighted residuals
  std::vector<double> err_c,
      err_l;  // first-order worst-case error from the stated answer errors
  // l's typical error: its first-order sensitivities' root-sum-square times
  // the residuals' root-mean-square per degree of freedom (both in stated
  // errors), a statistic of how well this fit's answers agree, not a bound
  std::vector<double> typ_l;
  double log2_cond = 0;
};
// pole q's typical error (0 when the fit has none)
inline double typical_l(const GridFit& g, int q) { return q >= 0 && q < static_cast<int>(g.typ_l.size()) ? g.typ_l[q] : 0.0; }
GridFit fit_on_grid(const Field<Mpfr>& F, const std::vector<Mpfr>& K, const std::vector<Mpfr>& f, const std::vector<double>& l0, long p, double abs);
// A pair's fit with no placed start (the pilot's pairs): the rational
// interpolant through 2H+1 of the values spread over the grid (its poles, if
// real), and ladders of H poles evenly spread over log r in [-10, 10] at a few
// shifts, each refined; the fit with the smallest weighted cost is kept.
GridFit fit_free(const Field<Mpfr>& F, const std::vector<Mpfr>& K, const std::vector<Mpfr>& f, int H, long p, double abs);
// One fitted pair (delta, b_j) in doubles: its poles and residues with their
// first-order errors. The pilot's pairs and every round's go into one pool.
struct PairObs {
  std::vector<double> delta;
  int j = 0;
  double resid = 0;
  std::vector<double> c, ec, l, el;
};
PairObs observe(const std::vector<double>& delta, int j, const GridFit& g);
// Least squares for x in A x = y (rows of A), dropping the worst-fitting
// equations one by one while some residual exceeds ten times the median and
// more than d + 2 equations remain.
std::vector<double> trimmed_least_squares(const DMat& A, const std::vector<double>& y);
// The grid's ratios k/m as MPFR numbers.
std::vector<Mpfr> ratios(const std::vector<Counts>& grid);

// Answers as MPFR numbers (a ball's midpoint; the field's own number
// otherwise).
template <class T>
class Asker {
 public:
  explicit Asker(Oracle<T>& o, const AnswerErrors* errors = nullptr, std::optional<Rational> max_entry = std::nullopt)
      : o_(o), errors_(errors), max_entry_(std::move(max_entry)) {}
  Mpfr operator()(const Query& q) { return midpoint(ball(q)); }
  // the answer as the oracle states it: a ball's midpoint and radius, a
  // float's value with its stated error (the answer just given is the
  // source's last) as the radius
  Ball ball(const Query& q) {
    // the design keeps every token within the oracle's max_entry: a query
    // beyond it is a defect of the design, never sent
    if (max_entry_)
      for (const Run& run : q)
        if (*max_entry_ < max_abs(run.token)) throw_internal("placed design: a query's token passes the oracle's max_entry " + max_entry_->str());
    Ball b = o_.field().enclose(o_.query(q));
    if (errors_) arb_add_error_mag(b.raw(), errors_->answer_error(o_.queries() - 1).v);
    return b;
  }
  static Mpfr midpoint(const Ball& b) {
    Mpfr m;
    arf_get_mpfr(m.raw(), arb_midref(b.raw()), MPFR_RNDN);
    return m;
  }
  // the pair (a, b) on the grid, f(0) given; the answers as balls into `balls` when given
  std::vector<Mpfr> pair(const QVec& a, const QVec& b, const std::vector<Counts>& grid, const Mpfr& f0, std::vector<Ball>* balls = nullptr) {
    std::vector<Mpfr> f{f0};
    for (size_t t = 1; t < grid.size(); ++t) {
      const Ball y = ball(Query{Run{a, grid[t].k}, Run{b, grid[t].m}});
      if (balls) balls->push_back(y);
      f.push_back(midpoint(y));
    }
    return f;
  }

 private:
  Oracle<T>& o_;
  const AnswerErrors* errors_;
  std::optional<Rational> max_entry_;
};

// The best permutation sigma of H items (H <= 8: at most 40320) for a cost
// cost(sigma) (smaller is better).
template <class Cost>
std::vector<int> best_permutation(int H, Cost&& cost) {
  std::vector<int> s(H), best;
  std::iota(s.begin(), s.end(), 0);
  double bc = INFINITY;
  do {
    const double c = cost(s);
    if (c < bc) {
      bc = c;
      best = s;
    }
  } while (std::next_permutation(s.begin(), s.end()));
  if (best.empty()) std::iota(s.begin(), s.end(), 0),
                    best = s;  // every cost NaN: any order (the checks decide)
  return best;
}

// A new estimate from every pair fitted so far (placed_reestimate.cpp), for
// the next round's placement when a round's labels do not hold together:
// v_h by consensus of the pairs' residues, then W_h b_j per final token from
// the pairs of b_j labelled by residue; `window` bounds the poles used.
Estimate reestimate(const std::vector<PairObs>& pool, const Estimate& est, const Draws& dr, int H, double window, std::uint64_t seed);
// The re-estimate's pieces on the pooled pairs (placed_residue_heads.cpp):
// the residue -delta^T v a pair predicts for readout v, and the tolerance
// (8 stated errors) within which one of its fitted residues agrees.
double residue_prediction(const std::vector<double>& v, const PairObs& o);
double residue_tolerance(const PairObs& o, int q);
// W_h b_j for one head and final token j, from the pairs of b_j whose residue
// matches v's prediction (trimmed least squares with d + 2 of them or more,
// else the old column x0 moved least to meet them).
std::vector<double> column_from_pairs(const std::vector<const PairObs*>& pairs, const std::vector<double>& v, const std::vector<double>& x0, int j, int H,
                                      double window);
// The pairs with distinct offsets, the first of each.
std::vector<const PairObs*> distinct_offsets(std::vector<const PairObs*> pairs);

// [W_h (c_h)] = Wb Binv, the columns W_h b_j (+ c_h) times B^{-1} (A^{-1} with
// biases), into W (d x d, sized) and c_out (sized d with biases, else empty),
// with eWb the columns' first-order errors; returns the relative first-order
// error of [W_h c_h] in max_rel_error's metric.
double head_from_columns(const Mat<Mpfr>& Wb, const DMat& eWb, const Mat<Mpfr>& Binv, Mat<Mpfr>& W, std::vector<Mpfr>& c_out);

// The final columns refined by earlier rounds' pairs (placed_combine.cpp).
// A pair an earlier round asked at final token j, replaced by a later round's.
struct KeptPair {
  int j = 0;
  QVec delta;
  GridFit fit;
};
// One head of the last round's solve: its columns [W_h b_j (+ c_h)]_j, their
// first-order errors, v_h's (entrywise) and v_h's share of the estimate.
struct HeadParts {
  Mat<Mpfr> Wb;
  DMat eWb;
  std::vector<double> ev;
  double v_rel = 0;
};
// Every kept pair that placed_match_pair labels by the last round's heads
// joins the rows last[h][j] (the last round's d pairs of b_j) in
// placed_column_lsq; heads' W (and c) and the estimate are solved again from
// the columns that gained rows (Binv: finals_inverse). Returns the pairs combined (0: out unchanged).
int combine_columns(const Mat<Mpfr>& Binv, const std::vector<std::vector<std::vector<PlacedColumnRow>>>& last, const std::vector<KeptPair>& kept,
                    const std::vector<HeadParts>& parts, PlacedResult& out);

// The pilots (placed_pilot.cpp): an estimate of the heads, or none (status says why).
// The grid pilot scales its offsets (on the token grid 1/den) by a power of 2
// that its first pairs choose, so that poles neither crowd nor leave the
// window whatever the size of W, and appends its fitted pairs to `pool`.
template <class T>
Estimate grid_pilot(Asker<T>& ask, const Field<Mpfr>& F, const Draws& dr, const QMat& extra, const std::vector<Counts>& grid, int H, long p, double abs,
                    long den, const std::optional<Rational>& max_entry, std::string& status, std::vector<PairObs>& pool);
// Whether the paper pilot's tokens (the learner's paper schedule, known
// ahead) lie within opt.max_entry.
bool paper_pilot_within(int d, const PlacedOptions& opt);
template <class T>
Estimate paper_pilot(Oracle<T>& oracle, const PlacedOptions& opt, std::string& status);

// The links at the first final token b1 (placed_links.cpp): for i = 2..d one
// pair at the offset u D1[0] + w D1[i] (exact, (u, w) from a small set of
// rationals, chosen so that the poles u l1[h][0] + w l1[h][i] predicted from
// b1's labelled log r `l1` (and residues from `c1`) stay within [-window,
// window] and apart), asked on `grid` (f(0) = f0b, b1's answer) and fitted
// from the predicted poles; j = 0 and i = its second offset.
template <class T>
std::vector<PlacedPair> ask_links(Asker<T>& answer, const Field<Mpfr>& F, const QVec& b1, const std::vector<QVec>& D1, const std::vector<std::vector<double>>& l1,
                                  const std::vector<std::vector<double>>& c1, const std::vector<Counts>& grid, const Ball& f0b, const PlacedOptions& opt, double window);

}  // namespace mhaq::placed_detail
