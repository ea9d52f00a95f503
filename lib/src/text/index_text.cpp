#include "attn/text/index_text.hpp"

namespace attn {

std::string tensor_index_text(const std::vector<std::size_t>& shape_or_index) {
    std::string text = "[";
    for (std::size_t i = 0; i < shape_or_index.size(); ++i) text += (i ? "," : "") + std::to_string(shape_or_index[i]);
    return text + "]";
}

std::string element_index_text(const std::vector<std::size_t>& index) {
    std::string text;
    for (const std::size_t i : index) text += "[" + std::to_string(i) + "]";
    return text;
}

}  // namespace attn
