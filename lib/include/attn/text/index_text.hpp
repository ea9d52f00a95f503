#pragma once
// Shapes, indices and strides as text: "[2,3]" in attn's messages, "[0][1][3]" as Python
// indexes an element, "(40, 8, 2, 1)" as PyTorch prints t.stride().
#include <cstddef>
#include <string>
#include <vector>

namespace attn {

/// "[2,3]": a shape or an index as the messages write it ("[]" for none).
std::string tensor_index_text(const std::vector<std::size_t>& shape_or_index);

/// "[0][1][3]": an element's index, like Python's t[0][1][3].
std::string element_index_text(const std::vector<std::size_t>& index);

/// "(40, 8, 2, 1)", "(4,)", "()": numbers as a Python tuple, as PyTorch prints t.stride()
/// and t.shape and NumPy writes an .npy header's shape.
template <class Numbers>
std::string python_tuple(const Numbers& numbers) {
    std::string text = "(";
    for (std::size_t a = 0; a < numbers.size(); ++a) text += (a ? ", " : "") + std::to_string(numbers[a]);
    return text + (numbers.size() == 1 ? ",)" : ")");
}

}  // namespace attn
