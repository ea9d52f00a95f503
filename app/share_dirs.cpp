// share_dirs.hpp. The two built-in folders are compile definitions of this file alone
// (CMakeLists.txt), so that a new install prefix recompiles nothing else.
#include "share_dirs.hpp"

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace attn_app {

std::vector<std::string> share_dirs() {
    std::vector<std::string> dirs;
    if (const char* env = std::getenv("ATTN_SHARE_DIR"); env != nullptr && *env != '\0') dirs.emplace_back(env);
    std::error_code ec;
    const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) dirs.push_back((exe.parent_path().parent_path() / "share" / "attn").string());
#ifdef ATTN_SOURCE_SHARE_DIR
    dirs.emplace_back(ATTN_SOURCE_SHARE_DIR);
#endif
#ifdef ATTN_INSTALL_SHARE_DIR
    dirs.emplace_back(ATTN_INSTALL_SHARE_DIR);
#endif
    return dirs;
}

}  // namespace attn_app
