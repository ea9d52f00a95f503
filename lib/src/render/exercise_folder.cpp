// The folder a student gets (exercise_folder.hpp).
#include "attn/render/exercise_folder.hpp"

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "attn/compute/error.hpp"
#include "attn/io/folder_without_links.hpp"
#include "attn/io/npy.hpp"
#include "attn/io/output_file.hpp"
#include "attn/render/json_numbers.hpp"
#include "attn/render/render_exercise.hpp"

namespace attn {

void write_nested_lists(const tensor& t, std::ostream& out) {
    write_json_data(t.values.data(), {t.values.shape().begin(), t.values.shape().end()}, t.strides,
                    t.type == element_type::boolean, out);
    out.put('\n');
}

void write_exercise_folder(const exercise_variant& v, const std::string& dir, const std::string& what) {
    // The student may write into their folder: no link in the path is followed (one planted
    // in a component would send the hand-out anywhere the teacher may write), and what they
    // put inside is replaced, never followed or written into.
    const folder_without_links folder(dir, what);
    using contents = std::function<void(std::ostream&)>;
    std::vector<std::pair<std::string, contents>> files;
    const auto write = [&](const std::string& name, contents c) { files.emplace_back(name, std::move(c)); };
    for (const given_tensor& g : v.given) {  // written later: each writer holds what it writes
        const bool boolean = g.values.type == element_type::boolean;
        write(g.name + ".npy", [&g, boolean](std::ostream& out) {
            const xt::xarray<float> values = g.values.values;  // row-major
            const std::vector<std::size_t> shape(values.shape().begin(), values.shape().end());
            write_npy(values.data(), shape, boolean, [&out](const char* bytes, std::size_t size) {
                out.write(bytes, static_cast<std::streamsize>(size));
            });
        });
        write(g.name + ".json", [&g](std::ostream& out) { write_nested_lists(g.values, out); });
    }
    write("task.md", [&](std::ostream& out) { render_exercise_task_md(v, out); });
    write("exercise.json", [&](std::ostream& out) { render_exercise_json(v, out); });
    // Every file opened before any is written: one that is refused (read-only, a directory)
    // refuses the hand-out with the folder as it was, never half one student's, half another's.
    std::vector<std::unique_ptr<output_file>> opened;
    for (const auto& [name, c] : files) opened.push_back(std::make_unique<output_file>(folder, name, what + ": " + name));
    for (std::size_t i = 0; i < files.size(); ++i) {
        files[i].second(opened[i]->stream());
        opened[i]->commit();
    }
}

}  // namespace attn
