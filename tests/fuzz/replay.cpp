// Replays files through a fuzz harness (no libFuzzer needed): every argument
// is a file or a directory of files, each fed once to LLVMFuzzerTestOneInput.
// Exit 0 when all ran (a finding aborts); 2 when an argument is unreadable.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz.hpp"

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    const fs::path p(argv[i]);
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      for (const auto& e : fs::directory_iterator(p))
        if (e.is_regular_file()) files.push_back(e.path());
    } else if (fs::is_regular_file(p, ec)) {
      files.push_back(p);
    } else {
      std::fprintf(stderr, "replay: cannot read %s\n", argv[i]);
      return 2;
    }
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::fprintf(stderr, "replay %s (%zu bytes)\n", f.string().c_str(), bytes.size());
    const auto t0 = std::chrono::steady_clock::now();
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    if (std::getenv("MHAQ_REPLAY_TIMES"))  // per-input time, to find slow inputs
      std::printf("%.4f s %s\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), f.string().c_str());
  }
  std::printf("replayed %zu inputs, no findings\n", files.size());
  return files.empty() ? 2 : 0;
}
