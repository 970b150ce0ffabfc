// Harness: the safetensors reader and the map conversion on arbitrary bytes.
// Any input must end in exact values or an mhaq input error. A converted
// layer must write a factored model file that reads back as the same model.
#include <exception>
#include <string>

#include "fuzz.hpp"
#include "mhaq/base/error.hpp"
#include "mhaq/base/json_in.hpp"
#include "mhaq/model/factored.hpp"
#include "mhaq/model/kernel_layer.hpp"
#include "mhaq/model/model.hpp"
#include "mhaq/model/safetensors.hpp"

namespace {
using mhaq::fuzz::finding;

// Maps for the tensor names the corpus uses: separate q, k, v, o with a
// readout tensor u (both layouts), and torch's fused names with a readout of one entry.
const char* const maps[] = {
    R"M({"format":"mhaq-safetensors-map","heads":1,"layout":"out_in","q":"q","k":"k","v":"v","out":"o","readout":"u","scale":"1"})M",
    R"M({"format":"mhaq-safetensors-map","heads":2,"layout":"in_out","q":"q","k":"k","v":"v","out":"o","readout":"u","scale":"1/sqrt(d_k)"})M",
    R"M({"format":"mhaq-safetensors-map","heads":1,"layout":"out_in","in_proj":"in_proj_weight","out":"out_proj.weight","readout":["1"],"scale":"1/sqrt(d_k)"})M",
    R"M({"format":"mhaq-safetensors-map","heads":2,"layout":"out_in","in_proj":"in_proj_weight","in_proj_split":["k","v","q"],"out":"out_proj.weight","readout":["1/2","-3"],"scale":"1/2"})M",
};

// Maps of kernel golden files: biases, grouped heads and rotary embeddings (no readout).
const char* const kernel_maps[] = {
    R"M({"format":"mhaq-safetensors-map","heads":2,"kv_heads":1,"layout":"out_in","q":"q","k":"k","v":"v","out":"o","out_bias":"u","scale":"1/sqrt(d_k)"})M",
    R"M({"format":"mhaq-safetensors-map","heads":1,"layout":"in_out","in_proj":"in_proj_weight","in_proj_bias":"in_proj_bias","out":"out_proj.weight",)M"
    R"M("rope":{"theta":"10000","pairing":"half"},"scale":"1/sqrt(3)"})M",
};

void input_error(const mhaq::Error& e, const char* stage) {
  mhaq::fuzz::check_message(e.what());
  if (e.kind() != mhaq::ErrorKind::input) finding(std::string(stage) + ": " + mhaq::kind_name(e.kind()) + " error: " + e.what());
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    const mhaq::SafetensorsFile f = mhaq::SafetensorsFile::from_bytes(bytes, "fuzz.safetensors");
    for (const auto& t : f.tensors()) {
      try {
        const auto v = f.values(t);
        if (static_cast<long>(v.size()) != t.elements()) finding("values: " + std::to_string(v.size()) + " of " + std::to_string(t.elements()) + " elements");
      } catch (const mhaq::Error& e) {
        input_error(e, "values");
      }
    }
    for (const char* map : maps) {
      try {
        const mhaq::FactoredModel fm = mhaq::safetensors_to_factored(f, mhaq::safetensors_map_from_json(mhaq::parse_json_text(map), "map"));
        const mhaq::Model a = mhaq::to_model(fm);
        mhaq::Model b;
        try {
          b = mhaq::model_from_json_text(mhaq::factored_to_json_text(fm));
        } catch (const mhaq::Error& e) {
          finding(std::string("a converted layer whose factored file the reader refuses: ") + e.what());
        }
        if (a.d != b.d || a.heads.size() != b.heads.size()) finding("a converted layer that reads back with other shapes");
        for (size_t h = 0; h < a.heads.size(); ++h)
          if (!(a.heads[h].W == b.heads[h].W) || a.heads[h].v != b.heads[h].v) finding("a converted layer that reads back as another model");
      } catch (const mhaq::Error& e) {
        input_error(e, "convert");
      }
    }
    for (const char* map : kernel_maps) {
      try {
        const mhaq::KernelLayer L = mhaq::safetensors_to_kernel(f, mhaq::safetensors_map_from_json(mhaq::parse_json_text(map), "map"));
        if (L.Wq.rows() != L.heads * L.d_k || L.Wk.rows() != L.kv_heads * L.d_k || L.Wo.cols() != L.heads * L.d_v) finding("a kernel layer of inconsistent shapes");
      } catch (const mhaq::Error& e) {
        input_error(e, "kernel layer");
      }
    }
  } catch (const mhaq::Error& e) {
    input_error(e, "reader");
  } catch (const std::exception& e) {
    finding(std::string("an exception outside mhaq's own: ") + e.what());
  }
  return 0;
}
