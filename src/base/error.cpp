#include "mhaq/base/error.hpp"

namespace mhaq {

const char* kind_name(ErrorKind k) {
  switch (k) {
    case ErrorKind::usage: return "usage";
    case ErrorKind::input: return "input";
    case ErrorKind::degenerate: return "degenerate";
    case ErrorKind::unable: return "unable";
    case ErrorKind::mismatch: return "mismatch";
    case ErrorKind::internal: return "internal";
    case ErrorKind::inconsistent: return "inconsistent";
    case ErrorKind::not_identifiable: return "not_identifiable";
    case ErrorKind::rejected: return "checker_rejected";
    case ErrorKind::budget: return "over_budget";
    case ErrorKind::oracle_failed: return "oracle_failed";
  }
  return "internal";
}

}  // namespace mhaq
