// doctest's main, run inside a fresh temporary directory (removed at exit),
// so a test's relative output paths never land in the source or build tree.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

int main(int argc, char** argv) {
  std::string tmpl = (std::filesystem::temp_directory_path() / "mhaq_test_XXXXXX").string();
  const char* dir = mkdtemp(tmpl.data());
  if (!dir || chdir(dir) != 0) return 99;
  doctest::Context ctx(argc, argv);
  const int rc = ctx.run();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return rc;
}
