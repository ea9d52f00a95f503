#pragma once
// Standard output that never fails silently: std::cout writes through an
// attn::fd_streambuf on descriptor 1, so a full disk or a closed pipe is noticed at
// the first lost byte, whatever the command and format.
#include <string>

#include "attn/io/output_file.hpp"

namespace attn_app {

/// Puts std::cout on the checked buffer, with exceptions(badbit): every write error
/// throws attn::write_error (fd 1).
void use_checked_standard_output();

/// Whether to colour what goes to standard output, for --color WHEN: "always", "never", or
/// "auto": only on a terminal, never with NO_COLOR set or TERM=dumb.
bool color_on_standard_output(const std::string& when);

/// Writes out what std::cout holds; throws attn::write_error.
void finish_standard_output();

/// Puts std::cout back on its own buffer (before main returns: the C++ runtime
/// flushes std::cout at exit, where a throw would abort).
void release_standard_output() noexcept;

/// The exit status for a write error, after saying so: a closed standard output pipe
/// ends quietly as SIGPIPE would (the process is killed by it: status 141, as in
/// `attn trace | head -1`); anything else is one `attn: error: ...` line and 1.
int report_write_error(const attn::write_error& e);

}  // namespace attn_app
