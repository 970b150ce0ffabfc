// Certificates of transformer runs (include/mhaq/run/certificate.hpp; format:
// docs/formats.md). Exact runs record rationals and Q(tau) answers, ball runs
// the exact dyadic midpoints and radii of every ball.
#include "mhaq/arith/qtau_access.hpp"
#include "mhaq/base/error.hpp"
#include "mhaq/run/arith_policy.hpp"
#include "mhaq/run/certificate.hpp"
#include "mhaq/run/json_out.hpp"

namespace mhaq {

namespace {

ojson value_json(const QTau& x) {
  Rational q;
  if (!QTauAccess::is_rational(x, q)) throw_internal("transformer certificate: a recovered value is not rational");
  return q.str();
}
ojson value_json(const Ball& x) { return binary_json(x); }
ojson answer_json(const QTau& x) { return qtau_json(x); }
ojson answer_json(const Ball& x) { return binary_json(x); }

template <class T>
ojson vec_json(const std::vector<T>& v) {
  ojson a = ojson::array();
  for (const auto& x : v) a.push_back(value_json(x));
  return a;
}

// The jump's H*d entries (head-major) as one d-vector per head.
template <class T>
ojson jump_json(const std::vector<T>& jump, int d) {
  ojson a = ojson::array();
  for (size_t h = 0; h * d < jump.size(); ++h) a.push_back(vec_json(std::vector<T>(jump.begin() + h * d, jump.begin() + (h + 1) * d)));
  return a;
}

}  // namespace

template <class T>
std::string transformer_certificate_text(const TransformerModel& truth, const RecoverOptions& o, const TransformerLearnOptions& lo,
                                         const RecordingOracle<T>& rec, const TransformerLearnResult<T>& res) {
  constexpr Arith tag = ArithPolicy<T>::arith;
  const int d = truth.d;
  ojson doc{{"format", "mhaq-certificate"}, {"kind", "transformer"}, {"version", certificate_version}, {"mhaq_version", mhaq_version_string},
            {"arith", arith_name(tag)}};
  ArithPolicy<T>::exact([&](const auto& F) { doc["L"] = QTauAccess::L(F); }, rec.field());
  ArithPolicy<T>::approximate([&](const auto&) { doc["bits"] = ArithPolicy<T>::reported_bits(o.bits); }, rec.field());
  doc["value_format"] = ArithPolicy<T>::facts.exact
                            ? "answers: Q(tau) elements {num, den} (coefficients in tau, constant term first, canonical fmpz_poly_q form); "
                              "recovered values and crossing points: rationals p/q"
                            : "answers and recovered values: Arb balls {mid, rad}, the exact dyadic rationals p/q of midpoint and radius; "
                              "crossing points: rationals p/q";
  doc["inputs"] = ojson{{"seed", o.seed}, {"learner_seed", lo.seed}, {"schedule", schedule_name(lo.schedule)},
                        {"heads_learner", lo.H}, {"neurons_told", lo.neurons}, {"token_den", lo.tokens.den}};
  const size_t n = rec.queries.size();
  const size_t nv = static_cast<size_t>(res.queries_verify);
  if (nv > n) throw_internal("transformer certificate: more verification queries than queries");
  doc["claims"] = ojson{{"queries", n},
                        {"max_length", rec.max_length()},
                        {"heads_recovered", res.W.size()},
                        {"neurons_recovered", res.neurons.size()},
                        {"crossings", res.path_crossings.size()}};
  doc["verification"] = ojson{{"first", n - nv}, {"count", nv}};
  doc["model"] = ojson::parse(transformer_to_json_text(truth));
  ojson qs = ojson::array(), as = ojson::array();
  for (size_t i = 0; i < n; ++i) {
    qs.push_back(query_json(i, rec.queries[i]));
    as.push_back(answer_json(rec.answers[i]));
  }
  doc["queries"] = qs;
  doc["answers"] = as;
  ojson heads = ojson::array();
  for (const auto& W : res.W) {
    ojson m = ojson::array();
    for (int i = 0; i < d; ++i) {
      std::vector<T> row;
      for (int j = 0; j < d; ++j) row.push_back(W(i, j));
      m.push_back(vec_json(row));
    }
    heads.push_back(ojson{{"W", m}});
  }
  doc["heads"] = heads;
  ojson neurons = ojson::array();
  for (const auto& nr : res.neurons) {
    ojson U = ojson::array();
    for (const auto& Uh : nr.U) U.push_back(vec_json(Uh));
    neurons.push_back(ojson{{"u", value_json(nr.u)}, {"U", U}});
  }
  doc["neurons"] = neurons;
  ojson cs = ojson::array();
  for (const auto& c : res.path_crossings) cs.push_back(ojson{{"before", qvec_json(c.before)}, {"after", qvec_json(c.after)}, {"jump", jump_json(c.jump, d)}});
  doc["crossings"] = cs;
  return dump_layout(doc);
}

template std::string transformer_certificate_text<QTau>(const TransformerModel&, const RecoverOptions&, const TransformerLearnOptions&,
                                                        const RecordingOracle<QTau>&, const TransformerLearnResult<QTau>&);
template std::string transformer_certificate_text<Ball>(const TransformerModel&, const RecoverOptions&, const TransformerLearnOptions&,
                                                        const RecordingOracle<Ball>&, const TransformerLearnResult<Ball>&);

}  // namespace mhaq
