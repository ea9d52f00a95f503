#pragma once
// One exception type for everything attn reports to its user.
//
// Messages name the flag or file involved and quote the values and shapes, e.g.
//   --d-model 10 is not divisible by --heads 4
// The program prints them as `attn: error: <message>`: usage_error exits 2,
// any other error exits 1 (CLI.md, "Errors and exit codes").
#include <stdexcept>
#include <string>

namespace attn {

/// A failure with a message meant for the user (a file that cannot be read, ...).
class error : public std::runtime_error {
public:
    explicit error(const std::string& message) : std::runtime_error(message) {}
};

/// The flags contradict each other or ask for something impossible.
class usage_error : public error {
public:
    explicit usage_error(const std::string& message) : error(message) {}
};

}  // namespace attn
