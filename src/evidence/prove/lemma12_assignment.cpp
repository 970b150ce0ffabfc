// The machine check of proofs/12-unique-assignment.md (the registry: registry.cpp).
#include "prove_common.hpp"

namespace mhaq::proof {

// The assignment routine decides "none / exactly one / several perfect
// matchings avoiding `no`" correctly: exhaustively, against enumeration of all
// permutations, for every compatibility matrix over {no, yes, unknown} with
// n <= 3 and every 0/1 matrix with n = 4. The broken variant reports any
// matching found as unique (no alternating-cycle test).
void check_assignment(const ProveOptions&, bool broken, LemmaCheck& out) {
  long cases = 0;
  auto brute = [](int n, const std::vector<Truth>& c, bool certain_only, int& count) {
    std::vector<int> p(n);
    for (int i = 0; i < n; ++i) p[i] = i;
    count = 0;
    do {
      bool ok = true;
      for (int h = 0; h < n && ok; ++h) {
        const Truth t = c[h * n + p[h]];
        ok = certain_only ? t == Truth::yes : t != Truth::no;
      }
      count += ok;
    } while (std::next_permutation(p.begin(), p.end()));
  };
  auto one = [&](int n, const std::vector<Truth>& c) {
    Assignment a = match_heads(n, [&](int h, int g) { return c[h * n + g]; });
    if (broken && a.kind == Assignment::Kind::several) a.kind = Assignment::Kind::unique;
    int all = 0, sure = 0;
    brute(n, c, false, all);
    brute(n, c, true, sure);
    const Assignment::Kind want = all == 0 ? Assignment::Kind::none : all == 1 ? Assignment::Kind::unique : Assignment::Kind::several;
    require(a.kind == want, "n = " + std::to_string(n) + ": " + std::to_string(all) + " matchings avoid no, the routine says otherwise");
    if (want != Assignment::Kind::none) {
      for (int h = 0; h < n; ++h) require(c[h * n + a.perm[h]] != Truth::no, "the matching returned uses a `no` entry");
      std::vector<int> seen(n, 0);
      for (int h = 0; h < n; ++h) require(seen[a.perm[h]]++ == 0, "the matching returned is not a permutation");
    }
    if (want == Assignment::Kind::several) require(a.certain == (sure >= 2), "`certain` disagrees with the count of all-yes matchings");
    ++cases;
  };
  const Truth vals[3] = {Truth::no, Truth::yes, Truth::unknown};
  for (int n = 1; n <= 3; ++n) {
    long total = 1;
    for (int i = 0; i < n * n; ++i) total *= 3;
    for (long code = 0; code < total; ++code) {
      std::vector<Truth> c(n * n);
      long x = code;
      for (int i = 0; i < n * n; ++i, x /= 3) c[i] = vals[x % 3];
      one(n, c);
    }
  }
  for (long code = 0; code < (1L << 16); ++code) {
    std::vector<Truth> c(16);
    for (int i = 0; i < 16; ++i) c[i] = (code >> i) & 1 ? Truth::yes : Truth::no;
    one(4, c);
  }
  out.cases = cases;
  out.detail = std::to_string(cases) + " compatibility matrices (all over {no, yes, unknown} for n <= 3, all 0/1 for n = 4) decided as brute-force enumeration does";
}

}  // namespace mhaq::proof
