#pragma once
// Writing an output file whole or not at all, for writers that take a stream: an
// output_file (output_file.hpp) opened, written and committed in one call.
#include <functional>
#include <ostream>
#include <string>

namespace attn {

/// Calls write(stream) on the output_file for `path` and commits it. If write throws
/// or any byte cannot be written, `path` is left as it was, no temporary file stays,
/// and attn::error names `what` (e.g. "--out out.json") and the reason.
void write_file_atomically(const std::string& path, const std::string& what,
                           const std::function<void(std::ostream&)>& write);

}  // namespace attn
