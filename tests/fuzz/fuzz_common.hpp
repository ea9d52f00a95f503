#pragma once
// What every harness shares: the one rule (attn::error is a user's answer, anything
// else escaping a reader is a finding) and a file for the readers that open by name.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include <unistd.h>

#include "attn/compute/error.hpp"

namespace attn_fuzz {

/// Runs `read`; attn::error (a message for the user) is fine, every other exception is
/// a finding: abort, so libFuzzer keeps the input (std::length_error or nlohmann's own
/// exceptions would reach the user as a message that names no file).
template <class Read>
void expect_attn_errors_only(Read&& read) {
    try {
        read();
    } catch (const attn::error&) {
    } catch (const std::exception& e) {
        std::fprintf(stderr, "attn_fuzz: a non-attn exception escaped: %s\n", e.what());
        std::abort();
    }
}

/// A file that holds the input, for readers that take a path (minizip opens by name).
/// On tmpfs when there is one; one per process, rewritten for every input.
inline std::string write_input_file(const std::uint8_t* data, std::size_t size, const char* extension) {
    static const std::string dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    const std::string path = dir + "/attn-fuzz-" + std::to_string(getpid()) + extension;
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr || std::fwrite(data, 1, size, f) != size || std::fclose(f) != 0) {
        std::perror(path.c_str());
        std::abort();
    }
    return path;
}

}  // namespace attn_fuzz
