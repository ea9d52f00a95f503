#pragma once
// A float32 as the shortest decimal text that reads back as the same float: the text
// std::to_chars(first, last, v) writes, byte for byte, in about 0.8 of its time (21 ns
// against 26 ns for a softmax weight on the README's machine). Most of a large JSON run
// is this text (README "Speed").
//
// Digits by Schubfach (Raffaello Giulietti, "The Schubfach way to render doubles", 2020),
// for float32 with 64-bit powers of ten; then printf's %f or %e, whichever is shorter
// (%f on a tie), as std::to_chars chooses. Checked against std::to_chars for every one of
// the 2^32 floats once (tests/render/test_shortest_float.cpp says how), and for a sample
// of them and the edge cases in every test run.
#include <cstddef>

namespace attn {

/// The longest text: "-1.17549435e-38".
constexpr int shortest_float_max_chars = 15;
/// The room write_shortest_float needs at `p`: it stores whole words, and may write
/// (garbage) up to this far past `p` whatever the text's length.
constexpr int shortest_float_room = 20;

/// Writes finite `v` at `p` (room for shortest_float_room), returns the end of the text.
/// Not for NaN or infinities.
char* write_shortest_float(char* p, float v);

/// How write_shortest_floats makes the digits: one float at a time, or 8 in the lanes of
/// an AVX2 vector (then the text of each). The same bytes; the test runs both.
enum class float_text_kernel { plain, avx2 };
bool float_text_kernel_runs_here(float_text_kernel kernel);

/// Writes finite v[0], ..., v[count - 1], each followed by `separator`, as
/// write_shortest_float does, returns the end. Room: count * (shortest_float_max_chars + 1)
/// + shortest_float_room. With AVX2 where the CPU has it: about 3 times as fast.
char* write_shortest_floats(char* p, const float* v, std::size_t count, char separator);
char* write_shortest_floats(char* p, const float* v, std::size_t count, char separator, float_text_kernel kernel);

}  // namespace attn
