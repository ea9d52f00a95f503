// The library changes no environment variable: threads and OpenBLAS defaults are the attn
// program's business (app/startup.cpp), not of every program that links libattn.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>

#include "attn/compute/threads.hpp"
#include "support.hpp"

namespace {

/// `name`'s value in the environment this process was started with (/proc/self/environ, which
/// setenv does not change), or nullopt.
std::optional<std::string> started_with(const std::string& name) {
    std::ifstream file("/proc/self/environ", std::ios::binary);
    const std::string all((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    for (std::size_t at = 0; at < all.size();) {
        const std::size_t end = all.find('\0', at);
        const std::string entry = all.substr(at, end - at);
        if (entry.compare(0, name.size() + 1, name + "=") == 0) return entry.substr(name.size() + 1);
        if (end == std::string::npos) break;
        at = end + 1;
    }
    return std::nullopt;
}

}  // namespace

TEST_SUITE("threads") {
    TEST_CASE("linking libattn leaves the environment as the process was started with") {
        attn::thread_count();  // whatever the library does when first used
        for (const char* name : {"OPENBLAS_NUM_THREADS", "OPENBLAS_THREAD_TIMEOUT", "OMP_WAIT_POLICY", "OMP_NUM_THREADS"}) {
            CAPTURE(name);
            const char* now = std::getenv(name);
            const std::optional<std::string> before = started_with(name);
            CHECK(before.has_value() == (now != nullptr));
            if (before && now) CHECK(*before == now);
        }
    }

    TEST_CASE("the user's OpenBLAS thread count is read from the environment unless the program said") {
        const bool from_environment =
            std::getenv("OPENBLAS_NUM_THREADS") != nullptr || std::getenv("OMP_NUM_THREADS") != nullptr;
        CHECK(attn::blas_threads_chosen_by_user() == from_environment);
        attn::set_blas_threads_chosen_by_user(!from_environment);
        CHECK(attn::blas_threads_chosen_by_user() == !from_environment);
        attn::set_blas_threads_chosen_by_user(from_environment);
    }
}
