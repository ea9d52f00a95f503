#include "attn/io/atomic_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include "attn/compute/error.hpp"

namespace attn {
namespace {

std::string directory_of(const std::string& path) {
    const auto slash = path.find_last_of('/');
    if (slash == std::string::npos) return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

/// Creates an empty, uniquely named file beside `path`; returns its name.
std::string make_temporary_beside(const std::string& path, const std::string& what) {
    std::string name = path + ".tmp-XXXXXX";
    std::vector<char> buffer(name.begin(), name.end());
    buffer.push_back('\0');
    const int fd = mkstemp(buffer.data());
    if (fd < 0)
        throw error(what + ": cannot create a file in " + directory_of(path) + ": " + std::strerror(errno));
    // mkstemp makes the file private (0600); give it the mode a plain new file would get.
    const mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    close(fd);
    return buffer.data();
}

}  // namespace

void write_file_atomically_at(const std::string& path, const std::string& what,
                              const std::function<void(const std::string& temp_path)>& write) {
    const std::string temporary = make_temporary_beside(path, what);
    try {
        write(temporary);
        if (std::rename(temporary.c_str(), path.c_str()) != 0)
            throw error(what + ": cannot replace " + path + ": " + std::strerror(errno));
    } catch (...) {
        std::remove(temporary.c_str());
        throw;
    }
}

void write_file_atomically(const std::string& path, const std::string& what,
                           const std::function<void(std::ostream&)>& write) {
    write_file_atomically_at(path, what, [&](const std::string& temporary) {
        std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
        if (!file) throw error(what + ": cannot open " + temporary + " for writing");
        write(file);
        file.flush();
        if (!file) throw error(what + ": writing failed (" + std::strerror(errno) + ")");
        file.close();
        if (!file) throw error(what + ": writing failed (" + std::strerror(errno) + ")");
    });
}

}  // namespace attn
