#pragma once
// The "data" of a JSON tensor: its elements as nested arrays, as tensor.tolist() nests
// them. Most of a large JSON run is this text (docs/speed.md), so blocks of rows are
// formatted on every core and written in order: the same bytes whatever the thread
// count. A write error stops the blocks not yet written and is thrown.
#include <cstddef>
#include <ostream>

#include "attn/compute/tensor.hpp"

namespace attn {

/// Writes the elements of `shape`, element (i0, i1, ...) at first[i0*strides[0] + i1*strides[1] ...],
/// as nested JSON arrays: each float32 in the fewest digits that read back as the same float,
/// "nan", "inf" and "-inf" as strings, booleans as true/false. `threads` 0: thread_count() (threads.hpp).
void write_json_data(const float* first, const tensor_shape& shape, const tensor_strides& strides, bool boolean,
                     std::ostream& out, unsigned threads = 0);

/// Rows [first_row, first_row + count) of a tensor of `shape` ([.., width]; no size 0),
/// given as `count` rows of width elements one after another: the part of
/// write_json_data's text those rows make. A tensor handed on a block of rows at a time
/// (stage_sink.hpp) is written block by block into the same text: row 0 opens the
/// nesting, the last row closes it.
void write_json_rows(const float* rows, std::size_t first_row, std::size_t count, const tensor_shape& shape,
                     bool boolean, std::ostream& out, unsigned threads = 0);

}  // namespace attn
