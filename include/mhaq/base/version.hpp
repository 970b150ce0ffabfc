// The program's version, written into certificates, golden files, checkpoints
// and `mhaq --version`. CMakeLists.txt refuses to configure when it differs
// from project(mhaq VERSION ...), so the two cannot drift apart.
#pragma once

namespace mhaq {

inline constexpr const char* mhaq_version_string = "0.1.0";

}  // namespace mhaq
