// Small file helpers: atomic writes (nothing is ever written half-way) and
// bounded reads (a directory, a device or a huge file is an input error, not
// an empty document).
#pragma once
#include <fstream>
#include <string>
#include <vector>

namespace mhaq {

// Writes the file through a temporary in the same folder and renames it into
// place; throws Error(input) on failure, leaving no partial file behind.
// Refuses content over limits::max_file_bytes (mhaq would not read it back).
void write_file_atomic(const std::string& path, const std::string& content);

// A file written piece by piece through a temporary in the same folder and
// renamed into place by commit(); write() refuses to go past
// limits::max_file_bytes (Error(input), the temporary removed), and a writer
// destroyed without commit() removes its temporary: a file is never left
// half-written.
class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(const std::string& path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;
  void write(const std::string& piece);
  long commit();  // the bytes written

 private:
  std::string path_, tmp_;
  std::ofstream out_;
  long bytes_ = 0;
  bool done_ = false;
};

// The complete lines of a journal that grows with a run (a checkpoint, an
// oracle transcript), read one at a time: the file has no size bound, each
// line at most max_line bytes (Error(input) naming `what` and the line). A
// last line without its newline (its writer was killed) is left out;
// `complete_bytes`, when given, is set to the bytes of the lines returned.
std::vector<std::string> read_complete_lines(const std::string& path, const std::string& what, long max_line, long* complete_bytes = nullptr);

// The bytes of a regular file of at most limits::max_file_bytes. Error(input)
// "cannot open <what> ..." naming the path (quoted, so any bytes are safe to echo).
std::string read_file_text(const std::string& path, const std::string& what);

}  // namespace mhaq
