#pragma once
// Writing an output file whole or not at all: the bytes go to a temporary file
// beside the target, which is renamed over it only once everything is written.
#include <functional>
#include <ostream>
#include <string>

namespace attn {

/// Calls write(stream) on a temporary file in path's directory, then renames it
/// to `path`. If write throws or any byte cannot be written, the temporary file
/// is removed, `path` is left as it was, and attn::error names `what` (e.g.
/// "--out out.json") and the reason.
void write_file_atomically(const std::string& path, const std::string& what,
                           const std::function<void(std::ostream&)>& write);

/// The same for writers that open the file themselves (minizip opens by name):
/// write(temp_path) gets the name of an empty temporary file beside `path`, must
/// write it completely and close it, and throws attn::error if it cannot. Then
/// the temporary file is renamed to `path`; on any failure it is removed and
/// `path` is left as it was.
void write_file_atomically_at(const std::string& path, const std::string& what,
                              const std::function<void(const std::string& temp_path)>& write);

}  // namespace attn
