#include "mhaq/run/judge.hpp"

#include <cstdio>

namespace mhaq {

const char* status_name(Status s) {
  switch (s) {
    case Status::ok: return "ok";
    case Status::degenerate: return "degenerate";
    case Status::unable: return "unable";
    case Status::mismatch: return "mismatch";
    case Status::inconsistent: return "inconsistent";
    case Status::not_identifiable: return "not_identifiable";
    case Status::rejected: return "checker_rejected";
    case Status::over_budget: return "over_budget";
    case Status::oracle_failed: return "oracle_failed";
  }
  return "?";
}

int status_exit_code(Status s) {
  switch (s) {
    case Status::ok: return 0;
    case Status::degenerate: return exit_code(ErrorKind::degenerate);
    case Status::unable: return exit_code(ErrorKind::unable);
    case Status::mismatch: return exit_code(ErrorKind::mismatch);
    case Status::inconsistent: return exit_code(ErrorKind::inconsistent);
    case Status::not_identifiable: return exit_code(ErrorKind::not_identifiable);
    case Status::rejected: return exit_code(ErrorKind::rejected);
    case Status::over_budget: return exit_code(ErrorKind::budget);
    case Status::oracle_failed: return exit_code(ErrorKind::oracle_failed);
  }
  return exit_code(ErrorKind::internal);
}

const char* status_remedy(Status s) {
  switch (s) {
    case Status::ok: return "";
    case Status::degenerate: return "this draw of the learner's queries is degenerate: try another --seed";
    case Status::unable: return "precision too low: raise --bits (or use --arith exact)";
    case Status::mismatch: return "the result disagrees with the known truth: this is a bug, please report it with the command line";
    case Status::inconsistent: return "the answers fit no model with the stated head count: is H too small, or are the answers approximate?";
    case Status::not_identifiable: return "no seed helps: the model, or the stated head count, violates a condition the learner needs (named above); docs/math/transformer.md and docs/math/unknown-heads.md state each condition";
    case Status::rejected: return "the checker rejected the file: it is wrong or has been tampered with";
    case Status::over_budget:
      return "the exact run would exceed its budget: use a smaller --token-range, or ball mode (--arith ball --bits P), or raise --max-degree";
    case Status::oracle_failed:
      return "the external oracle failed (the fault and the last query are named above): fix it, then rerun with --resume on the transcript to ask only what is missing";
  }
  return "";
}

std::optional<Status> find_status(const std::string& s) {
  for (Status t : {Status::ok, Status::degenerate, Status::unable, Status::mismatch, Status::inconsistent, Status::not_identifiable, Status::rejected, Status::over_budget, Status::oracle_failed})
    if (s == status_name(t)) return t;
  return std::nullopt;
}

Status parse_status(const std::string& s) {
  const std::optional<Status> t = find_status(s);
  if (!t) throw_internal("unknown status \"" + s + "\"");
  return *t;
}

Status status_of(ErrorKind k) {
  switch (k) {
    case ErrorKind::degenerate: return Status::degenerate;
    case ErrorKind::unable: return Status::unable;
    case ErrorKind::mismatch: return Status::mismatch;
    case ErrorKind::inconsistent: return Status::inconsistent;
    case ErrorKind::not_identifiable: return Status::not_identifiable;
    case ErrorKind::rejected: return Status::rejected;
    case ErrorKind::budget: return Status::over_budget;
    case ErrorKind::oracle_failed: return Status::oracle_failed;
    default: throw_internal(std::string("error kind ") + kind_name(k) + " is not a run outcome");
  }
}

namespace {
std::string pow2(double l2) {
  char b[64];
  std::snprintf(b, sizeof b, "%.3g", std::exp2(l2));
  if (!std::isfinite(std::exp2(l2)) || std::exp2(l2) == 0) std::snprintf(b, sizeof b, "2^%.1f", l2);
  return b;
}
}  // namespace

double default_tolerance_log2(long bits) { return -static_cast<double>(bits) / 4.0; }

namespace {
// The first-order rule, for a float tool that has no certified bound yet.
Verdict judge_first_order(const RunFacts& f, const std::string& at) {
  const bool estimate_ok = !std::isnan(f.estimate_log2) && f.estimate_log2 <= f.tolerance_log2;
  if (f.self_check == Truth::no) {
    if (!estimate_ok)
      return {Status::unable, at + ", and the run's error estimate " +
                                  (std::isnan(f.estimate_log2) ? std::string("could not be computed")
                                                               : pow2(f.estimate_log2) + " exceeds the tolerance " + pow2(f.tolerance_log2)) +
                                  ": precision too low to tell"};
    return {Status::inconsistent, at + ": the answers are not those of a model with " + std::to_string(f.heads_recovered) + " heads"};
  }
  if (!estimate_ok)
    return {Status::unable, std::isnan(f.estimate_log2)
                                ? "no error estimate could be computed at this precision"
                                : "estimated error " + pow2(f.estimate_log2) + " exceeds the tolerance " + pow2(f.tolerance_log2)};
  return {Status::ok, ""};
}

// The certified rule (proofs/40).
Verdict judge_certified(const RunFacts& f, const std::string& at) {
  const std::string heads = std::to_string(f.heads_recovered) + (f.heads_recovered == 1 ? " head" : " heads");
  if (f.self_check == Truth::no) {
    if (f.contradiction)
      return {Status::inconsistent, at + ", and the replay in balls certifies that no model with at most " + heads +
                                        " fits the answers within their stated errors"};
    return {Status::unable, at + ", but the replay in balls does not certify that no model with " + heads +
                                 " fits the answers within their stated errors: their error or the precision may explain it" +
                                 (f.judge_note.empty() ? std::string() : " (" + f.judge_note + ")")};
  }
  if (std::isnan(f.certified_log2))
    return {Status::unable, "no certified error bound: " + (f.judge_note.empty() ? std::string("the replay in balls did not finish") : f.judge_note)};
  if (f.certified_log2 > f.tolerance_log2)
    return {Status::unable, "the certified error bound " + pow2(f.certified_log2) + " exceeds the tolerance " + pow2(f.tolerance_log2) +
                                ": more accurate answers (a smaller stated error, more --oracle-bits), more --bits, or a better conditioned "
                                "design (--design scaled) would lower it"};
  return {Status::ok, ""};
}
}  // namespace

Verdict judge(const RunFacts& f) {
  const bool floats = arith_facts(f.arith).floats;
  const std::string at = "the recovered heads do not reproduce answer " + std::to_string(f.self_check_failed + 1);
  if (!floats && f.self_check == Truth::no)
    return {Status::inconsistent, at + ": the answers are not those of a model with " + std::to_string(f.heads_recovered) + " heads"};
  if (floats) {
    const Verdict v = f.first_order_only ? judge_first_order(f, at) : judge_certified(f, at);
    if (v.status != Status::ok) return v;
  }
  if (f.truth_known && f.heads_recovered != f.heads_true)
    return {Status::mismatch, std::to_string(f.heads_recovered) + " heads recovered, the canonical truth has " + std::to_string(f.heads_true)};
  if (f.truth_known && !f.agrees) return {Status::mismatch, f.disagreement};
  return {Status::ok, ""};
}

}  // namespace mhaq
