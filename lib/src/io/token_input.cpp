// --tokens and --vocab (token_input.hpp).
#include "attn/io/token_input.hpp"

#include <cstdint>
#include <limits>

#include "attn/compute/error.hpp"
#include "attn/io/json_document.hpp"
#include "attn/io/tensor_file.hpp"

namespace attn {
namespace {

std::string trim_token_text(const std::string& s) {
    const auto first = s.find_first_not_of(" \t\r\n");
    if (first == std::string::npos) return "";
    return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

/// A decimal string of at most 10 digits as a whole number, or -1.
std::int64_t decimal_id(const std::string& s) {
    if (s.empty() || s.size() > 10) return -1;
    std::int64_t v = 0;
    for (char ch : s) {
        if (ch < '0' || ch > '9') return -1;
        v = v * 10 + (ch - '0');
    }
    return v;
}

}  // namespace

std::vector<std::int64_t> parse_token_ids(const std::string& given) {
    std::string text = given, from = "--tokens";
    if (!given.empty() && given[0] == '@') {
        const std::string path = given.substr(1);
        from = "--tokens @" + printable_text(path);
        text = read_bounded_text(path, from, max_token_file_bytes, "1 MiB; a tokens file holds comma-separated ids");
    }
    text = trim_token_text(text);
    if (text.empty()) throw usage_error(from + ": no token ids (expected comma-separated ids, e.g. --tokens 464,2068,7586)");
    std::vector<std::int64_t> ids;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t comma = std::min(text.find(',', start), text.size());
        const std::string item = trim_token_text(text.substr(start, comma - start));
        const std::int64_t id = decimal_id(item);
        if (item.empty())
            throw usage_error(from + ": an empty item at position " + std::to_string(ids.size() + 1) +
                              " (expected comma-separated ids, e.g. 464,2068,7586)");
        if (id < 0 || id > std::numeric_limits<std::int32_t>::max())
            throw usage_error(from + ": '" + quoted_field(item, 40) + "' is not a token id (a whole number from 0 to 2147483647)");
        if (ids.size() == max_token_count)
            throw usage_error(from + ": more than " + std::to_string(max_token_count) + " token ids");
        ids.push_back(id);
        start = comma + 1;
    }
    return ids;
}

std::map<std::int64_t, std::string> parse_vocab(const std::string& text, const std::string& what,
                                                const read_budget* budget) {
    const nlohmann::json j = parse_json_document(text, what, budget);
    if (!j.is_object() || j.empty())
        throw error(what + ": expected a tokenizer vocabulary, a JSON object {\"token\": id, ...} or {\"id\": \"token\", ...}; got " +
                    json_excerpt(j));
    // {"id": "token"} when every value is a string; else {"token": id}
    bool by_id = true;
    for (const auto& item : j.items()) by_id = by_id && item.value().is_string();
    std::map<std::int64_t, std::string> vocab;
    const std::int64_t biggest = std::numeric_limits<std::int32_t>::max();
    for (const auto& item : j.items()) {
        const std::string key = item.key();
        const nlohmann::json& value = item.value();
        std::int64_t id = -1;
        std::string token;
        if (by_id) {
            id = decimal_id(key);
            if (id < 0 || id > biggest)
                throw error(what + ": key '" + quoted_field(key, 40) +
                            "' is not a token id (a vocabulary of {\"id\": \"token\"} has whole numbers from 0 to 2147483647 as keys)");
            token = value.get<std::string>();
        } else {
            if (!value.is_number_integer() || value.get<std::int64_t>() < 0 || value.get<std::int64_t>() > biggest)
                throw error(what + ": token '" + quoted_field(key, 40) + "' has id " + json_excerpt(value) +
                            ", not a whole number from 0 to 2147483647");
            id = value.get<std::int64_t>();
            token = key;
        }
        const auto [at, added] = vocab.emplace(id, token);
        if (!added)
            throw error(what + ": id " + std::to_string(id) + " is given twice ('" + quoted_field(at->second, 40) +
                        "' and '" + quoted_field(token, 40) + "')");
    }
    return vocab;
}

std::map<std::int64_t, std::string> read_vocab(const std::string& path, const std::string& what,
                                               const read_budget* budget) {
    return parse_vocab(read_bounded_text(path, what, max_vocab_bytes, "64 MiB; a tokenizer's vocab.json is a few MB", budget),
                       what, budget);
}

std::vector<std::string> token_labels(const std::map<std::int64_t, std::string>& vocab,
                                      const std::vector<std::int64_t>& ids, const std::string& what) {
    std::vector<std::string> labels;
    for (std::int64_t id : ids) {
        const auto it = vocab.find(id);
        if (it == vocab.end())
            throw error(what + ": no token for id " + std::to_string(id) + " (it holds " + std::to_string(vocab.size()) +
                        " tokens)");
        labels.push_back(printable_text(it->second));
    }
    return labels;
}

}  // namespace attn
