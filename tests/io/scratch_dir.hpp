#pragma once
// Test helper shared by the file suites: a fresh folder for a test, removed at its end.
#include <unistd.h>

#include <cstddef>
#include <filesystem>
#include <iterator>
#include <string>

/// $TMPDIR/attn-test-<suite>-<pid>, made empty, and removed when this goes out of scope.
struct scratch_dir {
    std::filesystem::path path;

    explicit scratch_dir(const std::string& suite)
        : path(std::filesystem::temp_directory_path() / ("attn-test-" + suite + "-" + std::to_string(getpid()))) {
        std::filesystem::remove_all(path);
        std::filesystem::create_directories(path);
    }
    ~scratch_dir() { std::filesystem::remove_all(path); }
    scratch_dir(const scratch_dir&) = delete;
    scratch_dir& operator=(const scratch_dir&) = delete;

    std::string operator/(const std::string& name) const { return (path / name).string(); }
    std::size_t entries() const {
        return static_cast<std::size_t>(std::distance(std::filesystem::directory_iterator(path), {}));
    }
    /// The `.attn-XXXXXX` temporaries (output_file.hpp) in the folder.
    std::size_t temporaries() const {
        std::size_t n = 0;
        for (const auto& e : std::filesystem::directory_iterator(path))
            n += e.path().filename().string().rfind(".attn-", 0) == 0;
        return n;
    }
};
