// The typed run record of a `mhaq recover --json` output: the tests read its
// fields (the codec's own test, test_judge, reads the JSON).
#pragma once
#include <string>

#include "mhaq/base/json_in.hpp"
#include "mhaq/run/record_json.hpp"

namespace mhaq::test {

inline RecoverResult record_of(const std::string& out) { return record_from_json(parse_json_text(out)); }

}  // namespace mhaq::test
