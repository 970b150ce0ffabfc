// The `placed` design (docs/math/designs.md): an adaptive design for answers
// of low precision (float64 and below). A pilot run of the learner estimates
// the heads; then, for every final token b_j, offsets are chosen so that the
// heads' poles r_h = exp(delta^T W_h b_j) land at chosen, well separated
// places (log r on a fixed ladder), each pair is sampled on a geometric grid
// of copy counts k up to 2^16, and fitted by weighted least squares against
// the answers' stated error. Heads are labelled by their place on the ladder,
// and W_h, v_h follow from the bilinear structure by least squares.
//
// The learner-side rule holds by types: learn_placed gets an Oracle<T>& and
// nothing else. Its numerics are MPFR (the answers' midpoints at the working
// precision), like the tuned design's pilot; it keeps its last round's answers
// as the oracle stated them, which ball mode certifies
// (analysis/placed_certify.hpp).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mhaq/arith/numbers.hpp"
#include "mhaq/base/random.hpp"
#include "mhaq/model/answer_errors.hpp"
#include "mhaq/stages/1-oracle/oracle.hpp"
#include "mhaq/stages/2-schedule/schedule.hpp"
#include "mhaq/stages/5-solve/solve.hpp"

namespace mhaq {

struct PlacedOptions {
  int H = 1;
  std::uint64_t seed = 1;
  TokenSpec tokens;       // the grid of the tokens (den)
  long answer_bits = 53;  // the answers' stated relative accuracy 2^-answer_bits
  double answer_abs = 0;  // and their stated absolute error: |answer - f| <= 2^-answer_bits |answer| + answer_abs
  int grid = 0;           // ratios per pair besides t = 0 (0: min(60, 10 H + 10))
  long k_max = 1L << 16;  // the longest run of copies
  double ladder_top = 8.5,
         ladder_bottom = -8.5;  // log r of the first and last head on the ladder
  double ladder_shift = 1.5;
  int pilot_grid = 20;  // ratios per pilot pair besides t = 0
  int max_rounds = 6;   // placed rounds, each on the previous round's heads (within the budget)
  long budget = 0;      // queries in all, pilot included (0: no limit); a further
                        // round only within it
  // Floats: each answer's stated error, in the order the oracle gave them
  // (the radii of the last round's balls, which the judge certifies; the
  // fits read midpoints only). Null (balls, whose answers hold their own
  // error): the answers as the oracle gave them.
  const AnswerErrors* errors = nullptr;
  // From this d on, the last round adds d - 1 links at the first final token
  // (PlacedResult::links), so that ball mode labels its heads in about H d
  // steps rather than H^(3d/4); below it the runs ask what they asked before.
  int links_from_d = 12;
  // The model may have biases (docs/math/biases.md): log r_h = delta^T (W_h b
  // + c_h) is affine in the final token, so the rounds use d + 1 final tokens
  // that span affinely, [W_h c_h] = [W_h b_j + c_h]_j A^{-1} with A = [B; 1
  // ... 1], and beta = f([b_1]) - v^T b_1.
  bool bias = false;
  // The largest |entry| of a token the oracle's stated accuracy covers (its
  // hello's max_entry; none: no limit). Every query keeps within it: the
  // final tokens must lie within half of it (else Error(usage)), an offset
  // delta whose token b + delta would pass it is asked at 2^-k delta (each
  // entry rounded toward zero on its grid) for the least k that fits, and
  // the fits see that offset; the grid pilot caps its scales so, and the
  // paper pilot is skipped when its tokens pass it.
  std::optional<Rational> max_entry;
};

// One sample of a pair: the query [a x k, b x m] (m >= 1 copies of the final
// token b), whose answer is the pair function at the ratio t = k / m:
// f(t) = P + sum_h c_h / (1 + r_h t) (docs/math/pairs.md, proofs/01 with the
// final token repeated).
struct Counts {
  long k = 0, m = 1;
};

// One pair (offset delta, final token b_j) of the last round, as ball mode
// certifies it (analysis/placed_certify.hpp): the answers on the grid as the
// oracle stated them (f[0] is the answer to [b_j]) and the pair's weighted fit
// (heads in no particular order), the approximation the certification starts from.
struct PlacedPair {
  int i = 0, j = 0;
  QVec delta;
  std::vector<Ball> f;
  Mpfr P;
  std::vector<Mpfr> c, l;  // residues and log r
};

struct PlacedResult {
  std::vector<LearnedHead<Mpfr>> heads;  // with biases each with its c_h
  std::optional<Mpfr> beta;              // with biases: f([b_1]) - v^T b_1
  std::string pilot_status;  // "ok", or why no estimate was found
  std::string pilot_kind;    // "paper" (the learner's paper schedule) or "grid"
                             // (pairs on the grid, free fits)
  long pilot_queries = 0;
  long design_queries = 0;
  double estimate_log2 = 0;           // first-order bound on max_rel_error from the
                                      // stated answer error (log2)
  double worst_pair_log2_cond = 0;    // the worst pair fit's weighted condition number (log2)
  double log2_cond_offsets = 0;       // the worst |Delta_j| |Delta_j^{-1}| row-sum condition (log2)
  int rounds = 0;                     // placed rounds run
  int reestimates = 0;                // new estimates from the pooled pair fits (a round's labels failed)
  double max_pole_shift = 0;          // the last round's largest |log r fitted - log r placed|
  std::string misplaced;              // the last round's first pair with a pole half a rung
                                      // or more off its place ("" if none)
  // why the rounds stopped: "held" (every final token's poles within a
  // quarter rung of their places), "budget" (another round, over the
  // `tokens_off` final tokens still off, would pass the budget) or "rounds"
  // (max_rounds run)
  std::string rounds_end;
  int tokens_off = 0;
  long next_round_queries = 0;        // the queries the round not run would have asked
  int pairs_missed = 0;               // the last round's pairs whose fit misses its answers (8 stated errors)
  int pairs_combined = 0;             // earlier rounds' pairs that joined the final columns W_h b_j
  Truth self_check = Truth::unknown;  // every pair fits its answers to the stated error,
                                      // residues agree across final tokens
  std::string self_check_note;
  // the last round's pairs, the grid they were asked on and the final tokens
  std::vector<PlacedPair> pairs;
  // the links at b_1 (d >= PlacedOptions::links_from_d, else none): offsets
  // u delta_11 + w delta_i1 exactly (i = 2..d, small rationals u, w), asked on
  // the grid with f[0] b_1's answer; `i` is the second offset's index, j = 0
  std::vector<PlacedPair> links;
  std::vector<Counts> grid;
  QMat B;  // the final tokens as columns: d of them, or d + 1 with biases
};

// The grid: t = 0 ([b] alone) first, then up to `n` ratios k/m, geometric from
// 1/k_max to k_max (a run of at most k_max copies), strictly increasing.
std::vector<Counts> placed_grid(int n, long k_max);

// Candidate readouts v from unlabelled residues (the re-estimate's meet in
// the middle, placed_residue_heads.cpp): offset p (delta[p], d entries)
// shows H residues c[p][q] = -delta[p]^T v_h in unknown order, each within
// tol[p][q]. In each of `sets` random choices of d + 1 offsets, every choice
// of one residue per offset whose sum with the offsets' linear dependence
// closes within the tolerances gives v by weighted least squares. None when
// H^ceil((d+1)/2) exceeds max_half; at most 4 max_half. Unchecked
// proposals, in doubles: the caller counts the offsets that agree.
std::vector<std::vector<double>> placed_residue_candidates(const std::vector<std::vector<double>>& delta, const std::vector<std::vector<double>>& c,
                                                           const std::vector<std::vector<double>>& tol, int H, Rng& rng, int sets, long max_half);

// The last round's columns refined by earlier rounds' pairs
// (placed_combine.cpp). A column x = W_h b_j (+ c_h with biases) is known
// through equations delta^T x = l, one per pair of b_j and head h, each with
// its first-order error `err` (the fit's, in the stated answers' units) and
// its typical error `typ` (the fit's residuals' scale; 0 or not finite: err).
struct PlacedColumnRow {
  QVec delta;
  Mpfr l;
  double err = 0;
  double typ = 0;
};
// x by least squares weighted by 1 / t (t = typ, or err when typ is 0 or not
// finite), and its first-order error sum_k |G_rk| err_k (G = (A^T S A)^{-1}
// A^T S, S = diag(1 / t^2)): with d rows that is |Delta^{-1}| err, the exact
// solve's, whatever the weights. The weights follow the typical errors
// because a stated error can exceed what an oracle does by orders of
// magnitude, and by different factors for different pairs (a float64
// kernel's stated error grows with the sequence's length; its own error
// mostly does not). False when the rows do not determine x (fewer than d,
// singular, or an error not finite and positive).
bool placed_column_lsq(const std::vector<PlacedColumnRow>& rows, int d, std::vector<Mpfr>& x, std::vector<double>& ex);
// An earlier pair of b_j (offset delta; its fit's log r `l`, residues `c`
// and their first-order errors; its largest weighted residual `resid`)
// labelled by the last round's heads: col[h] = W_h b_j (+ c_h) and v[h], with
// first-order errors ecol[h], ev[h] (entrywise). Head h takes the pole q
// with |l_q - delta^T col_h| <= 8 (el_q + |delta|^T ecol_h) and |c_q +
// delta^T v_h| <= 8 (ec_q + |delta|^T ev_h); the pair is combined only when
// it fits its answers (resid <= 8), every head has exactly one such pole and
// no two heads share one. A pole outside the grid's window may join: its
// fit's first-order error is large where the grid sees it poorly, and the
// weights follow that error.
// Returns q per head, empty when the pair is not combined.
std::vector<int> placed_match_pair(const std::vector<double>& delta, const std::vector<double>& l, const std::vector<double>& el, const std::vector<double>& c,
                                   const std::vector<double>& ec, double resid, const std::vector<std::vector<double>>& col,
                                   const std::vector<std::vector<double>>& ecol, const std::vector<std::vector<double>>& v,
                                   const std::vector<std::vector<double>>& ev);

// The fewest queries a run asks: its pilot (the paper schedule at H <= 2,
// with biases the paper schedule with them, else the grid pilot), its first
// round and, from d = links_from_d, the links at b_1 (d - 1 pairs on the
// round's grid; without them ball mode's labelling does not end at d >= 24).
// Later rounds and the grid pilot after a paper pilot that fails come on top.
long placed_least_queries(int d, const PlacedOptions& opt);

// Runs the pilot and the placed design on `oracle`. Throws Error(unable) when
// the pilot gives no estimate or a pole leaves its place on the ladder (the
// estimate was too coarse to place it), Error(usage) for H > d, and
// Error(budget), before asking them, when the pilot and the first round
// would take the run past opt.budget (a further round is run only within it).
template <class T>
PlacedResult learn_placed(Oracle<T>& oracle, const PlacedOptions& opt);

}  // namespace mhaq
