#include "attn/io/answer_file.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "attn/compute/error.hpp"
#include "attn/io/npy.hpp"
#include "attn/io/npz.hpp"
#include "attn/text/printable_text.hpp"

namespace attn {
namespace {

/// The member of an .npz answer and its shape, from the headers alone: its only array; else
/// "<stage>.<tensor>"; else, without a tensor, the first "<stage>." one (the stage's first tensor,
/// in the order a dump writes them).
std::pair<std::string, std::vector<std::size_t>> answer_member(const std::string& path, const std::string& what,
                                                               const std::string& stage, const std::string& tensor) {
    const auto shapes = npz_array_shapes(path, what);
    if (shapes.size() == 1) return shapes.front();
    const std::string prefix = stage + ".";
    std::vector<const std::pair<std::string, std::vector<std::size_t>>*> fitting;
    for (const auto& member : shapes)
        if (tensor.empty() ? member.first.compare(0, prefix.size(), prefix) == 0 : member.first == prefix + tensor)
            fitting.push_back(&member);
    // without --tensor the stage's first, as a dump writes a stage's tensors in its order (projections.q)
    if (fitting.size() == 1 || (tensor.empty() && !fitting.empty())) return *fitting.front();
    std::string names;
    for (std::size_t i = 0; i < shapes.size() && i < 5; ++i)
        names += (i == 0 ? "" : ", ") + quoted_field(shapes[i].first, 40);
    if (shapes.size() > 5) names += ", ...";
    throw error(what + ": which array? it holds " + std::to_string(shapes.size()) +
                (shapes.empty() ? "" : " (" + names + ")") + "; keep one (np.savez(\"a.npz\", t)) or name it " +
                stage + "." + (tensor.empty() ? "TENSOR (with --tensor)" : tensor) + ", as --format npz dumps do");
}

}  // namespace

std::optional<std::vector<std::size_t>> answer_file_shape(const std::string& path, const std::string& what,
                                                          const std::string& stage, const std::string& tensor) {
    const std::string extension = file_extension(path);
    if (extension == ".npy") {
        const std::optional<npy_header> header = read_npy_file_header(path, what);  // nullopt: a FIFO
        return header ? std::optional<std::vector<std::size_t>>(header->shape) : std::nullopt;
    }
    if (extension == ".npz") return answer_member(path, what, stage, tensor).second;
    return std::nullopt;
}

loaded_tensor read_answer_file(const std::string& path, const std::string& what, const std::string& stage,
                               const std::string& tensor, read_budget* budget) {
    if (file_extension(path) != ".npz") return read_tensor_file(path, what, budget);
    const std::string chosen = answer_member(path, what, stage, tensor).first;
    std::map<std::string, loaded_tensor> arrays =
        read_npz(path, what, nullptr, [&](const std::string& name) { return name == chosen; }, budget);
    if (arrays.empty()) throw error(what + ": " + quoted_field(chosen) + " is not an array of numbers (a string member)");
    return std::move(arrays.begin()->second);
}

}  // namespace attn
