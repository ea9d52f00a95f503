#pragma once
// The errors attn reports to its user, as `attn: error: <message>` (a message names the flag
// or file and quotes the values): usage_error exits 2, any other 1 (CLI.md, "Errors and exit codes").
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
