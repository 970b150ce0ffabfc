// Golden test vectors (exact mode): a self-contained, versioned JSON record of
// one exact recovery -- the model, every query in order, every exact answer
// in Q(tau) with a certified decimal, the per-pair interpolation values and the
// recovered canonical heads -- and an independent re-derivation of every field.
// Schema: tests/golden/SCHEMA.md.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "mhaq/arith/field.hpp"
#include "mhaq/model/model.hpp"
#include "mhaq/model/transformer.hpp"
#include "mhaq/arith/numbers.hpp"
#include "mhaq/arith/rational.hpp"
#include "mhaq/stages/2-schedule/design.hpp"

namespace mhaq {

inline constexpr int golden_version = 1;

struct GoldenInputs {
  Model model;
  // How the model was obtained: "generated" (from generate) or "file".
  std::string model_source = "file";
  GenerateOptions generate;  // recorded when model_source == "generated"
  std::uint64_t seed = 1;    // --seed; the learner uses learner_seed(seed)
  int heads = 0;             // learner's H; 0 = canonical head count of the model
  int max_heads = 0;         // > 0: the learner is told only this bound H0 (claim 3); overrides heads
  long digits = 60;          // significant digits of every decimal string
  // exact, or additionally record a ball / mpfr run of the same learner on the
  // same queries (its answers, pair values and heads, as exact dyadic rationals)
  Arith arith = Arith::exact;
  long bits = 256;           // ball, mpfr
  int threads = 1;           // learner threads; the output does not depend on it
  // How B and Delta are chosen (stages/2-schedule/design.hpp), on the exact
  // grid (integers): scaled draws them from the seed; tuned runs its pilot on
  // an MPFR oracle of the same model at `bits` (256 for exact files) and
  // searches on that grid. Recorded as inputs.design (absent: paper, so paper
  // files are unchanged) and re-derived by golden check.
  Design design = Design::paper;
  // A one-layer transformer instead of an attention model (SCHEMA.md,
  // "Transformer files"): the exact transformer learner runs on a
  // TransformerOracle<QTau>; `model`, `heads`, `max_heads`, `arith` and
  // `design` are then unused (exact, paper, the canonical head count).
  bool is_transformer = false;
  TransformerModel transformer;
  TransformerGenerateOptions transformer_generate;  // recorded when model_source == "generated"
};

// Runs learn<QTau> on a ModelOracle<QTau> (for a transformer:
// learn_transformer<QTau> on a TransformerOracle<QTau>, as `mhaq recover
// --arith exact` does) (exactly as `mhaq recover --arith
// exact` does) and returns the JSON vector set. Output bytes depend only on
// the inputs. Throws Error(degenerate) when the learner's draw is degenerate.
std::string golden_export(const GoldenInputs& in);

struct GoldenCheckResult {
  std::vector<std::string> mismatches;  // "answers[17].decimal: file has ..., re-derived ..."
  long fields_checked = 0;              // leaves compared
  bool internal_error = false;          // a re-derivation ended in an internal error (a bug, reported as a mismatch too)
  bool ok() const { return mismatches.empty(); }
};

// Re-derives every field of a golden file independently (answers with
// evaluate_exact, decimals with Arb, per-pair values by interpolating the
// file's own answers, heads by a fresh learner run checked against the
// canonical model; ball/mpfr fields by re-running that learner, and ball
// answers, pair values and heads must contain the exact truth). A transformer
// file ("model_kind": "transformer") has its answers re-derived by the
// separate checker's own evaluator (mhaq/check/golden_transformer.hpp) and
// its queries, learned transformer and summary by a fresh exact transformer
// learner run. Malformed files throw Error(input).
GoldenCheckResult golden_check(const std::string& text, int threads = 1);

// Correctly rounded (round-to-nearest; ties, possible only for rationals, to
// even) decimal of x in scientific form "[-]d.ddd...e[+-]XX" with exactly
// `digits` significant digits; zero is "0.000...e+00". Every digit is
// certified: x is evaluated with Arb at increasing precision (Ziv loop) until
// the rounding is determined; Error(internal) past the precision cap.
std::string golden_decimal(const QTau& x, long L, long digits);
std::string golden_decimal(const Rational& x, long digits);

}  // namespace mhaq
