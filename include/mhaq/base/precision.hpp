// The thread's working precision in bits, read by Arb and MPFR numbers
// (arith/numbers.hpp) and handed on to worker threads (base/parallel.hpp,
// base/distribute.hpp). PrecisionScope sets it for the scope's lifetime.
#pragma once

namespace mhaq {

long working_precision();  // bits
class PrecisionScope {
 public:
  explicit PrecisionScope(long bits);
  ~PrecisionScope();
  PrecisionScope(const PrecisionScope&) = delete;
  PrecisionScope& operator=(const PrecisionScope&) = delete;

 private:
  long saved_;
};

}  // namespace mhaq
