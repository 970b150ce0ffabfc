// Stated limits for every size that a user (an option) or a file controls,
// checked before any allocation that depends on them. The table in
// docs/limits.md lists these constants; tests/test_limits.cpp runs the program at each
// limit and one past it. Options out of range are usage errors (exit 2),
// file fields out of range are input errors (exit 3) naming file and path.
// Writer and reader agree: mhaq never writes what it would refuse to read.
#pragma once
#include <cstdint>
#include <string>

#include "mhaq/base/error.hpp"
#include "mhaq/check/limits.hpp"

namespace mhaq::limits {

// ---- model shape
constexpr long max_d = 64;                 // token dimension d: --d, model files, golden files, certificates
// recover draws its model (or asks an external oracle) at d up to this; its
// memory and time are then bounded by --max-memory (run/cost_model.hpp)
constexpr long max_recover_d = 1024;       // recover --d, --rank
// exact recover: every answer is an element of Q(tau) whose degree grows with
// the scores, and the pair systems' work with it; d = 64 is already hours
constexpr long max_exact_d = 64;           // recover --arith exact: d, refused (over_budget) before any work beyond it
constexpr long max_heads = 64;             // H: drawn --heads, --learner-heads, --max-heads, --model F --heads, files' learner H
constexpr long max_file_heads = 1024;      // heads listed in a model file (before the canonical form)
constexpr long max_inner_dim = 4096;       // d_k, d_v, d_out of a factored model file
constexpr long max_file_entries = 1L << 20;  // matrix and vector entries of one model file
constexpr long max_neurons = 256;          // FFN neurons of a transformer: generate/recover --ffn, --learner-neurons, transformer files
constexpr long max_conversion_products = 1L << 24;  // exact products a factored transformer file's conversion may take
constexpr long max_safetensors_header = 1L << 24;  // bytes of a safetensors file's JSON header
constexpr long max_safetensors_tensors = 1L << 16; // tensors listed in a safetensors header
constexpr long max_tensor_rank = 8;                // dimensions of one safetensors tensor
// ---- numbers and files
constexpr long max_entry_chars = 4096;     // characters of one model entry ("p/q", integer, decimal)
constexpr long max_number_chars = 100000;  // characters of any other number string in golden files and certificates
constexpr long max_file_bytes = 1L << 27;  // bytes of any file mhaq reads or writes (128 MiB)
// a checkpoint (recover --checkpoint) grows with the run's answers and is read
// line by line: each line is bounded instead of the file
constexpr long max_checkpoint_line_bytes = 1L << 26;  // bytes of one checkpoint line (64 MiB)
constexpr long max_entry_range = 1L << 30; // generate: --w-range, --w-den, --v-range, --v-den
// ---- the learner's draws and plan
constexpr long max_token_range = 1L << 30;   // --token-range R; files' token_range
constexpr long max_token_den = 1L << 30;     // --token-den; files' token_den
constexpr long max_samples_per_pair = 4096;  // --samples-per-pair K
constexpr long max_plan_queries = 1L << 17;  // queries of one plan (4Hd^2-2H+1 for the paper schedule)
constexpr long max_recover_queries = 1L << 28;  // recover: queries of one plan (4Hd^2-2H+1 < 2^28 at d = 1024, H = 64); --max-queries
// exact mode: a priori bound 4 m R^2 sum_h sum_ij |W_h,ij| on the tau-degree of one
// answer (m = lcm of the W denominators); L = m den^2
constexpr long max_tau_exponent = 1L << 20;
constexpr long max_L = 1L << 40;
// ---- precision and output
constexpr long min_bits = 16;              // --bits (ball, mpfr), golden and certificate bits
constexpr long max_bits = 1L << 16;        // --bits, --max-bits, --oracle-bits, files' bits
constexpr long max_digits = 100000;        // golden --digits, golden files' digits
// golden files re-run the exact learner, whose work grows steeply with H
// (d=1: H=6 about 2 s, H=8 about 30 s): export and check both stop at 6
constexpr long max_golden_heads = 6;       // golden export --heads/--max-heads; heads_learner in golden files
// exact recover: a pair system has 2H+1 unknowns over Q(tau), and its work
// grows steeply with H (d = 2: H = 8 seconds to minutes, H = 16 minutes to
// hours): the learner's H or bound H0 beyond this is over budget, refused
// before any query
constexpr long max_exact_heads = 8;        // recover --arith exact: the learner's H or H0 (attention and a transformer's attention part)
// transformer golden files: the answers' tau-degrees summed over the file (the checker's work)
constexpr long max_golden_tau_total = 1L << 26;
// transformer golden files: (runs + d) d H m summed over the queries (the checker's rational arithmetic)
constexpr long max_golden_eval_work = 1L << 30;
// kernel golden files: entries one sequence writes (rows x (d_out + H d_v + H N)), and the
// entries of one sequence's additive mask (N x N); bounds the memory of one sequence
constexpr long max_kernel_sequence_entries = 1L << 20;
constexpr long max_kernel_position = 1L << 24;  // kernel golden files: position_ids (rotary embeddings)
// ---- runs
constexpr long max_threads = 1024;         // --threads (0 = all hardware threads)
constexpr long max_ranks = 1L << 20;       // recover --ranks (a dry run on that many MPI ranks)
constexpr long max_trials = 1000000;       // verify --trials, sweep --trials
constexpr long max_sweep_rows = 1L << 20;  // sweep: rows of the grid (units x precisions)
constexpr long max_list_values = 10000;    // sweep lists, verify --ranges: values in one list
constexpr long max_multiplier = 1000;      // prove --multiplier

// The checker keeps its own copy (it shares no code with mhaq_lib): they must agree.
static_assert(check::limits::max_d == max_d && check::limits::max_heads == max_heads);
static_assert(check::limits::max_file_heads == max_file_heads && check::limits::max_entry_chars == max_entry_chars);
static_assert(check::limits::max_number_chars == max_number_chars && check::limits::max_file_bytes == max_file_bytes);
static_assert(check::limits::max_token_range == max_token_range && check::limits::max_token_den == max_token_den);
static_assert(check::limits::max_tau_exponent == max_tau_exponent && check::limits::max_L == max_L);
static_assert(check::limits::min_bits == min_bits && check::limits::max_bits == max_bits);
static_assert(check::limits::max_plan_queries == max_plan_queries);
static_assert(check::limits::max_neurons == max_neurons && check::limits::max_digits == max_digits);
static_assert(check::limits::max_golden_eval_work == max_golden_eval_work);
static_assert(check::limits::max_kernel_sequence_entries == max_kernel_sequence_entries && check::limits::max_kernel_position == max_kernel_position);
static_assert(check::limits::max_inner_dim == max_inner_dim && check::limits::max_file_entries == max_file_entries);

}  // namespace mhaq::limits

namespace mhaq {

// Error(usage) "--d must be in [1, 64], got 65" unless lo <= value <= hi.
void check_option(const std::string& option, long value, long lo, long hi);
// Error(input) "<where>: must be in [lo, hi], got 65" unless lo <= value <= hi;
// `where` names the file and the JSON path ("m.json: d").
void check_field(const std::string& where, long value, long lo, long hi);

// Queries of a plan: 1 + (K-1) * pairs, with K = samples (0: the paper's 2H+1)
// values per pair and 2d^2-1 pairs (paper) or d^2+d-1 (lean). Saturates at
// LONG_MAX for absurd inputs instead of overflowing.
long plan_query_count(long d, long H, bool paper, long samples = 0);
// Error(kind) unless plan_query_count(...) <= limit (files and golden runs:
// max_plan_queries; recover: max_recover_queries); `what` says where d and H came from.
void check_plan_size(long d, long H, bool paper, long samples, ErrorKind kind, const std::string& what, long limit = limits::max_plan_queries);

}  // namespace mhaq
