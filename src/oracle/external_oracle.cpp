#include "mhaq/oracle/external_oracle.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "mhaq/base/io.hpp"
#include "mhaq/oracle/checkpoint.hpp"
#include "mhaq/base/json_in.hpp"
#include "mhaq/base/text.hpp"

namespace mhaq {

using nlohmann::json;
using namespace oracle_protocol;

std::string ErrorStatement::str() const {
  std::string s;
  if (abs) s += "abs " + abs->str();
  if (rel) s += std::string(s.empty() ? "" : ", ") + "rel " + rel->str();
  return s.empty() ? "none" : s;
}

ErrorStatement parse_error_statement(const std::string& text) {
  ErrorStatement e;
  auto value = [&](const std::string& s) {
    try {
      const Rational q = Rational::parse(s, 200);
      if (q.sign() < 0) throw Error(ErrorKind::usage, "");
      return q;
    } catch (const Error&) {
      throw Error(ErrorKind::usage, "--oracle-error: " + quote_text(s) + " is not a non-negative decimal (expected EPS, abs:EPS, rel:EPS or abs:EPS,rel:EPS)");
    }
  };
  std::stringstream ss(text);
  std::string part;
  int parts = 0;
  while (std::getline(ss, part, ',')) {
    ++parts;
    if (part.rfind("abs:", 0) == 0 && !e.abs) e.abs = value(part.substr(4));
    else if (part.rfind("rel:", 0) == 0 && !e.rel) e.rel = value(part.substr(4));
    else if (part.find(':') == std::string::npos && parts == 1 && text.find(',') == std::string::npos) e.abs = value(part);
    else throw Error(ErrorKind::usage, "--oracle-error: cannot read " + quote_text(text) + " (expected EPS, abs:EPS, rel:EPS or abs:EPS,rel:EPS)");
  }
  if (!e.stated()) throw Error(ErrorKind::usage, "--oracle-error: empty statement");
  return e;
}

ErrorStatement bound_in_force(const ErrorStatement& user, const OracleHello& h) {
  if (user.stated()) return user;
  ErrorStatement e;
  e.abs = h.acc_abs;
  e.rel = h.acc_rel;
  return e;
}

// ---------------------------------------------------------------- session

namespace {
const char* kTranscriptFormat = "mhaq-oracle-transcript";

json transcript_header(int d, ModelKind kind) {
  return json{{"format", kTranscriptFormat}, {"version", version}, {"d", d}, {"model_kind", model_kind_name(kind)}};
}

void check_header(const json& h, int d, ModelKind kind, const std::string& file) {
  const std::string where = quote_text(file) + " line 1";
  if (!h.is_object() || h.value("format", std::string()) != kTranscriptFormat)
    throw_input(where + ": not an mhaq oracle transcript (expected {\"format\": \"" + kTranscriptFormat + "\", ...})");
  json_long(json_member(h, where, "version"), version, version, where + ".version");
  const long fd = json_long(json_member(h, where, "d"), 1, 1L << 20, where + ".d");
  if (fd != d) throw_input(where + ": the transcript is for d = " + std::to_string(fd) + ", this run has d = " + std::to_string(d));
  const json& k = json_member(h, where, "model_kind");
  if (!k.is_string() || k.get<std::string>() != model_kind_name(kind))
    throw_input(where + ": the transcript is for model kind " + json_shown(k) + ", this run is " + model_kind_name(kind));
}

// The lines of a transcript file; the last one is dropped when it has no
// newline (its writer was interrupted). A transcript grows with the run: its
// lines are bounded (a query and an answer of the protocol's lines), not the file.
std::vector<std::string> transcript_lines(const std::string& path) { return read_complete_lines(path, "transcript", 2 * max_line_bytes + 4096); }
}  // namespace

std::string ExternalSession::key(const Query& q) { return runs_text(q, false); }

void ExternalSession::start(const std::string& arith) {
  const int d = d_;
  const ModelKind kind = kind_;
  if (opt_.batch < 1 || opt_.batch > max_batch_queries) throw_internal("oracle batch size out of range");
  if (!(opt_.timeout_seconds > 0) || opt_.timeout_seconds > 86400) throw Error(ErrorKind::usage, "--oracle-timeout must be in (0, 86400] seconds");
  // replayed answers first: a malformed resume file is an input error before anything runs
  if (!opt_.resume.empty()) {
    const std::vector<std::string> lines = transcript_lines(opt_.resume);
    if (lines.empty()) throw_input("resume file " + quote_text(opt_.resume) + " holds no complete line");
    for (size_t i = 0; i < lines.size(); ++i) {
      const std::string where = quote_text(opt_.resume) + " line " + std::to_string(i + 1);
      json j;
      try {
        j = parse_json_text(lines[i]);
      } catch (const Error& e) {
        throw_input(where + ": " + e.what());
      }
      if (i == 0) {
        check_header(j, d, kind, opt_.resume);
        continue;
      }
      if (!j.is_object()) throw_input(where + ": expected an object");
      if (j.contains("hello")) continue;
      const long id = json_long(json_member(j, where, "id"), 0, 1L << 60, where + ".id");
      const Query q = query_from_runs(json_member(j, where, "runs"), d, where + ".runs");
      try {
        cache_[key(q)].push_back(parse_answer(json_member(j, where, "answer"), false, where + ".answer"));
        ++resumed_[key(q)];
      } catch (const OracleFailure& f) {
        throw_input(where + ": " + f.detail());
      }
      next_id_ = std::max(next_id_, id + 1);
    }
  }
  if (!opt_.journal.empty()) journal_ = open_transcript(opt_.journal);
  if (!opt_.transcript.empty()) transcript_ = open_transcript(opt_.transcript);
  child_ = std::make_unique<ChildProcess>(opt_.command, opt_.timeout_seconds, max_line_bytes);
  const std::string at = " (during the handshake, no query sent yet)";
  try {
    child_->send(hello_line(d, kind, arith), at);
    hello_ = parse_hello(child_->receive(at), d, at);
  } catch (const OracleFailure&) {
    child_->end(bye_line(), false);
    transcript_.reset();
    journal_.reset();
    throw;
  }
  append_transcript(json{{"hello", hello_.raw}}.dump() + "\n");
}

ExternalSession::~ExternalSession() {
  // an end without finish(): an exception on its way out
  if (!finished_ && child_) child_->end(bye_line(), true);
}

ExternalSession::File ExternalSession::open_transcript(const std::string& path) {
  struct stat sb {};
  const bool exists = ::stat(path.c_str(), &sb) == 0 && sb.st_size > 0;
  if (exists) {
    const std::vector<std::string> lines = transcript_lines(path);
    if (lines.empty()) throw_input("transcript " + quote_text(path) + " exists but holds no complete line");
    json h;
    try {
      h = parse_json_text(lines[0]);
    } catch (const Error& e) {
      throw_input(quote_text(path) + " line 1: " + e.what());
    }
    check_header(h, d_, kind_, path);
    off_t complete = 0;
    for (size_t i = 0; i < lines.size(); ++i) {
      complete += static_cast<off_t>(lines[i].size() + 1);
      if (i == 0) continue;
      try {
        const json j = parse_json_text(lines[i]);
        if (j.is_object() && j.contains("id") && j["id"].is_number_integer()) next_id_ = std::max(next_id_, j["id"].get<long>() + 1);
      } catch (const Error&) {
      }
    }
    // a line its writer did not finish is cut off, so that the next one starts on a line of its own
    if (sb.st_size > complete && ::truncate(path.c_str(), complete) != 0) throw_input("cannot cut the unfinished last line of " + quote_text(path));
  }
  File f(std::fopen(path.c_str(), "a"));
  if (!f) throw_input("cannot open the transcript " + quote_text(path) + " for appending");
  if (!exists) {
    const std::string h = transcript_header(d_, kind_).dump() + "\n";
    if (std::fwrite(h.data(), 1, h.size(), f.get()) != h.size() || std::fflush(f.get()) != 0)
      throw_input("cannot write the transcript " + quote_text(path));
  }
  return f;
}

void ExternalSession::fail(const OracleFailure& f) {
  failure_ = f;
  finished_ = true;
  inflight_.clear();
  child_->end(bye_line(), false);
  throw f;
}

void ExternalSession::append_transcript(const std::string& text) {
  // the journal first: a kill between the two leaves the query in the
  // journal (a resume does not ask it again), never only in the transcript
  if (journal_ && (std::fwrite(text.data(), 1, text.size(), journal_.get()) != text.size() || std::fflush(journal_.get()) != 0))
    throw_input("cannot append to the checkpoint's journal " + quote_text(opt_.journal));
  if (!transcript_) return;
  if (std::fwrite(text.data(), 1, text.size(), transcript_.get()) != text.size() || std::fflush(transcript_.get()) != 0)
    throw_input("cannot append to the transcript " + quote_text(opt_.transcript));
}

std::string ExternalSession::context() const {
  if (last_id_ < 0) return " (no query sent yet)";
  return " (last query sent: " + describe_query(last_id_, last_query_) + ")";
}

void ExternalSession::expect(std::vector<Query> upcoming) {
  expected_.clear();
  expected_keys_.clear();
  expected_keys_.reserve(upcoming.size());
  const bool asks = !across_ || is_root();  // only a rank with the child looks answers up by key
  for (const Query& q : upcoming) {
    expected_.push_back(q);
    if (asks) expected_keys_.push_back(key(q));
  }
  pos_ = 0;
  scanning_ = false;  // batches of an earlier plan still in flight are received when needed
}

std::string shown_entry(const Rational& x) {
  if (x.is_integer() || x.str_size() <= 12) return x.str();
  char b[40];
  std::snprintf(b, sizeof b, "%.6g", x.approx_double());
  return std::string(b) + " (" + (x.str_size() <= 60 ? x.str() : "exactly") + ")";
}

std::string beyond_hello(const oracle_protocol::OracleHello& h, long length, const Rational& entry) {
  if (h.max_length > 0 && length > h.max_length)
    return "a query of " + std::to_string(length) + " tokens, and the oracle answers at most " + std::to_string(h.max_length) + " tokens (its hello's max_length)";
  if (h.max_entry && *h.max_entry < entry)
    return "a token entry of magnitude " + shown_entry(entry) + ", and the oracle's accuracy covers token entries of magnitude at most " + shown_entry(*h.max_entry) +
           " (its hello's max_entry)";
  return {};
}

std::string ExternalSession::beyond_hello(const Query& q) const {
  Rational largest(0);
  for (const Run& run : q) largest = std::max(largest, max_abs(run.token));
  return mhaq::beyond_hello(hello_, query_length(q), largest);
}

Answer ExternalSession::answer_here(const Query& q) {
  if (failure_) throw *failure_;
  if (finished_) throw_internal("external oracle asked after the end of its session");
  // a query the oracle's statement does not cover is never sent: its answer
  // could not be trusted, and the oracle would refuse it (a fault). Planned
  // queries are checked before the run; this meets the adaptive ones.
  if (const std::string why = beyond_hello(q); !why.empty())
    throw Error(ErrorKind::unable, "the learner's path needs " + why +
                                       ", so it was not asked: start the oracle with a larger limit (its accuracy statement then covers the query), "
                                       "or use a design that keeps within it (for a transformer, --design scaled asks its far tokens scaled down)");
  const bool in_order = pos_ < expected_.size() && same_query(expected_[pos_], q);
  if (in_order) ++pos_;
  const std::string k = in_order ? expected_keys_[pos_ - 1] : key(q);
  auto take = [&]() -> std::optional<Answer> {
    auto it = cache_.find(k);
    if (it == cache_.end()) return std::nullopt;
    size_t& n = cache_next_[k];
    if (n >= it->second.size()) return std::nullopt;
    const auto r = resumed_.find(k);
    if (r != resumed_.end() && n < r->second) ++replayed_;
    return it->second[n++];
  };
  // the answer is cached, or on its way in a batch already sent
  for (;;) {
    if (auto a = take()) return *a;
    if (inflight_.empty()) break;
    receive_next();
  }
  // ask q, and the expected queries after it that no cached answer covers;
  // the next batch of them goes out at once, so the child answers it while
  // the learner reads this one
  std::vector<Query> batch{q};
  std::vector<std::string> keys{k};
  scanning_ = in_order;
  if (in_order) {
    spare_.clear();
    scan_ = pos_;
    fill(batch, keys);
  }
  send_batch(batch, std::move(keys));
  top_up();
  for (;;) {
    if (auto a = take()) return *a;
    if (inflight_.empty()) break;
    receive_next();
  }
  throw_internal("external oracle: the answer to a query just asked is missing");
}

void ExternalSession::fill(std::vector<Query>& batch, std::vector<std::string>& keys) {
  // an expected query is covered by a cached answer not yet claimed, else asked
  for (; scan_ < expected_.size() && static_cast<long>(batch.size()) < opt_.batch; ++scan_) {
    const std::string& ki = expected_keys_[scan_];
    auto sp = spare_.find(ki);
    if (sp == spare_.end()) {
      const auto it = cache_.find(ki);
      const long have = it == cache_.end() ? 0 : static_cast<long>(it->second.size() - cache_next_[ki]);
      sp = spare_.emplace(ki, have).first;
    }
    if (sp->second > 0) {
      --sp->second;
      continue;
    }
    if (!beyond_hello(expected_[scan_]).empty()) break;  // not sent ahead: asked, it ends the run as answer_here says
    batch.push_back(expected_[scan_]);
    keys.push_back(ki);
  }
}

void ExternalSession::top_up() {
  // one batch ahead of the one awaited
  while (scanning_ && inflight_.size() < 2) {
    std::vector<Query> batch;
    std::vector<std::string> keys;
    fill(batch, keys);
    if (batch.empty()) {
      scanning_ = false;
      break;
    }
    send_batch(batch, std::move(keys));
  }
}

std::string ExternalSession::awaited(const InFlight& f) {
  return " (batch " + std::to_string(f.batch) + " awaited, its last query: " + describe_query(f.ids.back(), f.qs.back()) + ")";
}

void ExternalSession::send_batch(const std::vector<Query>& qs, std::vector<std::string> keys) {
  if (keys.size() != qs.size()) throw_internal("external oracle: a batch without its keys");
  // split so that every line stays within the limit
  size_t start = 0;
  while (start < qs.size()) {
    InFlight f;
    std::vector<std::string> texts;
    size_t bytes = 64;
    for (size_t i = start; i < qs.size(); ++i) {
      std::string t = runs_text(qs[i], true);
      const size_t qb = t.size() + 32;
      if (!f.qs.empty() && bytes + qb >= static_cast<size_t>(max_line_bytes)) break;
      if (bytes + qb >= static_cast<size_t>(max_line_bytes))
        throw Error(ErrorKind::input, "a query of " + std::to_string(qb) + " bytes does not fit the protocol's line limit of " + std::to_string(max_line_bytes));
      bytes += qb;
      f.ids.push_back(next_id_++);
      f.qs.push_back(qs[i]);
      f.keys.push_back(std::move(keys[i]));
      texts.push_back(std::move(t));
    }
    start += f.qs.size();
    f.batch = batch_no_++;
    last_id_ = f.ids.back();
    last_query_ = f.qs.back();
    try {
      child_->queue(batch_line_of(f.batch, f.ids, texts), awaited(f));
    } catch (const OracleFailure& e) {
      fail(e);
    }
    inflight_.push_back(std::move(f));
  }
}

void ExternalSession::receive_next() {
  InFlight f = std::move(inflight_.front());
  inflight_.pop_front();
  const std::string at = awaited(f);
  std::vector<Answer> got;
  try {
    const std::string line = child_->receive(at);
    top_up();  // the child works on the next batch while this reply is read
    got = parse_answers(line, f.batch, f.ids, hello_.radius, at);
  } catch (const OracleFailure& e) {
    fail(e);
  }
  asked_ += static_cast<long>(f.qs.size());
  std::string text;
  for (size_t i = 0; i < f.qs.size(); ++i) {
    std::string& k = f.keys[i];
    // the line json{{"id", ...}, {"runs", ...}, {"answer", ...}}.dump() would print: keys in order
    if (transcript_ || journal_) text += "{\"answer\":" + got[i].raw + ",\"id\":" + std::to_string(f.ids[i]) + ",\"runs\":" + k + "}\n";
    cache_[std::move(k)].push_back(std::move(got[i]));
  }
  append_transcript(text);
  if (journal_) {
    journaled_ += static_cast<long>(f.qs.size());
    checkpoint_kill_point(journaled_);
  }
}

std::string ExternalSession::finish() {
  if (finished_) return {};
  if (!child_) {  // a rank other than 0 of a run across ranks: rank 0 ends the child
    finished_ = true;
    return {};
  }
  // batches sent ahead that the learner did not need: received all the
  // same, so the transcript and the count hold every query asked
  scanning_ = false;
  try {
    while (!inflight_.empty()) receive_next();
  } catch (const OracleFailure& f) {
    return std::string("the oracle failed on queries sent ahead of need: ") + f.what();  // fail() has ended it
  }
  finished_ = true;
  return child_->end(bye_line(), true);
}

// ---------------------------------------------------------------- oracle

namespace {
// The accuracy the float decisions assume: the stated bound (the larger of
// its parts, the relative part taken for answers of size about 1), else
// float64 answers (2^-52 relative), or the learner's precision when the
// oracle certifies a radius with every answer.
template <class T>
Field<T> external_field(const ErrorStatement& b, bool radii) {
  Field<T> f;
  double acc = -static_cast<double>(f.precision());
  if (b.stated()) {
    for (const auto& part : {b.abs, b.rel})
      if (part && !part->is_zero()) acc = std::max(acc, std::log2(part->approx_double()));
  } else if (!radii) {
    acc = std::max(acc, -52.0);
  }
  f.tol.acc_log2 = acc;
  return f;
}
// Balls carry the error in every answer; their decisions need no tolerance.
template <>
Field<Ball> external_field<Ball>(const ErrorStatement&, bool) {
  return Field<Ball>{};
}

// Floats are judged afterwards by kappa times the bound and may run without
// one; a ball run certifies nothing without it.
template <class T>
void require_bound(const ErrorStatement&, bool) {}
template <>
void require_bound<Ball>(const ErrorStatement& b, bool radii) {
  if (!b.stated() && !radii)
    throw Error(ErrorKind::usage,
                "ball mode needs a bound on the oracle's error to certify anything: state it with --oracle-error EPS (absolute), "
                "rel:EPS or abs:EPS,rel:EPS, or let the oracle state \"accuracy\" or a \"radius\" with every answer (docs/oracle-protocol.md)");
}
}  // namespace

template <class T>
ExternalOracle<T>::ExternalOracle(ExternalSession& s, const ErrorStatement& stated)
    : s_(s), bound_(bound_in_force(stated, s.hello())), field_(external_field<T>(bound_, s.hello().radius)) {
  require_bound<T>(bound_, s.hello().radius);
}

namespace {
// The ball [y +- (stated radius + stated bound + the text's own rounding)]
// an answer stands for under the bound in force.
Ball stated_ball(const Answer& a, const ErrorStatement& bound) {
  const long prec = working_precision();
  Ball y(a.value);  // rigorous: arb_set_fmpq keeps the exact value inside
  Ball e(0L), absy;
  arb_abs(absy.raw(), y.raw());
  if (a.radius) e += Ball(*a.radius);
  if (bound.abs) e += Ball(*bound.abs);
  if (bound.rel) {
    // relative to |answer|; a float64 answer's text may exceed the double by half an ulp
    Ball r(*bound.rel);
    arb_mul(r.raw(), r.raw(), absy.raw(), prec);
    Ball slack = r;
    arb_mul_2exp_si(slack.raw(), slack.raw(), -52);
    e += r + slack;
  }
  if (a.from_float64) {
    // |text - nearest double| <= 2^-53 |double| + 2^-1075 (subnormals)
    Ball c = absy;
    arb_mul_2exp_si(c.raw(), c.raw(), -53);
    Ball tiny(1L);
    arb_mul_2exp_si(tiny.raw(), tiny.raw(), -1074);
    e += c + tiny;
  }
  arb_add_error(y.raw(), e.raw());
  return y;
}

// With no bound stated and no radius: the ball of a correctly rounded answer.
// A float64 is within 2^-52 |f64| + 2^-1074 of f(X); a decimal within half a
// unit in the last place its value needs (trailing zeros it was sent with
// could only narrow that); a fraction that is no decimal is taken as exact.
Ball rounded_ball(const Answer& a) {
  Ball y(a.value);
  Ball e(0L);
  if (a.from_float64) {
    arb_abs(e.raw(), y.raw());
    arb_mul_2exp_si(e.raw(), e.raw(), -52);
    Ball tiny(1L);
    arb_mul_2exp_si(tiny.raw(), tiny.raw(), -1074);
    e += tiny;
  } else {
    flint::Fmpz t;
    fmpz_set(t.v, fmpq_denref(a.value.raw()));
    long k2 = 0, k5 = 0;
    while (fmpz_divisible_si(t.v, 2)) fmpz_divexact_si(t.v, t.v, 2), ++k2;
    while (fmpz_divisible_si(t.v, 5)) fmpz_divexact_si(t.v, t.v, 5), ++k5;
    if (fmpz_is_one(t.v)) {
      long k = std::max(k2, k5);  // digits after the point
      if (k == 0 && !fmpz_is_zero(fmpq_numref(a.value.raw()))) {
        fmpz_set(t.v, fmpq_numref(a.value.raw()));
        while (fmpz_divisible_si(t.v, 10)) fmpz_divexact_si(t.v, t.v, 10), --k;
      }
      // half of 10^-k
      const Ball ten(10L);
      arb_pow_ui(e.raw(), ten.raw(), static_cast<ulong>(k < 0 ? -k : k), working_precision());
      if (k > 0) arb_inv(e.raw(), e.raw(), working_precision());
      arb_mul_2exp_si(e.raw(), e.raw(), -1);
    }
  }
  arb_add_error(y.raw(), e.raw());
  return y;
}

// |y - f(X)| for an answer read as y, under the bound in force (or, with
// none, the assumption of correct rounding).
void float_answer_error(const Answer& a, const ErrorStatement& bound, bool radii, const Ball& y, flint::Mag& err) {
  PrecisionScope scope(std::max(working_precision(), 64L) + 64);
  const Ball stated = bound.stated() || radii || a.radius ? stated_ball(a, bound) : rounded_ball(a);
  const Ball d = y - stated;
  arb_get_mag(err.v, d.raw());
}
}  // namespace

template <class T>
std::string ExternalOracle<T>::error_assumption() const {
  if (bound_.stated()) return "each answer within the stated error " + bound_.str() + (s_.hello().radius ? " plus its radius" : "");
  if (s_.hello().radius) return "each answer within the radius the oracle sent with it";
  return "no error stated: each answer assumed to be f(X) correctly rounded to what was sent (a float64 to half an ulp, a decimal to half a "
         "unit in its last place)";
}

template <>
Ball ExternalOracle<Ball>::answer(const Query& q) {
  return stated_ball(s_.answer(q), bound_);
}

template <>
Mpfr ExternalOracle<Mpfr>::answer(const Query& q) {
  const Answer a = s_.answer(q);
  Mpfr y(a.value);
  Ball yb;
  arf_set_mpfr(arb_midref(yb.raw()), y.raw());
  float_answer_error(a, bound_, s_.hello().radius, yb, slot(reserve_slots(1)));
  return y;
}

template <>
double ExternalOracle<double>::answer(const Query& q) {
  const Answer a = s_.answer(q);
  Ball yb;
  arb_set_d(yb.raw(), a.f64);
  float_answer_error(a, bound_, s_.hello().radius, yb, slot(reserve_slots(1)));
  return a.f64;
}

template class ExternalOracle<Ball>;
template class ExternalOracle<Mpfr>;
template class ExternalOracle<double>;

}  // namespace mhaq
