// The stated limits (include/mhaq/base/limits.hpp, the table in docs/limits.md):
// for each one, the program accepts the limit and refuses limit + 1 (where a
// size can only take some values, the nearest value beyond the limit), with
// the documented exit code and a message naming the option or the field.
// Runs are kept cheap: an accepted value is followed by an option that fails
// fast afterwards (--target-error with a non-ball arithmetic, a missing file,
// an unknown lemma), so no run starts real work at a limit.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "mhaq/base/error.hpp"
#include "mhaq/base/json_in.hpp"
#include "mhaq/base/limits.hpp"
#include "mhaq/check/certificate_check.hpp"
#include "mhaq/evidence/baseline.hpp"
#include "mhaq/model/model.hpp"
#include "mhaq/model/transformer.hpp"
#include "mhaq/run/recover.hpp"
#include "mhaq/stages/2-schedule/schedule.hpp"
#include "test_util.hpp"

using namespace mhaq;
using namespace mhaq::limits;
using nlohmann::json;

namespace {

const std::string bin = MHAQ_BINARY;
std::string S(long v) { return std::to_string(v); }

std::string tmpdir() {
  static std::string dir = [] {
    char t[] = "/tmp/mhaq_test_limits_XXXXXX";
    return std::string(mkdtemp(t));
  }();
  return dir;
}
std::string write_file(const std::string& name, const std::string& text) {
  const std::string p = tmpdir() + "/" + name;
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

// Runs `args`; stderr and stdout together.
test::RunResult mhaq_run(const std::string& args) { return test::run(bin + " " + args + " 2>&1"); }

// At the limit: the run is not refused for this limit (`needle` absent from the
// message). One past it: exit `code` and a message that contains `needle`.
void at_limit(const std::string& args, const std::string& needle) {
  const auto r = mhaq_run(args);
  INFO("accepted? mhaq " << args << "\n" << r.out);
  CHECK(r.code != exit_code(ErrorKind::internal));
  CHECK(r.code >= 0);
  CHECK(r.out.find(needle) == std::string::npos);
}
void past_limit(const std::string& args, int code, const std::string& needle) {
  const auto r = mhaq_run(args);
  INFO("refused? mhaq " << args << "\n" << r.out);
  CHECK(r.code == code);
  CHECK(r.out.find(needle) != std::string::npos);
}

// The CLI names the option and its range: "--d: must be an integer in [1, 64], got ..."
std::string range_msg(const std::string& opt, long lo, long hi) { return opt + ": must be an integer in [" + S(lo) + ", " + S(hi) + "]"; }

// Fails fast after every limit is checked: --target-error needs --arith ball.
const std::string fast = " --arith mpfr --target-error 1";

std::string model_text(int d, const std::string& w00 = "1/2") {
  json W = json::array(), v = json::array();
  for (int i = 0; i < d; ++i) {
    json row = json::array();
    for (int j = 0; j < d; ++j) row.push_back(i == 0 && j == 0 ? w00 : "0");
    W.push_back(row);
    v.push_back("1");
  }
  return json{{"format", "mhaq-model"}, {"version", 1}, {"d", d}, {"heads", json::array({json{{"W", W}, {"v", v}}})}}.dump();
}

}  // namespace

TEST_CASE("the limits table of docs/limits.md lists every constant with the value in the code") {
  const std::map<std::string, long> code{{"max_d", max_d},
                                         {"max_recover_d", max_recover_d},
                                         {"max_exact_d", max_exact_d},
                                         {"max_recover_queries", max_recover_queries},
                                         {"max_heads", max_heads},
                                         {"max_file_heads", max_file_heads},
                                         {"max_inner_dim", max_inner_dim},
                                         {"max_file_entries", max_file_entries},
                                         {"max_neurons", max_neurons},
                                         {"max_conversion_products", max_conversion_products},
                                         {"max_safetensors_header", max_safetensors_header},
                                         {"max_safetensors_tensors", max_safetensors_tensors},
                                         {"max_tensor_rank", max_tensor_rank},
                                         {"max_entry_chars", max_entry_chars},
                                         {"max_number_chars", max_number_chars},
                                         {"max_file_bytes", max_file_bytes},
                                         {"max_checkpoint_line_bytes", max_checkpoint_line_bytes},
                                         {"max_json_depth", max_json_depth},
                                         {"max_entry_range", max_entry_range},
                                         {"max_token_range", max_token_range},
                                         {"max_token_den", max_token_den},
                                         {"max_samples_per_pair", max_samples_per_pair},
                                         {"max_plan_queries", max_plan_queries},
                                         {"max_tau_exponent", max_tau_exponent},
                                         {"max_L", max_L},
                                         {"min_bits", min_bits},
                                         {"max_bits", max_bits},
                                         {"max_digits", max_digits},
                                         {"max_golden_heads", max_golden_heads},
                                         {"max_exact_heads", max_exact_heads},
                                         {"max_threads", max_threads},
                                         {"max_ranks", max_ranks},
                                         {"max_trials", max_trials},
                                         {"max_sweep_rows", max_sweep_rows},
                                         {"max_list_values", max_list_values},
                                         {"max_multiplier", max_multiplier},
                                         {"max_runs", check::limits::max_runs},
                                         {"max_witness_queries", check::limits::max_witness_queries},
                                         {"max_golden_queries", check::limits::max_golden_queries},
                                         {"max_golden_tau_total", max_golden_tau_total},
                                         {"max_golden_eval_work", max_golden_eval_work},
                                         {"max_kernel_sequence_entries", max_kernel_sequence_entries},
                                         {"max_kernel_position", max_kernel_position}};
  std::ifstream in(std::string(MHAQ_SOURCE_DIR) + "/docs/limits.md");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string readme = ss.str();
  REQUIRE(!readme.empty());
  // rows: | `name` | value | ...
  const std::regex row(R"(\|\s*`(m(?:ax|in)_[a-zA-Z_]+)`\s*\|\s*([0-9][0-9,]*)\s*\|)");
  std::map<std::string, long> table;
  for (auto it = std::sregex_iterator(readme.begin(), readme.end(), row); it != std::sregex_iterator(); ++it) {
    std::string v = (*it)[2];
    v.erase(std::remove(v.begin(), v.end(), ','), v.end());
    table[(*it)[1]] = std::stol(v);
  }
  for (const auto& entry : code) {  // no structured binding: INFO captures it in a lambda (clang 14 refuses)
    const auto& name = entry.first;
    const auto& value = entry.second;
    INFO(name);
    REQUIRE(table.count(name) == 1);
    CHECK(table[name] == value);
  }
  CHECK(table.size() == code.size());
}

TEST_CASE("limits on options: the limit is accepted, limit + 1 refused (exit 2)") {
  SUBCASE("d") {
    at_limit("generate --d " + S(max_d) + " --heads 1 --seed 1 -o " + tmpdir() + "/g.json", "--d:");
    past_limit("generate --d " + S(max_d + 1) + " --heads 1 --seed 1", 2, range_msg("--d", 1, max_d));
    past_limit("recover --d " + S(max_recover_d + 1) + " --heads 1", 2, range_msg("--d", 1, max_recover_d));
    past_limit("recover --d " + S(max_recover_d + 1) + " --heads 1 --arith ball --dry-run", 2, range_msg("--d", 1, max_recover_d));
    past_limit("recover --d " + S(max_recover_d) + " --heads " + S(max_heads + 1) + " --arith ball --dry-run", 2, range_msg("--heads", 1, max_heads));
    // recover's d beyond a file's: a dry run at the limit, costed without drawing the model
    const auto dry = mhaq_run("recover --d " + S(max_recover_d) + " --heads " + S(max_heads) + " --arith ball --dry-run --json");
    INFO(dry.out);
    CHECK(dry.code == exit_dry_run);
    CHECK(dry.out.find("\"queries\":" + S(plan_query_count(max_recover_d, max_heads, true))) != std::string::npos);
    // exact mode keeps d <= max_exact_d: over budget before any work (no model of d = 65 is drawn)
    past_limit("recover --d " + S(max_exact_d + 1) + " --heads 1", 11, "max_exact_d = " + S(max_exact_d));
    at_limit("recover --d " + S(max_exact_d) + " --heads 1 --dry-run", "max_exact_d");
    // a certificate holds d <= max_d
    past_limit("recover --d " + S(max_d + 1) + " --heads 1 --arith ball --certificate " + tmpdir() + "/c.json", 2, "a certificate holds d <= " + S(max_d));
    past_limit("sweep --d " + S(max_d + 1) + " -o " + tmpdir() + "/s.csv", 2, "--d: expected a list");
  }
  SUBCASE("heads: drawn, learner, bound H0") {
    at_limit("generate --d 1 --heads " + S(max_heads) + " --w-range 100 --seed 1 -o " + tmpdir() + "/g.json", "--heads:");
    // d = 1 with W in [-4, 4]/4: only 9 distinct W exist, so 10 fresh heads are refused (not an endless redraw)
    past_limit("generate --d 1 --heads 10 --seed 1", 2, "only 9 distinct W exist");
    past_limit("generate --d 1 --heads " + S(max_heads + 1) + " --seed 1", 2, range_msg("--heads", 1, max_heads));
    for (const std::string opt : {"--learner-heads", "--max-heads"}) {
      at_limit("recover --d 1 --heads 1 " + opt + " " + S(max_heads) + fast, opt);
      past_limit("recover --d 1 --heads 1 " + opt + " " + S(max_heads + 1) + fast, 2, range_msg(opt, 1, max_heads));
      CHECK(mhaq_run("recover --d 1 --heads 1 " + opt + " 0").code == 2);  // zero is not "default"
    }
    const std::string m = write_file("m1.json", model_text(1));
    at_limit("recover --model " + m + " --heads " + S(max_heads) + fast, "--heads");
    past_limit("recover --model " + m + " --heads " + S(max_heads + 1), 2, range_msg("--heads", 1, max_heads));
  }
  SUBCASE("bits, max-bits, oracle-bits") {
    at_limit("recover --d 1 --heads 1 --bits " + S(min_bits) + fast, "--bits");
    at_limit("recover --d 1 --heads 1 --bits " + S(max_bits) + fast, "--bits");
    past_limit("recover --d 1 --heads 1 --bits " + S(min_bits - 1), 2, range_msg("--bits", min_bits, max_bits));
    past_limit("recover --d 1 --heads 1 --bits " + S(max_bits + 1), 2, range_msg("--bits", min_bits, max_bits));
    at_limit("recover --d 1 --heads 1 --max-bits " + S(max_bits) + fast, "--max-bits");
    past_limit("recover --d 1 --heads 1 --max-bits " + S(max_bits + 1), 2, range_msg("--max-bits", 64, max_bits));
    at_limit("recover --d 1 --heads 1 --oracle-bits " + S(max_bits) + fast, "--oracle-bits");
    past_limit("recover --d 1 --heads 1 --oracle-bits " + S(max_bits + 1), 2, range_msg("--oracle-bits", 1, max_bits));
    at_limit("golden export --model " + tmpdir() + "/missing.json --arith ball --bits " + S(max_bits), "--bits");
    past_limit("golden export --d 1 --heads 1 --arith ball --bits " + S(max_bits + 1), 2, range_msg("--bits", min_bits, max_bits));
  }
  SUBCASE("token range and denominator") {
    for (const std::string opt : {"--token-range", "--token-den"}) {
      const long hi = opt == "--token-range" ? max_token_range : max_token_den;
      at_limit("recover --d 1 --heads 1 " + opt + " " + S(hi) + fast, opt);
      past_limit("recover --d 1 --heads 1 " + opt + " " + S(hi + 1) + fast, 2, range_msg(opt, 1, hi));
      past_limit("recover --d 1 --heads 1 " + opt + " 0", 2, range_msg(opt, 1, hi));
    }
    at_limit("verify --trials 1 --seed 1 --rates --ranges " + S(max_token_range) + " --min-d 3 --max-d 2", "--ranges");
    past_limit("verify --trials 1 --seed 1 --rates --ranges " + S(max_token_range + 1), 2, range_msg("--ranges", 1, max_token_range));
  }
  SUBCASE("samples per pair") {
    at_limit("recover --d 1 --heads 1 --samples-per-pair " + S(max_samples_per_pair) + fast, "--samples-per-pair");
    past_limit("recover --d 1 --heads 1 --samples-per-pair " + S(max_samples_per_pair + 1), 2, range_msg("--samples-per-pair", 1, max_samples_per_pair));
  }
  SUBCASE("plan size") {
    // Plans have odd sizes (4Hd^2-2H+1), so compare the largest plan within the limit with the next one.
    long d = 1, H = 1;
    for (long dd = 1; dd <= max_d; ++dd)
      for (long h = 1; h <= max_heads; ++h)
        if (plan_query_count(dd, h, true) <= max_plan_queries && plan_query_count(dd, h, true) > plan_query_count(d, H, true)) d = dd, H = h;
    REQUIRE(H < max_heads);
    CHECK(plan_query_count(d, H + 1, true) > max_plan_queries);
    // a certificate holds at most max_plan_queries; recover itself goes to max_recover_queries
    const std::string cert = " --certificate " + tmpdir() + "/c.json";
    at_limit("recover --d " + S(d) + " --heads 1 --learner-heads " + S(H) + cert + fast, "queries, more than the limit");
    at_limit("recover --d " + S(d) + " --heads 1 --learner-heads " + S(H) + cert + fast, "a certificate holds");
    past_limit("recover --d " + S(d) + " --heads 1 --learner-heads " + S(H + 1) + cert + fast, 2,
               "a certificate holds a plan of at most " + S(max_plan_queries) + " queries");
    at_limit("recover --d " + S(d) + " --heads 1 --learner-heads " + S(H + 1) + fast, "queries, more than the limit");
    // no paper plan within d <= max_recover_d, H <= max_heads reaches max_recover_queries: oversampling does
    CHECK(plan_query_count(max_recover_d, max_heads, true) <= max_recover_queries);
    long K = 2;
    while (plan_query_count(max_recover_d, 1, true, K + 1) <= max_recover_queries) ++K;
    const std::string big = "recover --d " + S(max_recover_d) + " --heads 1 --arith ball --dry-run --samples-per-pair ";
    at_limit(big + S(K), "queries, more than the limit");
    CHECK(mhaq_run(big + S(K)).code == exit_dry_run);
    past_limit(big + S(K + 1), 2, "queries, more than the limit of " + S(max_recover_queries));
    // the check itself at the limit and one past it: samples K per pair at d = 1 give K queries
    CHECK_NOTHROW(check_plan_size(1, 1, true, max_plan_queries, ErrorKind::usage, "test"));
    CHECK_THROWS_AS(check_plan_size(1, 1, true, max_plan_queries + 1, ErrorKind::usage, "test"), Error);
  }
  SUBCASE("golden heads") {
    at_limit("golden export --model " + tmpdir() + "/missing.json --max-heads " + S(max_golden_heads), "for golden files");
    past_limit("golden export --d 1 --heads 1 --max-heads " + S(max_golden_heads + 1), 2, "more than the limit of " + S(max_golden_heads) + " for golden files");
    past_limit("golden export --d 1 --heads " + S(max_golden_heads + 1) + "", 2, "more than the limit of " + S(max_golden_heads));
  }
  SUBCASE("threads, digits, trials, multiplier, generate ranges") {
    at_limit("recover --d 1 --heads 1 --threads " + S(max_threads) + fast, "--threads");
    past_limit("recover --d 1 --heads 1 --threads " + S(max_threads + 1), 2, range_msg("--threads", 0, max_threads));
    at_limit("golden export --model " + tmpdir() + "/missing.json --digits " + S(max_digits), "--digits");
    past_limit("golden export --d 1 --heads 1 --digits " + S(max_digits + 1), 2, range_msg("--digits", 1, max_digits));
    at_limit("verify --trials " + S(max_trials) + " --seed 1 --min-d 3 --max-d 2", "--trials");
    past_limit("verify --trials " + S(max_trials + 1) + " --seed 1", 2, range_msg("--trials", 1, max_trials));
    at_limit("sweep --trials " + S(max_trials) + " --d 1 --heads 1 --bits 64 -o " + tmpdir() + "/s.csv --plots \"a'b\"", "--trials");
    past_limit("sweep --trials " + S(max_trials + 1) + " -o " + tmpdir() + "/s.csv", 2, range_msg("--trials", 1, max_trials));
    at_limit("prove --multiplier " + S(max_multiplier) + " --lemma 99", "--multiplier");
    past_limit("prove --multiplier " + S(max_multiplier + 1) + " --lemma 99", 2, range_msg("--multiplier", 1, max_multiplier));
    for (const std::string opt : {"--w-range", "--w-den", "--v-range", "--v-den"}) {
      at_limit("generate --d 1 --heads 1 --seed 1 " + opt + " " + S(max_entry_range) + " -o " + tmpdir() + "/g.json", opt);
      past_limit("generate --d 1 --heads 1 --seed 1 " + opt + " " + S(max_entry_range + 1), 2, range_msg(opt, 1, max_entry_range));
    }
  }
  SUBCASE("sweep lists and rows") {
    const std::string out = " -o " + tmpdir() + "/s.csv --plots \"a'b\"";
    at_limit("sweep --d 1 --heads 1 --trials 1 --bits 16-" + S(15 + max_list_values) + out, "values");
    past_limit("sweep --d 1 --heads 1 --trials 1 --bits 16-" + S(16 + max_list_values) + out, 2, "more than " + S(max_list_values) + " values");
    // rows = trials x precisions; 2^20 + 1 has no such factorisation, so the next product beyond
    at_limit("sweep --d 1 --heads 1 --trials 1024 --bits 16-1039" + out, "rows, more than the limit");
    past_limit("sweep --d 1 --heads 1 --trials 1025 --bits 16-1039" + out, 2, "rows, more than the limit of " + S(max_sweep_rows));
  }
}

TEST_CASE("limits in exact mode: L and the a-priori tau degree (the model's W and the token range)") {
  // L = m den^2 with m = 2^40 (one W entry 1/2^40) is the limit; m = 2^40 + 1 is one past it.
  const std::string atL = write_file("L.json", model_text(1, "1/" + S(max_L)));
  const std::string pastL = write_file("L1.json", model_text(1, "1/" + S(max_L + 1)));
  at_limit("recover --model " + atL + " --target-error 1", "exact mode needs L");
  past_limit("recover --model " + pastL + " --target-error 1", 3, "<= " + S(max_L));
  // tau degree 4 m R^2 sum|W| with R = 1, m = 1: W = 2^18 gives the limit 2^20; the
  // bound is a multiple of 4, so the nearest value beyond is 2^20 + 4.
  const std::string atT = write_file("T.json", model_text(1, S(max_tau_exponent / 4)));
  const std::string pastT = write_file("T1.json", model_text(1, S(max_tau_exponent / 4 + 1)));
  at_limit("recover --model " + atT + " --token-range 1 --target-error 1", "powers of tau");
  past_limit("recover --model " + pastT + " --token-range 1 --target-error 1", 2, "more than the limit of " + S(max_tau_exponent));
  past_limit("recover --model " + pastT + " --token-range 1 --target-error 1 --arith exact", 2, "powers of tau");
  // with the default token range it is the file's W that is too large: an input error
  past_limit("recover --model " + pastT + " --target-error 1", 3, "powers of tau");
}

TEST_CASE("limits on model files: the limit is read, limit + 1 refused (exit 3, naming the field)") {
  SUBCASE("d") {
    at_limit("convert --model " + write_file("d.json", model_text(static_cast<int>(max_d))) + " -o " + tmpdir() + "/c.json", "d: must be");
    past_limit("convert --model " + write_file("d1.json", model_text(static_cast<int>(max_d + 1))), 3, "d: must be in [1, " + S(max_d) + "]");
  }
  auto heads_file = [](long n) {
    json hs = json::array();
    for (long h = 0; h < n; ++h) hs.push_back(json{{"W", json::array({json::array({S(h)})})}, {"v", json::array({"1"})}});
    return json{{"format", "mhaq-model"}, {"version", 1}, {"d", 1}, {"heads", hs}}.dump();
  };
  SUBCASE("heads in a file") {
    at_limit("convert --model " + write_file("h.json", heads_file(max_file_heads)) + " -o " + tmpdir() + "/c.json", "heads, more than");
    past_limit("convert --model " + write_file("h1.json", heads_file(max_file_heads + 1)), 3, "more than the limit of " + S(max_file_heads) + " heads");
  }
  SUBCASE("entry characters") {
    auto entry_file = [](long n) {
      json j = json::parse(model_text(1));
      j["heads"][0]["v"][0] = std::string(static_cast<size_t>(n), '1');
      return j.dump();
    };
    at_limit("convert --model " + write_file("e.json", entry_file(max_entry_chars)) + " -o " + tmpdir() + "/c.json", "characters");
    past_limit("convert --model " + write_file("e1.json", entry_file(max_entry_chars + 1)), 3, "longer than the limit of " + S(max_entry_chars));
  }
  auto factored = [](long d_k, long d_out, long heads) {
    json hs = json::array(), q = json::array({json::array()}), one = json::array({json::array({1})});
    for (long k = 0; k < d_k; ++k) q[0].push_back(1);
    json O = json::array({json::array()});
    for (long c = 0; c < d_out; ++c) O[0].push_back(1);
    for (long h = 0; h < heads; ++h) hs.push_back(json{{"Q", q}, {"K", q}, {"V", one}, {"O", O}});
    json u = json::array();
    for (long c = 0; c < d_out; ++c) u.push_back(1);
    return json{{"format", "mhaq-model-factored"}, {"version", 1}, {"d", 1}, {"d_k", d_k}, {"d_v", 1}, {"d_out", d_out}, {"heads", hs}, {"readout", u}}.dump();
  };
  SUBCASE("inner dimensions of a factored file") {
    at_limit("convert --model " + write_file("k.json", factored(max_inner_dim, 1, 1)) + " -o " + tmpdir() + "/c.json", "d_k: must be");
    past_limit("convert --model " + write_file("k1.json", factored(max_inner_dim + 1, 1, 1)), 3, "d_k: must be in [1, " + S(max_inner_dim) + "]");
  }
  SUBCASE("entries of a file") {
    // d = 1, d_v = 1: H (2 d_k + 1 + d_out) + d_out entries; 876 (1193 + 4) + 4 = 2^20, 512 (2047 + 1) + 1 = 2^20 + 1
    REQUIRE(max_file_entries == (1L << 20));
    at_limit("convert --model " + write_file("n.json", factored(596, 4, 876)) + " -o " + tmpdir() + "/c.json", "entries, more than");
    past_limit("convert --model " + write_file("n1.json", factored(1023, 1, 512)), 3, "more than the limit of " + S(max_file_entries) + " entries");
  }
  SUBCASE("file bytes") {
    // zeros: the reader takes exactly the limit (then the JSON is invalid), and refuses one byte more
    auto r = test::run("bash -c \"head -c " + S(max_file_bytes) + " /dev/zero | " + bin + " recover --model /dev/stdin\" 2>&1");
    CHECK(r.code == 3);
    CHECK(r.out.find("more than the limit") == std::string::npos);
    r = test::run("bash -c \"head -c " + S(max_file_bytes + 1) + " /dev/zero | " + bin + " recover --model /dev/stdin\" 2>&1");
    CHECK(r.code == 3);
    CHECK(r.out.find("more than the limit of " + S(max_file_bytes) + " bytes") != std::string::npos);
  }
  SUBCASE("nesting depth") {
    const std::string at = std::string(static_cast<size_t>(max_json_depth), '[') + std::string(static_cast<size_t>(max_json_depth), ']');
    const std::string past = "[" + at + "]";
    CHECK_NOTHROW(parse_json_text(at));
    std::string msg;
    try {
      parse_json_text(past);
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::input);
      msg = e.what();
    }
    CHECK(msg.find("nested deeper than " + S(max_json_depth)) != std::string::npos);
  }
}

TEST_CASE("limits in certificates and golden files (exit 3 past the limit)") {
  const std::string c = tmpdir() + "/c.json";
  REQUIRE(mhaq_run("recover --d 1 --heads 1 --seed 1 --arith ball --bits 64 --certificate " + c).code == 0);
  std::stringstream ss;
  ss << std::ifstream(c).rdbuf();
  const json cert = json::parse(ss.str());
  auto checked = [&](const std::function<void(json&)>& edit) {
    json j = cert;
    edit(j);
    return mhaq_run("check-certificate " + write_file("ce.json", j.dump()));
  };
  SUBCASE("bits") {
    auto r = checked([](json& j) { j["bits"] = max_bits; });
    CHECK(r.code == 0);  // a claim above the values' width is true; decided at the values' own precision
    r = checked([](json& j) { j["bits"] = max_bits + 1; });
    CHECK(r.code == 3);
    CHECK(r.out.find("bits: out of range [" + S(min_bits) + ", " + S(max_bits) + "]") != std::string::npos);
    r = checked([](json& j) { j["bits"] = min_bits - 1; });
    CHECK(r.code == 3);
  }
  SUBCASE("runs of a query") {
    auto runs = [](long n) {
      return [n](json& j) {
        json& q = j["queries"][1]["runs"];
        const json first = q[0];
        while (static_cast<long>(q.size()) < n) q.insert(q.begin(), first);
      };
    };
    auto r = checked(runs(check::limits::max_runs));
    CHECK(r.code == 10);  // read, then the query differs from the plan (checker_rejected)
    r = checked(runs(check::limits::max_runs + 1));
    CHECK(r.code == 3);
    CHECK(r.out.find("more than the limit of " + S(check::limits::max_runs)) != std::string::npos);
  }
  SUBCASE("number characters") {
    auto digits = [](long n) { return [n](json& j) { j["heads"][0]["v"][0]["mid"] = std::string(static_cast<size_t>(n), '1'); }; };
    auto r = checked(digits(max_number_chars));
    CHECK(r.code == 10);
    r = checked(digits(max_number_chars + 1));
    CHECK(r.code == 3);
    CHECK(r.out.find("more than the limit of " + S(max_number_chars)) != std::string::npos);
  }
  SUBCASE("token range and heads of a golden file") {
    const std::string g = tmpdir() + "/g.json";
    REQUIRE(mhaq_run("golden export --d 1 --heads 1 --seed 1 --digits 8 -o " + g).code == 0);
    std::stringstream gs;
    gs << std::ifstream(g).rdbuf();
    const json gold = json::parse(gs.str());
    auto golden = [&](const std::function<void(json&)>& edit) {
      json j = gold;
      edit(j);
      return mhaq_run("golden check " + write_file("ge.json", j.dump()));
    };
    auto r = golden([](json& j) { j["inputs"]["token_range"] = max_token_range + 1; });
    CHECK(r.code == 3);
    CHECK(r.out.find("inputs.token_range: must be in [1, " + S(max_token_range) + "]") != std::string::npos);
    r = golden([](json& j) { j["inputs"]["heads_learner"] = max_heads + 1; });
    CHECK(r.code == 3);
    CHECK(r.out.find("inputs.heads_learner: must be in [1, " + S(max_heads) + "]") != std::string::npos);
    // the golden limit on H, with the bound flag (H0 >= the canonical count is what an export writes)
    r = golden([](json& j) { j["inputs"]["heads_learner"] = max_golden_heads; j["inputs"]["heads_is_bound"] = true; });
    CHECK(r.code == 10);  // read; the re-derived fields then differ (checker_rejected)
    r = golden([](json& j) { j["inputs"]["heads_learner"] = max_golden_heads + 1; j["inputs"]["heads_is_bound"] = true; });
    CHECK(r.code == 3);
    CHECK(r.out.find("more than the limit of " + S(max_golden_heads) + " for golden files") != std::string::npos);
    r = golden([](json& j) { j["inputs"]["heads_learner"] = 2; });  // H known, but not the canonical count
    CHECK(r.code == 3);
    CHECK(r.out.find("differs from the model's canonical head count 1") != std::string::npos);
    r = golden([](json& j) { j["digits"] = max_digits + 1; });
    CHECK(r.code == 3);
    // token range at the limit with this file's exact model: the tau-degree bound refuses it first
    r = golden([](json& j) { j["inputs"]["token_range"] = max_token_range; });
    CHECK(r.code == 3);
    CHECK(r.out.find("powers of tau") != std::string::npos);
  }
}

TEST_CASE("limits on transformers: --ffn, --learner-neurons and transformer files") {
  SUBCASE("--ffn and --learner-neurons (exit 2)") {
    at_limit("generate --d 1 --heads 1 --seed 1 --ffn " + S(max_neurons) + " -o " + tmpdir() + "/t.json", "--ffn");
    past_limit("generate --d 1 --heads 1 --seed 1 --ffn " + S(max_neurons + 1), 2, range_msg("--ffn", 1, max_neurons));
    past_limit("generate --d 1 --heads 1 --seed 1 --ffn 0", 2, range_msg("--ffn", 1, max_neurons));  // zero is not "no FFN"
    // the extra neurons count: what generate writes, recover reads
    past_limit("generate --d 1 --heads 1 --seed 1 --ffn " + S(max_neurons) + " --zero-neuron", 2, "--ffn must be in [1, " + S(max_neurons - 1) + "]");
    at_limit("recover --d 1 --heads 1 --ffn 1 --learner-neurons " + S(max_neurons) + fast, "--learner-neurons:");
    past_limit("recover --d 1 --heads 1 --ffn 1 --learner-neurons " + S(max_neurons + 1), 2, range_msg("--learner-neurons", 1, max_neurons));
    past_limit("recover --d 1 --heads 1 --ffn 1 --learner-neurons 0", 2, range_msg("--learner-neurons", 1, max_neurons));
    past_limit("recover --d 1 --heads 1 --ffn " + S(max_neurons + 1), 2, range_msg("--ffn", 1, max_neurons));
  }
  auto transformer = [](long heads, long neurons) {
    json hs = json::array(), ns = json::array();
    for (long h = 0; h < heads; ++h) hs.push_back(json{{"W", json::array({json::array({S(h)})})}});
    for (long k = 0; k < neurons; ++k) {
      json U = json::array();
      for (long h = 0; h < heads; ++h) U.push_back(json::array({S(k + 1)}));
      ns.push_back(json{{"u", "1"}, {"U", U}});
    }
    return json{{"format", "mhaq-transformer"}, {"version", 1}, {"d", 1}, {"heads", hs}, {"neurons", ns}}.dump();
  };
  // an accepted file then fails fast: transformers take no --target-error
  SUBCASE("neurons and heads in a file (exit 3)") {
    at_limit("recover --model " + write_file("tn.json", transformer(1, max_neurons)) + fast, "neurons, more than");
    past_limit("recover --model " + write_file("tn1.json", transformer(1, max_neurons + 1)), 3, "more than the limit of " + S(max_neurons));
    at_limit("recover --model " + write_file("th.json", transformer(max_heads, 1)) + fast, "heads, more than");
    past_limit("recover --model " + write_file("th1.json", transformer(max_heads + 1, 1)), 3, "more than the limit of " + S(max_heads));
    past_limit("recover --model " + write_file("td1.json", std::regex_replace(transformer(1, 1), std::regex("\"d\":1"), "\"d\":" + S(max_d + 1))), 3,
               "d: must be in [1, " + S(max_d) + "]");
  }
  SUBCASE("entry characters (exit 3)") {
    auto entry_file = [&](long n) {
      json j = json::parse(transformer(1, 1));
      j["neurons"][0]["u"] = std::string(static_cast<size_t>(n), '1');
      return j.dump();
    };
    at_limit("recover --model " + write_file("te.json", entry_file(max_entry_chars)) + fast, "characters");
    past_limit("recover --model " + write_file("te1.json", entry_file(max_entry_chars + 1)), 3, "longer than the limit of " + S(max_entry_chars));
  }
  SUBCASE("the exact conversion of a factored transformer file (exit 3)") {
    // d = 64, m = 64, d_k = 1, d_v = d_out = n: 64 n (n + 64) products for U and 64^2 for W;
    // n = 480 is the largest within 2^24, n = 481 the first beyond
    REQUIRE(max_conversion_products == (1L << 24));
    auto factored = [](long n) {
      const long d = 64, m = 64;
      auto ones = [](long r, long c) { return json(std::vector<std::vector<int>>(static_cast<size_t>(r), std::vector<int>(static_cast<size_t>(c), 1))); };
      return json{{"format", "mhaq-transformer-factored"}, {"version", 1}, {"d", d}, {"d_k", 1}, {"d_v", n}, {"d_out", n},
                  {"heads", json::array({json{{"Q", ones(d, 1)}, {"K", ones(d, 1)}, {"V", ones(d, n)}}})},
                  {"O", ones(n, n)}, {"ffn", ones(n, m)}, {"readout", std::vector<int>(static_cast<size_t>(m), 1)}}
          .dump();
    };
    CHECK(64L * 480 * (480 + 64) + 64 * 64 <= max_conversion_products);
    CHECK(64L * 481 * (481 + 64) + 64 * 64 > max_conversion_products);
    at_limit("recover --model " + write_file("tf.json", factored(480)) + fast, "products, more than");
    past_limit("recover --model " + write_file("tf1.json", factored(481)), 3, "products, more than the limit of " + S(max_conversion_products));
  }
}

// The library's recover() and recover_transformer() check the program's
// limits themselves, before any work: a caller who builds the options in code
// meets the same refusals as the command line (usage errors naming the option).
TEST_CASE("limits in the library: recover() and recover_transformer() refuse options past a limit before any work") {
  GenerateOptions g;
  g.d = 2;
  g.heads = 1;
  const Model m = generate_model(g);
  RecoverOptions o;
  o.threads = static_cast<int>(max_threads + 1);
  auto r = test::error_of([&] { recover(m, o); });
  CHECK(r.first == 2);
  CHECK(r.second.find("--threads") != std::string::npos);
  o = RecoverOptions{};
  o.max_degree = max_tau_exponent + 1;  // an exact budget past the hard limit
  r = test::error_of([&] { recover(m, o); });
  CHECK(r.first == 2);
  CHECK(r.second.find("--max-degree") != std::string::npos);
  o = RecoverOptions{};
  o.arith = Arith::ball;
  o.bits = max_bits + 1;
  r = test::error_of([&] { recover(m, o); });
  CHECK(r.first == 2);
  CHECK(r.second.find("--bits") != std::string::npos);
  o = RecoverOptions{};
  o.max_heads = static_cast<int>(max_heads + 1);
  r = test::error_of([&] { recover(m, o); });
  CHECK(r.first == 2);
  CHECK(r.second.find("--max-heads") != std::string::npos);
  TransformerGenerateOptions tg;
  tg.d = 1;
  tg.heads = 1;
  const TransformerModel t = generate_transformer(tg);
  o = RecoverOptions{};
  o.neurons = static_cast<int>(max_neurons + 1);
  r = test::error_of([&] { recover_transformer(t, o); });
  CHECK(r.first == 2);
  CHECK(r.second.find("--learner-neurons") != std::string::npos);
  // within the limits the same calls run
  o = RecoverOptions{};
  CHECK(recover(m, o).judge.status == Status::ok);
}

TEST_CASE("the baselines go through recover's limits; the stated H has a cost bound in exact mode (exit 3 or 11, naming the limit)") {
  // A W entry 2^30: the exact baseline's answers would have tau-degree about
  // 10^11 (FLINT aborted allocating 137 GB); recover and compare refused it.
  const std::string big = write_file("w2p30.json", R"({"format": "mhaq-model", "version": 1, "d": 2, "heads": [{"W": [["1073741824", "0"], ["0", "1/2"]], "v": ["1", "1"]}]})");
  for (const std::string& method : {std::string("--method single-head"), std::string("--method orthogonal --axis-bases")}) {
    const auto r = mhaq_run("baseline " + method + " --model " + big);
    INFO("baseline " << method << "\n" << r.out);
    CHECK(r.code == 3);
    CHECK(r.out.find(big) != std::string::npos);  // the file
    CHECK(r.out.find("more than the limit of " + S(max_tau_exponent)) != std::string::npos);
    CHECK(r.out.find("--token-range") == std::string::npos);  // an option the baselines do not have
    CHECK(r.out.find("--arith ball") != std::string::npos);
  }
  past_limit("compare --model " + big, 3, "more than the limit of " + S(max_tau_exponent));
  // in balls the same file runs (no tau-degrees), and the options' limits hold
  past_limit("baseline --model " + big + " --arith ball --bits " + S(max_bits + 1), 2, "--bits");
  // the library's baseline_run: the same refusal, an input error naming the model
  const Model m = read_model_file(big);
  const auto lib = test::error_of([&] { baseline_run(m, BaselineRun{}, RecoverOptions{}); });
  CHECK(lib.first == 3);
  CHECK(lib.second.find("more than the limit of " + S(max_tau_exponent)) != std::string::npos);
  // within the a-priori limit but past the budget: over_budget before any query, exit 11
  // W = 8192 (m = 1): 4 R^2 sum|W| = 819,300 is within the limit, the single-head queries [u + e_1, e_1] reach 5 x 8192
  const std::string mid = write_file("w2p13.json", R"({"format": "mhaq-model", "version": 1, "d": 2, "heads": [{"W": [["8192", "0"], ["0", "1"]], "v": ["1", "1"]}]})");
  const auto b = mhaq_run("baseline --model " + mid + " --json");
  INFO(b.out);
  CHECK(b.code == 11);
  CHECK(b.out.find("beyond the budget --max-degree 20000") != std::string::npos);
  CHECK(b.out.find("\"queries\":0") != std::string::npos);
  CHECK(mhaq_run("baseline --model " + mid + " --max-degree " + S(max_tau_exponent)).code == 0);

  // the learner's stated H in exact mode: past max_exact_heads, over budget at once
  const std::string two = write_file("two_heads.json", model_text(2));
  for (const std::string& h : {std::string("--heads 16"), std::string("--heads 64"), std::string("--max-heads 16"),
                               std::string("--heads ") + S(max_exact_heads + 1)}) {
    const auto r = mhaq_run("recover --model " + two + " " + h + " --json");
    INFO("recover " << h << "\n" << r.out);
    CHECK(r.code == 11);
    CHECK(r.out.find("exceeds the cost bound of the stated H, " + S(max_exact_heads) + " heads") != std::string::npos);
    CHECK(r.out.find("\"queries\":0") != std::string::npos);
    CHECK(r.out.find("--arith ball") != std::string::npos);  // the remedy
    CHECK(r.out.find(h.substr(0, h.find(' '))) != std::string::npos);  // names the option that stated H
  }
  // the bound is exact mode's, and the limit itself is not refused for it
  at_limit("recover --model " + two + " --heads 16" + fast, "cost bound");
  at_limit("recover --model " + two + " --heads " + S(max_exact_heads) + " --max-degree 1", "cost bound");
}

TEST_CASE("recover --dry-run and --max-memory: the cost predicted from the shape, before any work") {
  double last_peak = 0;
  const std::vector<std::string> shapes{std::string("--d 64 --heads 8"), std::string("--d 128 --heads 8"), std::string("--d 768 --heads 12 --rank 64")};
  const std::vector<long> want{plan_query_count(64, 8, true), plan_query_count(128, 8, true), rank_query_count(768, 12, 64)};
  for (size_t k = 0; k < shapes.size(); ++k) {
    const std::string shape = shapes[k];
    const auto r = mhaq_run("recover " + shape + " --arith ball --threads 2 --dry-run --json");
    INFO("recover " << shape << "\n" << r.out);
    CHECK(r.code == exit_dry_run);
    const json j = json::parse(r.out);
    CHECK(j.at("status") == "dry_run");
    CHECK(j.at("queries").get<long>() == want[k]);
    const double peak = j.at("predicted_peak_bytes").get<double>();
    CHECK(peak > last_peak);  // grows with the plan
    last_peak = peak;
    CHECK(j.at("predicted_seconds").get<double>() > 0);
    const auto h = mhaq_run("recover " + shape + " --arith ball --threads 2 --dry-run");
    CHECK(h.code == exit_dry_run);
    CHECK(h.out.find("status           dry_run (exit 13)") != std::string::npos);
  }
  {  // a ball run's time grows with its precision (docs/studies/cost-model.md: a factor fitted at 256 to 4096 bits)
    auto dry = [](long bits) { return json::parse(mhaq_run("recover --d 32 --heads 4 --arith ball --threads 1 --dry-run --json --bits " + std::to_string(bits)).out); };
    const json lo = dry(1024), hi = dry(2048);
    const double ratio = hi.at("predicted_seconds").get<double>() / lo.at("predicted_seconds").get<double>();
    CHECK(ratio > 2.0);
    CHECK(ratio < 3.0);
    CHECK(hi.at("time_note").get<std::string>().find("scaled to 2048 bits") != std::string::npos);
    CHECK(lo.at("time_note").get<std::string>().find("scaled") == std::string::npos);
  }
  // a dry run starts no oracle process and asks nothing
  const std::string mark = tmpdir() + "/started";
  const auto o = mhaq_run("recover --oracle 'touch " + mark + "' --d 4 --heads 2 --arith ball --dry-run");
  CHECK(o.code == exit_dry_run);
  CHECK(!std::ifstream(mark).good());
  {
    // on ranks, an external oracle's answers come through rank 0: the note does not divide them
    const auto e = json::parse(mhaq_run("recover --oracle 'touch " + mark + "' --d 4 --heads 2 --arith ball --dry-run --ranks 4 --json").out);
    const std::string note = e.at("time_note").get<std::string>();
    INFO(note);
    CHECK(note.find("rank 0 asks every query") != std::string::npos);
    CHECK(note.find("answers, pair fits") == std::string::npos);
    const auto in = json::parse(mhaq_run("recover --d 4 --heads 2 --arith ball --dry-run --ranks 4 --json").out);
    CHECK(in.at("time_note").get<std::string>().find("answers, pair fits and the self-check divided") != std::string::npos);
    CHECK(!std::ifstream(mark).good());
  }
  // past --max-memory: over budget before any work, naming the predicted figure and what to change
  const auto m = mhaq_run("recover --d 64 --heads 8 --arith ball --max-memory 1M --json");
  INFO(m.out);
  CHECK(m.code == 11);
  CHECK(m.out.find("\"error\":\"over_budget\"") != std::string::npos);
  CHECK(m.out.find("predicted peak memory") != std::string::npos);
  CHECK(m.out.find("exceeds 1 MiB (--max-memory)") != std::string::npos);
  for (const std::string& remedy : {std::string("smaller --d"), std::string("--rank R"), std::string("larger --max-memory")}) CHECK(m.out.find(remedy) != std::string::npos);
  // within the bound the run goes on; a bound that is not a byte count is a usage error naming the option
  CHECK(mhaq_run("recover --d 2 --heads 1 --arith ball --max-memory 1G").code == 0);
  for (const std::string& bad : {std::string("0"), std::string("01"), std::string("12X"), std::string("-5"), std::string("1.5G"), std::string("G")})
    past_limit("recover --d 2 --heads 1 --arith ball --max-memory " + bad, 2, "--max-memory");
  // transformers have no cost model yet
  past_limit("recover --d 2 --heads 1 --ffn 2 --arith ball --dry-run", 2, "transformers support");
}
