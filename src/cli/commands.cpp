#include "commands.hpp"

#include <iostream>

namespace mhaq::cli {

Command make_generate();
Command make_recover();
Command make_demo();
Command make_golden();
Command make_prove();
Command make_verify();
Command make_convert();
Command make_sweep();
Command make_check_certificate();
Command make_baseline();
Command make_compare();
Command make_oracle();

std::vector<Command> all_commands() {
  return {make_generate(), make_recover(), make_demo(), make_golden(), make_prove(), make_verify(), make_convert(), make_sweep(), make_check_certificate(), make_baseline(), make_compare(), make_oracle()};
}

std::string json_text(const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

void emit(bool json, const nlohmann::json& j, const std::string& human) {
  if (json) std::cout << json_text(j) << "\n";
  else std::cout << human;
  std::cout.flush();
}

}  // namespace mhaq::cli
