#include "mhaq/base/precision.hpp"

#include "mhaq/base/error.hpp"

namespace mhaq {

namespace {
thread_local long g_prec = 128;
}

long working_precision() { return g_prec; }
PrecisionScope::PrecisionScope(long bits) : saved_(g_prec) {
  if (bits < 16 || bits > (1L << 24)) throw Error(ErrorKind::usage, "precision must be between 16 and 2^24 bits");
  g_prec = bits;
}
PrecisionScope::~PrecisionScope() { g_prec = saved_; }

}  // namespace mhaq
