// Stage 4, the labelling walk (include/mhaq/stages/4-match/labelling.hpp),
// written once for every field.
#include "mhaq/stages/4-match/labelling.hpp"

#include <optional>
#include <string>
#include <utility>

#include "mhaq/arith/all_fields.hpp"
#include "mhaq/base/parallel.hpp"
#include "mhaq/stages/4-match/known_residues.hpp"

namespace mhaq {

template <class T>
bool residues_distinct(const Field<T>& fld, const PairFit<T>& f) {
  T scale = fld.from(Rational(0));
  for (const T& c : f.c) scale = scale + fld.abs(c);
  for (int h = 0; h < f.heads(); ++h)
    for (int g = h + 1; g < f.heads(); ++g)
      if (fld.equal(f.c[h], f.c[g], scale) != Truth::no) return false;
  return true;
}

namespace {

[[noreturn]] void rethrow_with(const Error& e, const std::string& where) { throw Error(e.kind(), where + ": " + e.what()); }

template <class T>
class Labeller {
 public:
  Labeller(Oracle<T>& oracle, const Plan& plan, const LabelOptions& opt, LabelRun<T>& res)
      : oracle_(oracle), fld_(oracle.field()), plan_(plan), opt_(opt), res_(res), d_(plan.d) {}

  void run() { label(); }

 private:
  // A pair that can be repaired (Repair): every pair of the paper schedule.
  bool repairable(size_t) const { return opt_.repair && plan_.schedule == Schedule::paper && d_ >= 2; }

  std::vector<T> samples(size_t p, const T& f0) const {
    std::vector<T> f{f0};
    for (long k = 1; k < plan_.pairs[p].samples; ++k) f.push_back(res_.answers[plan_.query_index(static_cast<long>(p), k)]);
    return f;
  }

  // Compact: the assignment of a within link predicted from its one value.
  std::vector<int> predicted_perm(const LabelStep& s) const {
    const PairFit<T>& cur = res_.fits[s.target];
    if (s.link < 0) {  // one head: nothing to assign
      std::vector<int> id(cur.heads());
      for (int h = 0; h < cur.heads(); ++h) id[h] = h;
      return id;
    }
    const T& f1 = res_.answers[plan_.query_index(s.link, 1)];
    const Assignment a = predicted_assignment(fld_, res_.labelled[s.ref], cur, res_.answers[0], f1);
    return unique_or_throw(a, pair_name(plan_.pairs[s.link]) + " (one value, predicted for each assignment of heads)");
  }

  // The walk from the root; steps that wait for a repaired pair, or repair
  // one, run once what they need is labelled.
  void label() {
    const size_t n = static_cast<size_t>(plan_.base_count());
    res_.labelled.assign(n, PairFit<T>{});
    is_labelled_.assign(n, 0);
    perm_.assign(n, {});
    std::vector<int> id(res_.fits[plan_.root()].heads());
    for (size_t h = 0; h < id.size(); ++h) id[h] = static_cast<int>(h);
    perm_[plan_.root()] = id;
    set_label(plan_.root(), res_.degenerate[plan_.root()].empty() ? res_.fits[plan_.root()] : repaired_root());
    std::vector<const LabelStep*> deferred, pending;
    for (const LabelStep& s : plan_.labelling)
      if (!try_step(s, deferred)) pending.push_back(&s);
    for (bool progress = true; progress && !pending.empty();) {
      progress = false;
      for (size_t k = 0; k < pending.size();)
        if (try_step(*pending[k], deferred)) {
          pending.erase(pending.begin() + static_cast<long>(k));
          progress = true;
        } else {
          ++k;
        }
    }
    if (!pending.empty()) {
      for (const LabelStep* s : pending) {
        const int bad = !res_.degenerate[s->target].empty() ? s->target : s->link;
        if (bad >= 0 && !res_.degenerate[bad].empty()) {
          res_.failed_offset = plan_.pairs[bad].i;
          throw_degenerate(pair_name(plan_.pairs[bad]) + ": " + res_.degenerate[bad] +
                           "; not repairable from the other pairs (its link or the pairs its repair needs are degenerate too)");
        }
      }
      throw_degenerate(pair_name(plan_.pairs[pending.front()->target]) + ": cannot be labelled (the pairs it depends on are degenerate)");
    }
    if (!deferred.empty()) fallback(deferred);
  }

  // A degenerate root (i=1, j=1) from the across link to b_2: its poles are
  // r(1,1) r(1,2), its residues c(1) are those of base pair (1,2) too
  // (residues do not depend on the final token), so (1,2) in its own order
  // serves as the reference. (With biases the link's poles are
  // r(1,1)^2 / r(1,2): not this route; the offset is drawn afresh instead.)
  PairFit<T> repaired_root() {
    const int root = plan_.root(), alt = plan_.base_index(0, 1);
    int link = -1;
    for (const LabelStep& s : plan_.labelling)
      if (s.target == alt && s.rel == Relation::across) link = s.link;
    Assignment a;
    PairFit<T> f;
    if (link >= 0 && res_.degenerate[alt].empty() && res_.degenerate[link].empty())
      f = derive_from_link(fld_, res_.fits[alt], res_.fits[link], {}, res_.fits[root], Relation::across, res_.fits[root].P, a);
    if (a.kind != Assignment::Kind::unique) {
      res_.failed_offset = plan_.pairs[root].i;
      throw_degenerate(pair_name(plan_.pairs[root]) + ": " + res_.degenerate[root] + "; not repairable (the pairs its repair needs are degenerate too)");
    }
    res_.repairs.push_back({root, res_.degenerate[root],
                            "derived from " + pair_name(plan_.pairs[link]) + " (poles divided by those of " + pair_name(plan_.pairs[alt]) +
                                ", heads matched by their common residues)",
                            0});
    return f;
  }

  void set_label(int t, PairFit<T> f) {
    res_.labelled[t] = std::move(f);
    is_labelled_[t] = 1;
  }

  // A labelled base pair with the offset of base pair t at another final token.
  int same_offset_labelled(int t) const {
    const PairSpec& ps = plan_.pairs[t];
    for (int j = 0; j < plan_.finals(); ++j) {
      const int q = plan_.base_index(ps.i, j);
      if (j != ps.j && q >= 0 && is_labelled_[q]) return q;
    }
    return -1;
  }

  // One labelling step; false when it must wait (its reference is not
  // labelled yet) or a repair is not possible yet.
  bool try_step(const LabelStep& s, std::vector<const LabelStep*>& deferred) {
    if (!is_labelled_[s.ref]) return false;
    const auto& fits = res_.fits;
    if (s.rel == Relation::predicted) {
      perm_[s.target] = predicted_perm(s);
      set_label(s.target, permuted(fits[s.target], perm_[s.target]));
      return true;
    }
    if (s.rel == Relation::poles) {  // fitted in the ref's own order: the ref's assignment labels it
      if (res_.needs_fallback[s.target]) {
        deferred.push_back(&s);  // residues cannot label its poles: the fallback asks for more
        return true;
      }
      if (res_.failed[s.target]) throw *res_.failed[s.target];
      perm_[s.target] = perm_[s.ref];
      set_label(s.target, permuted(fits[s.target], perm_[s.ref]));
      return true;
    }
    const bool tdeg = !res_.degenerate[s.target].empty();
    bool ldeg = s.link >= 0 && !res_.degenerate[s.link].empty();
    if (!tdeg && !ldeg) {
      const PairFit<T>* link = s.link >= 0 ? &fits[s.link] : nullptr;
      const std::string what = s.link >= 0 ? pair_name(plan_.pairs[s.link]) : "residue labelling of " + pair_name(plan_.pairs[s.target]);
      const Assignment a = label_assignment(fld_, res_.labelled[s.ref], fits[s.target], link, s.rel);
      if (a.kind == Assignment::Kind::several && s.fallback && opt_.lean_fallback) {
        deferred.push_back(&s);  // residues cannot tell these heads apart: ask for the across link
        return true;
      }
      if (a.kind == Assignment::Kind::several && a.certain && s.link >= 0 && repairable(static_cast<size_t>(s.link))) {
        res_.degenerate[s.link] = "ambiguous link, several head assignments fit";
        ldeg = true;
      } else {
        set_label(s.target, permuted(fits[s.target], unique_or_throw(a, what)));
        return true;
      }
    }
    if (tdeg && ldeg) return false;
    const int other = same_offset_labelled(s.target);
    Assignment a;
    if (tdeg) {
      // the target from its link: poles r(ref) r(target); residues c(ref) + c(target)
      // (heads matched by the residues of the same offset elsewhere, or by the
      // target's own visible heads) or c(ref) (across)
      const std::vector<T> none;
      PairFit<T> f;
      std::string by;
      if (s.rel == Relation::within && other >= 0) {
        f = derive_from_link(fld_, res_.labelled[s.ref], fits[s.link], res_.labelled[other].c, fits[s.target], s.rel, fits[s.target].P, a);
        by = ", heads matched by the residues of " + pair_name(plan_.pairs[other]);
      }
      if (a.kind != Assignment::Kind::unique) {
        f = derive_from_link(fld_, res_.labelled[s.ref], fits[s.link], none, fits[s.target], s.rel, fits[s.target].P, a);
        by = s.rel == Relation::within ? ", heads matched by the pair's own visible heads (a zero residue hides a head)" : "";
      }
      if (a.kind != Assignment::Kind::unique) return false;
      set_label(s.target, std::move(f));
      res_.repairs.push_back({s.target, res_.degenerate[s.target],
                              "derived from " + pair_name(plan_.pairs[s.link]) + " (poles divided by those of " + pair_name(plan_.pairs[s.ref]) + ")" + by, 0});
      return true;
    }
    // the link is degenerate or ambiguous: label the target by its residues instead
    if (other < 0) return false;
    a = label_assignment(fld_, res_.labelled[other], fits[s.target], nullptr, Relation::residue);
    if (a.kind != Assignment::Kind::unique) return false;
    set_label(s.target, permuted(fits[s.target], a.perm));
    res_.repairs.push_back({s.link, res_.degenerate[s.link], "not used: " + pair_name(plan_.pairs[s.target]) + " labelled by the residues of " +
                                                             pair_name(plan_.pairs[other]), 0});
    return true;
  }

  // Compact fallback (proofs/19): the pair's own values up to k = 2H-1 give its
  // poles and residues (the linear route with P known); one value of the across
  // link (delta_i, b_1 + b_j), predicted for each assignment that pairs equal
  // residues, tells the poles of equal-residue heads apart. 2H - s_H extra
  // queries per pair (1 when H = 2).
  void compact_fallback(const std::vector<const LabelStep*>& steps) {
    const long before = oracle_.queries();
    const int m = res_.heads_found;
    auto ask = [&](const PairSpec& spec, std::vector<T>& into) {
      res_.fallback_pairs.push_back(spec);
      for (const auto& q : plan_.pair_queries(spec)) {
        res_.queries.push_back(q);
        res_.answers.push_back(oracle_.query(q));
        into.push_back(res_.answers.back());
      }
    };
    std::vector<std::vector<T>> f(steps.size()), y(steps.size());
    for (size_t s = 0; s < steps.size(); ++s) {
      const LabelStep& st = *steps[s];
      const PairSpec& tp = plan_.pairs[st.target];
      f[s] = samples(static_cast<size_t>(st.target), res_.chain.f0(fld_, tp.final_token));
      if (tp.samples < 2 * m) {
        PairSpec more = tp;
        more.first_k = tp.samples;
        more.samples = 2 * m;
        ask(more, f[s]);
      }
      ask(*st.fallback, y[s]);
    }
    res_.fallback_queries = oracle_.queries() - before;
    std::vector<PairFit<T>> out(steps.size());
    parallel_for(0, steps.size(), opt_.threads, [&](size_t s) {
      const LabelStep& st = *steps[s];
      const PairFit<T>& ref = res_.fits[st.ref];
      const std::string what = "fallback for " + pair_name(plan_.pairs[st.target]);
      try {
        const PairFit<T> fit = fit_known_limit(fld_, f[s], ref.c);
        const Assignment a = predicted_assignment(fld_, ref, fit, res_.chain.f0(fld_, st.fallback->final_token), y[s][0], plan_.across());
        const std::vector<int> perm = unique_or_throw(a, pair_name(*st.fallback) + " (one value, predicted for each assignment of equal residues)");
        out[s] = PairFit<T>{fit.P, {}, ref.c};
        for (int h = 0; h < ref.heads(); ++h) out[s].r.push_back(fit.r[perm[h]]);
      } catch (const Error& e) {
        rethrow_with(e, what);
      }
    });
    for (size_t s = 0; s < steps.size(); ++s) {
      const LabelStep& st = *steps[s];
      res_.fits[st.target] = out[s];
      perm_[st.target] = perm_[st.ref];
      set_label(st.target, permuted(out[s], perm_[st.ref]));
    }
  }

  void fallback(const std::vector<const LabelStep*>& steps) {
    if (steps.front()->rel == Relation::poles) return compact_fallback(steps);
    const long before = oracle_.queries();
    std::vector<std::vector<T>> f(steps.size());
    for (size_t s = 0; s < steps.size(); ++s) {
      const PairSpec& spec = *steps[s]->fallback;
      res_.fallback_pairs.push_back(spec);
      f[s].push_back(res_.chain.f0(fld_, spec.final_token));
      for (const auto& q : plan_.pair_queries(spec)) {
        res_.queries.push_back(q);
        res_.answers.push_back(oracle_.query(q));
        f[s].push_back(res_.answers.back());
      }
    }
    res_.fallback_queries = oracle_.queries() - before;
    res_.fallback_fits.resize(steps.size());
    parallel_for(0, steps.size(), opt_.threads, [&](size_t s) {
      try {
        res_.fallback_fits[s] = interpolate_pair(fld_, f[s], res_.heads_found);
      } catch (const Error& e) {
        rethrow_with(e, "fallback " + pair_name(res_.fallback_pairs[s]));
      }
    });
    for (size_t s = 0; s < steps.size(); ++s) {
      const LabelStep& st = *steps[s];
      const Assignment a = label_assignment(fld_, res_.labelled[st.ref], res_.fits[st.target], &res_.fallback_fits[s], plan_.across());
      res_.labelled[st.target] = permuted(res_.fits[st.target], unique_or_throw(a, "fallback " + pair_name(res_.fallback_pairs[s])));
    }
  }

  Oracle<T>& oracle_;
  const Field<T>& fld_;
  const Plan& plan_;
  const LabelOptions& opt_;
  LabelRun<T>& res_;
  const int d_;
  std::vector<char> is_labelled_;       // per base pair
  std::vector<std::vector<int>> perm_;  // per labelled base pair: its own head for each global head (compact)
};

}  // namespace

template <class T>
void label_pairs(Oracle<T>& oracle, const Plan& plan, const LabelOptions& opt, LabelRun<T>& run) {
  Labeller<T>(oracle, plan, opt, run).run();
}

#define MHAQ_INSTANTIATE(F)                                                                                               \
  template bool residues_distinct<F::value_type>(const F&, const PairFit<F::value_type>&);                                \
  template void label_pairs<F::value_type>(Oracle<F::value_type>&, const Plan&, const LabelOptions&, LabelRun<F::value_type>&);
MHAQ_FOR_EACH_FIELD(MHAQ_INSTANTIATE)
#undef MHAQ_INSTANTIATE

}  // namespace mhaq
