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
  }
  return "internal";
}

}  // namespace mhaq
