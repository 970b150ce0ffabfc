// An oracle wrapper the learner uses to draw one offset afresh
// (stages/learner.hpp, Repair): the second attempt is served the answers the
// first one already received.
#pragma once
#include <map>
#include <string>

#include "mhaq/stages/1-oracle/oracle.hpp"

namespace mhaq {

// Passes queries through, keeping every answer. Once serve_kept() is on (a
// second attempt on a plan that shares queries with the first), a query asked
// before is answered from the record and not sent. Off during the first
// attempt, so that a plan whose draw repeats a query still sends every one
// (claims 2 and 3 count them).
template <class T>
class KeepingOracle final : public Oracle<T> {
 public:
  explicit KeepingOracle(Oracle<T>& inner) : inner_(inner) {}
  int dim() const override { return inner_.dim(); }
  const Field<T>& field() const override { return inner_.field(); }
  long sent() const { return sent_; }
  void serve_kept() { serve_ = true; }

 private:
  static std::string key(const Query& q) {
    std::string k;
    for (const Run& r : q) {
      k += std::to_string(r.count) + ':';
      for (const Rational& x : r.token) k += x.str() + ',';
      k += ';';
    }
    return k;
  }
  T answer(const Query& q) override {
    const std::string k = key(q);
    if (serve_) {
      const auto it = kept_.find(k);
      if (it != kept_.end()) return it->second;
    }
    ++sent_;
    T a = inner_.query(q);
    kept_.emplace(k, a);
    return a;
  }
  Oracle<T>& inner_;
  std::map<std::string, T> kept_;
  long sent_ = 0;
  bool serve_ = false;
};

}  // namespace mhaq
