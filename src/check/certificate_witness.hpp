// The certificate checker's view of the small-grid guard's witness queries
// (proofs/39-grid-witness.md, tests/golden/CERTIFICATE.md): written here from
// the page, not taken from the learner. Internal to the checker library.
#pragma once
#include <cstddef>
#include <functional>
#include <string>

#include "certificate_read.hpp"

namespace mhaq::check {

// The largest witness grid a run may use: tokens in {-R_w..R_w}/den with
// R_w = max(token_range, 4H - 1), the least range with 2 R_w + 1 >= 2 (4H - 1).
long witness_range_bound(long token_range, long H);

using FactFn = std::function<void(bool ok, const std::string& path, const std::string& msg)>;

// Checks the recorded witness queries, queries[first..]: the claimed range
// is within witness_range_bound; the claimed count is whole groups of
// n = 2H+1 queries, enough pairs that a wrong model escapes all of them with
// probability at most 2^-10; and each group is one pair (x, y) on the
// claimed grid, asked as [y x n] and then [x x k, y x (n-k)] for k = 1..n-1.
// Every fact goes through `fact` with the JSON path of the field that broke.
// Nothing is checked when the certificate claims no witness queries.
void check_witness_queries(const Cert& c, std::size_t first, const FactFn& fact);

}  // namespace mhaq::check
