#include "mhaq/base/io.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "mhaq/base/error.hpp"
#include "mhaq/base/limits.hpp"
#include "mhaq/base/text.hpp"

namespace mhaq {

void write_file_atomic(const std::string& path, const std::string& content) {
  if (content.size() > static_cast<size_t>(limits::max_file_bytes))
    throw_input("not writing " + quote_text(path) + ": " + std::to_string(content.size()) + " bytes is more than the file limit of " +
                std::to_string(limits::max_file_bytes) + " that mhaq reads back");
  const std::string tmp = path + ".tmp-mhaq";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw_input("cannot write " + quote_text(path));
    out << content;
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw_input("write failed for " + quote_text(path));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw_input("cannot move output into place at " + quote_text(path));
  }
}

AtomicFileWriter::AtomicFileWriter(const std::string& path) : path_(path), tmp_(path + ".tmp-mhaq") {
  out_.open(tmp_, std::ios::binary | std::ios::trunc);
  if (!out_) throw_input("cannot write " + quote_text(path));
}

AtomicFileWriter::~AtomicFileWriter() {
  if (!done_) {
    out_.close();
    std::remove(tmp_.c_str());
  }
}

void AtomicFileWriter::write(const std::string& piece) {
  if (bytes_ + static_cast<long>(piece.size()) > limits::max_file_bytes)
    throw_input("not writing " + quote_text(path_) + ": more than the file limit of " + std::to_string(limits::max_file_bytes) + " bytes that mhaq reads back");
  out_ << piece;
  if (!out_) throw_input("write failed for " + quote_text(path_));
  bytes_ += static_cast<long>(piece.size());
}

long AtomicFileWriter::commit() {
  out_.flush();
  out_.close();
  if (!out_) throw_input("write failed for " + quote_text(path_));
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) throw_input("cannot move output into place at " + quote_text(path_));
  done_ = true;
  return bytes_;
}

std::vector<std::string> read_complete_lines(const std::string& path, const std::string& what, long max_line, long* complete_bytes) {
  const std::string name = quote_text(path);
  struct stat sb {};
  if (::stat(path.c_str(), &sb) != 0) throw_input("cannot open " + what + " " + name + ": " + std::strerror(errno));
  if (!S_ISREG(sb.st_mode)) throw_input("cannot read " + what + " " + name + ": not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_input("cannot open " + what + " " + name);
  std::vector<std::string> lines;
  std::string line;
  long bytes = 0;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    const std::size_t n = static_cast<std::size_t>(in.gcount());
    for (std::size_t i = 0; i < n; ++i) {
      if (buf[i] != '\n') {
        if (static_cast<long>(line.size()) >= max_line)
          throw_input(what + " " + name + " line " + std::to_string(lines.size() + 1) + ": longer than " + std::to_string(max_line) + " bytes");
        line.push_back(buf[i]);
        continue;
      }
      bytes += static_cast<long>(line.size()) + 1;
      lines.push_back(std::move(line));
      line.clear();
    }
  }
  if (in.bad()) throw_input("read error on " + what + " " + name);
  if (complete_bytes) *complete_bytes = bytes;
  return lines;
}

std::string read_file_text(const std::string& path, const std::string& what) {
  const std::string name = quote_text(path);
  struct stat sb {};
  if (::stat(path.c_str(), &sb) != 0) throw_input("cannot open " + what + " " + name + ": " + std::strerror(errno));
  if (S_ISDIR(sb.st_mode)) throw_input("cannot read " + what + " " + name + ": it is a directory");
  if (!S_ISREG(sb.st_mode) && !S_ISFIFO(sb.st_mode) && !S_ISCHR(sb.st_mode))
    throw_input("cannot read " + what + " " + name + ": not a regular file");
  if (S_ISREG(sb.st_mode) && sb.st_size > limits::max_file_bytes)
    throw_input(what + " " + name + " has " + std::to_string(sb.st_size) + " bytes, more than the limit of " + std::to_string(limits::max_file_bytes));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_input("cannot open " + what + " " + name);
  // Pipes and devices have no size: read at most one byte past the limit.
  std::string out;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    out.append(buf, static_cast<size_t>(in.gcount()));
    if (out.size() > static_cast<size_t>(limits::max_file_bytes))
      throw_input(what + " " + name + " has more than the limit of " + std::to_string(limits::max_file_bytes) + " bytes");
  }
  if (in.bad()) throw_input("read error on " + what + " " + name);
  return out;
}

}  // namespace mhaq
