#pragma once
// Where attn's share files are (share/attn: the exercises, the JSON schema, the docs).
#include <string>
#include <vector>

namespace attn_app {

/// The folders to look in, first first: $ATTN_SHARE_DIR; the share/attn next to the
/// program's bin/ (an installed attn, wherever its prefix was moved: bin/attn ->
/// ../share/attn); the source tree's share/attn (attn run from its build tree); the
/// install prefix's share/attn (when /proc/self/exe cannot be read, as in a chroot
/// without /proc).
std::vector<std::string> share_dirs();

}  // namespace attn_app
