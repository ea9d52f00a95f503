// JSON nested arrays -> loaded_tensor (json_tensor.hpp): a fast reader for what
// json.dump writes, nlohmann's SAX parser for everything else, and one tensor_builder
// behind both, so either path gives the same tensors and the same messages.
#include "attn/io/json_tensor.hpp"

#include "attn/io/json_document.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <strings.h>

#include "attn/compute/error.hpp"
#include "attn/text/index_text.hpp"

namespace attn {
namespace {

using json = nlohmann::json;

constexpr float inf = std::numeric_limits<float>::infinity();
constexpr std::size_t max_axes = 64;  // deeper nesting is an error, never a deep recursion

/// "nan", "inf", "-inf", "+inf", "infinity", ... in any case; false for anything else.
bool non_finite_word(const std::string& s, float& value) {
    const bool signed_word = !s.empty() && (s[0] == '-' || s[0] == '+');
    const float sign = !s.empty() && s[0] == '-' ? -1.0f : 1.0f;
    const char* w = s.c_str() + (signed_word ? 1 : 0);
    if (strcasecmp(w, "inf") == 0 || strcasecmp(w, "infinity") == 0) value = sign * inf;
    else if (strcasecmp(w, "nan") == 0) value = std::numeric_limits<float>::quiet_NaN();
    else return false;
    return true;
}

// ----------------------------------------------------------------------------
// Python's bare NaN, Infinity, -Infinity (json.dump's allow_nan) are not JSON, so
// they are quoted before nlohmann sees them. An overflowing number (1e999, which
// Python reads as inf) is quoted as "inf"/"-inf" likewise. The edits are kept so a
// syntax error's position can be mapped back to the user's text.

/// 16 bytes, so that a file of millions of bare NaN needs less for its edits than for its text.
struct edit {
    enum kind_t : std::uint8_t { nan, infinity, minus_infinity, inf, minus_inf };
    std::uint64_t at;      // in the original text
    std::uint32_t length;  // of the original token
    kind_t kind;

    std::string_view replacement() const {
        static constexpr std::string_view quoted[] = {"\"NaN\"", "\"Infinity\"", "\"-Infinity\"", "\"inf\"", "\"-inf\""};
        return quoted[kind];
    }
};

std::size_t skip_string(const std::string& s, std::size_t i) {  // i at the opening quote
    for (++i; i < s.size(); ++i) {
        if (s[i] == '\\') ++i;
        else if (s[i] == '"') return i + 1;
    }
    return s.size();
}

bool is_number_char(char c) {
    return (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-';
}

/// Does the number token overflow a double? Only long tokens or big exponents can.
bool overflows_double(const char* token, std::size_t length) {
    const char* e = std::find_if(token, token + length, [](char c) { return c == 'e' || c == 'E'; });
    const bool big_exponent = e + 1 < token + length && std::strtol(e + 1, nullptr, 10) > 300;
    if (!big_exponent && length < 300) return false;
    return std::isinf(std::strtod(std::string(token, length).c_str(), nullptr));
}

/// Calls add(edit) for each edit of `s`, in order.
template <class Add>
void for_each_edit(const std::string& s, const Add& add) {
    for (std::size_t i = 0; i < s.size();) {
        const char c = s[i];
        if (c == '"') {
            i = skip_string(s, i);
        } else if (c == 'N' && s.compare(i, 3, "NaN") == 0) {
            add(edit{i, 3, edit::nan});
            i += 3;
        } else if (c == 'I' && s.compare(i, 8, "Infinity") == 0) {
            add(edit{i, 8, edit::infinity});
            i += 8;
        } else if (c == '-' && s.compare(i, 9, "-Infinity") == 0) {
            add(edit{i, 9, edit::minus_infinity});
            i += 9;
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            std::size_t end = i + 1;
            while (end < s.size() && is_number_char(s[end])) ++end;
            if (end - i <= UINT32_MAX && overflows_double(s.data() + i, end - i))
                add(edit{i, static_cast<std::uint32_t>(end - i), c == '-' ? edit::minus_inf : edit::inf});
            i = end;
        } else {
            ++i;
        }
    }
}

/// The edits, in a vector of exactly their number (counted first: no doubling growth).
std::vector<edit> find_edits(const std::string& s) {
    std::size_t count = 0;
    for_each_edit(s, [&](const edit&) { ++count; });
    std::vector<edit> edits;
    edits.reserve(count);
    for_each_edit(s, [&](const edit& e) { edits.push_back(e); });
    return edits;
}

std::string apply_edits(const std::string& s, const std::vector<edit>& edits) {
    std::string out;
    out.reserve(s.size() + 2 * edits.size());
    std::size_t from = 0;
    for (const edit& e : edits) {
        out.append(s, from, e.at - from);
        out += e.replacement();
        from = e.at + e.length;
    }
    out.append(s, from, std::string::npos);
    return out;
}

/// A byte offset in the edited text -> the offset in the original.
std::size_t original_offset(std::size_t offset, const std::vector<edit>& edits) {
    std::ptrdiff_t shift = 0;
    for (const edit& e : edits) {
        const std::size_t start = e.at + shift;  // where the replacement starts in the edited text
        if (offset < start) break;
        if (offset < start + e.replacement().size())
            return e.at + std::min<std::size_t>(e.length - 1, offset - start == 0 ? 0 : offset - start - 1);
        shift += static_cast<std::ptrdiff_t>(e.replacement().size()) - static_cast<std::ptrdiff_t>(e.length);
    }
    return offset - shift;
}

/// "line 3, column 14" of a byte offset; columns count characters (UTF-8), from 1.
std::string line_and_column(const std::string& s, std::size_t offset) {
    std::size_t line = 1, column = 1;
    for (std::size_t i = 0; i < offset && i < s.size(); ++i) {
        if (s[i] == '\n') {
            ++line;
            column = 1;
        } else if ((static_cast<unsigned char>(s[i]) & 0xc0) != 0x80) {
            ++column;
        }
    }
    return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

/// nlohmann's "[json.exception.parse_error.101] parse error at line 1, column 4: syntax
/// error while parsing array - unexpected number literal; expected ']'" -> the part a
/// user needs: "unexpected number literal; expected ',' or ']'".
std::string syntax_problem(const std::string& message) {
    std::string m = message;
    const auto dash = m.find(" - ");
    std::string context;
    if (dash != std::string::npos) {
        const auto parsing = m.rfind("while parsing ", dash);
        if (parsing != std::string::npos) context = m.substr(parsing + 14, dash - parsing - 14);
        m = m.substr(dash + 3);
    } else if (const auto colon = m.find(": "); colon != std::string::npos) {
        m = m.substr(colon + 2);
    }
    const auto last_read = m.find("; last read:");
    if (last_read != std::string::npos) {
        const auto expected = m.find("; expected", last_read);
        m = m.substr(0, last_read) + (expected == std::string::npos ? "" : m.substr(expected));
    }
    const std::string close = context == "array" ? "]" : context == "object" ? "}" : "";
    const auto e = close.empty() ? std::string::npos : m.find("expected '" + close + "'");
    if (e != std::string::npos) m.replace(e, 12, "expected ',' or '" + close + "'");
    return m;
}

// ----------------------------------------------------------------------------
// one tensor from nested arrays, one SAX event at a time

class tensor_builder {
public:
    /// `what` starts every message; `root` names the outermost value ("the top level").
    tensor_builder(std::string what, std::string root, read_budget* budget)
        : what_(std::move(what)), root_(std::move(root)), budget_(budget) {}

    void start_array() {
        if (ndim_known_ && open_.size() == ndim_)
            fail("ragged nested arrays: element " + element_index_text(open_) + " is an array, element " +
                 zeros(open_.size()) + " is a " + kind_name(kind_));
        if (open_.size() == max_axes)
            fail("element " + element_index_text(open_) + " opens more than " + std::to_string(max_axes) +
                 " nested arrays");
        open_.push_back(0);
    }

    void end_array() {
        const std::size_t entries = open_.back();
        open_.pop_back();
        const std::size_t axis = open_.size();
        const std::vector<std::size_t>& here = open_;
        if (entries == 0)
            fail(here.empty() ? std::string("empty array: a tensor needs at least one entry on every axis")
                              : "element " + element_index_text(here) + " is an empty array; a tensor needs at least one "
                                "entry on every axis");
        if (shape_[axis] == 0) {
            shape_[axis] = entries;  // the first array on this axis: element [0]...[0]
        } else if (shape_[axis] != entries) {
            fail("ragged nested arrays: element " + element_index_text(here) + " has " + std::to_string(entries) +
                 (entries == 1 ? " entry" : " entries") + ", element " + zeros(here.size()) + " has " + std::to_string(shape_[axis]));
        }
        if (!open_.empty()) ++open_.back();
    }

    enum leaf_kind { number, boolean };

    void leaf(float value, leaf_kind kind) {
        if (!ndim_known_) {
            ndim_known_ = true;
            ndim_ = open_.size();
            shape_.assign(ndim_, 0);
            kind_ = kind;
        } else if (open_.size() < ndim_) {
            fail("ragged nested arrays: element " + element_index_text(open_) + " is a " + kind_name(kind) +
                 ", element " + zeros(open_.size()) + " is an array");
        } else if (kind != kind_) {
            fail("element " + element_index_text(open_) + " is a " + kind_name(kind) + ", element " +
                 zeros(open_.size()) + " is a " + kind_name(kind_) + "; a tensor holds numbers or booleans, not both");
        }
        if (budget_ && values_.size() == values_.capacity())  // the next growth must fit the budget
            budget_->check(4 * std::max<std::uint64_t>(1, 2 * values_.size()), what_, "the numbers read so far");
        values_.push_back(value);
        if (!open_.empty()) ++open_.back();
    }

    /// Anything that is not a number, a boolean, a non-finite word or an array.
    [[noreturn]] void reject(const std::string& found) {
        if (open_.empty()) fail(root_ + " is " + found + "; expected nested arrays of numbers");
        fail("element " + element_index_text(open_) + " is " + found +
             "; expected a number, true/false, or \"nan\", \"inf\", \"-inf\"");
    }

    bool done() const { return ndim_known_ && open_.empty(); }

    loaded_tensor finish() {
        loaded_tensor t;
        t.shape = shape_;
        t.boolean = kind_ == boolean;
        if (budget_) budget_->take(4 * std::uint64_t(values_.size()), what_, "shape " + tensor_index_text(t.shape) + " of float32");
        t.values = xt::xarray<float>::from_shape(t.shape);
        std::copy(values_.begin(), values_.end(), t.values.data());
        std::vector<float>().swap(values_);
        count_non_finite(t);
        return t;
    }

private:
    [[noreturn]] void fail(const std::string& why) const { throw error(what_ + ": " + why); }

    static std::string zeros(std::size_t n) { return element_index_text(std::vector<std::size_t>(n, 0)); }
    static const char* kind_name(leaf_kind k) { return k == number ? "number" : "boolean"; }

    std::string what_;
    std::string root_;
    read_budget* budget_;
    std::vector<std::size_t> open_;   // entries so far in each open array: the next element's index
    std::vector<std::size_t> shape_;  // the size of each axis; 0 until its first array closes
    bool ndim_known_ = false;
    std::size_t ndim_ = 0;
    leaf_kind kind_ = number;
    std::vector<float> values_;
};

/// The SAX handler: one tensor (the top level is nested arrays) or an object of them.
/// It reads against its own copy of the budget: a fast pass that gives up has taken nothing.
class tensors_handler : public nlohmann::json_sax<json> {
public:
    tensors_handler(const std::string& what, bool object_of_tensors, const read_budget* budget)
        : what_(what), object_(object_of_tensors) {
        if (budget) budget_ = *budget;
        if (!object_) current_.emplace(what_, "the top level", budget_ptr());
    }

    bool null() override { builder("null").reject("null"); }
    bool boolean(bool value) override {
        builder("a boolean").leaf(value ? 1.0f : 0.0f, tensor_builder::boolean);
        return end_value();
    }
    bool number_integer(number_integer_t value) override { return number(static_cast<float>(value)); }
    bool number_unsigned(number_unsigned_t value) override { return number(static_cast<float>(value)); }
    bool number_float(number_float_t value, const string_t&) override { return number(to_float32(value)); }
    bool string(string_t& value) override {
        float v;
        tensor_builder& b = builder("a string");
        if (!non_finite_word(value, v)) {
            const std::string shown = quoted_field(value, 24);
            b.reject("the string \"" + shown + "\"");
        }
        b.leaf(v, tensor_builder::number);
        return end_value();
    }
    bool binary(binary_t&) override { builder("binary data").reject("binary data"); }
    bool start_object(std::size_t) override {
        // With no builder current, this can only be the top-level object: an object
        // anywhere inside it follows a key or an array, which both make a builder.
        if (object_ && !current_) return true;
        builder("an object").reject("an object");
    }
    bool key(string_t& name) override {
        if (tensors_.count(name)) throw error(what_ + ": the key \"" + quoted_field(name) + "\" appears twice");
        key_ = name;
        current_.emplace(what_ + ": " + quoted_field(name), "the value", budget_ptr());
        return true;
    }
    bool end_object() override { return true; }
    bool start_array(std::size_t) override {
        builder("an array").start_array();
        return true;
    }
    bool end_array() override {
        current_->end_array();
        return end_value();
    }
    bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex) override {
        error_ = ex.what();
        error_position_ = position;
        return false;
    }

    std::string error_;  // nlohmann's message, when the syntax was wrong
    std::size_t error_position_ = 0;
    std::map<std::string, loaded_tensor> tensors_;
    std::optional<tensor_builder> current_;
    std::optional<read_budget> budget_;  // what is left after this handler's tensors

private:
    read_budget* budget_ptr() { return budget_ ? &*budget_ : nullptr; }

    /// The builder that takes the next value; with an object, between keys there is none.
    tensor_builder& builder(const char* found) {
        if (!current_) throw error(what_ + ": the top level is " + found + "; expected an object of named tensors, "
                                           "such as {\"w_q\": [[...]], \"b_q\": [...]}");
        return *current_;
    }

    bool number(float value) {
        builder("a number").leaf(value, tensor_builder::number);
        return end_value();
    }

    bool end_value() {
        if (object_ && current_->done()) {
            tensors_.emplace(key_, current_->finish());
            current_.reset();
        }
        return true;
    }

    std::string what_;
    bool object_;
    std::string key_;
};

/// nlohmann's SAX parser, after quoting Python's bare tokens; syntax errors get the
/// line and column in the user's text.
void slow_parse(const std::string& original, tensors_handler& handler, const std::string& what) {
    const std::vector<edit> edits = find_edits(original);
    const std::string edited = edits.empty() ? std::string() : apply_edits(original, edits);
    const std::string& text = edits.empty() ? original : edited;
    if (json::sax_parse(text.begin(), text.end(), &handler)) return;
    // nlohmann counts the characters read: the last one read is where it stopped.
    const std::size_t last = handler.error_position_ == 0 ? 0 : handler.error_position_ - 1;
    throw error(what + ": " + line_and_column(original, original_offset(last, edits)) + ": " +
                syntax_problem(handler.error_));
}

// ----------------------------------------------------------------------------
// The fast path, for files as json.dump writes them (nlohmann's lexer is several times
// slower): it feeds the same handler the same events, and at the first thing it does
// not know (an escape, null, a syntax error) it gives up, and nlohmann reads the file
// again from the start, for its precise messages.

struct not_simple {};  // thrown to give up the fast path

class fast_reader {
public:
    fast_reader(const std::string& text, tensors_handler& handler)
        : p_(text.data()), end_(text.data() + text.size()), handler_(handler) {}

    void read_document() {
        value();
        skip_space();
        if (p_ != end_) throw not_simple{};
    }

private:
    void skip_space() {
        while (p_ != end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
    }

    bool take(char c) {
        skip_space();
        if (p_ == end_ || *p_ != c) return false;
        ++p_;
        return true;
    }

    bool word(const char* w, std::size_t n) {
        if (static_cast<std::size_t>(end_ - p_) < n || std::memcmp(p_, w, n) != 0) return false;
        p_ += n;
        return true;
    }

    void value() {
        skip_space();
        if (p_ == end_) throw not_simple{};
        const char c = *p_;
        if (c == '[') {
            ++p_;
            handler_.start_array(std::size_t(-1));
            if (!take(']')) {
                do value();
                while (take(','));
                if (!take(']')) throw not_simple{};
            }
            handler_.end_array();
        } else if (c == '{') {
            ++p_;
            handler_.start_object(std::size_t(-1));
            if (!take('}')) {
                do {
                    skip_space();
                    std::string key = string_token();
                    if (!take(':')) throw not_simple{};
                    handler_.key(key);
                    value();
                } while (take(','));
                if (!take('}')) throw not_simple{};
            }
            handler_.end_object();
        } else if (c == '"') {
            std::string text = string_token();
            handler_.string(text);
        } else if (word("true", 4)) {
            handler_.boolean(true);
        } else if (word("false", 5)) {
            handler_.boolean(false);
        } else if (c == 'N' || c == 'I' || (c == '-' && p_ + 1 != end_ && p_[1] == 'I')) {
            const char* const bare[] = {"NaN", "Infinity", "-Infinity"};  // Python's json.dump
            const std::size_t which = c == 'N' ? 0 : c == 'I' ? 1 : 2;
            if (!word(bare[which], std::strlen(bare[which]))) throw not_simple{};
            std::string text = bare[which];
            handler_.string(text);
        } else {
            number();
        }
    }

    /// A string without escapes, control characters or non-ASCII bytes (nlohmann checks those).
    std::string string_token() {
        if (p_ == end_ || *p_ != '"') throw not_simple{};
        const char* start = ++p_;
        while (p_ != end_ && *p_ != '"') {
            const auto b = static_cast<unsigned char>(*p_);
            if (b < 0x20 || b >= 0x80 || b == '\\') throw not_simple{};
            ++p_;
        }
        if (p_ == end_) throw not_simple{};
        return std::string(start, p_++);
    }

    /// JSON's number grammar, -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, read as nlohmann
    /// reads it: an integer as int64 or uint64 if it fits, anything else as a double.
    void number() {
        const char* start = p_;
        bool integer = true;
        if (p_ != end_ && *p_ == '-') ++p_;
        if (p_ == end_ || !digit(*p_)) throw not_simple{};
        if (*p_ == '0') ++p_;
        else digits();
        if (p_ != end_ && *p_ == '.') {
            ++p_;
            integer = false;
            if (p_ == end_ || !digit(*p_)) throw not_simple{};
            digits();
        }
        if (p_ != end_ && (*p_ == 'e' || *p_ == 'E')) {
            ++p_;
            integer = false;
            if (p_ != end_ && (*p_ == '+' || *p_ == '-')) ++p_;
            if (p_ == end_ || !digit(*p_)) throw not_simple{};
            digits();
        }
        if (integer) {
            if (*start == '-') {
                std::int64_t v;
                if (std::from_chars(start, p_, v).ec == std::errc()) return void(handler_.number_integer(v));
            } else {
                std::uint64_t v;
                if (std::from_chars(start, p_, v).ec == std::errc()) return void(handler_.number_unsigned(v));
            }
        }
        double v;
        if (std::from_chars(start, p_, v).ec != std::errc())  // beyond double range either way
            v = std::strtod(std::string(start, p_).c_str(), nullptr);
        std::string unused;
        handler_.number_float(v, unused);
    }

    static bool digit(char c) { return c >= '0' && c <= '9'; }
    void digits() {
        while (p_ != end_ && digit(*p_)) ++p_;
    }

    const char* p_;
    const char* end_;
    tensors_handler& handler_;
};

/// Parses `original`: the fast path, else slow_parse. Each attempt gets a fresh
/// handler, since the fast reader may give up halfway, with tensors half built.
std::unique_ptr<tensors_handler> parse(const std::string& original, const std::string& what, bool object,
                                       const read_budget* budget) {
    if (original.find_first_not_of(" \t\r\n") == std::string::npos)
        throw error(what + ": empty file; expected JSON nested arrays such as [[1, 2], [3, 4]]");
    check_no_nul(original, what);
    auto handler = std::make_unique<tensors_handler>(what, object, budget);
    try {
        fast_reader(original, *handler).read_document();
        return handler;
    } catch (const not_simple&) {
        handler = std::make_unique<tensors_handler>(what, object, budget);
    }
    slow_parse(original, *handler, what);
    return handler;
}

}  // namespace

loaded_tensor parse_json_tensor(const std::string& text, const std::string& what, read_budget* budget) {
    const auto handler = parse(text, what, false, budget);
    loaded_tensor t = handler->current_->finish();
    if (budget) *budget = *handler->budget_;
    return t;
}

std::map<std::string, loaded_tensor> parse_json_tensors(const std::string& text, const std::string& what,
                                                        read_budget* budget) {
    const auto handler = parse(text, what, true, budget);
    if (budget) *budget = *handler->budget_;
    return std::move(handler->tensors_);
}

}  // namespace attn
