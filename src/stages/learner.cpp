// The learner of ALGORITHM.md sections 3-6: the path through the stages,
// written once for every field.
#include "mhaq/stages/learner.hpp"

#include <algorithm>
#include <string>

#include "mhaq/arith/all_fields.hpp"
#include "mhaq/base/parallel.hpp"

namespace mhaq {

Plan learner_plan(int d, const LearnOptions& opt, int* redraws) {
  Rng rng(opt.seed);
  const Draws dr = draw_tokens(rng, d, opt.tokens);
  if (redraws) *redraws = dr.redraws;
  return make_plan(opt.schedule, dr.B, dr.Delta, opt.H, opt.samples_per_pair);
}

namespace {

[[noreturn]] void rethrow_with(const Error& e, const std::string& where) { throw Error(e.kind(), where + ": " + e.what()); }

template <class T>
class Path {
 public:
  using F = Field<T>;
  Path(Oracle<T>& oracle, const LearnOptions& opt, LearnResult<T>& res)
      : oracle_(oracle), fld_(oracle.field()), opt_(opt), res_(res), plan_(res.plan), d_(plan_.d) {}

  void run() {
    ask();
    try {
      fit_all();
      label();
    } catch (const Error& e) {
      if (!opt_.heads_is_bound && (e.kind() == ErrorKind::degenerate || e.kind() == ErrorKind::inconsistent || e.kind() == ErrorKind::unable))
        diagnose_head_count();
      throw;
    }
    res_.heads = solve_heads(fld_, plan_, res_.labelled, res_.heads_found);
    if (opt_.self_check) self_check();
    res_.answers = static_cast<long>(answers_.size());
  }

 private:
  // ---- 1-oracle: the plan's queries, in order
  void ask() {
    queries_ = plan_.queries();
    answers_.reserve(queries_.size());
    for (const auto& q : queries_) answers_.push_back(oracle_.query(q));
  }

  std::vector<T> samples(size_t p, const T& f0) const {
    std::vector<T> f{f0};
    for (long k = 1; k < plan_.samples; ++k) f.push_back(answers_[plan_.query_index(static_cast<long>(p), k)]);
    return f;
  }

  // ---- 3-fit: every pair, the first column first (its limits chain f(0))
  void fit_all() {
    auto& fits = res_.fits;
    fits.resize(plan_.pairs.size());
    const int H = opt_.H;
    auto fit_one = [&](size_t p, const T& f0) {
      const std::vector<T> f = samples(p, f0);
      try {
        fits[p] = opt_.heads_is_bound ? interpolate_pair_minimal(fld_, f, H) : interpolate_pair(fld_, f, H);
      } catch (const Error& e) {
        rethrow_with(e, pair_name(plan_.pairs[p]));
      }
    };
    parallel_for(0, static_cast<size_t>(d_), opt_.threads, [&](size_t i) { fit_one(static_cast<size_t>(plan_.base_index(static_cast<int>(i), 0)), answers_[0]); });
    chain_ = make_chaining(fits);
    parallel_for(0, plan_.pairs.size(), opt_.threads, [&](size_t p) {
      if (plan_.pairs[p].kind == PairKind::base && plan_.pairs[p].j == 0) return;
      fit_one(p, chain_.f0(fld_, plan_.pairs[p].final_token));
    });
    // Every pair must show the same type: the canonical head count (known H)
    // or the minimal type (bound H0). A pair showing fewer heads has colliding
    // poles or a zero residue at this draw.
    int m = 0;
    for (const auto& f : fits) m = std::max(m, f.heads());
    for (size_t p = 0; p < fits.size(); ++p)
      if (fits[p].heads() != m)
        throw_degenerate(pair_name(plan_.pairs[p]) + ": shows " + std::to_string(fits[p].heads()) + " heads where other pairs show " +
                         std::to_string(m) + " (colliding poles or a zero residue at this draw)");
    res_.heads_found = m;
  }

  Chaining<T> make_chaining(const std::vector<PairFit<T>>& fits) const {
    Chaining<T> c{answers_[0], {}, {}, plan_.B.col(0)};
    if (!inverse(plan_.Delta, c.DeltaInv)) throw_internal("Delta singular after the draw check");
    for (int i = 0; i < d_; ++i) c.vdelta.push_back(fits[plan_.base_index(i, 0)].P - answers_[0]);
    return c;
  }

  // Known H, and a stage failed: when every base pair fits a
  // function of one smaller type m < H, the stated H exceeds the model's
  // canonical head count at every pair, which no other draw changes.
  void diagnose_head_count() {
    std::vector<PairFit<T>> fits(plan_.pairs.size());
    const int n = d_ * d_;
    std::vector<int> type(n, -1);
    auto minimal = [&](size_t p, const T& f0) {
      try {
        fits[p] = interpolate_pair_minimal(fld_, samples(p, f0), opt_.H);
        type[p] = fits[p].heads();
      } catch (const Error&) {
        type[p] = -1;
      }
    };
    parallel_for(0, static_cast<size_t>(d_), opt_.threads, [&](size_t i) { minimal(static_cast<size_t>(plan_.base_index(static_cast<int>(i), 0)), answers_[0]); });
    for (int i = 0; i < d_; ++i)
      if (type[plan_.base_index(i, 0)] < 0) return;
    const Chaining<T> chain = make_chaining(fits);
    parallel_for(0, static_cast<size_t>(n), opt_.threads, [&](size_t p) {
      if (plan_.pairs[p].j != 0) minimal(p, chain.f0(fld_, plan_.pairs[p].final_token));
    });
    const int m = type[0];
    for (int t : type)
      if (t != m || t < 0) return;
    if (m >= opt_.H) return;
    throw_not_identifiable("every base pair fits a type-(" + std::to_string(m) + "," + std::to_string(m) +
                           ") function: the answers are those of a model with " + std::to_string(m) +
                           " canonical heads, fewer than the stated H = " + std::to_string(opt_.H) +
                           " (state H = " + std::to_string(m) + ", or give only a bound with --max-heads)");
  }

  // ---- 4-match: walk the plan's labelling graph from the root
  void label() {
    const auto& fits = res_.fits;
    std::vector<PairFit<T>>& lab = res_.labelled;
    lab.assign(static_cast<size_t>(d_) * d_, PairFit<T>{});
    lab[plan_.root()] = fits[plan_.root()];
    std::vector<const LabelStep*> deferred;
    for (const LabelStep& s : plan_.labelling) {
      const PairFit<T>* link = s.link >= 0 ? &fits[s.link] : nullptr;
      const std::string what = s.link >= 0 ? pair_name(plan_.pairs[s.link]) : "residue labelling of " + pair_name(plan_.pairs[s.target]);
      const Assignment a = label_assignment(fld_, lab[s.ref], fits[s.target], link, s.rel);
      if (a.kind == Assignment::Kind::several && s.fallback && opt_.lean_fallback) {
        deferred.push_back(&s);  // residues cannot tell these heads apart: ask for the across link
        continue;
      }
      lab[s.target] = permuted(fits[s.target], unique_or_throw(a, what));
    }
    if (!deferred.empty()) fallback(deferred);
  }

  void fallback(const std::vector<const LabelStep*>& steps) {
    const long before = oracle_.queries();
    std::vector<std::vector<T>> f(steps.size());
    for (size_t s = 0; s < steps.size(); ++s) {
      const PairSpec& spec = *steps[s]->fallback;
      res_.fallback_pairs.push_back(spec);
      f[s].push_back(chain_.f0(fld_, spec.final_token));
      for (const auto& q : plan_.pair_queries(spec)) {
        queries_.push_back(q);
        answers_.push_back(oracle_.query(q));
        f[s].push_back(answers_.back());
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
      const Assignment a = label_assignment(fld_, res_.labelled[st.ref], res_.fits[st.target], &res_.fallback_fits[s], Relation::across);
      res_.labelled[st.target] = permuted(res_.fits[st.target], unique_or_throw(a, "fallback " + pair_name(res_.fallback_pairs[s])));
    }
  }

  // ---- the learner's own check, at no query cost
  void self_check() {
    std::vector<Truth> same(queries_.size(), Truth::unknown);
    parallel_for(0, queries_.size(), opt_.threads,
                 [&](size_t q) { same[q] = fld_.equal(evaluate_heads(fld_, res_.heads, queries_[q]), answers_[q]); });
    res_.self_check = Truth::yes;
    for (size_t q = 0; q < same.size(); ++q) {
      if (same[q] == Truth::no) {
        res_.self_check = Truth::no;
        res_.self_check_failed = static_cast<long>(q);
        break;
      }
      res_.self_check = truth_and(res_.self_check, same[q]);
    }
  }

  Oracle<T>& oracle_;
  const F& fld_;
  const LearnOptions& opt_;
  LearnResult<T>& res_;
  const Plan& plan_;
  const int d_;
  std::vector<Query> queries_;
  std::vector<T> answers_;
  Chaining<T> chain_;
};

}  // namespace

template <class T>
LearnResult<T> learn(Oracle<T>& oracle, const LearnOptions& opt) {
  if (opt.H < 1) throw Error(ErrorKind::usage, "head count must be at least 1");
  LearnResult<T> res;
  res.plan = learner_plan(oracle.dim(), opt, &res.redraws);
  Path<T>(oracle, opt, res).run();
  return res;
}

#define MHAQ_INSTANTIATE(F) template LearnResult<F::value_type> learn<F::value_type>(Oracle<F::value_type>&, const LearnOptions&);
MHAQ_FOR_EACH_FIELD(MHAQ_INSTANTIATE)
#undef MHAQ_INSTANTIATE

}  // namespace mhaq
