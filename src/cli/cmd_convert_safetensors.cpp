// convert --safetensors FILE --map MAP.json: one attention layer's tensors
// (and, with the map's "ffn", its FFN), read exactly from a safetensors file,
// written as mhaq's factored model (or factored transformer) file.
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "mhaq/base/error.hpp"
#include "mhaq/base/io.hpp"
#include "mhaq/base/json_in.hpp"
#include "mhaq/base/text.hpp"
#include "mhaq/model/factored.hpp"
#include "mhaq/model/safetensors.hpp"
#include "mhaq/model/transformer.hpp"

namespace mhaq::cli {

int convert_safetensors(const std::string& path, const std::string& map_path, const std::string& out, bool as_json) {
  if (map_path.empty()) throw Error(ErrorKind::usage, "--safetensors needs --map MAP.json (which tensors are q, k, v, out and the readout)");
  const SafetensorsMap map = read_safetensors_map(map_path);
  const SafetensorsFile file = SafetensorsFile::open(path);
  QMat ffn;
  const FactoredModel fm = safetensors_to_factored(file, map, &ffn);
  const bool transformer = !map.ffn.empty();
  const std::string text = transformer ? factored_transformer_to_json_text(fm, ffn) : factored_to_json_text(fm);
  // What mhaq writes it reads back: the text must parse (to the same model).
  ModelFileInfo info;
  CanonicalSummary cs;
  std::string model_line;
  if (transformer) {
    TransformerFileInfo ti;
    const TransformerModel t = transformer_from_json_text(text, &ti);
    check_entry_sizes(t, clean_text(path) + ": the converted transformer cannot be written");
    const TransformerModel c = t.canonical();
    if (c.heads() == 0 || c.neurons() == 0) throw_input(clean_text(path) + ": the canonical form has no heads or no neurons, so T(X) = 0 for every input");
    model_line = ti.format + ": d=" + std::to_string(t.d) + ", " + std::to_string(ti.heads) + " heads, " + std::to_string(ti.neurons) + " neurons, d_k=" +
                 std::to_string(ti.d_k) + ", d_v=" + std::to_string(ti.d_v) + ", d_out=" + std::to_string(ti.d_out) + "; converted exactly: " + ti.conversion;
    cs.heads = ti.heads;
    cs.canonical = c.heads();
  } else {
    const Model m = model_from_json_text(text, &info);
    check_entry_sizes(m, clean_text(path) + ": the converted model cannot be written");
    const Model c = m.canonical();
    if (c.num_heads() == 0) throw_input(clean_text(path) + ": every head vanishes in canonical form, so f(X) = 0 for every input");
    cs = canonical_summary(m);
    model_line = info.summary();
  }
  if (!out.empty()) write_file_atomic(out, text);
  std::string dtypes;
  for (const auto& t : file.tensors())
    if (dtypes.find(t.dtype_text) == std::string::npos) dtypes += (dtypes.empty() ? "" : ", ") + t.dtype_text;
  const std::vector<std::string> unused_biases = unnamed_biases(file, map);
  nlohmann::json j{{"status", "ok"},
                   {"input", path},
                   {"map", map_path},
                   {"dtypes", dtypes},
                   {"layout", map.out_in ? "out_in" : "in_out"},
                   {"model_kind", transformer ? "transformer" : "attention"}};
  if (!transformer) {
    j["model_file"] = conversion_json(info);
    j["canonical"] = {{"heads_in", cs.heads}, {"merged", cs.merged}, {"dropped", cs.dropped}, {"heads", cs.canonical}};
  } else {
    j["canonical"] = {{"heads_in", cs.heads}, {"heads", cs.canonical}};
  }
  j["unnamed_biases"] = unused_biases;
  if (!out.empty()) j["path"] = out;
  else if (as_json) j["model"] = nlohmann::json::parse(text);
  std::string r = "mhaq convert --safetensors " + clean_text(path) + "\n";
  r += "  tensors          " + std::to_string(file.tensors().size()) + " in the file (" + dtypes + "), each value read as its exact dyadic rational\n";
  r += "  layout           " + std::string(map.out_in ? "out_in (out x in, as torch.nn.Linear: Q_h = rows of q transposed)" : "in_out (in x out: Q_h = columns of q)") + "\n";
  r += "  model            " + model_line + "\n";
  if (!unused_biases.empty()) {
    std::string names;
    for (const auto& b : unused_biases) names += (names.empty() ? "" : ", ") + clean_text(b);
    r += "  not used         " + names + ": all-zero biases next to a mapped tensor that the map does not name\n";
  }
  if (!transformer) r += "  canonical form   " + cs.str() + "\n";
  else r += "  canonical form   " + std::to_string(cs.heads) + " heads -> " + std::to_string(cs.canonical) + " canonical\n";
  if (!out.empty()) r += std::string("  wrote            ") + out + (transformer ? " (factored transformer file, exact)\n" : " (factored model file, exact)\n");
  if (as_json || !out.empty()) {
    emit(as_json, j, r);
  } else {
    std::cout << text;
    std::cout.flush();
    std::cerr << r;
  }
  return 0;
}

}  // namespace mhaq::cli
