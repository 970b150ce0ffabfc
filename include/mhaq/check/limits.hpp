// The certificate checker's size limits. The checker shares no code with
// mhaq_lib, so it keeps its own copy of the limits that bound a certificate;
// include/mhaq/base/limits.hpp asserts at compile time that both agree, so a
// certificate that recover writes is always within what the checker reads.
#pragma once

namespace mhaq::check::limits {

constexpr long max_d = 64;                  // model.d, plan.d
constexpr long max_heads = 64;              // inputs.heads_learner, plan.H
constexpr long max_file_heads = 1024;       // model.heads (as recorded, before the canonical form)
constexpr long max_entry_chars = 4096;      // characters of one model entry
constexpr long max_number_chars = 100000;   // characters of any other number string
constexpr long max_file_bytes = 1L << 27;   // bytes of a certificate
constexpr long max_token_range = 1L << 30;  // inputs.token_range
constexpr long max_token_den = 1L << 30;    // inputs.token_den
constexpr long max_tau_exponent = 1L << 20; // exact: sum over heads of the tau-degree of one answer
constexpr long max_L = 1L << 40;            // exact: L
constexpr long min_bits = 16;               // ball, mpfr: bits (double: 53)
constexpr long max_bits = 1L << 16;
constexpr long max_plan_queries = 1L << 17; // the query formula's value for d and H
constexpr long max_witness_queries = 1L << 12; // claims.grid_witness_queries (the guard asks at most 10 pairs of 2H+1 <= 129)
constexpr long max_runs = 4096;             // runs of one query
constexpr long max_neurons = 256;           // transformer golden files: model.neurons
constexpr long max_digits = 100000;         // golden files: digits
constexpr long max_golden_eval_work = 1L << 30; // certified golden files: (runs + d) d H summed over the queries
constexpr long max_golden_queries = 1L << 19; // transformer golden files: queries (both attention passes, regions, verification)
constexpr long max_inner_dim = 4096;        // kernel golden files: d, H d_k, H d_v, d_out of the layer
constexpr long max_file_entries = 1L << 20; // kernel golden files: the layer's weights
constexpr long max_kernel_sequence_entries = 1L << 20; // kernel golden files: entries of one sequence, and its additive mask's
constexpr long max_kernel_position = 1L << 24;         // kernel golden files: position_ids

}  // namespace mhaq::check::limits
