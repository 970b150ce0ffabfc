// Recovers a hidden two-head attention model exactly, through the oracle only.
#include <iostream>
#include <mhaq/mhaq.hpp>

int main() {
  using namespace mhaq;
  const Model hidden = model_from_json_text(R"({"format": "mhaq-model", "version": 1, "d": 2, "heads": [
      {"W": [["1/2", "-1/4"], ["0", "1"]], "v": ["1", "-1/2"]},
      {"W": [["-1", "0"], ["1/4", "1/2"]], "v": ["3/4", "2"]}]})");
  LearnOptions opt;
  opt.H = hidden.canonical().num_heads();             // told H (or set heads_is_bound for a bound H0)
  opt.tokens = default_tokens(Arith::exact);          // query tokens: integers in [-5, 5]
  opt.seed = 1;
  ModelOracle<QTau> oracle(hidden, opt.tokens.den);   // the black box, answering in Q(e^{1/L})
  const LearnResult<QTau> got = learn<QTau>(oracle, opt);  // sees only Oracle<QTau>&
  std::cout << oracle.queries() << " queries (4Hd^2-2H+1 = " << paper_query_bound(2, opt.H) << "), longest " << oracle.max_length() << "\n";
  const auto& F = oracle.field();  // prints exact values (the learner sees them only as numbers)
  for (const auto& h : got.heads)
    std::cout << "head: v = [" << F.str(h.v[0]) << ", " << F.str(h.v[1]) << "], W = [[" << F.str(h.W(0, 0)) << ", " << F.str(h.W(0, 1))
              << "], [" << F.str(h.W(1, 0)) << ", " << F.str(h.W(1, 1)) << "]]\n";
  const bool same = exact_heads_match(got.heads, hidden.canonical());
  std::cout << "exact match: " << (same ? "yes" : "no") << "\n";
  return same ? 0 : 1;
}
