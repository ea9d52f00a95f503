#pragma once
// `attn exercise show N --out DIR`: the folder a student gets.
//   DIR/<name>.npy   each given tensor (np.load), float32 or bool
//   DIR/<name>.json  the same as nested lists, as tensor.tolist() (json.load; attn --input reads it)
//   DIR/task.md      the task to read (render_exercise_task_md)
//   DIR/exercise.json  the whole exercise as `show --format json` prints it (for graders' scripts)
// Each file is written whole or not at all; DIR is made when missing. No symbolic link in
// DIR's path is followed (folder_without_links.hpp); what a student planted in DIR under a
// file's name is replaced, except a read-only file, which is refused (output_file.hpp) before
// any file of the folder is written.
#include <ostream>
#include <string>

#include "attn/compute/tensor.hpp"
#include "attn/teach/exercise.hpp"

namespace attn {

/// Writes the folder; errors name `what` ("--out class/alice") and the file.
void write_exercise_folder(const exercise_variant& v, const std::string& dir, const std::string& what);

/// A tensor's elements as nested JSON lists, as tensor.tolist() gives them: floats
/// in their shortest float32 form, "nan"/"inf"/"-inf" as strings, booleans as true/false.
void write_nested_lists(const tensor& t, std::ostream& out);

}  // namespace attn
