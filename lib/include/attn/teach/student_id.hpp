#pragma once
// A student's ID (attn exercise --student ID): it goes into the seed of their numbers
// and names their folder, so it must be one that a teacher can type twice and get the
// same bytes, and that is safe as a file name.
#include <string>
#include <string_view>

namespace attn {

/// `given` checked and normalised, or usage_error naming --student. An ID is 1-64
/// characters of valid UTF-8:
///   - ASCII letters, digits and . _ - @ + (not . - @ or + first), so a login or an
///     e-mail address works: alice, a.martin-2, alice@uni.example;
///   - letters of other scripts, precomposed (NFC, as keyboards type them): zoë,
///     Jürgen, 王芳. A combining accent (e + U+0301) is refused, because the same name
///     typed precomposed would be other bytes and so other numbers;
///   - never spaces, controls, slashes, invisible or bidirectional marks.
/// An e-mail address (an ID with @) is lowercased, as mail is delivered whatever the
/// case; other IDs are kept as typed (alice and Alice are two students), so a
/// hand-out made before keeps its numbers.
std::string normalise_student_id(std::string_view given);

}  // namespace attn
