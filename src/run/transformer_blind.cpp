// Blind transformer runs and their comparison with a truth afterwards.
#include "mhaq/run/transformer_blind.hpp"

#include "mhaq/arith/qtau_access.hpp"
#include "mhaq/oracle/oracle_stack.hpp"
#include "mhaq/run/judge.hpp"

namespace mhaq {

BlindTransformerRun learn_transformer_blind(Oracle<QTau>& oracle, const TransformerLearnOptions& opt) {
  BlindTransformerRun out;
  OracleStack<QTau> stack = OracleStack<QTau>::over(oracle).recorded();  // this run's queries, counted apart
  Oracle<QTau>& black_box = stack.top();
  try {
    const TransformerLearnResult<QTau> res = learn_transformer(black_box, opt);
    RunFacts f;
    f.arith = Arith::exact;
    f.self_check = res.self_check;
    f.self_check_failed = res.self_check_failed;
    f.truth_known = false;
    const Verdict v = judge(f);
    out.status = status_name(v.status);
    out.message = v.message;
    if (v.status == Status::ok && res.verification != Truth::yes) {
      out.status = status_name(Status::unable);
      out.message = "the verification sequences were not all decided";
    }
    out.resolution_deg = res.resolution_deg;
    auto rat = [](const QTau& x) {
      Rational q;
      if (!QTauAccess::is_rational(x, q)) throw_internal("blind transformer run: a recovered exact parameter is not rational");
      return q;
    };
    const int d = oracle.dim();
    TransformerModel m;
    m.d = d;
    for (const auto& W : res.W) {
      QMat M(d, d);
      for (int i = 0; i < d; ++i)
        for (int j = 0; j < d; ++j) M(i, j) = rat(W(i, j));
      m.W.push_back(M);
    }
    m.U.assign(m.W.size(), {});
    for (const auto& n : res.neurons) {
      m.u.push_back(rat(n.u));
      for (size_t h = 0; h < m.W.size(); ++h) {
        QVec v(d);
        for (int a = 0; a < d; ++a) v[a] = rat(n.U[h][a]);
        m.U[h].push_back(v);
      }
    }
    out.learned = m.u.empty() ? m : m.canonical();
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::usage || e.kind() == ErrorKind::input || e.kind() == ErrorKind::internal) throw;
    out.status = status_name(status_of(e.kind()));
    out.message = e.what();
  }
  out.queries = black_box.queries();
  out.max_length = black_box.max_length();
  return out;
}

BlindComparison compare_blind(const BlindTransformerRun& run, const TransformerModel& truth) {
  BlindComparison c;
  const TransformerModel canon = truth.canonical();
  if (run.learned.u.empty()) {
    c.difference = "nothing was recovered";
    return c;
  }
  c.exact_match = transformer_equal_canonical(run.learned, canon);
  if (!c.exact_match)
    c.difference = std::to_string(run.learned.heads()) + " heads and " + std::to_string(run.learned.neurons()) +
                   " neurons recovered, canonical truth " + std::to_string(canon.heads()) + " and " + std::to_string(canon.neurons()) +
                   (run.learned.heads() == canon.heads() && run.learned.neurons() == canon.neurons() ? ", parameters differ" : "");
  return c;
}

std::string violated_condition(const TransformerModel& c) {
  const int m = c.neurons(), H = c.heads(), d = c.d;
  if (d == 1 && H >= 2) return "d = 1 with " + std::to_string(H) + " heads";
  for (int h = 0; h < H; ++h) {
    bool zero = true;
    for (int a = 0; a < d; ++a) {
      Rational s(0);
      for (int j = 0; j < m; ++j) s += c.u[j] * c.U[h][j][a];
      zero = zero && s.is_zero();
    }
    if (zero) return "head " + std::to_string(h + 1) + " is invisible in the odd part";
  }
  std::vector<QVec> ubar;
  for (int j = 0; j < m; ++j) {
    ubar.push_back(c.ubar(j));
    bool zero = true;
    for (const auto& x : ubar.back()) zero = zero && x.is_zero();
    if (zero) return "ubar_" + std::to_string(j + 1) + " = 0";
  }
  for (int j = 0; j < m; ++j)
    for (int k = j + 1; k < m; ++k) {
      bool parallel = true;
      for (int r = 0; r < d; ++r)
        for (int t = r + 1; t < d; ++t) parallel = parallel && ubar[j][r] * ubar[k][t] == ubar[j][t] * ubar[k][r];
      if (parallel) return "neurons " + std::to_string(j + 1) + " and " + std::to_string(k + 1) + " share a hyperplane";
    }
  if (m > 12) return "";
  std::vector<QVec> w;
  for (int j = 0; j < m; ++j) w.push_back(c.neuron_vector(j));
  long total = 1;
  for (int j = 0; j < m; ++j) total *= 3;
  for (long code = 1; code < total; ++code) {
    QVec s(w.empty() ? 0 : w[0].size(), Rational(0));
    long x = code;
    bool some = false;
    for (int j = 0; j < m; ++j, x /= 3) {
      const int coef = static_cast<int>(x % 3) - 1;
      some = some || coef != 0;
      if (coef)
        for (size_t i = 0; i < s.size(); ++i) s[i] += Rational(coef) * c.u[j] * w[j][i];
    }
    bool zero = true;
    for (const auto& e : s) zero = zero && e.is_zero();
    if (zero && some) return "a signed subset of the jumps u_j U_{.,j} sums to zero";
  }
  return "";
}

}  // namespace mhaq
