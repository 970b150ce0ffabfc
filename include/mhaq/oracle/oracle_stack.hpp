// The one place an oracle stack is built. A stack is a source of answers (a
// hidden attention model, rounded and perturbed when asked; a hidden
// transformer; an external process) and, when the caller keeps the answers,
// a record of every query and answer on top. Runs, golden files, verify,
// sweep, the baselines, the lemma checks and the tests build their oracles
// here, and hand the learner top(): an Oracle<T>& and nothing else.
//
// The learner's own wrappers (the keeping oracle of a repair, the record a
// transformer run keeps of its small single tokens, the odd part, a replay)
// live with the interface in stages/1-oracle, below the learner; the views of
// another oracle's answers (jets, the pilot's) sit beside this file and wrap
// top().
#pragma once
#include <memory>
#include <utility>

#include "mhaq/oracle/checkpoint.hpp"
#include "mhaq/oracle/external_oracle.hpp"
#include "mhaq/oracle/model_oracle.hpp"
#include "mhaq/oracle/transformer_oracle.hpp"
#include "mhaq/stages/1-oracle/recording_oracle.hpp"

namespace mhaq {

template <class T>
class OracleStack {
 public:
  // A hidden attention model's answers; `noise` rounds and perturbs them
  // (claim 4), `solver` is the exact field's linear solver.
  static OracleStack model(Model m, long token_den, OracleNoise noise = {}, ExactSolver solver = ExactSolver::sparse) {
    return with_errors(std::make_unique<ModelOracle<T>>(std::move(m), token_den, std::move(noise), solver));
  }
  // A hidden one-layer transformer's answers.
  static OracleStack transformer(TransformerModel m, long token_den, ExactSolver solver = ExactSolver::sparse) {
    return with_errors(std::make_unique<TransformerOracle<T>>(std::move(m), token_den, solver));
  }
  // An external process's answers under the bound in force (the user's
  // stated bound, else the oracle's own); T = Ball, Mpfr or double (the
  // answers are reals: there is no exact instance).
  static OracleStack external(ExternalSession& s, const ErrorStatement& stated) {
    auto e = std::make_unique<ExternalOracle<T>>(s, stated);
    const ErrorStatement* bound = &e->bound();
    OracleStack out = with_errors(std::move(e));
    out.bound_ = bound;
    return out;
  }
  // An oracle the caller was handed (not owned; it must outlive the stack),
  // to be recorded and counted apart from what it answered before.
  static OracleStack over(Oracle<T>& given) { return OracleStack(given); }
  // The same stack with a checkpoint on its source (checkpoint.hpp): the
  // journal's answers first, then the source's, each appended to it, with
  // its stated error when `errors` (the floats' judge reads them). Before
  // recorded(); null: unchanged.
  OracleStack checkpointed(CheckpointJournal* j, bool errors) && {
    if (!j) return std::move(*this);
    if (rec_) throw_internal("oracle stack: a checkpoint goes below the record");
    ck_ = std::make_unique<CheckpointOracle<T>>(*source_, errors ? errors_ : nullptr, *j);
    source_ = ck_.get();
    errors_ = ck_.get();
    return std::move(*this);
  }
  // The same stack with every query and answer from here on recorded:
  // top() is then the record.
  OracleStack recorded() && {
    if (!rec_) rec_ = std::make_unique<RecordingOracle<T>>(*source_);
    return std::move(*this);
  }

  // What the learner is given: the record when there is one, else the source.
  Oracle<T>& top() { return rec_ ? static_cast<Oracle<T>&>(*rec_) : *source_; }
  // The source alone: its queries() count what was asked of the model or process.
  Oracle<T>& source() { return *source_; }
  // The queries and answers in the order asked; Error(internal) unless recorded().
  const RecordingOracle<T>& record() const {
    if (!rec_) throw_internal("oracle stack: no record was asked for");
    return *rec_;
  }
  // The source's statement of each answer's error (the float judge reads it);
  // null for an oracle handed in.
  const AnswerErrors* errors() const { return errors_; }
  // The bound in force of an external source; Error(internal) for another source.
  const ErrorStatement& external_bound() const {
    if (!bound_) throw_internal("oracle stack: not an external oracle");
    return *bound_;
  }

 private:
  explicit OracleStack(std::unique_ptr<Oracle<T>> owned) : owned_(std::move(owned)), source_(owned_.get()) {}
  explicit OracleStack(Oracle<T>& given) : source_(&given) {}
  template <class O>
  static OracleStack with_errors(std::unique_ptr<O> o) {
    const AnswerErrors* e = o.get();
    OracleStack out(std::move(o));
    out.errors_ = e;
    return out;
  }
  std::unique_ptr<Oracle<T>> owned_;  // on the heap, so the record's reference survives a move
  Oracle<T>* source_ = nullptr;
  std::unique_ptr<CheckpointOracle<T>> ck_;
  std::unique_ptr<RecordingOracle<T>> rec_;
  const ErrorStatement* bound_ = nullptr;
  const AnswerErrors* errors_ = nullptr;
};

}  // namespace mhaq
