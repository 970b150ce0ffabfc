// The learner of docs/math/ (pairs, schedules, unknown H, degeneracies): the path through the stages,
// written once for every field.
#include "mhaq/stages/learner.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <string>

#include "mhaq/arith/all_fields.hpp"
#include "mhaq/base/parallel.hpp"
#include "mhaq/stages/4-match/known_residues.hpp"

namespace mhaq {

Plan learner_plan(int d, const LearnOptions& opt, int* redraws) {
  if (opt.draws) {
    if (opt.draws->B.rows() != d || opt.draws->B.cols() != d || opt.draws->Delta.rows() != d || opt.draws->Delta.cols() != d)
      throw Error(ErrorKind::usage, "the design's B and Delta must be d x d");
    if (redraws) *redraws = opt.draws->redraws;
    return make_plan(opt.schedule, opt.draws->B, opt.draws->Delta, opt.H, opt.samples_per_pair);
  }
  Rng rng(opt.seed);
  const Draws dr = draw_tokens(rng, d, opt.tokens);
  if (redraws) *redraws = dr.redraws;
  return make_plan(opt.schedule, dr.B, dr.Delta, opt.H, opt.samples_per_pair);
}

namespace {

constexpr int kWitnessQueries = 3;  // per repaired run (proofs/21)

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
      if (plan_.schedule == Schedule::compact) fit_compact();
      else fit_all();
      label();
    } catch (const Error& e) {
      // a base pair that fitted all H heads already shows H is not too large
      if (!opt_.heads_is_bound && !full_base_fit() &&
          (e.kind() == ErrorKind::degenerate || e.kind() == ErrorKind::inconsistent || e.kind() == ErrorKind::unable))
        diagnose_head_count();
      throw;
    }
    res_.heads = solve_heads(fld_, plan_, res_.labelled, res_.heads_found);
    if (!res_.repairs.empty()) witness();
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
    for (long k = 1; k < plan_.pairs[p].samples; ++k) f.push_back(answers_[plan_.query_index(static_cast<long>(p), k)]);
    return f;
  }

  // ---- 3-fit: every pair, the first column first (its limits chain f(0))
  // A pair that can be repaired (Repair, learner.hpp): every pair of the paper schedule.
  bool repairable(size_t) const { return opt_.repair && plan_.schedule == Schedule::paper && d_ >= 2; }

  void fit_all() {
    auto& fits = res_.fits;
    fits.resize(plan_.pairs.size());
    degenerate_.assign(plan_.pairs.size(), std::string());
    const int H = opt_.H;
    auto fit_one = [&](size_t p, const T& f0) {
      const std::vector<T> f = samples(p, f0);
      try {
        fits[p] = opt_.heads_is_bound ? interpolate_pair_minimal(fld_, f, H) : interpolate_pair(fld_, f, H);
      } catch (const Error& e) {
        // A link only labels heads: one that cannot be fitted at this
        // precision is set aside like a degenerate one, and its base pair is
        // labelled by residues instead (try_step), a decision the field
        // makes or refuses as always.
        if (e.kind() == ErrorKind::unable && plan_.pairs[p].kind != PairKind::base && repairable(p)) {
          degenerate_[p] = std::string("not fitted at this precision: ") + e.what();
          return;
        }
        if (e.kind() != ErrorKind::degenerate || !repairable(p)) rethrow_with(e, pair_name(plan_.pairs[p]));
        // Detected as soon as the pair is fitted. Its limit P still chains
        // f(0) (base pairs of b_1): the minimal-type fit gives it.
        degenerate_[p] = e.what();
        try {
          fits[p] = interpolate_pair_minimal(fld_, f, H);
        } catch (const Error&) {
          rethrow_with(e, pair_name(plan_.pairs[p]));
        }
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
    for (size_t p = 0; p < fits.size(); ++p)
      if (degenerate_[p].empty()) m = std::max(m, fits[p].heads());
    for (size_t p = 0; p < fits.size(); ++p) {
      if (fits[p].heads() == m || !degenerate_[p].empty()) continue;
      const std::string why = "shows " + std::to_string(fits[p].heads()) + " heads where other pairs show " + std::to_string(m) +
                              " (colliding poles or a zero residue at this draw)";
      if (!repairable(p)) {
        res_.failed_offset = plan_.pairs[p].i;
        throw_degenerate(pair_name(plan_.pairs[p]) + ": " + why);
      }
      degenerate_[p] = why;
    }
    res_.heads_found = m;
  }

  // ---- 3-fit, compact schedule (proofs/18, 19): the pairs (i, 1) in full;
  // then every pair (i, j >= 2) with the residues of (i, 1) known, its heads
  // in the order of (i, 1). A failure of the latter is kept and raised when
  // the labelling reaches the pair, after the links (where a wrong head count
  // shows first).
  void fit_compact() {
    auto& fits = res_.fits;
    fits.resize(plan_.pairs.size());
    degenerate_.assign(plan_.pairs.size(), std::string());
    failed_.assign(plan_.pairs.size(), std::nullopt);
    const int H = opt_.H;
    parallel_for(0, static_cast<size_t>(d_), opt_.threads, [&](size_t i) {
      const size_t p = static_cast<size_t>(plan_.base_index(static_cast<int>(i), 0));
      try {
        fits[p] = opt_.heads_is_bound ? interpolate_pair_minimal(fld_, samples(p, answers_[0]), H) : interpolate_pair(fld_, samples(p, answers_[0]), H);
      } catch (const Error& e) {
        rethrow_with(e, pair_name(plan_.pairs[p]));
      }
    });
    int m = 0;
    for (int i = 0; i < d_; ++i) m = std::max(m, fits[plan_.base_index(i, 0)].heads());
    for (int i = 0; i < d_; ++i)
      if (fits[plan_.base_index(i, 0)].heads() != m)
        throw_degenerate(pair_name(plan_.pairs[plan_.base_index(i, 0)]) + ": shows " + std::to_string(fits[plan_.base_index(i, 0)].heads()) +
                         " heads where other pairs show " + std::to_string(m) + " (colliding poles or a zero residue at this draw)");
    res_.heads_found = m;
    chain_ = make_chaining(fits);
    // Residues that cannot be told apart at an offset (equal v_h) cannot
    // label that offset's poles: those pairs wait for the fallback.
    std::vector<int> ref(plan_.pairs.size(), -1);
    needs_fallback_.assign(plan_.pairs.size(), 0);
    for (const LabelStep& s : plan_.labelling)
      if (s.rel == Relation::poles) {
        ref[s.target] = s.ref;
        needs_fallback_[s.target] = opt_.lean_fallback && s.fallback && !residues_distinct(fits[s.ref]);
      }
    parallel_for(0, plan_.pairs.size(), opt_.threads, [&](size_t p) {
      if (ref[p] < 0 || needs_fallback_[p]) return;
      try {
        fits[p] = fit_known_residues(fld_, samples(p, chain_.f0(fld_, plan_.pairs[p].final_token)), fits[ref[p]].c);
      } catch (const Error& e) {
        if (e.kind() == ErrorKind::internal) throw;
        failed_[p] = Error(e.kind(), pair_name(plan_.pairs[p]) + " (residues of " + pair_name(plan_.pairs[ref[p]]) + "): " + e.what());
      }
    });
  }

  // Every two residues of a fit certainly different.
  bool residues_distinct(const PairFit<T>& f) const {
    T scale = fld_.from(Rational(0));
    for (const T& c : f.c) scale = scale + fld_.abs(c);
    for (int h = 0; h < f.heads(); ++h)
      for (int g = h + 1; g < f.heads(); ++g)
        if (fld_.equal(f.c[h], f.c[g], scale) != Truth::no) return false;
    return true;
  }

  // Compact: the assignment of a within link predicted from its one value.
  std::vector<int> predicted_perm(const LabelStep& s) const {
    const PairFit<T>& cur = res_.fits[s.target];
    if (s.link < 0) {  // one head: nothing to assign
      std::vector<int> id(cur.heads());
      for (int h = 0; h < cur.heads(); ++h) id[h] = h;
      return id;
    }
    const T& f1 = answers_[plan_.query_index(s.link, 1)];
    const Assignment a = predicted_assignment(fld_, res_.labelled[s.ref], cur, answers_[0], f1);
    return unique_or_throw(a, pair_name(plan_.pairs[s.link]) + " (one value, predicted for each assignment of heads)");
  }

  bool full_base_fit() const {
    for (int p = 0; p < d_ * d_ && p < static_cast<int>(res_.fits.size()) && p < static_cast<int>(degenerate_.size()); ++p)
      if (degenerate_[p].empty() && res_.fits[p].heads() == opt_.H) return true;
    return false;
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
    // (compact: only the fully sampled pairs (i, 1) can show their type)
    auto full = [&](size_t p) { return plan_.pairs[p].samples == plan_.samples; };
    parallel_for(0, static_cast<size_t>(n), opt_.threads, [&](size_t p) {
      if (plan_.pairs[p].j != 0 && full(p)) minimal(p, chain.f0(fld_, plan_.pairs[p].final_token));
    });
    const int m = type[0];
    for (int p = 0; p < n; ++p)
      if (full(static_cast<size_t>(p)) && (type[p] != m || type[p] < 0)) return;
    if (m >= opt_.H) return;
    throw_not_identifiable(std::string(plan_.schedule == Schedule::compact ? "every fully sampled base pair (i, 1)" : "every base pair") +
                           " fits a type-(" + std::to_string(m) + "," + std::to_string(m) +
                           ") function: the answers are those of a model with " + std::to_string(m) +
                           " canonical heads, fewer than the stated H = " + std::to_string(opt_.H) +
                           " (state H = " + std::to_string(m) + ", or give only a bound with --max-heads)");
  }

  // ---- 4-match: walk the plan's labelling graph from the root; steps that
  // wait for a repaired pair, or repair one, run once what they need is labelled
  void label() {
    res_.labelled.assign(static_cast<size_t>(d_) * d_, PairFit<T>{});
    is_labelled_.assign(static_cast<size_t>(d_) * d_, 0);
    perm_.assign(static_cast<size_t>(d_) * d_, {});
    std::vector<int> id(res_.fits[plan_.root()].heads());
    for (size_t h = 0; h < id.size(); ++h) id[h] = static_cast<int>(h);
    perm_[plan_.root()] = id;
    set_label(plan_.root(), degenerate_[plan_.root()].empty() ? res_.fits[plan_.root()] : repaired_root());
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
        const int bad = !degenerate_[s->target].empty() ? s->target : s->link;
        if (bad >= 0 && !degenerate_[bad].empty()) {
          res_.failed_offset = plan_.pairs[bad].i;
          throw_degenerate(pair_name(plan_.pairs[bad]) + ": " + degenerate_[bad] +
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
  // serves as the reference.
  PairFit<T> repaired_root() {
    const int root = plan_.root(), alt = plan_.base_index(0, 1);
    int link = -1;
    for (const LabelStep& s : plan_.labelling)
      if (s.target == alt && s.rel == Relation::across) link = s.link;
    Assignment a;
    PairFit<T> f;
    if (link >= 0 && degenerate_[alt].empty() && degenerate_[link].empty())
      f = derive_from_link(fld_, res_.fits[alt], res_.fits[link], {}, res_.fits[root], Relation::across, res_.fits[root].P, a);
    if (a.kind != Assignment::Kind::unique) {
      res_.failed_offset = plan_.pairs[root].i;
      throw_degenerate(pair_name(plan_.pairs[root]) + ": " + degenerate_[root] + "; not repairable (the pairs its repair needs are degenerate too)");
    }
    res_.repairs.push_back({root, degenerate_[root],
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
    for (int j = 0; j < d_; ++j) {
      const int q = plan_.base_index(ps.i, j);
      if (j != ps.j && is_labelled_[q]) return q;
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
      if (needs_fallback_[s.target]) {
        deferred.push_back(&s);  // residues cannot label its poles: the fallback asks for more
        return true;
      }
      if (failed_[s.target]) throw *failed_[s.target];
      perm_[s.target] = perm_[s.ref];
      set_label(s.target, permuted(fits[s.target], perm_[s.ref]));
      return true;
    }
    const bool tdeg = !degenerate_[s.target].empty();
    bool ldeg = s.link >= 0 && !degenerate_[s.link].empty();
    if (!tdeg && !ldeg) {
      const PairFit<T>* link = s.link >= 0 ? &fits[s.link] : nullptr;
      const std::string what = s.link >= 0 ? pair_name(plan_.pairs[s.link]) : "residue labelling of " + pair_name(plan_.pairs[s.target]);
      const Assignment a = label_assignment(fld_, res_.labelled[s.ref], fits[s.target], link, s.rel);
      if (a.kind == Assignment::Kind::several && s.fallback && opt_.lean_fallback) {
        deferred.push_back(&s);  // residues cannot tell these heads apart: ask for the across link
        return true;
      }
      if (a.kind == Assignment::Kind::several && a.certain && s.link >= 0 && repairable(static_cast<size_t>(s.link))) {
        degenerate_[s.link] = "ambiguous link, several head assignments fit";
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
      res_.repairs.push_back({s.target, degenerate_[s.target],
                              "derived from " + pair_name(plan_.pairs[s.link]) + " (poles divided by those of " + pair_name(plan_.pairs[s.ref]) + ")" + by, 0});
      return true;
    }
    // the link is degenerate or ambiguous: label the target by its residues instead
    if (other < 0) return false;
    a = label_assignment(fld_, res_.labelled[other], fits[s.target], nullptr, Relation::residue);
    if (a.kind != Assignment::Kind::unique) return false;
    set_label(s.target, permuted(fits[s.target], a.perm));
    res_.repairs.push_back({s.link, degenerate_[s.link], "not used: " + pair_name(plan_.pairs[s.target]) + " labelled by the residues of " +
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
        queries_.push_back(q);
        answers_.push_back(oracle_.query(q));
        into.push_back(answers_.back());
      }
    };
    std::vector<std::vector<T>> f(steps.size()), y(steps.size());
    for (size_t s = 0; s < steps.size(); ++s) {
      const LabelStep& st = *steps[s];
      const PairSpec& tp = plan_.pairs[st.target];
      f[s] = samples(static_cast<size_t>(st.target), chain_.f0(fld_, tp.final_token));
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
        const Assignment a = predicted_assignment(fld_, ref, fit, chain_.f0(fld_, st.fallback->final_token), y[s][0], Relation::across);
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

  // ---- a repaired run: fresh witness queries (proofs/21-repair-witness.md)
  // A repair matches heads through relations of this draw; on a very special
  // draw those can hold for a wrong matching too, and the plan's answers then
  // fit a second model whose heads reproduce every answer (tiny token ranges
  // such as [-1, 1] make this likely; proofs/21 keeps an instance). Two canonical models that differ as functions differ at almost
  // every sequence of length 2H+1, so fresh random sequences, predicted from
  // the recovered heads and then asked, tell them apart: a certain
  // disagreement ends the run degenerate. Their own seed stream leaves the
  // plan's draws as they were; the queries count as repair_queries.
  void witness() {
    Rng rng(opt_.seed ^ 0x7769746e65737331ULL);
    const long before = oracle_.queries();
    const long n = 2L * opt_.H + 1;
    for (int w = 0; w < kWitnessQueries; ++w) {
      // tokens on the plan's grid (the same L); the final token nonzero, since
      // at x_N = 0 every score vanishes and models with equal sum_h v_h agree
      Query q;
      for (long r = 0; r < n; ++r) {
        QVec x(static_cast<size_t>(d_));
        for (bool zero = true; zero;) {
          zero = true;
          for (int i = 0; i < d_; ++i) {
            x[static_cast<size_t>(i)] = Rational(rng.uniform_int(-opt_.tokens.range, opt_.tokens.range), static_cast<unsigned long>(opt_.tokens.den));
            zero = zero && x[static_cast<size_t>(i)].is_zero();
          }
          zero = zero && r == n - 1;
        }
        q.push_back(Run{std::move(x), 1});
      }
      const T predicted = evaluate_heads(fld_, res_.heads, q);
      queries_.push_back(q);
      answers_.push_back(oracle_.query(q));
      res_.repair_queries = oracle_.queries() - before;
      if (fld_.equal(predicted, answers_.back()) == Truth::no)
        throw_degenerate("the repaired pairs do not determine the heads at this draw: fresh witness query " + std::to_string(w + 1) +
                         " disagrees with the recovered heads (the plan's answers fit more than one model)");
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
  std::vector<std::string> degenerate_;  // per pair: why it is degenerate at this draw, empty if not
  std::vector<char> is_labelled_;        // per base pair
  std::vector<std::vector<int>> perm_;   // per labelled base pair: its own head for each global head (compact)
  std::vector<std::optional<Error>> failed_;  // compact: a pair whose fit failed, raised when labelled
  std::vector<char> needs_fallback_;           // compact: a pair whose residues cannot label its poles
};

}  // namespace

namespace {
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
}  // namespace

template <class T>
LearnResult<T> learn(Oracle<T>& oracle, const LearnOptions& opt) {
  if (opt.H < 1) throw Error(ErrorKind::usage, "head count must be at least 1");
  LearnResult<T> res;
  res.plan = learner_plan(oracle.dim(), opt, &res.redraws);
  KeepingOracle<T> keep(oracle);
  std::string first_error;
  try {
    Path<T>(keep, opt, res).run();
    return res;
  } catch (const Error& e) {
    // One fresh offset (Repair): the paper schedule with its own draws only.
    if (e.kind() != ErrorKind::degenerate || res.failed_offset < 0 || !opt.repair || opt.schedule != Schedule::paper || opt.draws ||
        opt.samples_per_pair != 0 || oracle.dim() < 2)
      throw;
    first_error = e.what();
  }
  const int i = res.failed_offset;
  const int d = oracle.dim();
  Rng rng(opt.seed ^ 0x6672657368ULL);  // the fresh offset's own stream
  QMat Delta = res.plan.Delta;
  for (int attempt = 0;; ++attempt) {
    if (attempt == 64) throw_degenerate(first_error + "; a fresh offset was singular 64 times");
    for (int r = 0; r < d; ++r) Delta(r, i) = Rational(rng.uniform_int(-opt.tokens.range, opt.tokens.range), static_cast<unsigned long>(opt.tokens.den));
    if (!det(Delta).is_zero()) break;
  }
  LearnResult<T> again;
  again.plan = make_plan(opt.schedule, res.plan.B, Delta, opt.H, opt.samples_per_pair);
  again.redraws = res.redraws;
  LearnOptions o2 = opt;
  o2.repair = true;
  const long before = keep.sent();
  keep.serve_kept();
  try {
    Path<T>(keep, o2, again).run();
  } catch (const Error& e) {
    throw Error(e.kind(), first_error + "; after a fresh offset delta_" + std::to_string(i + 1) + ": " + e.what());
  }
  const long asked = keep.sent() - before;
  // the witnesses of the new run (if it repaired pairs) were asked after its plan
  const long plan_asked = asked - again.repair_queries;
  Repair fresh;
  fresh.pair = again.plan.base_index(i, 0);
  fresh.reason = first_error;
  fresh.route = "offset delta_" + std::to_string(i + 1) + " drawn afresh: the " + std::to_string(plan_asked) +
                " queries that use it asked, the others kept";
  fresh.queries = plan_asked;
  again.repairs.insert(again.repairs.begin(), fresh);
  again.repair_queries += plan_asked;
  again.answers = static_cast<long>(again.plan.query_count()) + again.repair_queries;
  return again;
}

#define MHAQ_INSTANTIATE(F) template LearnResult<F::value_type> learn<F::value_type>(Oracle<F::value_type>&, const LearnOptions&);
MHAQ_FOR_EACH_FIELD(MHAQ_INSTANTIATE)
#undef MHAQ_INSTANTIATE

}  // namespace mhaq
