// convert: read a model file (plain, or factored Q/K/V/O/readout) and write
// the canonical plain model file, saying how it was converted.
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "mhaq/base/error.hpp"
#include "mhaq/model/factored.hpp"
#include "mhaq/base/io.hpp"
#include "mhaq/base/text.hpp"
#include "mhaq/model/model.hpp"

namespace mhaq::cli {

namespace {
std::string convert_report(const std::string& path, const ModelFileInfo& info, const CanonicalSummary& cs, const std::string& out) {
  const std::string d = std::to_string(info.d);
  std::string o = "mhaq convert " + path + "\n";
  o += "  format           " + info.format + " (d=" + d + ", " + std::to_string(info.heads) + (info.heads == 1 ? " head" : " heads");
  if (!info.factored()) {
    o += "): plain (W_h, v_h), no conversion\n";
  } else {
    const std::string dk = std::to_string(info.d_k), dv = std::to_string(info.d_v), dout = std::to_string(info.d_out);
    o += ", d_k=" + dk + ", d_v=" + dv + ", d_out=" + dout + ")\n";
    if (info.projection == "per-head")
      o += "  projection       O_h given per head (" + dv + " x " + dout + " each)\n";
    else
      o += "  projection       one concatenated O (" + std::to_string(info.heads * info.d_v) + " x " + dout + "); O_h = its rows h*d_v..(h+1)*d_v-1\n";
    o += "  scale            " + info.scale + "\n";
    o += "  conversion       W_h = scale * K_h Q_h^T   (" + d + "x" + dk + " times " + dk + "x" + d + ": " + d + "x" + d + ")\n";
    o += "                   v_h = V_h O_h u           (" + d + "x" + dv + " times " + dv + "x" + dout + " times " + dout + ": " + d + ")\n";
    o += "                   in exact rational arithmetic (no rounding)\n";
  }
  o += "  canonical form   " + cs.str() + "\n";
  if (!out.empty()) o += "  wrote            " + out + " (canonical plain model file, exact)\n";
  return o;
}
}  // namespace

Command make_convert() {
  struct State {
    std::string model_path, out, safetensors, map;
    bool json = false;
  };
  auto st = std::make_shared<State>();
  return {[st](CLI::App& app) {
            auto* s = app.add_subcommand("convert",
                                         "convert a model file (plain, or factored: per-head Q, K, V, output projection O, readout u) exactly to the canonical "
                                         "plain model file, and say how");
            auto* model = s->add_option("--model", st->model_path, "model file (JSON, format mhaq-model or mhaq-model-factored)");
            auto* st_file = s->add_option("--safetensors", st->safetensors,
                                          "safetensors file: write the attention layer named by --map as a factored model file, exactly");
            s->add_option("--map", st->map, "with --safetensors: JSON map naming the q, k, v (or fused in_proj), out and readout tensors, heads, layout, scale");
            model->excludes(st_file);
            s->add_option("-o,--output", st->out, "output file (default: the model on standard output, the report on standard error)");
            s->add_flag("--json", st->json, "print one JSON object (with the model in it when -o is not given)");
            return s;
          },
          [st] {
            if (!st->safetensors.empty()) return convert_safetensors(st->safetensors, st->map, st->out, st->json);
            if (!st->map.empty()) throw Error(ErrorKind::usage, "--map goes with --safetensors");
            if (st->model_path.empty()) throw Error(ErrorKind::usage, "convert needs --model FILE or --safetensors FILE --map MAP.json");
            ModelFileInfo info;
            const Model m = read_model_file(st->model_path, &info);
            const CanonicalSummary cs = canonical_summary(m);
            const Model c = m.canonical();
            if (c.num_heads() == 0)
              throw_input(st->model_path + ": every head vanishes in canonical form, so f(X) = 0 for every input; a model file needs at least one head");
            // Only what the reader reads back (entry sizes), and never half a file.
            check_entry_sizes(c, clean_text(st->model_path) + ": the canonical model cannot be written");
            const std::string text = model_to_json_text(c);
            if (!st->out.empty()) write_file_atomic(st->out, text);
            nlohmann::json j{{"status", "ok"},
                             {"input", st->model_path},
                             {"model_file", conversion_json(info)},
                             {"canonical", {{"heads_in", cs.heads}, {"merged", cs.merged}, {"dropped", cs.dropped}, {"heads", cs.canonical}}}};
            if (!st->out.empty()) j["path"] = st->out;
            else if (st->json) j["model"] = nlohmann::json::parse(text);
            const std::string report = convert_report(st->model_path, info, cs, st->out);
            if (st->json || !st->out.empty()) {
              emit(st->json, j, report);
            } else {
              std::cout << text;
              std::cout.flush();
              std::cerr << report;
            }
            return 0;
          }};
}

}  // namespace mhaq::cli
