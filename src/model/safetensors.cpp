#include "mhaq/model/safetensors.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <memory>

#include "mhaq/arith/surd.hpp"
#include "mhaq/base/error.hpp"
#include "mhaq/base/io.hpp"
#include "mhaq/base/json_in.hpp"
#include "mhaq/base/limits.hpp"
#include "mhaq/base/text.hpp"
#include "mhaq/model/transformer.hpp"

namespace mhaq {

namespace {
using nlohmann::json;

std::string num(std::uint64_t x) { return std::to_string(x); }

// value * 2^exp as an exact rational (exp may be negative).
Rational dyadic(bool negative, std::uint64_t mantissa, long exp) {
  Rational q;
  fmpz_set_ui(fmpq_numref(q.raw()), mantissa);
  if (exp >= 0) {
    fmpz_mul_2exp(fmpq_numref(q.raw()), fmpq_numref(q.raw()), static_cast<ulong>(exp));
  } else {
    fmpz_one(fmpq_denref(q.raw()));
    fmpz_mul_2exp(fmpq_denref(q.raw()), fmpq_denref(q.raw()), static_cast<ulong>(-exp));
    fmpq_canonicalise(q.raw());
  }
  if (negative) fmpq_neg(q.raw(), q.raw());
  return q;
}

std::string dims_text(const std::vector<long>& s) {
  std::string o = "[";
  for (size_t i = 0; i < s.size(); ++i) o += (i ? ", " : "") + std::to_string(s[i]);
  return o + "]";
}

std::string index_text(const std::vector<long>& shape, long flat) {
  std::vector<long> idx(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    idx[i] = shape[i] ? flat % shape[i] : 0;
    flat = shape[i] ? flat / shape[i] : 0;
  }
  std::string o;
  for (long x : idx) o += "[" + std::to_string(x) + "]";
  return o;
}

bool parse_dtype(const std::string& s, StDtype& t) {
  if (s == "F64") t = StDtype::f64;
  else if (s == "F32") t = StDtype::f32;
  else if (s == "F16") t = StDtype::f16;
  else if (s == "BF16") t = StDtype::bf16;
  else return false;
  return true;
}

// Bits per element of the format's other dtypes: read as headers, never as weights.
int other_dtype_bits(const std::string& s) {
  static const std::pair<const char*, int> table[] = {{"BOOL", 8},     {"U8", 8},       {"I8", 8},       {"F8_E4M3", 8}, {"F8_E5M2", 8},
                                                      {"F8_E8M0", 8},  {"U16", 16},     {"I16", 16},     {"U32", 32},    {"I32", 32},
                                                      {"U64", 64},     {"I64", 64},     {"C64", 64},     {"F4", 4},      {"F6_E2M3", 6},
                                                      {"F6_E3M2", 6}};
  for (const auto& [name, bits] : table)
    if (s == name) return bits;
  return 0;
}

// An exact unsigned count for messages (no wrapping at 2^64).
std::string u128_text(unsigned __int128 x) {
  std::string o;
  do {
    o.insert(o.begin(), static_cast<char>('0' + static_cast<int>(x % 10)));
    x /= 10;
  } while (x != 0);
  return o;
}

// The 8-byte header length at the start of a file of `size` bytes, checked
// against the limit and the file's end.
std::uint64_t read_header_length(const std::string& first8, std::uint64_t size, const std::string& name) {
  if (size < 8) throw_input(name + ": " + num(size) + " bytes, fewer than the 8-byte header length a safetensors file starts with");
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(first8[static_cast<size_t>(i)]);
  if (n > static_cast<std::uint64_t>(limits::max_safetensors_header))
    throw_input(name + ": header length " + num(n) + " (bytes 0..7) is more than the limit of " + std::to_string(limits::max_safetensors_header) + " bytes");
  if (n > size - 8)
    throw_input(name + ": header length " + num(n) + " (bytes 0..7) runs past the end of the file: the header would end at byte " + num(8 + n) +
                ", the file has " + num(size) + " bytes");
  return n;
}

std::string byte_hex(unsigned char c) {
  static const char* hex = "0123456789abcdef";
  return std::string("0x") + hex[c >> 4] + hex[c & 15];
}

// The format's framing of the JSON text: it begins with '{' (no byte order
// mark, no leading whitespace) and only spaces (0x20) may follow its closing
// '}'. `hw` names the header in messages.
void check_header_framing(const std::string& header, const std::string& hw) {
  if (header.empty()) throw_input(hw + ": empty; a safetensors header is a JSON object");
  if (header.compare(0, 3, "\xEF\xBB\xBF") == 0)
    throw_input(hw + ": begins with a UTF-8 byte order mark (bytes 8..10); the format's header begins with '{' at byte 8");
  if (header[0] != '{')
    throw_input(hw + ": must be a JSON object beginning with '{' at byte 8, got byte " + byte_hex(static_cast<unsigned char>(header[0])));
  // Trailing bytes: spaces only. A run of other whitespace or NULs right after
  // the closing '}' is named here; anything else is left to the JSON parser.
  size_t end = header.size();
  while (end > 0 && header[end - 1] == ' ') --end;
  if (end == 0 || header[end - 1] == '}') return;
  auto padding_like = [](char c) { return c == '\0' || c == '\n' || c == '\r' || c == '\t' || c == ' '; };
  size_t start = end;
  while (start > 0 && padding_like(header[start - 1])) --start;
  if (start == 0 || header[start - 1] != '}') return;
  size_t bad = start;
  while (header[bad] == ' ') ++bad;
  throw_input(hw + ": byte " + std::to_string(8 + bad) + " after the JSON object is " + byte_hex(static_cast<unsigned char>(header[bad])) +
              "; the format pads the header with spaces (0x20) only");
}
}  // namespace

const char* dtype_name(StDtype t) {
  switch (t) {
    case StDtype::f64: return "F64";
    case StDtype::f32: return "F32";
    case StDtype::f16: return "F16";
    case StDtype::bf16: return "BF16";
  }
  return "?";
}

int dtype_bytes(StDtype t) {
  switch (t) {
    case StDtype::f64: return 8;
    case StDtype::f32: return 4;
    case StDtype::f16: return 2;
    case StDtype::bf16: return 2;
  }
  return 0;
}

long SafetensorsTensor::elements() const {
  long n = 1;
  for (long s : shape) n *= s;  // the header check bounded the product by the byte count
  return n;
}

Rational decode_element(StDtype t, const unsigned char* p, const std::string& where) {
  std::uint64_t bits = 0;
  const int nb = dtype_bytes(t);
  for (int i = nb - 1; i >= 0; --i) bits = (bits << 8) | p[i];
  // IEEE-754 layout: sign | exponent (e bits, bias) | fraction (m bits).
  int e = 0, m = 0;
  switch (t) {
    case StDtype::f64: e = 11; m = 52; break;
    case StDtype::f32: e = 8; m = 23; break;
    case StDtype::f16: e = 5; m = 10; break;
    case StDtype::bf16: e = 8; m = 7; break;
  }
  const long bias = (1L << (e - 1)) - 1;
  const bool negative = (bits >> (e + m)) & 1;
  const std::uint64_t exp_field = (bits >> m) & ((1ULL << e) - 1);
  const std::uint64_t frac = bits & ((1ULL << m) - 1);
  if (exp_field == (1ULL << e) - 1)
    throw_input(where + (frac ? " is NaN" : negative ? " is -infinity" : " is +infinity") + " (" + dtype_name(t) + " bits 0x" +
                [&] {
                  static const char* hex = "0123456789abcdef";
                  std::string h;
                  for (int i = nb * 2 - 1; i >= 0; --i) h += hex[(bits >> (4 * i)) & 15];
                  return h;
                }() +
                "); a model's weights must be finite");
  if (exp_field == 0) return dyadic(negative, frac, 1 - bias - m);  // zero and subnormals
  return dyadic(negative, frac | (1ULL << m), static_cast<long>(exp_field) - bias - m);
}

SafetensorsFile SafetensorsFile::from_bytes(std::string bytes, const std::string& name) {
  SafetensorsFile f;
  f.name_ = name;
  f.size_ = bytes.size();
  auto data = std::make_shared<std::string>(std::move(bytes));
  f.read_ = [data](std::uint64_t b, std::uint64_t n) { return data->substr(static_cast<size_t>(b), static_cast<size_t>(n)); };
  const std::uint64_t n = read_header_length(f.size_ >= 8 ? data->substr(0, 8) : std::string(), f.size_, name);
  f.header_len_ = n;
  f.parse_header(data->substr(8, static_cast<size_t>(n)));
  return f;
}

SafetensorsFile SafetensorsFile::open(const std::string& path) {
  const std::string name = quote_text(path);
  struct stat sb {};
  if (::stat(path.c_str(), &sb) != 0) throw_input("cannot open safetensors file " + name + ": " + std::strerror(errno));
  if (!S_ISREG(sb.st_mode)) throw_input("cannot read safetensors file " + name + ": not a regular file (the reader seeks to each tensor)");
  auto in = std::make_shared<std::ifstream>(path, std::ios::binary);
  if (!*in) throw_input("cannot open safetensors file " + name);
  SafetensorsFile f;
  f.name_ = name;
  f.size_ = static_cast<std::uint64_t>(sb.st_size);
  f.read_ = [in, name](std::uint64_t b, std::uint64_t n) {
    std::string out(static_cast<size_t>(n), '\0');
    in->clear();
    in->seekg(static_cast<std::streamoff>(b));
    in->read(out.data(), static_cast<std::streamsize>(n));
    if (static_cast<std::uint64_t>(in->gcount()) != n) throw_input("read error on safetensors file " + name + " at byte " + num(b) + " (was it truncated?)");
    return out;
  };
  const std::uint64_t n = read_header_length(f.size_ >= 8 ? f.read_(0, 8) : std::string(), f.size_, name);
  f.header_len_ = n;
  f.parse_header(f.read_(8, n));
  return f;
}

void SafetensorsFile::parse_header(const std::string& header) {
  const std::string hw = name_ + ": header (bytes 8.." + num(8 + header_len_) + ")";
  check_header_framing(header, hw);
  json j;
  try {
    j = parse_json_text(header);
  } catch (const Error& e) {
    throw_input(hw + ": " + e.what());
  }
  if (!j.is_object()) throw_input(hw + ": must be a JSON object (tensor name -> {dtype, shape, data_offsets}), got " + json_shown(j));
  if (static_cast<long>(j.size()) > limits::max_safetensors_tensors + 1)
    throw_input(hw + ": " + std::to_string(j.size()) + " entries, more than the limit of " + std::to_string(limits::max_safetensors_tensors) + " tensors");
  const std::uint64_t buffer = size_ - 8 - header_len_;
  const std::uint64_t base = 8 + header_len_;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string tw = name_ + ": tensor " + quote_text(it.key());
    if (it.key() == "__metadata__") {
      if (!it->is_object()) throw_input(hw + ": __metadata__ must be an object of strings, got " + json_shown(*it));
      for (auto m = it->begin(); m != it->end(); ++m)
        if (!m->is_string()) throw_input(hw + ": __metadata__." + clean_text(m.key()) + " must be a string, got " + json_shown(*m));
      metadata_ = *it;
      continue;
    }
    const json& e = *it;
    if (!e.is_object()) throw_input(tw + ": expected {\"dtype\", \"shape\", \"data_offsets\"}, got " + json_shown(e));
    for (auto k = e.begin(); k != e.end(); ++k)
      if (k.key() != "dtype" && k.key() != "shape" && k.key() != "data_offsets")
        throw_input(tw + ": unknown field " + quote_text(k.key()) + " (a tensor has dtype, shape and data_offsets)");
    for (const char* k : {"dtype", "shape", "data_offsets"})
      if (!e.contains(k)) throw_input(tw + ": missing \"" + k + "\"");
    SafetensorsTensor t;
    t.name = it.key();
    if (!e["dtype"].is_string()) throw_input(tw + ": dtype must be a string, got " + json_shown(e["dtype"]));
    const std::string& dt = e["dtype"].get_ref<const std::string&>();
    t.dtype_text = dt;
    t.readable = parse_dtype(dt, t.dtype);
    const int bits = t.readable ? 8 * dtype_bytes(t.dtype) : other_dtype_bits(dt);
    if (bits == 0)
      throw_input(tw + ": unknown dtype " + quote_text(dt) +
                  " (the format's dtypes: F64, F32, F16, BF16, which mhaq reads, and BOOL, U8, I8, U16, I16, U32, I32, U64, I64, C64, F8_E4M3, F8_E5M2, "
                  "F8_E8M0, F6_E2M3, F6_E3M2, F4)");
    const json& sh = e["shape"];
    if (!sh.is_array()) throw_input(tw + ": shape must be an array of dimensions, got " + json_shown(sh));
    if (static_cast<long>(sh.size()) > limits::max_tensor_rank)
      throw_input(tw + ": rank " + std::to_string(sh.size()) + ", more than the limit of " + std::to_string(limits::max_tensor_rank));
    // Elements, saturating: any product beyond the buffer cannot match the byte count.
    unsigned __int128 elems = 1;
    bool zero = false;
    for (size_t i = 0; i < sh.size(); ++i) {
      const long s = json_long(sh[i], 0, LONG_MAX, tw + ": shape[" + std::to_string(i) + "]");
      t.shape.push_back(s);
      if (s == 0) zero = true;
      const unsigned __int128 cap = static_cast<unsigned __int128>(1) << 80;
      elems = (s > 0 && elems > cap / static_cast<unsigned long>(s)) ? cap : std::min(cap, elems * static_cast<unsigned long>(s));
    }
    if (zero) elems = 0;
    const json& off = e["data_offsets"];
    if (!off.is_array() || off.size() != 2) throw_input(tw + ": data_offsets must be [begin, end], got " + json_shown(off));
    const long b = json_long(off[0], 0, LONG_MAX, tw + ": data_offsets[0]");
    const long en = json_long(off[1], 0, LONG_MAX, tw + ": data_offsets[1]");
    if (b > en) throw_input(tw + ": data_offsets [" + std::to_string(b) + ", " + std::to_string(en) + "] end before they begin");
    if (static_cast<std::uint64_t>(en) > buffer)
      throw_input(tw + ": data_offsets [" + std::to_string(b) + ", " + std::to_string(en) + "] end at file byte " + num(base + static_cast<std::uint64_t>(en)) +
                  ", past the end of the file (" + num(size_) + " bytes; the data buffer has " + num(buffer) + ")");
    const unsigned __int128 want_bits = elems * static_cast<unsigned>(bits);
    const unsigned __int128 want = want_bits / 8;
    const bool capped = elems >= (static_cast<unsigned __int128>(1) << 80);
    if (!capped && want_bits % 8 != 0)
      throw_input(tw + ": shape " + dims_text(t.shape) + " of " + dt + " holds " + u128_text(want_bits) + " bits, not a whole number of bytes");
    if (capped || want != static_cast<unsigned __int128>(en - b)) {
      const std::string need = capped ? std::string("more than 2^80") : u128_text(want);
      throw_input(tw + ": shape " + dims_text(t.shape) + " of " + dt + " needs " + need + " bytes, data_offsets [" + std::to_string(b) + ", " +
                  std::to_string(en) + "] hold " + std::to_string(en - b));
    }
    t.begin = base + static_cast<std::uint64_t>(b);
    t.end = base + static_cast<std::uint64_t>(en);
    tensors_.push_back(std::move(t));
  }
  // The buffer is covered exactly: no overlaps, no holes, nothing after the last tensor.
  std::vector<const SafetensorsTensor*> order;
  for (const auto& t : tensors_)
    if (t.end > t.begin) order.push_back(&t);
  std::sort(order.begin(), order.end(), [](const auto* a, const auto* b) { return a->begin < b->begin || (a->begin == b->begin && a->end < b->end); });
  std::uint64_t at = base;
  const SafetensorsTensor* prev = nullptr;
  for (const auto* t : order) {
    if (t->begin < at)
      throw_input(name_ + ": tensors " + quote_text(prev->name) + " (file bytes " + num(prev->begin) + ".." + num(prev->end) + ") and " + quote_text(t->name) +
                  " (file bytes " + num(t->begin) + ".." + num(t->end) + ") overlap");
    if (t->begin > at)
      throw_input(name_ + ": file bytes " + num(at) + ".." + num(t->begin) + " belong to no tensor (a hole before " + quote_text(t->name) +
                  "); the data buffer must be covered exactly");
    at = t->end;
    prev = t;
  }
  if (at != size_)
    throw_input(name_ + ": file bytes " + num(at) + ".." + num(size_) + " after the last tensor belong to no tensor; the data buffer must be covered exactly");
}

const SafetensorsTensor* SafetensorsFile::find(const std::string& tensor) const {
  for (const auto& t : tensors_)
    if (t.name == tensor) return &t;
  return nullptr;
}

const SafetensorsTensor& SafetensorsFile::get(const std::string& tensor, const std::string& what) const {
  const SafetensorsTensor* t = find(tensor);
  if (!t) throw_input(name_ + ": no tensor " + quote_text(tensor) + " (named in " + what + "); the file has " + std::to_string(tensors_.size()) + (tensors_.size() == 1 ? " tensor" : " tensors"));
  return *t;
}

std::vector<Rational> SafetensorsFile::values(const SafetensorsTensor& t) const {
  if (!t.readable)
    throw_input(name_ + ": tensor " + quote_text(t.name) + " has dtype " + quote_text(t.dtype_text) +
                "; mhaq reads weights of dtype F64, F32, F16 or BF16 (a tensor of another dtype may be in the file, but not named in the map)");
  const long n = t.elements();
  if (n > limits::max_file_entries)
    throw_input(name_ + ": tensor " + quote_text(t.name) + " has " + std::to_string(n) + " elements, more than the limit of " +
                std::to_string(limits::max_file_entries) + " entries in a model file");
  const std::string bytes = read_(t.begin, t.end - t.begin);
  const int nb = dtype_bytes(t.dtype);
  std::vector<Rational> out(static_cast<size_t>(n));
  for (long i = 0; i < n; ++i) {
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data()) + i * nb;
    try {
      out[static_cast<size_t>(i)] = decode_element(t.dtype, p, "");
    } catch (const Error& e) {  // named here, so the message is built only for a bad element
      throw_input(name_ + ": tensor " + quote_text(t.name) + " element " + index_text(t.shape, i) + " (file byte " +
                  num(t.begin + static_cast<std::uint64_t>(i) * static_cast<std::uint64_t>(nb)) + ")" + e.what());
    }
  }
  return out;
}

namespace {
struct Mat2 {  // a rank-2 tensor read exactly, row-major
  long rows = 0, cols = 0;
  std::vector<Rational> a;
  const Rational& at(long r, long c) const { return a[static_cast<size_t>(r * cols + c)]; }
};

const SafetensorsTensor& rank2(const SafetensorsFile& f, const SafetensorsMap& m, const std::string& name, const std::string& role) {
  const SafetensorsTensor& t = f.get(name, m.source + ": " + role);
  if (!t.readable)
    throw_input(f.name() + ": tensor " + quote_text(name) + " (" + role + ", named in " + m.source + ") has dtype " + quote_text(t.dtype_text) +
                "; weights must be F64, F32, F16 or BF16");
  if (t.shape.size() != 2)
    throw_input(f.name() + ": tensor " + quote_text(name) + " (" + role + "): expected a matrix (rank 2), got shape " + dims_text(t.shape) + " (rank " +
                std::to_string(t.shape.size()) + ")");
  if (t.shape[0] == 0 || t.shape[1] == 0) throw_input(f.name() + ": tensor " + quote_text(name) + " (" + role + "): empty shape " + dims_text(t.shape));
  return t;
}

Mat2 load(const SafetensorsFile& f, const SafetensorsTensor& t) { return Mat2{t.shape[0], t.shape[1], f.values(t)}; }

// Every tensor the map names exists; no nonzero bias beside them goes
// unnamed; and nothing is there that a factored model file cannot hold: a
// map without a readout, grouped key-value heads, rotary embeddings.
void check_mapped(const SafetensorsFile& f, const SafetensorsMap& m) {
  for (const auto* s : {&m.q, &m.k, &m.v, &m.in_proj, &m.out, &m.readout_tensor, &m.ffn, &m.q_bias, &m.k_bias, &m.v_bias, &m.in_proj_bias, &m.out_bias})
    if (!s->empty()) (void)f.get(*s, m.source);
  (void)unnamed_biases(f, m);
  if (!m.has_readout) throw_input(m.source + ": names no readout: convert writes f(X) = u . attention(X) and needs u (a tensor name or exact entries)");
  if (m.kv_heads != m.heads || m.rope)
    throw_input(m.source + ": gives " + std::string(m.rope ? "rotary embeddings (rope)" : "grouped key-value heads (kv_heads)") +
                ": mhaq's factored model files have neither; golden kernel takes such a layer");
}

// The biases the map names, shapes checked before any entry is read: each a
// vector of as many entries as its projection has outputs.
struct BiasTensors {
  const SafetensorsTensor *q = nullptr, *k = nullptr, *v = nullptr, *in = nullptr, *out = nullptr;
};
BiasTensors bias_tensors(const SafetensorsFile& f, const SafetensorsMap& m, long qk_cols, long v_cols, long d_out) {
  auto vec = [&](const std::string& name, const char* role, long n) -> const SafetensorsTensor* {
    if (name.empty()) return nullptr;
    const SafetensorsTensor& t = f.get(name, m.source + ": " + role);
    if (!t.readable)
      throw_input(f.name() + ": tensor " + quote_text(name) + " (" + role + ", named in " + m.source + ") has dtype " + quote_text(t.dtype_text) +
                  "; biases must be F64, F32, F16 or BF16");
    if (t.shape.size() != 1 || t.shape[0] != n)
      throw_input(f.name() + ": tensor " + quote_text(name) + " (" + role + ") has shape " + dims_text(t.shape) + "; expected a vector of " +
                  std::to_string(n) + " entries, one per output of its projection");
    return &t;
  };
  if (!m.ffn.empty() && (!m.q_bias.empty() || !m.k_bias.empty() || !m.v_bias.empty() || !m.in_proj_bias.empty() || !m.out_bias.empty()))
    throw_input(m.source + ": names ffn and biases: mhaq's one-layer transformer is bias-free (docs/math/biases.md covers attention layers)");
  return BiasTensors{vec(m.q_bias, "q_bias", qk_cols), vec(m.k_bias, "k_bias", qk_cols), vec(m.v_bias, "v_bias", v_cols),
                     vec(m.in_proj_bias, "in_proj_bias", 2 * qk_cols + v_cols), vec(m.out_bias, "out_bias", d_out)};
}

// Fills every head's q, k, v biases and the output bias; a bias tensor whose
// entries are all zero is no bias.
void assign_biases(const SafetensorsFile& f, const BiasTensors& b, long q_off, long k_off, long v_off, FactoredModel& fm) {
  auto values = [&](const SafetensorsTensor* t) {
    std::vector<Rational> v = t ? f.values(*t) : std::vector<Rational>{};
    for (const auto& x : v)
      if (!x.is_zero()) return v;
    return std::vector<Rational>{};
  };
  const std::vector<Rational> fused = values(b.in), bq = b.in ? fused : values(b.q), bk = b.in ? fused : values(b.k), bv = b.in ? fused : values(b.v);
  if (!b.in) q_off = k_off = v_off = 0;
  auto slice = [](const std::vector<Rational>& all, long from, long n) {
    return all.empty() ? QVec{} : QVec(all.begin() + from, all.begin() + from + n);
  };
  for (size_t h = 0; h < fm.heads.size(); ++h) {
    const long hk = static_cast<long>(h) * fm.d_k, hv = static_cast<long>(h) * fm.d_v;
    fm.heads[h].q_bias = slice(bq, q_off + hk, fm.d_k);
    fm.heads[h].k_bias = slice(bk, k_off + hk, fm.d_k);
    fm.heads[h].v_bias = slice(bv, v_off + hv, fm.d_v);
  }
  fm.out_bias = values(b.out);
}

// The readout has one entry per output (attention) or per FFN neuron
// (transformer): the FFN's and the readout's tensors, checked from the header.
struct ReadoutShape {
  const SafetensorsTensor* ffn = nullptr;
  const SafetensorsTensor* readout = nullptr;  // null: the map's inline entries
  long entries = 0;
};
ReadoutShape readout_shape(const SafetensorsFile& f, const SafetensorsMap& m, long d_out) {
  const SafetensorsTensor* tf = nullptr;
  const std::string fn = f.name();
  const std::string lay = m.out_in ? "out_in: (out x in)" : "in_out: (in x out)";
  auto out_dim = [&](const SafetensorsTensor& t) { return m.out_in ? t.shape[0] : t.shape[1]; };
  auto in_dim = [&](const SafetensorsTensor& t) { return m.out_in ? t.shape[1] : t.shape[0]; };
  long n_read = d_out;
  std::string read_what = "d_out = " + std::to_string(d_out);
  if (!m.ffn.empty()) {
    tf = &rank2(f, m, m.ffn, "ffn");
    if (in_dim(*tf) != d_out)
      throw_input(fn + ": tensor " + quote_text(m.ffn) + " (ffn, layout " + lay + ") has shape " + dims_text(tf->shape) + ": its in dimension " +
                  std::to_string(in_dim(*tf)) + " must be the output projection's d_out = " + std::to_string(d_out));
    n_read = out_dim(*tf);
    if (n_read > limits::max_neurons)
      throw_input(fn + ": tensor " + quote_text(m.ffn) + " (ffn) has " + std::to_string(n_read) + " neurons, more than the limit max_neurons = " +
                  std::to_string(limits::max_neurons));
    read_what = "m = " + std::to_string(n_read) + " (the FFN's neurons)";
  }
  const SafetensorsTensor* tr = nullptr;
  if (!m.readout_tensor.empty()) {
    tr = &f.get(m.readout_tensor, m.source + ": readout");
    if (tr->shape.size() != 1 || tr->shape[0] != n_read)
      throw_input(fn + ": tensor " + quote_text(m.readout_tensor) + " (readout) has shape " + dims_text(tr->shape) + "; expected a vector of " + read_what +
                  " entries");
  } else if (static_cast<long>(m.readout.size()) != n_read) {
    throw_input(m.source + ": readout: " + std::to_string(m.readout.size()) + " entries; expected " + read_what + " (" + fn + ")");
  }
  return ReadoutShape{tf, tr, n_read};
}
}  // namespace

FactoredModel safetensors_to_factored(const SafetensorsFile& f, const SafetensorsMap& m, QMat* ffn_out) {
  const std::string fn = f.name();
  if (!m.ffn.empty() && !ffn_out) throw_internal("safetensors_to_factored: the map has an FFN and no place to put it");
  check_mapped(f, m);
  const long H = m.heads;
  // "out" dimension (rows for out_in, columns for in_out) and "in" dimension of a projection.
  auto out_dim = [&](const SafetensorsTensor& t) { return m.out_in ? t.shape[0] : t.shape[1]; };
  auto in_dim = [&](const SafetensorsTensor& t) { return m.out_in ? t.shape[1] : t.shape[0]; };
  const std::string lay = m.out_in ? "out_in: (out x in)" : "in_out: (in x out)";

  // Shapes first, from the header alone; entries are read after every check.
  long d = 0, qk_cols = 0, v_cols = 0;
  const SafetensorsTensor *tq = nullptr, *tk = nullptr, *tv = nullptr, *tin = nullptr;
  if (!m.in_proj.empty()) {
    tin = &rank2(f, m, m.in_proj, "in_proj");
    const long o = out_dim(*tin);
    if (o % 3 != 0)
      throw_input(fn + ": tensor " + quote_text(m.in_proj) + " (in_proj, layout " + lay + "): shape " + dims_text(tin->shape) + ": its out dimension " +
                  std::to_string(o) + " is not three equal blocks q, k, v");
    d = in_dim(*tin);
    qk_cols = v_cols = o / 3;
  } else {
    tq = &rank2(f, m, m.q, "q");
    tk = &rank2(f, m, m.k, "k");
    tv = &rank2(f, m, m.v, "v");
    d = in_dim(*tq);
    if (tk->shape != tq->shape)
      throw_input(fn + ": tensor " + quote_text(m.k) + " (k) has shape " + dims_text(tk->shape) + ", tensor " + quote_text(m.q) + " (q) has " +
                  dims_text(tq->shape) + "; q and k must have equal shapes");
    if (in_dim(*tv) != d)
      throw_input(fn + ": tensor " + quote_text(m.v) + " (v) has shape " + dims_text(tv->shape) + ": its in dimension " + std::to_string(in_dim(*tv)) +
                  " differs from q's " + std::to_string(d) + " (layout " + lay + ")");
    qk_cols = out_dim(*tq);
    v_cols = out_dim(*tv);
  }
  const std::string tok = "token dimension d = " + std::to_string(d);
  if (d > limits::max_d) throw_input(fn + ": " + tok + " (the projections' in dimension) is more than the limit max_d = " + std::to_string(limits::max_d));
  if (qk_cols % H != 0 || v_cols % H != 0)
    throw_input(fn + ": " + std::to_string(H) + " heads do not divide the projections: q and k have " + std::to_string(qk_cols) + " outputs, v has " +
                std::to_string(v_cols));
  const long d_k = qk_cols / H, d_v = v_cols / H;
  if (d_k > limits::max_inner_dim || d_v > limits::max_inner_dim)
    throw_input(fn + ": d_k = " + std::to_string(d_k) + ", d_v = " + std::to_string(d_v) + ": more than the limit max_inner_dim = " + std::to_string(limits::max_inner_dim));
  const SafetensorsTensor& to = rank2(f, m, m.out, "out");
  if (in_dim(to) != H * d_v)
    throw_input(fn + ": tensor " + quote_text(m.out) + " (out, layout " + lay + ") has shape " + dims_text(to.shape) + ": its in dimension " +
                std::to_string(in_dim(to)) + " must be H * d_v = " + std::to_string(H * d_v));
  const long d_out = out_dim(to);
  if (d_out > limits::max_inner_dim) throw_input(fn + ": d_out = " + std::to_string(d_out) + ": more than the limit max_inner_dim = " + std::to_string(limits::max_inner_dim));
  const ReadoutShape rs = readout_shape(f, m, d_out);
  const BiasTensors biases = bias_tensors(f, m, qk_cols, v_cols, d_out);
  const SafetensorsTensor *tf = rs.ffn, *tr = rs.readout;
  const long n_read = rs.entries;
  const long entries = H * (d * (2 * d_k + d_v) + d_v * d_out) + d_out + (tf ? d_out * n_read : 0);
  if (entries > limits::max_file_entries)
    throw_input(fn + ": the mapped layer has " + std::to_string(entries) + " entries, more than the limit of " + std::to_string(limits::max_file_entries) +
                " entries in a model file");

  FactoredModel fm;
  fm.d = static_cast<int>(d);
  fm.d_k = static_cast<int>(d_k);
  fm.d_v = static_cast<int>(d_v);
  fm.d_out = static_cast<int>(d_out);
  fm.scale = map_scale(m.scale_text, d_k, m.source);
  if (tf && !fm.scale.is_rational())
    throw_input(m.source + ": scale " + quote_text(m.scale_text) + " = " + fm.scale.str() + " is irrational; mhaq's one-layer transformer needs a rational scale");
  fm.per_head_O = false;
  // Element (i = input coordinate, j = output coordinate) of a projection.
  auto proj = [&](const Mat2& t, long i, long j) -> const Rational& { return m.out_in ? t.at(j, i) : t.at(i, j); };
  Mat2 all, Qs, Ks, Vs;  // the fused tensor, or the three separate ones
  long q_off = 0, k_off = 0, v_off = 0;
  if (tin) {
    all = load(f, *tin);
    for (size_t b = 0; b < 3; ++b) {
      const long off = static_cast<long>(b) * qk_cols;
      if (m.split[b] == 'q') q_off = off;
      if (m.split[b] == 'k') k_off = off;
      if (m.split[b] == 'v') v_off = off;
    }
  } else {
    Qs = load(f, *tq);
    Ks = load(f, *tk);
    Vs = load(f, *tv);
  }
  const Mat2& Q = tin ? all : Qs;
  const Mat2& K = tin ? all : Ks;
  const Mat2& V = tin ? all : Vs;
  for (long h = 0; h < H; ++h) {
    FactoredHead fh{QMat(static_cast<int>(d), static_cast<int>(d_k)), QMat(static_cast<int>(d), static_cast<int>(d_k)),
                    QMat(static_cast<int>(d), static_cast<int>(d_v)), QMat()};
    for (long i = 0; i < d; ++i) {
      for (long c = 0; c < d_k; ++c) {
        fh.Q(static_cast<int>(i), static_cast<int>(c)) = proj(Q, i, q_off + h * d_k + c);
        fh.K(static_cast<int>(i), static_cast<int>(c)) = proj(K, i, k_off + h * d_k + c);
      }
      for (long c = 0; c < d_v; ++c) fh.V(static_cast<int>(i), static_cast<int>(c)) = proj(V, i, v_off + h * d_v + c);
    }
    fm.heads.push_back(std::move(fh));
  }
  const Mat2 O = load(f, to);
  for (long h = 0; h < H; ++h) {
    QMat block(static_cast<int>(d_v), static_cast<int>(d_out));
    for (long r = 0; r < d_v; ++r)
      for (long c = 0; c < d_out; ++c) block(static_cast<int>(r), static_cast<int>(c)) = proj(O, h * d_v + r, c);
    fm.heads[static_cast<size_t>(h)].O = std::move(block);
  }
  fm.readout = tr ? f.values(*tr) : m.readout;
  assign_biases(f, biases, q_off, k_off, v_off, fm);
  if (tf) {
    const Mat2 F1 = load(f, *tf);
    QMat ffn(static_cast<int>(d_out), static_cast<int>(n_read));
    for (long r = 0; r < d_out; ++r)
      for (long c = 0; c < n_read; ++c) ffn(static_cast<int>(r), static_cast<int>(c)) = proj(F1, r, c);
    *ffn_out = std::move(ffn);
  }
  return fm;
}

std::string factored_to_json_text(const FactoredModel& f) {
  auto vec = [](const QVec& v) {
    std::string o = "[";
    for (size_t i = 0; i < v.size(); ++i) o += (i ? ", " : "") + json(v[i].str()).dump();
    return o + "]";
  };
  auto mat = [&](const QMat& a, const std::string& indent) {
    std::string o = "[";
    for (int r = 0; r < a.rows(); ++r) o += (r ? ",\n" + indent : "") + vec(a.row(r));
    return o + "]";
  };
  std::string o = "{\"format\": \"" + std::string(factored_format) + "\", \"version\": 1, \"d\": " + std::to_string(f.d) + ", \"d_k\": " + std::to_string(f.d_k) +
                  ", \"d_v\": " + std::to_string(f.d_v) + ", \"d_out\": " + std::to_string(f.d_out) + ", \"scale\": " + json(f.scale.str()).dump() + ",\n \"heads\": [";
  for (size_t h = 0; h < f.heads.size(); ++h) {
    const FactoredHead& fh = f.heads[h];
    o += h ? ",\n  {" : "\n  {";
    o += "\"Q\": " + mat(fh.Q, "        ") + ",\n   \"K\": " + mat(fh.K, "        ") + ",\n   \"V\": " + mat(fh.V, "        ");
    if (f.per_head_O) o += ",\n   \"O\": " + mat(fh.O, "        ");
    for (const auto& [key, b] : {std::pair<const char*, const QVec*>{"q_bias", &fh.q_bias}, {"k_bias", &fh.k_bias}, {"v_bias", &fh.v_bias}})
      if (!b->empty()) o += ",\n   \"" + std::string(key) + "\": " + vec(*b);
    o += "}";
  }
  o += "]";
  if (!f.per_head_O) {
    QMat O(static_cast<int>(f.heads.size()) * f.d_v, f.d_out);
    for (size_t h = 0; h < f.heads.size(); ++h)
      for (int r = 0; r < f.d_v; ++r)
        for (int c = 0; c < f.d_out; ++c) O(static_cast<int>(h) * f.d_v + r, c) = f.heads[h].O(r, c);
    o += ",\n \"O\": " + mat(O, "       ");
  }
  if (!f.out_bias.empty()) o += ",\n \"out_bias\": " + vec(f.out_bias);
  return o + ",\n \"readout\": " + vec(f.readout) + "}\n";
}

std::string factored_transformer_to_json_text(const FactoredModel& f, const QMat& ffn) {
  // The attention part as written for a model file, then the FFN before the readout.
  std::string o = factored_to_json_text(f);
  const std::string from = "{\"format\": \"" + std::string(factored_format) + "\"";
  o.replace(0, from.size(), "{\"format\": \"" + std::string(transformer_factored_format) + "\"");
  const size_t r = o.rfind(",\n \"readout\": ");
  std::string F = ",\n \"ffn\": [";
  for (int i = 0; i < ffn.rows(); ++i) {
    F += i ? ",\n         [" : "[";
    for (int j = 0; j < ffn.cols(); ++j) F += (j ? ", " : "") + json(ffn(i, j).str()).dump();
    F += "]";
  }
  F += "]";
  o.insert(r, F);
  return o;
}
}  // namespace mhaq
