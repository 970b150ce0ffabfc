// Harness: the model reader (plain and factored files, and transformer files,
// plain and factored) and convert. Any input must end in a model or an mhaq
// input error; a model read must come back unchanged from model_to_json_text
// (transformer_to_json_text), and convert's canonical model must be written
// only when it reads back equal (and canonical already).
#include <exception>
#include <string>

#include "fuzz.hpp"
#include "mhaq/base/error.hpp"
#include "mhaq/model/factored.hpp"
#include "mhaq/model/model.hpp"
#include "mhaq/model/transformer.hpp"

namespace {
using mhaq::fuzz::finding;

bool same(const mhaq::Model& a, const mhaq::Model& b) {
  if (a.d != b.d || a.heads.size() != b.heads.size()) return false;
  for (size_t h = 0; h < a.heads.size(); ++h)
    if (!(a.heads[h].W == b.heads[h].W) || a.heads[h].v != b.heads[h].v) return false;
  return true;
}

// The canonical form by its definition (first occurrence of each W, v summed,
// zero v dropped), quadratic: a cross-check of the O(H log H) grouping.
mhaq::Model naive_canonical(const mhaq::Model& m) {
  mhaq::Model out;
  out.d = m.d;
  for (const auto& h : m.heads) {
    bool merged = false;
    for (auto& g : out.heads)
      if (g.W == h.W) {
        g.v = g.v + h.v;
        merged = true;
        break;
      }
    if (!merged) out.heads.push_back(h);
  }
  mhaq::Model kept;
  kept.d = m.d;
  for (auto& g : out.heads) {
    bool zero = true;
    for (const auto& x : g.v) zero = zero && x.is_zero();
    if (!zero) kept.heads.push_back(g);
  }
  return kept;
}

// Reading `text` must give a model or Error(input); returns false on an input error.
bool read(const std::string& text, mhaq::Model& m, mhaq::ModelFileInfo& info) {
  try {
    m = mhaq::model_from_json_text(text, &info);
    return true;
  } catch (const mhaq::Error& e) {
    mhaq::fuzz::check_message(e.what());
    if (e.kind() != mhaq::ErrorKind::input) finding(std::string("reader: ") + mhaq::kind_name(e.kind()) + " error: " + e.what());
    return false;
  }
}
bool same(const mhaq::TransformerModel& a, const mhaq::TransformerModel& b) { return a.d == b.d && a.W == b.W && a.U == b.U && a.u == b.u; }

// A transformer file: read, written and read back unchanged, canonical form idempotent.
void transformer_case(const std::string& text) {
  mhaq::TransformerModel m;
  try {
    m = mhaq::transformer_from_json_text(text);
  } catch (const mhaq::Error& e) {
    mhaq::fuzz::check_message(e.what());
    if (e.kind() != mhaq::ErrorKind::input) finding(std::string("transformer reader: ") + mhaq::kind_name(e.kind()) + " error: " + e.what());
    return;
  }
  try {
    mhaq::check_entry_sizes(m, "transformer");
  } catch (const mhaq::Error& e) {
    mhaq::fuzz::check_message(e.what());
    return;  // generate refuses to write it
  }
  try {
    const mhaq::TransformerModel back = mhaq::transformer_from_json_text(mhaq::transformer_to_json_text(m));
    if (!same(m, back)) finding("a transformer changes when re-read");
  } catch (const mhaq::Error& e) {
    finding(std::string("a transformer read from a file is not read back from transformer_to_json_text: ") + e.what());
  }
  const mhaq::TransformerModel c = m.canonical();
  if (!mhaq::transformer_equal_canonical(c.canonical(), c)) finding("the transformer canonical form is not idempotent");
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    if (mhaq::is_transformer_text(text)) {
      transformer_case(text);
      return 0;
    }
    mhaq::Model m;
    mhaq::ModelFileInfo info;
    if (!read(text, m, info)) return 0;
    // the model as mhaq writes it reads back unchanged (factored files: their conversion)
    mhaq::Model back;
    mhaq::ModelFileInfo info2;
    const std::string written = mhaq::model_to_json_text(m);
    bool sizes_ok = true;
    try {
      mhaq::check_entry_sizes(m, "model");
    } catch (const mhaq::Error& e) {
      sizes_ok = false;
      mhaq::fuzz::check_message(e.what());
    }
    if (sizes_ok && !read(written, back, info2)) finding("a model read from a file is not read back from model_to_json_text");
    if (sizes_ok && !same(m, back)) finding("a model changes when re-read");
    if (!info.factored() && !sizes_ok) finding("a plain model file's entries exceed the entry limit after reading");
    // convert: canonical form, written only when it reads back equal
    const mhaq::Model c = m.canonical();
    if (!same(c, naive_canonical(m))) finding("canonical() differs from the canonical form by definition");
    const mhaq::CanonicalSummary cs = mhaq::canonical_summary(m);
    if (cs.canonical != c.num_heads() || cs.heads != m.num_heads() || cs.merged < 0 || cs.dropped < 0 || cs.heads - cs.merged - cs.dropped != cs.canonical)
      finding("canonical_summary does not add up: " + cs.str());
    if (c.num_heads() == 0) return 0;  // convert refuses (every head vanishes)
    try {
      mhaq::check_entry_sizes(c, "canonical model");
    } catch (const mhaq::Error& e) {
      mhaq::fuzz::check_message(e.what());
      if (e.kind() != mhaq::ErrorKind::input) finding("check_entry_sizes: not an input error");
      return 0;  // convert refuses to write it (exit 3): nothing unreadable is written
    }
    mhaq::Model cback;
    if (!read(mhaq::model_to_json_text(c), cback, info2)) finding("convert's output is not read back");
    if (!same(c, cback)) finding("convert's output changes when re-read");
    if (!same(cback.canonical(), cback)) finding("convert's output is not canonical");
  } catch (const mhaq::Error& e) {
    finding(std::string("unexpected mhaq error (") + mhaq::kind_name(e.kind()) + "): " + e.what());
  } catch (const std::exception& e) {
    finding(std::string("an exception outside mhaq's own: ") + e.what());
  }
  return 0;
}
