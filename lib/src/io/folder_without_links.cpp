#include "attn/io/folder_without_links.hpp"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attn/compute/error.hpp"

namespace attn {
namespace {

int open_component(int at, const std::string& name) {
    return openat(at, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

bool is_link(int at, const std::string& name) {
    struct stat st {};
    return fstatat(at, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
}

}  // namespace

folder_without_links::folder_without_links(const std::string& path, const std::string& what) : path_(path) {
    if (path.empty()) throw error(what + ": an empty folder name");
    fd_ = open(path.front() == '/' ? "/" : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd_ < 0) throw error(what + ": " + std::strerror(errno));
    try {
        walk(path, what);
    } catch (...) {
        close(fd_);
        throw;
    }
}

void folder_without_links::walk(const std::string& path, const std::string& what) {
    std::string walked = path.front() == '/' ? "/" : "";  // the path up to the component, for messages
    for (std::size_t start = 0; start < path.size();) {
        std::size_t end = path.find('/', start);
        if (end == std::string::npos) end = path.size();
        const std::string name = path.substr(start, end - start);
        start = end + 1;
        if (name.empty() || name == ".") continue;
        walked += (walked.empty() || walked.back() == '/' ? "" : "/") + name;
        int next = open_component(fd_, name);
        if (next < 0 && errno == ENOENT) {
            if (mkdirat(fd_, name.c_str(), 0777) != 0 && errno != EEXIST)
                throw error(what + ": cannot make the folder " + walked + ": " + std::strerror(errno));
            next = open_component(fd_, name);
        }
        if (next < 0) {
            const int code = errno;
            if (code == ELOOP || (code == ENOTDIR && is_link(fd_, name)))
                throw error(what + ": " + walked +
                            " is a symbolic link; a hand-out is written only through real folders, so that a link "
                            "planted in a student's folder cannot send it elsewhere: give the path without links");
            if (code == ENOTDIR) throw error(what + ": " + walked + " is not a folder");
            throw error(what + ": " + walked + ": " + std::strerror(code));
        }
        close(fd_);
        fd_ = next;
    }
}

folder_without_links::~folder_without_links() {
    if (fd_ >= 0) close(fd_);
}

}  // namespace attn
