// The learner of docs/math/ (pairs, schedules, unknown H, degeneracies): the path through the stages,
// written once for every field.
#include "mhaq/stages/learner.hpp"

#include <algorithm>
#include <atomic>
#include <optional>
#include <string>

#include "mhaq/arith/all_fields.hpp"
#include "mhaq/arith/value_bytes.hpp"
#include "mhaq/base/distribute.hpp"
#include "mhaq/base/parallel.hpp"
#include "mhaq/stages/1-oracle/keeping_oracle.hpp"
#include "mhaq/stages/4-match/known_residues.hpp"
#include "mhaq/stages/grid_guard.hpp"
#include "mhaq/stages/self_check.hpp"

namespace mhaq {

namespace {
// The final tokens of the plan: B, and with biases b_{d+1} from its own stream.
QMat plan_finals(const QMat& B, const LearnOptions& opt) {
  if (!opt.bias) return B;
  Rng rng(opt.seed ^ 0x6166666e65ULL);
  return with_affine_final(rng, B, opt.tokens);
}
}  // namespace

Plan learner_plan(int d, const LearnOptions& opt, int* redraws) {
  if (opt.draws) {
    if (opt.draws->B.rows() != d || opt.draws->B.cols() != d || opt.draws->Delta.rows() != d || opt.draws->Delta.cols() != d)
      throw Error(ErrorKind::usage, "the design's B and Delta must be d x d");
    if (redraws) *redraws = opt.draws->redraws;
    return make_plan(opt.schedule, plan_finals(opt.draws->B, opt), opt.draws->Delta, opt.H, opt.samples_per_pair, opt.rank);
  }
  Rng rng(opt.seed);
  const Draws dr = draw_tokens(rng, d, opt.tokens);
  if (redraws) *redraws = dr.redraws;
  return make_plan(opt.schedule, plan_finals(dr.B, opt), dr.Delta, opt.H, opt.samples_per_pair, opt.rank);
}

namespace {

constexpr int kWitnessQueries = 3;  // per repaired run (proofs/21)

[[noreturn]] void rethrow_with(const Error& e, const std::string& where) { throw Error(e.kind(), where + ": " + e.what()); }

// Thrown by a run told H when every fully sampled pair shows the same m < H
// heads: learn() confirms the count (confirm_fewer_heads) before it calls
// the stated H too large.
struct FewerHeads {
  int m;
  Error error;  // what the run failed with
};

template <class T>
class Path {
 public:
  using F = Field<T>;
  Path(Oracle<T>& oracle, const LearnOptions& opt, LearnResult<T>& res)
      : oracle_(oracle), fld_(oracle.field()), opt_(opt), res_(res), plan_(res.plan), d_(plan_.d) {}

  void run() {
    ask();
    try {
      phase("fitting pairs");
      if (plan_.schedule == Schedule::compact) fit_compact();
      else fit_all();
      phase("labelling");
      label();
    } catch (const Error& e) {
      // a base pair that fitted all H heads already shows H is not too large
      if (!opt_.heads_is_bound && !full_base_fit() &&
          (e.kind() == ErrorKind::degenerate || e.kind() == ErrorKind::inconsistent || e.kind() == ErrorKind::unable))
        if (const int m = fewer_heads_shown(); m >= 0) throw FewerHeads{m, e};
      throw;
    }
    phase("solving for the heads");
    res_.heads = solve_heads(fld_, plan_, res_.labelled, res_.heads_found, opt_.threads, &chain_.DeltaInv, &res_.ranks);
    if (plan_.bias) res_.beta = beta();
    if (!res_.repairs.empty()) {
      phase("witness queries");
      witness();
    }
    // With H known and no pair repaired, every pair showed H heads and every
    // assignment was unique, so the answers determine the heads: only a bound
    // (H0, or the rank schedule's) or a repair leaves room for a second model
    // that fits them. A repair has its own witnesses (above), which suffice
    // unless the grid is tiny.
    const GridGuard guard = grid_guard(d_, opt_);
    if (grid_guard_asks(guard, opt_, !res_.repairs.empty())) {
      phase("grid witness queries");
      grid_witness(guard);
    }
    if (opt_.self_check) {
      phase("self-check");
      self_check();
    }
    res_.answers = static_cast<long>(answers_.size());
  }

 private:
  void phase(const char* name) const {
    if (opt_.progress) opt_.progress->phase(name);
  }
  void fitted() const {
    if (opt_.progress) opt_.progress->fitted();
  }

  // A run across MPI ranks (base/distribute.hpp) whose numbers can travel.
  bool spread() const { return run_across_ranks() && ValueBytes<T>::available; }
  // ---- 1-oracle: the plan's queries, in order, in batches (an oracle whose
  // answers do not depend on the order asked answers a batch on the threads)
  // The queries are kept in a QueryLog and formed as a Query one batch at a
  // time: the full list as Query values would take about 2 KB per query at d = 64.
  void ask() {
    queries_.push_back(plan_.first);
    for (const PairSpec& pr : plan_.pairs)
      for (const Query& q : plan_.pair_queries(pr)) queries_.push_back(q);
    if (opt_.progress) {
      opt_.progress->plan(static_cast<long>(queries_.size()), static_cast<long>(plan_.pairs.size()));
      opt_.progress->phase("answering queries");
    }
    answers_.reserve(queries_.size());
    constexpr size_t kBatch = 4096;
    std::vector<Query> batch;
    for (size_t b = 0; b < queries_.size(); b += kBatch) {
      const size_t e = std::min(queries_.size(), b + kBatch);
      batch.clear();
      for (size_t i = b; i < e; ++i) batch.push_back(queries_[i]);
      std::vector<T> a = oracle_.query_all(batch, 0, batch.size(), opt_.threads);
      for (T& x : a) answers_.push_back(std::move(x));
      if (opt_.progress) opt_.progress->answered(static_cast<long>(e - b));
    }
  }

  std::vector<T> samples(size_t p, const T& f0) const {
    std::vector<T> f{f0};
    for (long k = 1; k < plan_.pairs[p].samples; ++k) f.push_back(answers_[plan_.query_index(static_cast<long>(p), k)]);
    return f;
  }

  // ---- 3-fit: every pair, the first column first (its limits chain f(0))
  // A pair that can be repaired (Repair, stages/4-match/labelling.hpp): every pair of the paper schedule.
  bool repairable(size_t) const { return opt_.repair && plan_.schedule == Schedule::paper && d_ >= 2; }

  void fit_all() {
    auto& fits = res_.fits;
    fits.resize(plan_.pairs.size());
    degenerate_.assign(plan_.pairs.size(), std::string());
    if (opt_.keep_fit_samples) res_.fit_samples.assign(plan_.pairs.size(), {});
    const int H = opt_.H;
    // the samples of a pair fitted with H heads and not set aside are kept for the caller
    auto keep_samples = [&](size_t p, const std::vector<T>& f) {
      if (opt_.keep_fit_samples && !opt_.heads_is_bound && degenerate_[p].empty()) res_.fit_samples[p] = f;
    };
    // pair p from its samples f (fits[p], and degenerate_[p] when it is set aside)
    auto fit_new = [&](size_t p, const std::vector<T>& f) {
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
    auto fit_one = [&](size_t p, const T& f0) {
      fitted();
      const std::vector<T> f = samples(p, f0);
      std::string key;
      if (stores_fits()) {
        key = fit_key(p, f);
        if (const std::string* image = opt_.fit_store->find_fit(key)) {
          // the image passed its line's checksum; one that still does not
          // read back was written by another program: an input error
          try {
            ByteReader in(*image);
            read_fit(p, in);
            if (!in.done()) throw_internal("bytes left over");
          } catch (const Error& e) {
            throw_input("the checkpoint's fit of " + pair_name(plan_.pairs[p]) + " is not a fit as mhaq writes it (" + e.what() + ")");
          }
          keep_samples(p, f);
          return;
        }
      }
      fit_new(p, f);
      keep_samples(p, f);
      // a fit that throws is not stored: a resumed run meets the same error
      if (!key.empty()) opt_.fit_store->put_fit(key, fit_image(p));
    };
    parallel_for(0, static_cast<size_t>(d_), opt_.threads, [&](size_t i) { fit_one(static_cast<size_t>(plan_.base_index(static_cast<int>(i), 0)), answers_[0]); });
    chain_ = make_chaining(fits);
    auto first_column = [&](size_t p) { return plan_.pairs[p].kind == PairKind::base && plan_.pairs[p].j == 0; };
    std::atomic<long> here{0};  // pairs fitted by this rank after the first column
    auto fit_rest = [&](size_t p) {
      if (first_column(p)) return;
      fit_one(p, chain_.f0(fld_, plan_.pairs[p].final_token));
      ++here;
    };
    if (!spread()) {
      parallel_for(0, plan_.pairs.size(), opt_.threads, fit_rest);
    } else {
      // each rank fits its share; every rank then reads every pair's fit and why it is degenerate
      auto write = [&](size_t p, std::string& b) {
        fit_rest(p);
        b += fit_image(p);
      };
      auto read = [&](size_t p, ByteReader& in) {
        read_fit(p, in);
        if (opt_.keep_fit_samples && !first_column(p)) keep_samples(p, samples(p, chain_.f0(fld_, plan_.pairs[p].final_token)));
      };
      if (opt_.progress) opt_.progress->share_pairs(shard().size);
      gather_across_ranks(plan_.pairs.size(), 1, opt_.threads, write, read);
      if (opt_.progress) {
        opt_.progress->share_pairs(1);
        opt_.progress->fitted(static_cast<long>(plan_.pairs.size()) - d_ - here.load());  // the other ranks' pairs
      }
    }
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

  // A pair's fit and why it is degenerate ("" when it is not), as exact
  // bytes: what ranks exchange and a FitStore keeps.
  std::string fit_image(size_t p) const {
    std::string b;
    ValueBytes<T>::write(b, res_.fits[p].P);
    write_values(b, res_.fits[p].r);
    write_values(b, res_.fits[p].c);
    write_text(b, degenerate_[p]);
    return b;
  }
  void read_fit(size_t p, ByteReader& in) {
    ValueBytes<T>::read(in, res_.fits[p].P);
    read_values(in, res_.fits[p].r);
    read_values(in, res_.fits[p].c);
    degenerate_[p] = in.text();
  }
  bool stores_fits() const { return opt_.fit_store && !spread() && ValueBytes<T>::available; }
  // What fit_one's result depends on: the pair (its kind decides how a
  // failure is handled), the head count and whether it is a bound, the
  // repair option, the field (L of Q(tau); the working precision of balls
  // and MPFR) and the samples' exact images.
  std::string fit_key(size_t p, const std::vector<T>& f) const {
    std::string b = std::to_string(p) + ' ' + std::to_string(opt_.H) + ' ' + (opt_.heads_is_bound ? 'b' : 'h') + (repairable(p) ? 'r' : 'n') + ' ' +
                    field_key(fld_) + ' ';
    for (const T& x : f) ValueBytes<T>::write(b, x);
    return b;
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
      fitted();
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
        needs_fallback_[s.target] = opt_.lean_fallback && s.fallback && !residues_distinct(fld_, fits[s.ref]);
      }
    parallel_for(0, plan_.pairs.size(), opt_.threads, [&](size_t p) {
      if (ref[p] < 0 || needs_fallback_[p]) return;
      fitted();
      try {
        fits[p] = fit_known_residues(fld_, samples(p, chain_.f0(fld_, plan_.pairs[p].final_token)), fits[ref[p]].c);
      } catch (const Error& e) {
        if (e.kind() == ErrorKind::internal) throw;
        failed_[p] = Error(e.kind(), pair_name(plan_.pairs[p]) + " (residues of " + pair_name(plan_.pairs[ref[p]]) + "): " + e.what());
      }
    });
  }

  // beta = f([b_1]) - v^T b_1 with v = sum_h v_h (docs/math/biases.md)
  T beta() const {
    T vb = fld_.from(Rational(0));
    for (const auto& h : res_.heads)
      for (int i = 0; i < d_; ++i)
        if (!plan_.B(i, 0).is_zero()) vb = vb + fld_.from(plan_.B(i, 0)) * h.v[static_cast<size_t>(i)];
    return answers_[0] - vb;
  }
  const T* beta_ptr() const { return res_.beta ? &*res_.beta : nullptr; }

  bool full_base_fit() const {
    for (int p = 0; p < plan_.base_count() && p < static_cast<int>(res_.fits.size()) && p < static_cast<int>(degenerate_.size()); ++p)
      if (degenerate_[p].empty() && res_.fits[p].heads() == opt_.H) return true;
    return false;
  }

  Chaining<T> make_chaining(const std::vector<PairFit<T>>& fits) const {
    Chaining<T> c{answers_[0], {}, {}, plan_.B.col(0), {}, {}, {}, {}};
    if (!inverse(plan_.Delta, c.DeltaInv)) throw_internal("Delta singular after the draw check");
    for (int i = 0; i < d_; ++i) c.vdelta.push_back(fits[plan_.base_index(i, 0)].P - answers_[0]);
    for (const PairSpec& ps : plan_.pairs) c.remember(ps.final_token);
    c.convert(fld_);
    return c;
  }

  // Known H, and a stage failed: the type m of every fully sampled pair of
  // the plan (base pairs and links) when they all fit the same type-(m,m)
  // function with m < H; -1 otherwise. A pair that shows more heads than
  // another proves the model has more than the fewer: the failure is then
  // the draw's, and stands. All pairs showing m is what a model of m
  // canonical heads gives at every draw, and what a special draw of a model
  // with more can give too (a zero residue at one offset, colliding poles at
  // another): learn() tells the two apart (confirm_fewer_heads).
  int fewer_heads_shown() {
    std::vector<PairFit<T>> fits(plan_.pairs.size());
    std::vector<int> type(plan_.pairs.size(), -1);
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
      if (type[plan_.base_index(i, 0)] < 0) return -1;
    const Chaining<T> chain = make_chaining(fits);
    // (compact: only the pairs (i, 1) are fully sampled and can show their type)
    auto full = [&](size_t p) { return plan_.pairs[p].samples == plan_.samples; };
    auto first_column = [&](size_t p) { return plan_.pairs[p].kind == PairKind::base && plan_.pairs[p].j == 0; };
    parallel_for(0, plan_.pairs.size(), opt_.threads, [&](size_t p) {
      if (!first_column(p) && full(p)) minimal(p, chain.f0(fld_, plan_.pairs[p].final_token));
    });
    const int m = type[plan_.base_index(0, 0)];
    for (size_t p = 0; p < plan_.pairs.size(); ++p)
      if (full(p) && type[p] != m) return -1;
    return m < opt_.H ? m : -1;
  }

  // ---- 4-match: the labelling walk, with its repairs and fallbacks
  void label() {
    LabelRun<T> run{chain_,          failed_,           needs_fallback_,     res_.heads_found,      queries_,
                    answers_,        res_.fits,         degenerate_,         res_.labelled,         res_.repairs,
                    res_.fallback_pairs, res_.fallback_fits, res_.fallback_queries, res_.failed_offset};
    label_pairs(oracle_, plan_, LabelOptions{opt_.repair, opt_.lean_fallback, opt_.threads}, run);
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
      const T predicted = evaluate_heads(fld_, res_.heads, q, beta_ptr());
      queries_.push_back(q);
      answers_.push_back(oracle_.query(q));
      res_.repair_queries = oracle_.queries() - before;
      if (fld_.equal(predicted, answers_.back()) == Truth::no)
        throw_degenerate("the repaired pairs do not determine the heads at this draw: fresh witness query " + std::to_string(w + 1) +
                         " disagrees with the recovered heads (the plan's answers fit more than one model)");
    }
  }

  // ---- a small token grid: pair witnesses from a larger grid (proofs/39-grid-witness.md)
  // On a grid where the plan's own bound (proofs/09) is not small, the plan's
  // answers can be those of a second model at every pair asked (two heads with
  // equal poles at every drawn pair look like one). A pair witness (x, y) with
  // x, y drawn from {-R_w..R_w}/den and asked at k = 0..2H copies of x before y
  // tells two distinct models of at most H heads apart unless a nonzero
  // polynomial of degree 2 or less vanishes at (x, y). All its queries are
  // asked, then compared: a certain disagreement ends the run degenerate.
  void grid_witness(const GridGuard& g) {
    if (!opt_.grid_witness_refused.empty()) throw Error(ErrorKind::budget, std::string(grid_guard_marker()) + ": " + opt_.grid_witness_refused);
    const long before = oracle_.queries();
    const size_t first = queries_.size();
    for (const Query& q : grid_witness_queries(d_, opt_, g)) queries_.push_back(q);
    for (size_t q = first; q < queries_.size(); ++q) answers_.push_back(oracle_.query(queries_[q]));
    res_.grid_witness_queries = oracle_.queries() - before;
    for (size_t q = first; q < queries_.size(); ++q)
      if (fld_.equal(evaluate_heads(fld_, res_.heads, queries_[q], beta_ptr()), answers_[q]) == Truth::no)
        throw_degenerate(std::string(grid_guard_marker()) + ": the plan's answers fit more than one model (grid witness query " +
                         std::to_string(q - first + 1) + " of " + std::to_string(queries_.size() - first) +
                         " disagrees with the recovered heads); another --seed, or a larger --token-range, draws a plan on which this is less likely "
                         "(from --token-range " + std::to_string(grid_guard_quiet_range(d_, opt_.H, opt_.bias)) +
                         " on, the run's own Schwartz-Zippel bound is below 2^-10 and no witnesses are asked)");
  }

  // ---- the learner's own check, at no query cost
  void self_check() {
    const HeadEvaluator<F> predict(fld_, res_.heads, queries_, opt_.threads, beta_ptr());
    res_.self_check = self_check_answers(queries_.size(), opt_.threads,
                                         [&](size_t q) { return predict.matches_at(q, queries_[q], answers_[q]); },
                                         res_.self_check_failed);
  }

  Oracle<T>& oracle_;
  const F& fld_;
  const LearnOptions& opt_;
  LearnResult<T>& res_;
  const Plan& plan_;
  const int d_;
  QueryLog queries_;
  std::vector<T> answers_;
  Chaining<T> chain_;
  std::vector<std::string> degenerate_;  // per pair: why it is degenerate at this draw, empty if not
  std::vector<std::optional<Error>> failed_;  // compact: a pair whose fit failed, raised when labelled
  std::vector<char> needs_fallback_;           // compact: a pair whose residues cannot label its poles
};

}  // namespace

// Every fully sampled pair of a run told H shows m < H heads (FewerHeads).
// A run told only H0 = H, on the same answers, tells a model of m canonical
// heads from a special draw as far as the answers can: it must recover m
// heads that reproduce every answer, and on a grid where the plan's own
// bound does not cover a wrong model it asks the small grid's witnesses
// (grid_guard.hpp), as any such run does. Only then is the stated H too
// large, at every seed: not identifiable. Otherwise returns the error the
// run ends with: the draw is degenerate (another seed may help), or a
// float run cannot decide (unable).
template <class T>
Error confirm_fewer_heads(KeepingOracle<T>& keep, const LearnOptions& opt, const Plan& plan, const FewerHeads& f) {
  const std::string m = std::to_string(f.m), H = std::to_string(opt.H);
  const std::string shown = "every fully sampled pair fits a type-(" + m + "," + m + ") function, fewer heads than the stated H = " + H;
  LearnOptions bound = opt;
  bound.heads_is_bound = true;
  LearnResult<T> res;
  res.plan = plan;
  keep.serve_kept();
  std::string why;
  try {
    Path<T>(keep, bound, res).run();
    if (res.heads_found < opt.H && res.self_check != Truth::no)
      throw_not_identifiable(shown + ", and the " + m + " heads that a run told only --max-heads " + H + " recovers from the same answers reproduce every one" +
                             (res.grid_witness_queries > 0 ? " and " + std::to_string(res.grid_witness_queries) + " witness queries from a wider grid" : std::string()) +
                             ": the answers are those of a model with " + m + " canonical heads (state H = " + m + ", or give only a bound with --max-heads)");
    why = res.self_check == Truth::no ? "its heads do not reproduce every answer" : "it finds " + std::to_string(res.heads_found) + " heads";
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::not_identifiable || e.kind() == ErrorKind::internal || e.kind() == ErrorKind::usage) throw;
    if (e.kind() == ErrorKind::budget)
      throw Error(ErrorKind::budget, shown + "; telling a model of " + m + " canonical heads from a special draw takes witness queries, and " + e.what());
    if (e.kind() == ErrorKind::unable) return Error(ErrorKind::unable, shown + ", and a run told only --max-heads " + H + " cannot decide at this precision: " + e.what());
    why = e.what();
  }
  return Error(ErrorKind::degenerate, shown + ", yet a run told only --max-heads " + H + " on the same answers does not confirm a model of " + m +
                                          " heads (" + why + "): the draw is special (the original failure: " + f.error.what() +
                                          "); another --seed may help");
}

template <class T>
LearnResult<T> learn(Oracle<T>& oracle, const LearnOptions& opt) {
  if (opt.H < 1) throw Error(ErrorKind::usage, "head count must be at least 1");
  LearnResult<T> res;
  res.plan = learner_plan(oracle.dim(), opt, &res.redraws);
  KeepingOracle<T> keep(oracle);
  std::optional<Error> failed;
  try {
    Path<T>(keep, opt, res).run();
    return res;
  } catch (const FewerHeads& f) {
    failed = confirm_fewer_heads(keep, opt, res.plan, f);
  } catch (const Error& e) {
    failed = e;
  }
  // One fresh offset (Repair): the paper schedule with its own draws only.
  if (failed->kind() != ErrorKind::degenerate || res.failed_offset < 0 || !opt.repair || opt.schedule != Schedule::paper || opt.draws ||
      opt.samples_per_pair != 0 || oracle.dim() < 2)
    throw *failed;
  const std::string first_error = failed->what();
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
  again.plan = make_plan(opt.schedule, res.plan.B, Delta, opt.H, opt.samples_per_pair, opt.rank);
  again.redraws = res.redraws;
  LearnOptions o2 = opt;
  o2.repair = true;
  const long before = keep.sent();
  keep.serve_kept();
  const std::string after = first_error + "; after a fresh offset delta_" + std::to_string(i + 1) + ": ";
  try {
    Path<T>(keep, o2, again).run();
  } catch (const FewerHeads& f) {
    const Error e = confirm_fewer_heads(keep, o2, again.plan, f);
    throw Error(e.kind(), after + e.what());
  } catch (const Error& e) {
    throw Error(e.kind(), after + e.what());
  }
  const long asked = keep.sent() - before;
  // the witnesses of the new run (if it repaired pairs) were asked after its plan
  const long plan_asked = asked - again.repair_queries - again.grid_witness_queries;
  Repair fresh;
  fresh.pair = again.plan.base_index(i, 0);
  fresh.reason = first_error;
  fresh.route = "offset delta_" + std::to_string(i + 1) + " drawn afresh: the " + std::to_string(plan_asked) +
                " queries that use it asked, the others kept";
  fresh.queries = plan_asked;
  again.repairs.insert(again.repairs.begin(), fresh);
  again.repair_queries += plan_asked;
  again.answers = static_cast<long>(again.plan.query_count()) + again.repair_queries + again.grid_witness_queries;
  return again;
}

#define MHAQ_INSTANTIATE(F) template LearnResult<F::value_type> learn<F::value_type>(Oracle<F::value_type>&, const LearnOptions&);
MHAQ_FOR_EACH_FIELD(MHAQ_INSTANTIATE)
#undef MHAQ_INSTANTIATE

}  // namespace mhaq
