// Text that mhaq echoes back to the user: every message quotes input through
// these helpers, so a message is valid UTF-8 (and so can be dumped as JSON)
// and never longer than a line or two, whatever the input held.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace mhaq {

// Characters of input a message quotes at most.
inline constexpr std::size_t quote_chars = 80;

// s with every byte that is not part of valid, printable UTF-8 (control
// characters, invalid or overlong sequences, surrogates) written as \xNN.
std::string clean_text(std::string_view s);

// s in double quotes, cleaned as above, with '"' and '\' escaped, cut to
// about `max` characters; a cut string ends in ..." and states its length:
// "12345678...", 50000000 characters.
std::string quote_text(std::string_view s, std::size_t max = quote_chars);

}  // namespace mhaq
