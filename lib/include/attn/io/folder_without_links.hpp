#pragma once
// A folder that someone else may write into (a student's hand-out folder): opened one
// component at a time with openat(O_NOFOLLOW | O_DIRECTORY), each missing one made with
// mkdirat, so that no symbolic link anywhere in the path is followed, even one planted
// between a check and the write. The files are then written relative to the descriptor
// (output_file's folder constructor), never through the path again.
#include <string>

namespace attn {

class folder_without_links {
public:
    /// Opens (making what is missing) `path`; a component that is a symbolic link is
    /// "<what>: <the path up to it> is a symbolic link; ...", one that is not a folder
    /// "<what>: <the path up to it> is not a folder".
    folder_without_links(const std::string& path, const std::string& what);
    ~folder_without_links();
    folder_without_links(const folder_without_links&) = delete;
    folder_without_links& operator=(const folder_without_links&) = delete;

    int fd() const { return fd_; }
    /// The path as given, for messages and the list of temporary files.
    const std::string& path() const { return path_; }

private:
    void walk(const std::string& path, const std::string& what);  // from fd_, the start
    int fd_ = -1;
    std::string path_;
};

}  // namespace attn
