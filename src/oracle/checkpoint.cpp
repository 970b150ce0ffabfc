#include "mhaq/oracle/checkpoint.hpp"

#include <arb.h>
#include <flint/fmpz_poly_q.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "mhaq/arith/flint_wrappers.hpp"
#include "mhaq/base/version.hpp"
#include "mhaq/arith/qtau_access.hpp"
#include "mhaq/arith/token_hash.hpp"
#include "mhaq/base/io.hpp"
#include "mhaq/base/json_in.hpp"
#include "mhaq/base/limits.hpp"
#include "mhaq/base/text.hpp"

namespace mhaq {

namespace {

const char* kFormat = "mhaq-checkpoint";
const std::string kProgram = std::string("mhaq ") + mhaq_version_string;

std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 1469598103934665603ULL;
  for (const unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return h;
}

// FNV-1a with 128 bits, as 32 hexadecimal digits: the key of a fit line.
std::string fnv1a_128_hex(const std::string& s) {
  using u128 = unsigned __int128;
  u128 h = (static_cast<u128>(0x6c62272e07bb0142ULL) << 64) | 0x62b821756295c58dULL;
  const u128 prime = (static_cast<u128>(1) << 88) | 0x13b;
  for (const unsigned char c : s) h = (h ^ c) * prime;
  static const char* digits = "0123456789abcdef";
  std::string out(32, '0');
  for (int i = 31; i >= 0; --i, h >>= 4) out[static_cast<size_t>(i)] = digits[static_cast<unsigned>(h & 15)];
  return out;
}

std::string to_hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(2 * bytes.size());
  for (const unsigned char c : bytes) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  return out;
}

bool from_hex(const std::string& s, std::string& out) {
  if (s.size() % 2) return false;
  auto v = [](char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1; };
  out.clear();
  out.reserve(s.size() / 2);
  for (size_t i = 0; i < s.size(); i += 2) {
    const int a = v(s[i]), b = v(s[i + 1]);
    if (a < 0 || b < 0) return false;
    out.push_back(static_cast<char>(a << 4 | b));
  }
  return true;
}

const char* kFitTag = "fit";

// The part of a fit line its checksum covers.
std::string fit_body(const std::string& key_hash, const std::string& image_hex) { return std::string(kFitTag) + '\t' + key_hash + '\t' + image_hex; }

std::string hex16(std::uint64_t x) {
  static const char* digits = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, x >>= 4) s[static_cast<size_t>(i)] = digits[x & 15];
  return s;
}

bool parse_hex16(const std::string& s, std::uint64_t& out) {
  if (s.size() != 16) return false;
  out = 0;
  for (const char c : s) {
    int v = 0;
    if (c >= '0' && c <= '9') v = c - '0';
    else if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
    else return false;
    out = out << 4 | static_cast<std::uint64_t>(v);
  }
  return true;
}

// The part of an answer line its checksum covers.
std::string line_body(long index, std::uint64_t qh, const std::string& answer, const std::string& error) {
  return std::to_string(index) + '\t' + hex16(qh) + '\t' + answer + '\t' + error;
}

std::vector<std::string> split_tabs(const std::string& s) {
  std::vector<std::string> out(1);
  for (const char c : s) {
    if (c == '\t') out.emplace_back();
    else out.back().push_back(c);
  }
  return out;
}

nlohmann::ordered_json header(const CheckpointSpec& s, const std::string& arith) {
  return nlohmann::ordered_json{{"format", kFormat}, {"version", checkpoint_version}, {"program", kProgram}, {"arith", arith}, {"run", s.fingerprint}};
}

// The first difference between two fingerprints, as words ("" when equal):
// options are separated by spaces.
std::string first_difference(const std::string& file, const std::string& run) {
  auto words = [](const std::string& t) {
    std::vector<std::string> w(1);
    for (const char c : t) {
      if (c == ' ') w.emplace_back();
      else w.back().push_back(c);
    }
    return w;
  };
  const std::vector<std::string> a = words(file), b = words(run);
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    const std::string x = i < a.size() ? a[i] : "(nothing)", y = i < b.size() ? b[i] : "(nothing)";
    if (x != y) return "the checkpoint's run has " + quote_text(x) + " where this run has " + quote_text(y);
  }
  return {};
}

void check_header(const std::string& line, const CheckpointSpec& s, const std::string& arith) {
  const std::string where = quote_text(s.path) + " line 1";
  nlohmann::json h;
  try {
    h = parse_json_text(line);
  } catch (const Error& e) {
    throw_input(where + ": not an mhaq checkpoint (" + e.what() + ")");
  }
  if (!h.is_object() || !h.contains("format") || h["format"] != kFormat) throw_input(where + ": not an mhaq checkpoint (expected {\"format\": \"mhaq-checkpoint\", ...})");
  const long v = json_long(json_member(h, where, "version"), 1, 1L << 30, where + ".version");
  if (v > checkpoint_version)
    throw_input(where + ": written in checkpoint format version " + std::to_string(v) + " by a newer mhaq; this program reads version " +
                std::to_string(checkpoint_version) + ": resume it with the program that wrote it");
  const nlohmann::json& prog = json_member(h, where, "program");
  if (!prog.is_string() || prog.get<std::string>() != kProgram)
    throw_input(where + ": written by " + json_shown(prog) + ", this is " + kProgram + ": resume it with the program that wrote it");
  const nlohmann::json& a = json_member(h, where, "arith");
  if (!a.is_string() || a.get<std::string>() != arith)
    throw_input(where + ": another run's checkpoint: its arithmetic is " + json_shown(a) + ", this run's is " + arith);
  const nlohmann::json& r = json_member(h, where, "run");
  if (!r.is_string()) throw_input(where + ".run: expected a string");
  if (r.get<std::string>() != s.fingerprint) {
    std::string why = first_difference(r.get<std::string>(), s.fingerprint);
    throw_input(where + ": another run's checkpoint (" + (why.empty() ? "its run differs" : why) +
                "): resume with the options and model of the run that wrote it, or start afresh with --checkpoint and a new file");
  }
}

}  // namespace

CheckpointJournal::CheckpointJournal(const CheckpointSpec& s, const std::string& arith) : path_(s.path) {
  struct stat sb {};
  const bool exists = ::stat(s.path.c_str(), &sb) == 0;
  if (!s.resume) {
    if (exists)
      throw Error(ErrorKind::usage, "the checkpoint " + quote_text(s.path) + " exists: continue its run with --resume-checkpoint " + quote_text(s.path) +
                                        ", or give --checkpoint a new file");
    write_file_atomic(s.path, header(s, arith).dump() + "\n");
  } else {
    if (!exists) throw_input("no checkpoint " + quote_text(s.path) + " to resume");
    long good = 0;
    const std::vector<std::string> lines = read_complete_lines(s.path, "checkpoint", limits::max_checkpoint_line_bytes, &good);
    if (lines.empty()) throw_input(quote_text(s.path) + ": holds no complete line (not an mhaq checkpoint, or cut before its header was written)");
    check_header(lines[0], s, arith);
    replay_.reserve(lines.size() - 1);
    for (size_t i = 1; i < lines.size(); ++i) {
      const long index = static_cast<long>(replay_.size());
      const std::string where = quote_text(s.path) + " line " + std::to_string(i + 1);
      const std::vector<std::string> f = split_tabs(lines[i]);
      std::uint64_t qh = 0, check = 0;
      if (!f.empty() && f[0] == kFitTag) {
        std::string image;
        if (f.size() != 4 || f[1].size() != 32 || !parse_hex16(f[3], check) || !from_hex(f[2], image))
          throw_input(where + ": not a fit line (\"fit\", key hash, image, checksum): the file is damaged or was edited");
        if (fnv1a(fit_body(f[1], f[2])) != check) throw_input(where + ": checksum mismatch: the line was altered");
        fits_[f[1]] = std::move(image);
        ++fits_written_;
        continue;
      }
      if (f.size() != 5 || !parse_hex16(f[1], qh) || !parse_hex16(f[4], check))
        throw_input(where + ": not an answer line (index, query hash, answer, error, checksum): the file is damaged or was edited");
      if (f[0] != std::to_string(index)) throw_input(where + ": answer " + quote_text(f[0]) + " where answer " + std::to_string(index) + " belongs: the file is damaged or was edited");
      if (fnv1a(line_body(index, qh, f[2], f[3])) != check) throw_input(where + ": checksum mismatch: the line was altered");
      replay_.push_back({qh, f[2], f[3]});
    }
    written_ = static_cast<long>(replay_.size());
    // checked: an unfinished last line is cut off, so that appending starts a line of its own
    if (sb.st_size > good && ::truncate(s.path.c_str(), static_cast<off_t>(good)) != 0)
      throw_input("cannot cut the unfinished last line of the checkpoint " + quote_text(s.path));
  }
  file_ = std::fopen(s.path.c_str(), "a");
  if (!file_) throw_input("cannot open the checkpoint " + quote_text(s.path) + " for appending");
}

CheckpointJournal::~CheckpointJournal() {
  if (!file_) return;
  try {
    flush();
  } catch (...) {
  }
  std::fclose(file_);
}

const CheckpointJournal::Entry& CheckpointJournal::take(std::uint64_t query_hash) {
  if (next_ >= replayable()) throw_internal("checkpoint: no recorded answer left");
  const Entry& e = replay_[static_cast<size_t>(next_)];
  if (e.query_hash != query_hash)
    throw_input(quote_text(path_) + " line " + std::to_string(next_ + 2) + ": recorded for another query than the run's query " + std::to_string(next_ + 1) +
                ": the checkpoint was written by another run or another version of the learner; start afresh with --checkpoint and a new file");
  ++next_;
  return e;
}

void CheckpointJournal::append(std::uint64_t query_hash, const std::string& answer, const std::string& error) {
  const std::string body = line_body(written_, query_hash, answer, error);
  const std::lock_guard<std::mutex> lock(mu_);
  buffer_ += body + '\t' + hex16(fnv1a(body)) + '\n';
  ++written_;
}

void CheckpointJournal::write_through() {
  if (buffer_.empty()) return;
  if (std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size() || std::fflush(file_) != 0)
    throw_input("cannot append to the checkpoint " + quote_text(path_));
  buffer_.clear();
}

void CheckpointJournal::flush() {
  const std::lock_guard<std::mutex> lock(mu_);
  write_through();
  checkpoint_kill_point(written_);
}

const std::string* CheckpointJournal::find_fit(const std::string& key) const {
  if (fits_.empty()) return nullptr;
  const auto it = fits_.find(fnv1a_128_hex(key));
  if (it == fits_.end()) return nullptr;
  ++fits_served_;
  return &it->second;
}

void CheckpointJournal::put_fit(const std::string& key, const std::string& image) {
  const std::string body = fit_body(fnv1a_128_hex(key), to_hex(image));
  const std::string line = body + '\t' + hex16(fnv1a(body)) + '\n';
  const std::lock_guard<std::mutex> lock(mu_);
  buffer_ += line;
  write_through();
  checkpoint_kill_point_fits(++fits_written_);
}

namespace {
long kill_after(const char* name) {
  const char* k = std::getenv(name);
  return k ? std::atol(k) : 0L;
}
}  // namespace

void checkpoint_kill_point(long answers_journaled) {
  static const long after = kill_after("MHAQ_CHECKPOINT_KILL_AFTER");
  if (after > 0 && answers_journaled >= after) std::raise(SIGKILL);
}

void checkpoint_kill_point_fits(long fits_journaled) {
  static const long after = kill_after("MHAQ_CHECKPOINT_KILL_AFTER_FITS");
  if (after > 0 && fits_journaled >= after) std::raise(SIGKILL);
}

std::string fnv1a_hex(const std::string& bytes) { return hex16(fnv1a(bytes)); }

std::string checkpoint_oracle_journal(const std::string& path) { return path + ".oracle"; }

std::uint64_t checkpoint_query_hash(const Query& q) {
  std::uint64_t h = 1469598103934665603ULL;
  for (const Run& r : q) {
    h = (h ^ static_cast<std::uint64_t>(r.count)) * 1099511628211ULL;
    h = (h ^ static_cast<std::uint64_t>(TokenHash{}(r.token))) * 1099511628211ULL;
    h = (h ^ r.token.size()) * 1099511628211ULL;
  }
  return h;
}

// ---- exact texts

namespace {

std::string dump(const arb_t x) {
  char* c = arb_dump_str(x);
  std::string s(c);
  flint_free(c);
  return s;
}

// Reads Arb's dump of a ball; the text must be the one this ball dumps to.
void load(const std::string& s, arb_t out) {
  if (s.empty() || s.size() > static_cast<size_t>(limits::max_checkpoint_line_bytes) || arb_load_str(out, s.c_str()) != 0 || dump(out) != s)
    throw_input("checkpoint: " + quote_text(s) + " is not an exact binary value as mhaq writes it");
}

}  // namespace

std::string answer_text(const Ball& x) { return dump(x.raw()); }
// Arb has one zero; a float's negative zero is written "-0".
const char* kNegativeZero = "-0";

std::string answer_text(const Mpfr& x) {
  if (mpfr_zero_p(x.raw()) && mpfr_signbit(x.raw())) return kNegativeZero;
  flint::Arb b;
  arf_set_mpfr(arb_midref(b.v), x.raw());
  return dump(b.v);
}
std::string answer_text(double x) {
  if (x == 0 && std::signbit(x)) return kNegativeZero;
  flint::Arb b;
  arf_set_d(arb_midref(b.v), x);
  return dump(b.v);
}
std::string answer_text(const QTau& x) {
  char* c = fmpz_poly_q_get_str(QTauAccess::raw(x));
  std::string s(c);
  flint_free(c);
  return s;
}

void answer_from_text(const std::string& s, Ball& out) { load(s, out.raw()); }

void answer_from_text(const std::string& s, Mpfr& out) {
  if (s == kNegativeZero) {
    mpfr_set_zero(out.raw(), -1);
    return;
  }
  flint::Arb b;
  load(s, b.v);
  if (!mag_is_zero(arb_radref(b.v)) || arf_get_mpfr(out.raw(), arb_midref(b.v), MPFR_RNDN) != 0)
    throw_input("checkpoint: " + quote_text(s) + " is not a value at this run's precision");
}

void answer_from_text(const std::string& s, double& out) {
  if (s == kNegativeZero) {
    out = -0.0;
    return;
  }
  flint::Arb b;
  load(s, b.v);
  if (!mag_is_zero(arb_radref(b.v)) || !arf_is_finite(arb_midref(b.v))) throw_input("checkpoint: " + quote_text(s) + " is not a double");
  out = arf_get_d(arb_midref(b.v), ARF_RND_NEAR);
  flint::Arb back;
  arf_set_d(arb_midref(back.v), out);
  if (!arf_equal(arb_midref(back.v), arb_midref(b.v))) throw_input("checkpoint: " + quote_text(s) + " is not a double");
}

void answer_from_text(const std::string& s, QTau& out) {
  // numerator and denominator read apart, so that a zero denominator is an
  // input error; the text must be the canonical form mhaq writes
  const size_t slash = s.find('/');
  fmpz_poly_q_struct* q = QTauAccess::raw(out);
  const std::string num = s.substr(0, slash), den = slash == std::string::npos ? std::string("1  1") : s.substr(slash + 1);
  if (s.size() > static_cast<size_t>(limits::max_checkpoint_line_bytes) || fmpz_poly_set_str(q->num, num.c_str()) != 0 ||
      fmpz_poly_set_str(q->den, den.c_str()) != 0 || fmpz_poly_is_zero(q->den)) {
    fmpz_poly_q_zero(q);
    throw_input("checkpoint: " + quote_text(s) + " is not an element of Q(tau) as mhaq writes it");
  }
  fmpz_poly_q_canonicalise(q);
  if (answer_text(out) != s) throw_input("checkpoint: " + quote_text(s) + " is not an element of Q(tau) as mhaq writes it");
}

std::string error_text(const flint::Mag& e) {
  flint::Arb b;
  mag_set(arb_radref(b.v), e.v);
  return dump(b.v);
}

void error_from_text(const std::string& s, flint::Mag& out) {
  flint::Arb b;
  load(s, b.v);
  if (!arf_is_zero(arb_midref(b.v))) throw_input("checkpoint: " + quote_text(s) + " is not an error bound");
  mag_set(out.v, arb_radref(b.v));
}

}  // namespace mhaq
