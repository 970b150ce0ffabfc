// mhaq's public entry points in one include (the installed package's
// umbrella header; docs/library.md).
//
//  * model:   Model, HeadQ (exact rational W_h, v_h), canonical(), model files
//             (model_from_json_text, read_model_file), generate_model
//  * oracle:  Oracle<T>, the black box the learner sees (query -> f at the final
//             token, counted); ModelOracle<T> answers from a hidden Model
//             (OracleStack<T> builds it, with a record of the answers);
//             evaluate_exact / evaluate_ball evaluate f directly
//  * learner: learn<T>(Oracle<T>&, LearnOptions) over T = QTau (exact),
//             Ball (Arb), Mpfr, double; learner_plan lists its queries
//  * recover: recover_run(Model, RecoverOptions) -> the typed run record
//             (run/run_result.hpp; the driver behind `mhaq recover`), recover()
//             the same; record_json writes it (run/record_json.hpp), exact_heads_match,
//             ball_heads_contain
//  * golden:  golden_export / golden_check (tests/golden/SCHEMA.md)
//  * studies: verify (claims table), sweep_run (precision-loss grid), both
//             distributed over threads and MPI ranks (base/distribute.hpp)
#pragma once

#include "mhaq/arith/field.hpp"
#include "mhaq/arith/numbers.hpp"
#include "mhaq/arith/rational.hpp"
#include "mhaq/base/distribute.hpp"
#include "mhaq/base/error.hpp"
#include "mhaq/model/model.hpp"
#include "mhaq/oracle/model_oracle.hpp"
#include "mhaq/oracle/oracle_stack.hpp"
#include "mhaq/stages/1-oracle/oracle.hpp"
#include "mhaq/stages/learner.hpp"
#include "mhaq/evidence/golden.hpp"
#include "mhaq/run/record_json.hpp"
#include "mhaq/run/recover.hpp"
#include "mhaq/evidence/sweep.hpp"
#include "mhaq/evidence/verify.hpp"
