// The one place where a run's record (run/run_result.hpp) becomes JSON, and
// where a record that crossed a process boundary as JSON (verify's trial
// records) is read back. Nothing else builds or reads a run record's JSON.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mhaq/run/run_result.hpp"

namespace mhaq {

// The record as JSON: each set field under its name (keys in the order
// nlohmann::json keeps them, sorted), a number that is not finite as null.
nlohmann::json record_json(const RecoverResult& r);

// The record again, from JSON written by record_json: every key (a number
// written as null is read as absent). Error(input) for a document without a
// status or with an unknown name where an enumeration is written.
RecoverResult record_from_json(const nlohmann::json& doc);

// A value as the record's JSON writes it, for the human reports: a number
// (null when not finite), a list of strings, a matrix of strings, a list of
// integers.
std::string json_text(double x);
std::string json_text(const std::vector<std::string>& xs);
std::string json_text(const std::vector<std::vector<std::string>>& xs);
std::string json_text(const std::vector<long>& xs);

}  // namespace mhaq
