// Replayable certificates (`recover --certificate FILE`): one recover run
// recorded with everything needed to check it without mhaq's learner -- the
// inputs, the model, every query and every answer as the learner received
// it, each pair's interpolant, the recovered heads and the claims. Values are
// exact: Q(tau) elements and rationals in exact mode, the exact dyadic
// rationals stored by balls and binary floats otherwise.
// Format: tests/golden/CERTIFICATE.md. The checker is separate by design
// (include/mhaq/check/certificate_check.hpp) and shares no code with this.
#pragma once
#include <string>

#include "mhaq/stages/learner.hpp"
#include "mhaq/model/model.hpp"
#include "mhaq/stages/1-oracle/recording_oracle.hpp"
#include "mhaq/base/version.hpp"
#include "mhaq/run/recover_options.hpp"
#include "mhaq/model/transformer.hpp"
#include "mhaq/stages/transformer_learner.hpp"

namespace mhaq {

inline constexpr int certificate_version = 1;

// The certificate of a finished run (status ok). For mpfr and double runs it
// claims three absolute tolerances (answers, pair interpolants, heads), each
// a power of two at least twice a rigorous Arb bound of the run's actual
// errors against the exact model; the checker re-verifies them.
// Output bytes depend only on the inputs (not on the thread count).
template <class T>
std::string certificate_text(const Model& truth, const RecoverOptions& o, const LearnOptions& lo, const RecordingOracle<T>& rec,
                             const LearnResult<T>& res);

// The certificate of a transformer run that ended ok, exact or ball arithmetic
// ("kind": "transformer"; docs/formats.md): the model, every query and
// answer, the recovered heads and neurons, the accepted path's crossings
// (before and after points and the jump of the region values) and which
// queries were the learner's final verification. Instantiated for QTau and
// Ball.
template <class T>
std::string transformer_certificate_text(const TransformerModel& truth, const RecoverOptions& o, const TransformerLearnOptions& lo,
                                         const RecordingOracle<T>& rec, const TransformerLearnResult<T>& res);

}  // namespace mhaq
