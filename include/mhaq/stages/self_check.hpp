// The learners' own check, at no query cost: does the learned model
// reproduce every answer it was learned from? Written once for the attention
// learner (learner.hpp) and the transformer learner (transformer_learner.hpp).
#pragma once
#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "mhaq/arith/truth.hpp"
#include "mhaq/arith/value_bytes.hpp"
#include "mhaq/base/distribute.hpp"
#include "mhaq/base/parallel.hpp"

namespace mhaq {

// same(i) compares the model's value at the i-th query with the i-th answer;
// the n comparisons run in parallel over `threads` (and the ranks of a run
// across MPI ranks). Returns yes when every
// one is yes; no at the first answer certainly not reproduced, whose index
// goes to `failed` (left as it is otherwise); unknown when some comparison
// cannot be decided (balls, tolerances).
template <class Same>
Truth self_check_answers(std::size_t n, int threads, const Same& same, long& failed) {
  std::vector<Truth> t(n, Truth::unknown);
  if (!run_across_ranks()) {
    parallel_for(0, n, threads, [&](std::size_t i) { t[i] = same(i); });
  } else {  // one run across MPI ranks: each rank compares its share, every rank reads every comparison
    gather_across_ranks(
        n, 1024, threads, [&](std::size_t i, std::string& b) { b.push_back(static_cast<char>(same(i))); },
        [&](std::size_t i, ByteReader& in) { t[i] = static_cast<Truth>(in.bytes(1)[0]); });
  }
  Truth out = Truth::yes;
  for (std::size_t i = 0; i < n; ++i) {
    if (t[i] == Truth::no) {
      failed = static_cast<long>(i);
      return Truth::no;
    }
    out = truth_and(out, t[i]);
  }
  return out;
}

}  // namespace mhaq
