// The folder a student gets (exercise_folder.hpp).
#include "attn/render/exercise_folder.hpp"

#include <functional>
#include <string>

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
    const auto write = [&](const std::string& name, const std::function<void(std::ostream&)>& contents) {
        output_file file(folder, name, what + ": " + name);
        contents(file.stream());
        file.commit();
    };
    for (const given_tensor& g : v.given) {
        const xt::xarray<float> values = g.values.values;  // row-major
        const std::vector<std::size_t> shape(values.shape().begin(), values.shape().end());
        const bool boolean = g.values.type == element_type::boolean;
        write(g.name + ".npy", [&](std::ostream& out) {
            write_npy(values.data(), shape, boolean, [&out](const char* bytes, std::size_t size) {
                out.write(bytes, static_cast<std::streamsize>(size));
            });
        });
        write(g.name + ".json", [&](std::ostream& out) { write_nested_lists(g.values, out); });
    }
    write("task.md", [&](std::ostream& out) { render_exercise_task_md(v, out); });
    write("exercise.json", [&](std::ostream& out) { render_exercise_json(v, out); });
}

}  // namespace attn
