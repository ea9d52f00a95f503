#pragma once
// The parts of --format table, split by what each decides (render_table.cpp
// puts them together):
//   numbers (table_numbers.cpp): one notation for all the float tensors of a stage;
//   layout and labels (table_tensor.cpp): one tensor as labelled 2-D slices, in
//       column widths shared by the tensors of its stage.
#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "attn/render/render_options.hpp"
#include "attn/render/text_headings.hpp"
#include "attn/render/selection.hpp"
#include "attn/render/torch_format.hpp"
#include "attn/compute/tensor_stats.hpp"
#include "attn/compute/trace.hpp"

namespace attn::table {

/// ANSI codes, or empty strings when colour is off, so no caller has to branch.
using palette = heading_style;

void write_spaces(std::ostream& out, std::size_t n);

/// `text` right-aligned in `width` columns, coloured when `colour` is not empty.
/// The padding stays outside the escape codes so widths are counted in visible characters.
void write_right(std::ostream& out, std::string_view text, std::size_t width, std::string_view colour,
                 const palette& p);

/// `text` left-aligned in `width` columns (row labels).
void write_left(std::ostream& out, std::string_view text, std::size_t width, std::string_view colour,
                const palette& p);

/// Whether an axis runs over the tokens, so that --vocab's labels name its indices.
inline bool token_axis(std::string_view dim) { return dim == "query" || dim == "key" || dim == "seq" || dim == "kv_seq"; }

/// Visible width of UTF-8 text (each code point one column: "√dk" is 3).
std::size_t text_width(std::string_view text);

// --- numbers -------------------------------------------------------------------------

/// How the table writes the float numbers of one stage.
struct stage_numbers {
    number_format format;            // fixed, or scientific; options.precision digits
    std::optional<float> fill;       // masked stage: the fill, which marks the removed entries (dim)
    bool fill_as_text = false;       // a finite fill prints as the user typed it, fill_text
    std::string fill_text;           // "-1e9"
    std::string note;                // why scientific ("some values are below 0.00005"), or empty
};

/// The finite nonzero values a stage will print, as far as the notation rule cares.
class notation_survey {
public:
    void add(float v);
    /// Fixed notation with options.precision digits, unless a nonzero value
    /// would print as 0.0000 or one is too large for a sane width (|v| >= 1e8),
    /// then scientific with a note saying why; options.notation on/off forces it.
    stage_numbers decide(const render_options& options) const;

private:
    double lo_ = -1.0;  // the smallest |v| seen, or -1 before any
    double hi_ = 0.0;   // the largest |v| seen
};

/// The text of one value in `f` (the stage's notation, or True/False), or the fill as typed.
std::string_view value_text(float v, const number_format& f, const stage_numbers& n, char* buf);

/// Whether a value carries no information for attention (printed faint): False in a mask,
/// -inf, and the fill where the mask removed a key.
bool faint_value(float v, const number_format& f, const stage_numbers& n);

/// The stage's notation over every printed value of its float tensors (read through
/// `grids`, one each), leaving out the fill of a masked stage (printed as typed).
stage_numbers choose_stage_numbers(const stage& s, const std::vector<element_grid>& grids, const config& c,
                                   const render_options& options);

// --- layout and labels -------------------------------------------------------------------

/// The widths shared by the tensors of a stage, so their columns line up.
struct column_widths {
    std::size_t label = 0;  // the row-label column
    std::size_t value = 0;  // every value column
};

/// Prints one tensor, its values read through `grid` (printing_grid's): its header line,
/// then its values as labelled 2-D slices; a [B,S,H,dk] tensor (view, merge) as one
/// [S, H·dk] table per batch item, the heads' columns side by side between "│".
class tensor_printer {
public:
    /// `tokens` (--vocab with --tokens: run_sources::token_labels) label the token axes (query, key,
    /// seq, kv_seq) "query The" instead of "query 0"; null or empty: numbers.
    tensor_printer(const tensor& t, element_grid grid, const stage_numbers& numbers, const render_options& options,
                   const palette& p, const std::vector<std::string>* tokens = nullptr);
    /// The widths this tensor needs on its own.
    column_widths widths() const { return widths_; }
    /// Prints in `w`, which must be at least widths().
    void print(std::ostream& out, column_widths w);
    /// --stats on weights: each printed row followed by its entropy and largest weight (`s` outlives print()).
    void show_row_stats(const tensor_stats* s) { row_stats_ = s; }

private:
    std::string dim_name(std::size_t axis) const;
    /// "query 3", or "query Ġrobot" for a token axis with labels.
    std::string index_label(std::string_view dim, std::size_t index) const;
    std::size_t rank() const { return grid_.shape.size(); }
    bool labelled(std::size_t axis) const;
    void measure();
    void measure_side_by_side();
    void print_side_by_side(std::ostream& out) const;
    template <class Cell>
    void across_heads(std::ostream& out, Cell&& cell) const;
    template <class Cell>
    void across_head_dims(std::ostream& out, Cell&& cell) const;
    void print_header(std::ostream& out) const;
    void print_layout(std::ostream& out) const;
    void print_leading(std::ostream& out, std::size_t axis, std::vector<std::size_t>& index,
                       std::ptrdiff_t base) const;
    void print_skipped(std::ostream& out, std::size_t axis, const std::vector<std::size_t>& index,
                       std::size_t first, std::size_t last) const;
    void print_slice(std::ostream& out, const std::vector<std::size_t>& index, std::ptrdiff_t base) const;
    void print_column_labels(std::ostream& out) const;
    void print_row(std::ostream& out, std::string_view label, std::ptrdiff_t base,
                   const std::vector<std::size_t>* index = nullptr, std::size_t row = 0) const;
    void print_value(std::ostream& out, float v, std::size_t width) const;

    const tensor& t_;
    const palette& p_;
    const stage_numbers& numbers_;
    tensor_selection selection_;  // the part the views show (--batch-index, --head, --row)
    bool summarise_;
    element_grid grid_;
    number_format format_;    // numbers_.format, or True/False for a boolean tensor
    bool broadcast_head_;     // a boolean [.., head=1, ..]: the same for every head, so no "head=0"
    bool side_by_side_;       // [B,S,H,dk]: one [S, H·dk] table per batch item
    column_widths widths_;    // what the tensor needs
    column_widths used_;      // what print() was given
    const std::vector<std::string>* tokens_;  // the tokens' labels, or null
    const tensor_stats* row_stats_ = nullptr;  // --stats on weights: each row's entropy and largest weight
    int precision_;
};

}  // namespace attn::table
