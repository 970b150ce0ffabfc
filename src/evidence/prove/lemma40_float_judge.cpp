// The machine check of proofs/40-float-judge.md (the registry: registry.cpp).
#include "prove_common.hpp"

namespace mhaq::proof {

namespace {

// Model 1: d = 1, three heads; the two with W = 3/4 and 97/128 have poles
// that nearly collide at every pair the learner draws.
const char* kModelOne =
    R"({"format": "mhaq-model", "version": 1, "d": 1, "heads": [{"W": [["3/4"]], "v": ["15/8"]}, {"W": [["35/2"]], "v": ["-15/8"]}, )"
    R"({"W": [["97/128"]], "v": ["-7/8"]}]})";

// The judge's bound of a run (the broken variant: its first-order estimate).
double judged_bound(const RecoverResult& r, bool broken) {
  const std::optional<double> b = finite_number(broken ? r.judge.error_estimate : r.judge.certified_error);
  return b ? *b : NAN;
}

}  // namespace

// (a) Model 1 in MPFR at 64 bits, seed 3: the bound holds and exceeds the
// tolerance (not ok) where the estimate alone is below it. (b) Random models
// (d = 1..3, H = 1..3; mpfr at 64 and 128 bits, double; answers with and
// without stated noise, uniform and on kappa's worst signs), and (c) two
// transformers: every bound the judge certifies is at least the true
// max_rel_error; (d) the placed design in MPFR from 53-bit answers (d = 3,
// H = 2): its bound, certified from its last round, holds too. Broken: the estimate
// in place of the bound, which model 1 refutes.
void check_float_judge(const ProveOptions& o, bool broken, LemmaCheck& out) {
  {
    RecoverOptions ro;
    ro.arith = Arith::mpfr;
    ro.bits = 64;
    ro.seed = 3;
    const RecoverResult r = recover_run(model_from_json_text(kModelOne), ro);
    ++out.cases;
    const double bound = judged_bound(r, broken), err = finite_number(r.truth.max_rel_error).value_or(NAN);
    require(!std::isnan(err), "model 1: no max_rel_error");
    require(bound >= err, "model 1: the bound " + std::to_string(bound) + " is below the true max_rel_error " + std::to_string(err));
    require(r.status() != Status::ok, "model 1 ended ok");
    require(err > r.judge.tolerance.value_or(0) && finite_number(r.judge.error_estimate).value_or(INFINITY) < r.judge.tolerance.value_or(0),
            "model 1 no longer shows the first-order estimate below the tolerance and the error above it");
  }
  Rng rng(o.seed ^ 0x40);
  long runs = 0, certified = 0;
  double closest = INFINITY;  // log2 of the least bound / error ratio
  // One judged run, counted: when it has a certified bound and a true error
  // (and, where asked, found every head), the bound must hold.
  const auto judged = [&](const RecoverResult& r, const std::string& what, bool all_heads) {
    ++runs;
    ++out.cases;
    const double bound = judged_bound(r, broken);
    const std::optional<double> err = finite_number(r.truth.max_rel_error);
    if (std::isnan(bound) || !err || (all_heads && r.evidence.heads_recovered != r.truth.heads_true)) return;
    ++certified;
    require(bound >= *err, what + ": the bound " + std::to_string(bound) + " is below the true max_rel_error " + std::to_string(*err));
    if (*err > 0) closest = std::min(closest, std::log2(bound / *err));
  };
  const long models = 12 * o.multiplier;
  for (long t = 0; t < models; ++t) {
    GenerateOptions g = default_generate(Arith::mpfr);
    g.d = 1 + static_cast<int>(t % 3);
    g.heads = 1 + static_cast<int>((t / 3) % 3);
    g.seed = rng.next();
    const Model m = generate_model(g);
    for (int variant = 0; variant < 4; ++variant) {
      RecoverOptions ro;
      ro.arith = variant == 3 ? Arith::ieee : Arith::mpfr;
      ro.bits = variant == 0 ? 64 : 128;
      ro.seed = rng.next() % 1000 + 1;
      if (variant == 1) ro.noise_eps = Rational(1, 1L << 40);
      if (variant == 2) {
        ro.noise_eps = Rational(1, 1L << 50);
        ro.noise_pattern = NoisePattern::signs;
      }
      RecoverResult r;
      try {
        r = recover_run(m, ro);
      } catch (const Error& e) {
        if (e.kind() != ErrorKind::unable && e.kind() != ErrorKind::degenerate) throw;
        continue;  // the worst pattern needs kappa at the truth
      }
      judged(r, "model " + std::to_string(t) + " variant " + std::to_string(variant), true);
    }
  }
  // (c) transformers (d = 2, H = 2, m = 2), mpfr at 256 bits and double:
  // the bound from the transformer learner's replay in balls holds too
  for (int t = 0; t < 2 * static_cast<int>(o.multiplier); ++t) {
    TransformerGenerateOptions g;
    g.d = 2;
    g.heads = 2;
    g.neurons = 2;
    g.seed = rng.next() % 1000 + 1;
    RecoverOptions ro;
    ro.arith = t % 2 ? Arith::ieee : Arith::mpfr;
    ro.bits = 256;
    ro.seed = 1;
    judged(recover_transformer_run(generate_transformer(g), ro), "transformer " + std::to_string(t), false);
  }
  // (d) the placed design (its own queries; the last round certified in balls)
  for (int t = 0; t < 2 * static_cast<int>(o.multiplier); ++t) {
    GenerateOptions g = default_generate(Arith::mpfr);
    g.d = 3;
    g.heads = 2;
    g.seed = rng.next() % 1000 + 1;
    RecoverOptions ro;
    ro.arith = Arith::mpfr;
    ro.bits = 256;
    ro.oracle_bits = 53;
    ro.design = Design::placed;
    ro.seed = rng.next() % 1000 + 1;
    judged(recover_run(generate_model(g), ro), "placed run " + std::to_string(t), true);
  }
  require(certified >= runs / 2, "too few runs certified: " + std::to_string(certified) + " of " + std::to_string(runs));
  out.detail = std::to_string(certified) + "/" + std::to_string(runs) + " random runs certified, the closest bound 2^" +
               std::to_string(static_cast<int>(std::floor(closest))) + " times the true error; model 1: not ok";
}

}  // namespace mhaq::proof
