#pragma once
// Text that JSON and .npz text members can hold: well-formed UTF-8. A name from the file
// system may hold any bytes (a folder named with byte 0xFF); nlohmann refuses to write them,
// and NumPy's "<U" strings are code points. Such a byte is written as Python's
// errors="backslashreplace" writes it, "\xff", so the name stays readable and nothing is lost
// from sight.
#include <string>
#include <string_view>

namespace attn {

/// Whether `text` is well-formed UTF-8 throughout.
bool is_utf8(std::string_view text);

/// `text` with each byte that starts no well-formed UTF-8 character written "\xff" (four
/// ASCII characters); well-formed text is returned as it is.
std::string utf8_escaped(std::string_view text);

}  // namespace attn
