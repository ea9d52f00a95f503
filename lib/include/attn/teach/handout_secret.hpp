#pragma once
// Grading with the class secret a hand-out was made with. A hand-out's exercise.json
// carries the secret's fingerprint (exercise.hpp: secret_fingerprint), or null when it
// was made without a secret. An answer saved beside it (DIR/answer.npy) is graded only
// when the secret in use agrees: with another secret, or none, every student's numbers
// would differ, and every answer would fail as "unknown".
#include <cstdint>
#include <optional>
#include <string>

#include "attn/io/tensor_file.hpp"
#include "attn/teach/exercise.hpp"

namespace attn {

/// The most a --secret FILE may hold: a class secret is a line of text.
inline constexpr std::uint64_t max_secret_bytes = std::uint64_t{64} << 10;

/// The message when the hand-out beside `answer_path` (the exercise.json in its folder,
/// if it is this exercise's hand-out and says) was made with another class secret than
/// the variant's, or with one where the variant has none, or without one where it has
/// one. nullopt when they agree, or when there is no such hand-out to tell (none there,
/// not this exercise's, made before fingerprints, not JSON: the grading goes on). The
/// exercise.json is read within `budget` (the run's --max-memory, as every file attn reads;
/// over_budget names it) and only its "id" and "secret_fingerprint" are kept of its tree.
std::optional<std::string> handout_secret_mismatch(const exercise_variant& v, const std::string& answer_path,
                                                   const read_budget* budget = nullptr);

}  // namespace attn
