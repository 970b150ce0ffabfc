// recover for a hidden one-layer transformer (claim 5).
#include <arb.h>

#include <cmath>
#include <limits>
#include <sstream>

#include "mhaq/arith/qtau_access.hpp"
#include "mhaq/base/parallel.hpp"
#include "mhaq/base/random.hpp"
#include "mhaq/oracle/oracle_stack.hpp"
#include "mhaq/run/arith_policy.hpp"
#include "mhaq/run/certificate.hpp"
#include "mhaq/stages/2-schedule/design.hpp"
#include "mhaq/stages/4-match/match.hpp"
#include "mhaq/stages/transformer_learner.hpp"
#include "mhaq/oracle/jet_oracle.hpp"
#include "mhaq/run/external_run.hpp"
#include "mhaq/run/record_json.hpp"
#include "mhaq/run/recover.hpp"
#include "mhaq/run/judge_floats.hpp"
#include "mhaq/run/recover_limits.hpp"
#include "mhaq/run/report.hpp"

namespace mhaq {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

template <class T>
TransformerRecord learned_record(const Field<T>& F, const TransformerLearnResult<T>& res) {
  TransformerRecord out;
  for (const auto& W : res.W) {
    std::vector<std::vector<std::string>> m;
    for (int i = 0; i < W.rows(); ++i) {
      std::vector<std::string> row;
      for (int j = 0; j < W.cols(); ++j) row.push_back(F.str(W(i, j)));
      m.push_back(std::move(row));
    }
    out.W.push_back(std::move(m));
  }
  for (const auto& n : res.neurons) {
    TransformerRecord::Neuron rec{F.str(n.u), {}};
    for (const auto& Uh : n.U) {
      std::vector<std::string> v;
      for (const auto& x : Uh) v.push_back(F.str(x));
      rec.U.push_back(std::move(v));
    }
    out.neurons.push_back(std::move(rec));
  }
  return out;
}

// The fresh sequences of the functional check: 20, of lengths 1..8, tokens
// on the oracle's grid within [-1, 1], from their own seeded stream.
std::vector<Query> functional_sequences(int d, long den, std::uint64_t seed) {
  Rng rng(seed ^ 0x66756e6374696f6eULL);
  std::vector<Query> out;
  for (int t = 0; t < 20; ++t) {
    const long len = 1 + t % 8;
    Query q;
    for (long i = 0; i < len; ++i) {
      QVec x(d);
      for (auto& c : x) c = Rational(rng.uniform_int(-den, den), static_cast<unsigned long>(den));
      q.push_back(Run{x, 1});
    }
    out.push_back(std::move(q));
  }
  return out;
}

// ---- exact: the learned parameters are rationals; canonical equality and T - T' = 0
void compare(RecoverResult& r, RunFacts& f, const TransformerModel& truth, const TransformerModel& canon, const TransformerLearnResult<QTau>& res,
             const Field<QTau>& F, long den, std::uint64_t seed) {
  TransformerModel got;
  got.d = truth.d;
  auto rat = [](const QTau& x) {
    Rational q;
    if (!QTauAccess::is_rational(x, q)) throw_internal("transformer: a recovered exact parameter is not rational");
    return q;
  };
  for (const auto& W : res.W) {
    QMat M(truth.d, truth.d);
    for (int i = 0; i < truth.d; ++i)
      for (int j = 0; j < truth.d; ++j) M(i, j) = rat(W(i, j));
    got.W.push_back(M);
  }
  got.U.assign(got.W.size(), {});
  for (const auto& n : res.neurons) {
    got.u.push_back(rat(n.u));
    for (size_t h = 0; h < got.W.size(); ++h) {
      QVec v(truth.d);
      for (int a = 0; a < truth.d; ++a) v[a] = rat(n.U[h][a]);
      got.U[h].push_back(v);
    }
  }
  const bool eq = !got.u.empty() && transformer_equal_canonical(got.canonical(), canon);
  r.truth.exact_match = eq;
  int zero = 0;
  const auto seqs = functional_sequences(truth.d, den, seed);
  for (const auto& q : seqs) {
    const QTau diff = evaluate_transformer_exact(got, q, QTauAccess::L(F)) - evaluate_transformer_exact(truth, q, QTauAccess::L(F));
    zero += F.is_zero(diff) == Truth::yes;
  }
  r.truth.functional_check = FunctionalCheck{static_cast<long>(seqs.size()), zero, zero == static_cast<int>(seqs.size())};
  f.agrees = eq;  // the functional check is a report (equal canonical forms are equal functions)
  if (!f.agrees) f.disagreement = eq ? "T - T' is not zero on a fresh sequence" : "the recovered transformer differs from the canonical truth (exact comparison)";
}

// ---- balls: the widest radius over every recovered W and U entry (log2), for
// a run with or without a truth to compare with
template <class T>
void record_radius(RecoverResult& r, const Field<T>& F, const TransformerLearnResult<T>& res) {
  if (ArithPolicy<T>::truth_test != TruthTest::containment) return;
  PrecisionScope scope(std::max(working_precision(), 53L) + 64);
  double rad = -kInf;
  auto upd = [&](const T& x) {
    const Ball b = F.enclose(x);
    if (!mag_is_zero(arb_radref(b.raw()))) {
      Ball l;
      arf_set_mag(arb_midref(l.raw()), arb_radref(b.raw()));
      arb_log_base_ui(l.raw(), l.raw(), 2, 64);
      rad = std::max(rad, l.mid_double());
    }
  };
  for (const auto& W : res.W)
    for (int i = 0; i < W.rows(); ++i)
      for (int j = 0; j < W.cols(); ++j) upd(W(i, j));
  for (const auto& n : res.neurons)
    for (const auto& Uh : n.U)
      for (const auto& x : Uh) upd(x);
  r.truth.max_radius = pow2_value(rad);
  r.truth.max_radius_decimal = decimal_of_log2(rad);
}

// ---- ball and float: match heads by W, neurons by (u, U); containment or relative error
template <class T>
void compare(RecoverResult& r, RunFacts& f, const TransformerModel& truth, const TransformerModel& canon, const TransformerLearnResult<T>& res,
             const Field<T>& F, long, std::uint64_t seed) {
  const int d = canon.d, H = canon.heads(), m = canon.neurons();
  PrecisionScope scope(std::max(working_precision(), 53L) + 64);
  auto ball = [&F](const T& x) { return F.enclose(x); };
  auto log2_rel = [](const Ball& diff2, const Ball& norm2) {  // log2 sqrt(diff2 / norm2), a zero norm counting as 1
    Ball q = arb_is_zero(norm2.raw()) ? diff2 : diff2 / norm2;
    if (arf_is_zero(arb_midref(q.raw()))) return -kInf;
    arb_sqrt(q.raw(), q.raw(), working_precision());
    arb_log_base_ui(q.raw(), q.raw(), 2, working_precision());
    return q.mid_double();
  };
  const bool rigorous = ArithPolicy<T>::truth_test == TruthTest::containment;
  // A distance summed entry by entry: the midpoints' squared difference from
  // the truth, the truth's squared norm, and whether every ball holds its
  // true entry; containment decides for balls, the relative error for floats.
  struct Gap {
    Ball d2 = Ball(0L), n2 = Ball(0L);
    bool in = true;
  };
  auto add = [&ball](Gap& gap, const T& got, const auto& truth) {
    const Ball x = ball(got), t(truth);
    gap.in = gap.in && x.contains(truth);
    Ball e = x - t;
    arb_get_mid_arb(e.raw(), e.raw());
    gap.d2 += e * e;
    gap.n2 += t * t;
  };
  auto gap_log2 = [&](const Gap& gap) { return rigorous ? (gap.in ? 0 : kInf) : log2_rel(gap.d2, gap.n2); };
  if (static_cast<int>(res.W.size()) != H || static_cast<int>(res.neurons.size()) != m) {
    f.agrees = false;
    f.disagreement = std::to_string(res.W.size()) + " heads and " + std::to_string(res.neurons.size()) + " neurons recovered; the canonical truth has " +
                     std::to_string(H) + " and " + std::to_string(m);
    if (rigorous) r.truth.contains_truth = false;
    else r.truth.max_rel_error = NAN;
    return;
  }
  // heads: by containment (balls) or least relative error of W (floats)
  std::vector<std::vector<double>> hc(H, std::vector<double>(H));
  for (int h = 0; h < H; ++h)
    for (int g = 0; g < H; ++g) {
      Gap gap;
      for (int i = 0; i < d; ++i)
        for (int j = 0; j < d; ++j) add(gap, res.W[g](i, j), canon.W[h](i, j));
      hc[h][g] = gap_log2(gap);
    }
  double hworst = kInf;
  const std::vector<int> hp = bottleneck_matching(hc, &hworst);
  // neurons under that head order: u equal, U by containment or relative error
  std::vector<std::vector<double>> nc(m, std::vector<double>(m, kInf));
  if (!hp.empty())
    for (int j = 0; j < m; ++j)
      for (int k = 0; k < m; ++k) {
        if (!ball(res.neurons[k].u).contains(canon.u[j])) continue;
        Gap gap;
        for (int h = 0; h < H; ++h)
          for (int a = 0; a < d; ++a) add(gap, res.neurons[k].U[hp[h]][a], canon.U[h][j][a]);
        nc[j][k] = gap_log2(gap);
      }
  double nworst = kInf;
  const bool nmatch = !hp.empty() && !bottleneck_matching(nc, &nworst).empty();
  if (rigorous) {
    record_radius(r, F, res);
    const bool c = nmatch && std::isfinite(hworst) && std::isfinite(nworst);
    r.truth.contains_truth = c;
    f.agrees = c;
    if (!c) f.disagreement = "some output ball misses the canonical truth";
  } else {
    const double e = nmatch ? std::log2(std::exp2(hworst) + std::exp2(nworst)) : kInf;
    r.truth.max_rel_error = pow2_value(e);
    r.truth.max_rel_error_decimal = decimal_of_log2(e);
    f.agrees = e <= f.tolerance_log2;
    if (!f.agrees) f.disagreement = "max_rel_error " + decimal_of_log2(e) + " exceeds the tolerance " + decimal_of_log2(f.tolerance_log2);
  }
  (void)truth;
  (void)seed;
}

// The run's own first-order error estimate (floats): the learner replayed on
// jets over its recorded answers; per head and neuron, sum over entries of
// sum_j |d theta / d a_j| |a_j| 2^-p over the block's norm.
template <class T>
double error_estimate(const Field<T>& F, int d, const TransformerLearnOptions& lo, const RecordingOracle<T>& rec, RecoverResult& r) {
  try {
    TransformerLearnOptions l = lo;
    l.checks = false;
    ReplayOracle<T> replay(d, F, rec.queries.all(), rec.answers);
    JetOracle<T> jets(replay);
    const TransformerLearnResult<Jet<T>> res = learn_transformer<Jet<T>>(jets, l);
    std::vector<Ball> aabs;
    for (const auto& a : rec.answers) {
      Ball b = F.enclose(a);
      arb_abs(b.raw(), b.raw());
      aabs.push_back(b);
    }
    const double p = static_cast<double>(F.precision());
    auto block = [&](const std::vector<const Jet<T>*>& xs) {
      Ball s(0L), n2(0L);
      for (const Jet<T>* x : xs) {
        for (const auto& [j, dv] : x->grad()) {
          Ball e = F.enclose(dv);
          arb_abs(e.raw(), e.raw());
          s += e * aabs[j];
        }
        const Ball v = F.enclose(x->value());
        n2 += v * v;
      }
      arb_sqrt(n2.raw(), n2.raw(), 64);
      if (!arb_is_positive(n2.raw())) n2 = Ball(1L);
      s /= n2;
      return arf_is_zero(arb_midref(s.raw())) ? -kInf : std::log2(s.mid_double()) - p;
    };
    double hw = -kInf, nw = -kInf;
    for (const auto& W : res.W) {
      std::vector<const Jet<T>*> xs;
      for (int i = 0; i < d; ++i)
        for (int j = 0; j < d; ++j) xs.push_back(&W(i, j));
      hw = std::max(hw, block(xs));
    }
    for (const auto& n : res.neurons) {
      std::vector<const Jet<T>*> xs;
      for (const auto& Uh : n.U)
        for (const auto& x : Uh) xs.push_back(&x);
      nw = std::max(nw, block(xs));
    }
    const double m = std::max(hw, nw);
    return std::isinf(m) && m < 0 ? -kInf : m + std::log2(std::exp2(hw - m) + std::exp2(nw - m));
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::internal || e.kind() == ErrorKind::usage || e.kind() == ErrorKind::input) throw;
    r.judge.estimate_note = e.what();
    return std::numeric_limits<double>::quiet_NaN();
  }
}

// The run's certificate (recover --certificate), for exact and ball runs;
// recover_transformer refuses the option for the other arithmetics.
void store_certificate(const TransformerModel& truth, const RecoverOptions& o, const TransformerLearnOptions& lo, const RecordingOracle<QTau>& rec,
                       const TransformerLearnResult<QTau>& res) {
  *o.certificate = transformer_certificate_text(truth, o, lo, rec, res);
}
void store_certificate(const TransformerModel& truth, const RecoverOptions& o, const TransformerLearnOptions& lo, const RecordingOracle<Ball>& rec,
                       const TransformerLearnResult<Ball>& res) {
  *o.certificate = transformer_certificate_text(truth, o, lo, rec, res);
}
template <class T>
void store_certificate(const TransformerModel&, const RecoverOptions&, const TransformerLearnOptions&, const RecordingOracle<T>&,
                       const TransformerLearnResult<T>&) {}

template <class T>
void run(RecoverResult& r, const TransformerModel& truth, const TransformerModel& canon, const RecoverOptions& o, const TransformerLearnOptions& lo) {
  using P = ArithPolicy<T>;
  const auto scope = P::precision(o.bits);
  // an external oracle when given (recover --oracle; the learner is adaptive: no queries sent ahead), else the model's own
  ExternalSetup<T> ext;
  bool started = true;
  P::approximate(
      [&](auto& e) {
        if (o.external) started = start_external(r, o, truth.d, oracle_protocol::ModelKind::transformer, {}, e);
        // its attention part's plan within the hello's limits, before any
        // query; the path and the checks after it are adaptive, and meet the
        // oracle's own refusal if they pass them (oracle_failed)
        if (o.external && started) refuse_beyond_hello(e.session->hello(), transformer_attention_plan(truth.d, lo), "the transformer's attention part", "");
      },
      ext);
  if (!started) return;
  // the scaled design asks far probes and large single tokens at 2^-k times
  // their size (k up to about 20): a grid 2^40 times finer holds them
  long oracle_den = lo.tokens.den;
  for (int i = 0; lo.fitted_regions && i < 40 && oracle_den < (1L << 61); ++i) oracle_den *= 2;
  OracleStack<T> stack = ext.oracle ? std::move(*ext.oracle).recorded() : OracleStack<T>::transformer(truth, oracle_den, o.exact_solver).recorded();
  const RecordingOracle<T>& rec = stack.record();
  Oracle<T>& black_box = stack.top();  // the learner gets this reference and nothing else
  cap_queries(o, black_box);
  const Field<T>& F = black_box.field();
  // --oracle without --model: no truth to compare with; the status is the run's own
  const bool truth_known = !o.external || o.external->truth_known;
  RunFacts facts;
  facts.arith = o.arith;
  facts.truth_known = truth_known;
  if (truth_known) facts.heads_true = canon.heads();
  P::tolerance(r, facts, F, o.tolerance, false);
  Verdict v;
  try {
    const TransformerLearnResult<T> res = learn_transformer(black_box, lo);
    facts.self_check = res.self_check;
    facts.self_check_failed = res.self_check_failed;
    facts.heads_recovered = static_cast<int>(res.W.size());
    r.evidence.heads_recovered = res.W.size();
    r.evidence.neurons_recovered = res.neurons.size();
    r.evidence.self_check = self_check_of(res.self_check);
    r.evidence.verification = res.verification;
    r.evidence.queries_by_phase = PhaseQueries{res.queries_attention, res.queries_regions, res.queries_verify};
    r.evidence.path = PathRecord{res.probes, res.crossings, res.undecided_flats, res.test_probes};
    r.evidence.angular_resolution_deg = res.resolution_deg >= 0 ? res.resolution_deg : NAN;
    r.evidence.queries_targeted = res.queries_targeted;
    r.evidence.model = learned_record(F, res);
    P::floats(
        [&](const auto& G, const auto& R) {
          record_estimate(r, facts, error_estimate(G, truth.d, lo, R, r));
          // the judge's certified bound from the replay in balls (proofs/40)
          judge_float_transformer(G, truth.d, lo, R.queries.all(), R.answers, *stack.errors(), res, facts, r);
        },
        F, rec);
    // the status the answers alone give; the truth is compared afterwards
    RunFacts blind = facts;
    blind.truth_known = false;
    r.judge.blind_status = judge(blind).status;
    if (truth_known) compare(r, facts, truth, canon, res, F, lo.tokens.den, o.seed);
    else record_radius(r, F, res);
    v = judge(facts);
    if (o.certificate && v.status == Status::ok) store_certificate(truth, o, lo, rec, res);
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::usage || e.kind() == ErrorKind::input || e.kind() == ErrorKind::internal) throw;
    v = {status_of(e.kind()), e.what()};
    P::floats([&](const auto& G, const auto& R) { v = judge_float_transformer_failure(G, truth.d, lo, R.queries.all(), R.answers, *stack.errors(), e); }, F,
              rec);
    r.judge.blind_status = v.status;
    r.evidence.heads_recovered = 0;
    r.evidence.neurons_recovered = 0;
  }
  const Status learned = v.status;
  external_verdict(v, ext.session.get(), black_box.limit_reached());
  if (v.status != learned) r.judge.blind_status = v.status;  // the session's end, whatever the learner made of it
  report_verdict(r, v, o);
  r.evidence.queries = black_box.queries();
  r.evidence.max_length = black_box.max_length();
  finish_external(o, ext.session.get());
  external_remedy(r, o, v.status);
  P::exact([&](const auto& G) { r.evidence.L = QTauAccess::L(G); }, F);
}
}  // namespace

RecoverResult recover_transformer_run(const TransformerModel& truth, const RecoverOptions& o) {
  // With --oracle and no --model, truth holds only d: the learner's H (and, in
  // ball mode, its neuron count) must be stated.
  const bool truth_known = !o.external || o.external->truth_known;
  if (o.checkpoint) throw Error(ErrorKind::usage, "checkpoints cover attention runs: a transformer run has no --checkpoint or --resume-checkpoint");
  if (truth_known) truth.validate();
  if (!truth_known && o.heads < 1) throw Error(ErrorKind::usage, "--oracle without --model needs the learner's --heads H");
  if (!truth_known && arith_facts(o.arith).rigorous && o.neurons < 1)
    throw Error(ErrorKind::usage,
                "--oracle without --model in ball mode needs --learner-neurons M: balls cannot certify that two region values are equal, so the "
                "neuron count must be stated (mpfr and double find it)");
  // a library caller meets the program's stated limits too, before any work
  check_transformer_limits(truth, o, "the transformer");
  const TransformerModel canon = truth_known ? truth.canonical() : truth;
  if (truth_known && (canon.heads() == 0 || canon.neurons() == 0))
    throw Error(ErrorKind::input, "the transformer's canonical form is empty (T = 0): nothing to recover; give a model with a head and a "
                                  "neuron whose readout is not zero (or draw with another --seed)");
  if (o.certificate && !arith_facts(o.arith).decides_equality())
    throw Error(ErrorKind::usage, "--certificate records exact and ball transformer runs only (the checker compares their answers by equality or containment)");
  if (o.certificate && o.external) throw Error(ErrorKind::usage, "--oracle takes its answers as they come: no --certificate");
  RecoverResult r;
  TransformerLearnOptions lo;
  lo.H = o.heads > 0 ? o.heads : canon.heads();
  // balls cannot certify that two region values are equal, so they are told
  // the neuron count (a certified crossing count then accounts for them all)
  lo.neurons = o.neurons > 0 ? o.neurons : arith_facts(o.arith).rigorous && truth_known ? canon.neurons() : 0;
  lo.schedule = o.schedule;
  lo.coincidence_test = arith_facts(o.arith).decides_equality();  // equality decided, not a tolerance
  lo.seed = learner_seed(o.seed);
  const long den = o.tokens.den > 0 ? o.tokens.den : arith_facts(o.arith).exact ? 16 : 1L << 20;
  lo.tokens = TokenSpec{den, den};
  if (o.design != Design::paper) {
    if (o.design != Design::scaled) throw Error(ErrorKind::usage, "transformers take --design paper or scaled (the attention part's design)");
    if (arith_facts(o.arith).exact)
      throw Error(ErrorKind::usage, "--design scaled improves the conditioning under approximate answers; exact answers lose nothing: use --design paper, or --arith ball|mpfr|double");
    if (o.certificate) throw Error(ErrorKind::usage, "--certificate records the paper design's runs only");
    Rng rng(lo.seed);
    lo.attention_draws = draw_scaled(rng, truth.d, lo.H, lo.tokens);
    lo.fitted_regions = true;
    r.design.kind = o.design;
  }
  lo.threads = o.threads == 0 ? hardware_threads() : o.threads;
  r.run.kind = oracle_protocol::ModelKind::transformer;
  r.run.arith = o.arith;
  if (const long b = reported_bits_of(o.arith, o.bits); b >= 0) r.run.bits = b;
  r.run.d = truth.d;
  r.run.H = lo.H;
  r.run.heads_known = HeadsKnown::exact;
  r.run.neurons_told = lo.neurons;
  r.run.seed = o.seed;
  r.plan.schedule = o.schedule;
  if (truth_known) {
    r.truth.heads_true = canon.heads();
    r.truth.neurons_true = canon.neurons();
  }
  r.plan.attention_paper_bound = paper_query_bound(truth.d, lo.H);
  r.run.token_den = den;
  if (arith_facts(o.arith).exact && !exact_heads_within_budget(r, lo.H, false, o)) return r;
  if (refuse_over_max_queries(r, o, transformer_least_queries(truth.d, lo), "the attention part alone (its plan, each query asked at X and at -X)",
                              o.schedule == Schedule::compact ? "" : "--schedule compact (the attention part's fewest queries)")) {
    r.evidence.neurons_recovered = 0;
    return r;
  }
  with_arith(o.arith, [&]<class T>() { run<T>(r, truth, canon, o, lo); });
  return r;
}


std::string transformer_report(const RecoverResult& r) {
  auto shown = [](const auto& x) { return x ? std::to_string(*x) : std::string("null"); };
  std::ostringstream o;
  o << "mhaq recover: transformer, " << arith_name(r.run.arith);
  if (r.run.bits) o << " (" << *r.run.bits << " bits)";
  o << ", d=" << r.run.d << ", H=" << shown(r.run.H) << ", seed " << r.run.seed << "\n";
  o << "  status           " << status_name(r.judge.status) << "\n";
  if (r.judge.status != Status::ok) o << "  reason           " << r.judge.message << "\n";
  if (r.judge.remedy) o << "  what to do       " << *r.judge.remedy << "\n";
  o << "  queries          " << shown(r.evidence.queries);
  if (r.evidence.queries_by_phase) {
    const PhaseQueries& q = *r.evidence.queries_by_phase;
    o << " (attention part " << q.attention << " = 2 x (4Hd^2-2H+1) = 2 x " << shown(r.plan.attention_paper_bound) << ", regions " << q.regions
      << ", verification " << q.verification << ")";
  }
  o << "\n  longest query    " << shown(r.evidence.max_length) << "\n";
  if (r.evidence.path) o << "  path             " << r.evidence.path->probes << " region evaluations, " << r.evidence.path->crossings << " neuron hyperplanes crossed\n";
  auto truth_count = [&](const auto& x) { return x ? ", " + std::to_string(*x) + " in the canonical truth" : std::string(" (no truth given)"); };
  o << "  heads            " << shown(r.evidence.heads_recovered) << " recovered" << truth_count(r.truth.heads_true) << "\n";
  o << "  neurons          " << shown(r.evidence.neurons_recovered) << " recovered" << truth_count(r.truth.neurons_true) << "\n";
  if (r.evidence.self_check) {
    o << "  self-check       " << self_check_phrase(*r.evidence.self_check, true) << "\n";
    const std::string v = r.evidence.verification ? truth_name(*r.evidence.verification) : "";
    o << "  verification     " << v
      << (v == "yes"  ? " (the fresh general sequences agree with the recovered transformer)"
          : v == "no" ? " (a fresh general sequence disagrees with the recovered transformer)"
                      : " (no fresh general sequence contradicts the recovered transformer, but this arithmetic cannot prove agreement)")
      << "\n";
  }
  if (r.truth.exact_match) o << "  exact match      " << (*r.truth.exact_match ? "yes (canonical form, equality in Q)" : "NO") << "\n";
  if (r.truth.functional_check)
    o << "  functional check T - T' = 0 on " << r.truth.functional_check->zero_differences << " of " << r.truth.functional_check->sequences << " fresh sequences\n";
  if (r.truth.contains_truth) o << "  contains truth   " << (*r.truth.contains_truth ? "yes" : "NO") << ", max radius " << r.truth.max_radius_decimal.value_or("") << "\n";
  if (r.judge.tolerance_decimal) o << judge_lines(r);
  if (r.truth.max_rel_error_decimal) o << "  max rel. error   " << *r.truth.max_rel_error_decimal << "\n";
  return o.str();
}

}  // namespace mhaq
