// The oracles of the tuned design's pilot run (analysis/design_search.hpp):
// the answers of any oracle read once as MPFR numbers and served to an MPFR
// learner at a chosen decision tolerance. They name their number type, so
// they sit with the analysis, not with the stages.
#pragma once
#include <map>
#include <string>

#include "mhaq/arith/field.hpp"
#include "mhaq/stages/1-oracle/oracle.hpp"

namespace mhaq {

// The pilot's view of the oracle: every answer as an MPFR number at the
// working precision (a ball's midpoint), remembered, so a rerun at another
// decision tolerance asks the oracle again only for queries it never asked.
template <class T>
class PilotAnswers {
 public:
  explicit PilotAnswers(Oracle<T>& inner) : inner_(inner) {}
  Mpfr get(const Query& q) {
    const std::string key = query_key(q);
    auto it = memo_.find(key);
    if (it != memo_.end()) return it->second;
    const Ball b = inner_.field().enclose(inner_.query(q));
    Mpfr m;
    arf_get_mpfr(m.raw(), arb_midref(b.raw()), MPFR_RNDN);
    memo_.emplace(key, m);
    return m;
  }
  int dim() const { return inner_.dim(); }

 private:
  static std::string query_key(const Query& q) {
    std::string k;
    for (const auto& r : q) {
      k += std::to_string(r.count) + ":";
      for (const auto& x : r.token) k += x.str() + ",";
      k += ";";
    }
    return k;
  }
  Oracle<T>& inner_;
  std::map<std::string, Mpfr> memo_;
};

template <class T>
class PilotOracle final : public Oracle<Mpfr> {
 public:
  PilotOracle(PilotAnswers<T>& a, double acc_log2) : a_(a) { field_.tol.acc_log2 = acc_log2; }
  int dim() const override { return a_.dim(); }
  const Field<Mpfr>& field() const override { return field_; }

 private:
  Mpfr answer(const Query& q) override { return a_.get(q); }
  PilotAnswers<T>& a_;
  Field<Mpfr> field_;
};

}  // namespace mhaq
