// Exact byte images of the field values, to move them between processes (the
// ranks of one run, docs/mpi.md) and across a kill (the pair fits a checkpoint
// keeps, docs/formats.md#checkpoint): read_value(write_value(x)) is x bit for bit,
// its precision included, so a value computed on another rank is the value
// this rank would have computed. The images are opaque: nothing reads them
// but read_value, so an exact answer's tau-structure stays private.
//
// An image is written at the end of a string and read from a ByteReader that
// walks one; a malformed or short image is Error(internal) (bytes from
// another rank of the same program). A reader of images from a file turns
// that into Error(input): the learner does so for a checkpoint's fits.
#pragma once
#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "mhaq/arith/flint_wrappers.hpp"
#include "mhaq/arith/numbers.hpp"
#include "mhaq/base/distribute.hpp"
#include "mhaq/base/error.hpp"

namespace mhaq {

class ByteReader {
 public:
  explicit ByteReader(const std::string& s) : s_(s) {}
  explicit ByteReader(std::string&&) = delete;  // it reads in place: no temporary
  std::string bytes(std::size_t n);  // the next n bytes
  std::string text();                // a length-prefixed string
  bool done() const { return at_ == s_.size(); }

 private:
  const std::string& s_;
  std::size_t at_ = 0;
};

void write_text(std::string& out, const std::string& s);  // a length-prefixed string

void write_value(std::string& out, const QTau& x);
void write_value(std::string& out, const Ball& x);
void write_value(std::string& out, const Mpfr& x);
void write_value(std::string& out, double x);
void write_value(std::string& out, const flint::Mag& x);
void read_value(ByteReader& in, QTau& x);
void read_value(ByteReader& in, Ball& x);
void read_value(ByteReader& in, Mpfr& x);
void read_value(ByteReader& in, double& x);
void read_value(ByteReader& in, flint::Mag& x);

// The images as a trait the stages can use without naming a type: available
// for the four number types; the jets have none (a run over jets stays on
// one rank), and their write and read are Error(internal).
template <class T>
struct ValueBytes {
  static constexpr bool available = false;
  static void write(std::string&, const T&) { throw_internal("value bytes: this number type has no image"); }
  static void read(ByteReader&, T&) { throw_internal("value bytes: this number type has no image"); }
};
#define MHAQ_VALUE_BYTES(T)                                                 \
  template <>                                                               \
  struct ValueBytes<T> {                                                    \
    static constexpr bool available = true;                                 \
    static void write(std::string& out, const T& x) { write_value(out, x); } \
    static void read(ByteReader& in, T& x) { read_value(in, x); }           \
  };
MHAQ_VALUE_BYTES(QTau)
MHAQ_VALUE_BYTES(Ball)
MHAQ_VALUE_BYTES(Mpfr)
MHAQ_VALUE_BYTES(double)
#undef MHAQ_VALUE_BYTES

// What besides its inputs' images a computation in the field depends on, as
// text: L for Q(tau) (tau = e^{1/L}), the working precision for balls and
// MPFR, 53 for doubles; empty for a field with no value images. A key of
// stored results (stages/3-fit/fit_store.hpp) holds it.
template <class T>
struct Field;
std::string field_key(const Field<QTau>& F);
std::string field_key(const Field<Ball>& F);
std::string field_key(const Field<Mpfr>& F);
std::string field_key(const Field<double>& F);
template <class F>
std::string field_key(const F&) {
  return {};
}

template <class T>
void write_values(std::string& out, const std::vector<T>& v) {
  write_text(out, std::to_string(v.size()));
  for (const T& x : v) ValueBytes<T>::write(out, x);
}
template <class T>
void read_values(ByteReader& in, std::vector<T>& v) {
  const std::string n = in.text();
  v.assign(static_cast<std::size_t>(std::stoul(n)), T());
  for (T& x : v) ValueBytes<T>::read(in, x);
}

// One run across ranks (base/distribute.hpp), where run_across_ranks()
// holds: the items [0, n) in pieces of `piece` (>= 1), piece k computed on
// rank k mod N on up to `threads` threads, where write(i, out) computes item
// i and appends its image to out; then every rank, in index order, reads
// every item's image with read(i, in). Pieces trade the gather's per-item
// overhead against the balance of the shares. A piece not read to its end
// is Error(internal).
template <class Write, class Read>
void gather_across_ranks(std::size_t n, std::size_t piece, int threads, const Write& write, const Read& read) {
  if (piece < 1) throw_internal("gather across ranks: an empty piece");
  const std::size_t pieces = (n + piece - 1) / piece;
  const std::vector<std::string> images = map_across_ranks(pieces, threads, [&](std::size_t k) {
    std::string b;
    for (std::size_t i = k * piece; i < std::min(n, (k + 1) * piece); ++i) write(i, b);
    return b;
  });
  for (std::size_t k = 0; k < pieces; ++k) {
    ByteReader in(images[k]);
    for (std::size_t i = k * piece; i < std::min(n, (k + 1) * piece); ++i) read(i, in);
    if (!in.done()) throw_internal("gather across ranks: a piece has bytes left over");
  }
}

}  // namespace mhaq
