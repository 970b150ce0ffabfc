// The transformer learner (claim 5): a path through the attention stages and
// two more, written once for every field, given an Oracle<T>& and nothing else.
//
//   attention   the odd part T(X) - T(-X) is multi-head attention with value
//               vectors sum_j u_j U_{h,j}; the attention learner (stages 1-5)
//               gives every W_h (proofs/13)
//   6-regions   region values e_h(S) at final tokens along p -> q -> -p, and
//               the path's crossings (proofs/14, 15)
//   7-neurons   the sign system and the canonical neurons (proofs/16)
//
// then the learner's own checks: its transformer reproduces every answer, and
// a few general sequences (not confined to one region) that it asks for.
#pragma once
#include <optional>
#include <cstdint>
#include <vector>

#include "mhaq/stages/7-neurons/neurons.hpp"
#include "mhaq/stages/learner.hpp"

namespace mhaq {

struct TransformerLearnOptions {
  int H = 1;                // canonical attention heads
  int neurons = 0;          // canonical neuron count if known (0: found by the path search)
  Schedule schedule = Schedule::paper;
  std::uint64_t seed = 1;
  TokenSpec tokens{16, 16};  // every token lies in (1/tokens.den)Z; entries within [-1, 1] for the attention part
  int threads = 1;
  int verify_queries = -1;   // general sequences the learner checks itself on (-1: 2d)
  int max_probes = 400;      // region evaluations the path search may spend
  int path_attempts = 3;     // fresh paths tried when one cannot separate its crossings
  bool single_crossing_test = true;  // proofs/22; off only for the broken variant of its machine check
  int head_split_sequences = 12;  // for each recovered neuron, sequences whose heads attend to different tokens on its hyperplane
  int targeted_levels = 9;   // verification tokens at window 2^-k, k = 0..levels-1, from each recovered hyperplane
  bool coincidence_test = true;  // after a missed answer, tell neurons on one hyperplane from close ones (proofs/22); off where equality is a tolerance (MPFR, double)
  bool checks = true;        // the self-check and the verification sequences (off when differentiating a replayed run)
  // The attention part's B and Delta when chosen before the run (the scaled
  // design, stages/2-schedule/design.hpp); empty: the paper's, drawn from seed.
  std::optional<Draws> attention_draws;
  // The regions stage under approximate answers (the scaled design): region
  // values at probes shrunk to coordinates of at most 4, with offsets fitted
  // to each probe (RegionDesign::probe_size, fitted_offsets). Off: the paper
  // design's fixed offsets at the points as the path places them.
  bool fitted_regions = false;
};

template <class T>
struct TransformerLearnResult {
  std::vector<Mat<T>> W;                 // heads, in the attention part's order
  std::vector<LearnedNeuron<T>> neurons;  // canonical: u in {+1, -1}
  int heads_found = 0;
  long queries_attention = 0, queries_regions = 0, queries_verify = 0;
  int probes = 0, undecided_flats = 0, crossings = 0, path_attempts = 0;
  int test_probes = 0;                    // region evaluations of the single-crossing test (part of probes)
  double resolution_deg = -1;             // certified: no two hyperplanes further apart were merged (-1: no crossing tested)
  long queries_targeted = 0;              // of queries_verify, those near the recovered hyperplanes and in their wedges
  QVec p, q;                              // the path p -> q -> -p
  std::vector<Crossing<T>> path_crossings;  // the accepted path's crossings, in path order (certificates)
  Truth self_check = Truth::unknown;      // the transformer reproduces every answer
  long self_check_failed = -1;
  Truth verification = Truth::unknown;    // ... and the learner's verification sequences: tokens on both
                                          // sides of every recovered hyperplane at shrinking angles, tokens in the
                                          // wedges between neighbouring ones, and general sequences
};

// The fewest queries learn_transformer asks: the attention part's plan,
// each query asked at X and at -X. The path and the checks come on top.
long transformer_least_queries(int d, const TransformerLearnOptions& opt);
// The attention part's planned queries X (each asked at X and at -X, of
// the same length and entries' sizes), known before any answer; the path,
// the neurons and the checks that follow are adaptive (a crossing's place
// comes from answers) and cannot be listed ahead.
std::vector<Query> transformer_attention_plan(int d, const TransformerLearnOptions& opt);

// Throws Error(degenerate | unable | inconsistent | not_identifiable). Only a
// stated condition that fails is not_identifiable, named (a head invisible in
// the odd part, ubar_j = 0, two neurons on one hyperplane found as such, d = 1
// with two or more heads, a sign system with several certified solutions);
// hyperplanes the path cannot tell apart, and a recovered transformer that
// misses one of its own answers, are degenerate, naming the crossing and the
// certified resolution. Its status depends on the oracle's answers only.
template <class T>
TransformerLearnResult<T> learn_transformer(Oracle<T>& oracle, const TransformerLearnOptions& opt);

}  // namespace mhaq
