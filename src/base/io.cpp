#include "mhaq/base/io.hpp"

#include <cstdio>
#include <fstream>

#include "mhaq/base/error.hpp"

namespace mhaq {

void write_file_atomic(const std::string& path, const std::string& content) {
  const std::string tmp = path + ".tmp-mhaq";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw_input("cannot write \"" + path + "\"");
    out << content;
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw_input("write failed for \"" + path + "\"");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw_input("cannot move output into place at \"" + path + "\"");
  }
}

}  // namespace mhaq
