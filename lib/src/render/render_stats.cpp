// --stats in text, JSON and npz (render_stats.hpp).
#include "attn/render/render_stats.hpp"

#include <cmath>
#include <cstdio>

#include "attn/render/render_json.hpp"

namespace attn {
namespace {

/// `v` with `precision` digits after the point, scientific when that would hide it
/// (below 10^-precision) or make it long (1e6 and up); "nan", "inf", "-inf".
std::string stats_number(double v, int precision) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char buf[64];
    const double a = std::fabs(v);
    const bool scientific = a != 0 && (a < std::pow(10.0, -precision) || a >= 1e6);
    std::snprintf(buf, sizeof buf, scientific ? "%.*e" : "%.*f", precision, v);
    return buf;
}

/// A float32 element as JSON: the double it is (its shortest decimal reads back to it).
nlohmann::ordered_json stats_json_element(double v) {
    if (!std::isfinite(v)) return number_json(v);
    return std::stod(nlohmann::json(static_cast<float>(v)).dump());
}

/// values [rows] nested as `shape` (row-major), each through `make`.
template <typename T, typename Make>
nlohmann::ordered_json nested_rows(const std::vector<T>& values, const tensor_shape& shape, std::size_t axis,
                              std::size_t& next, Make make) {
    if (axis == shape.size()) return make(values[next++]);
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < shape[axis]; ++i) list.push_back(nested_rows(values, shape, axis + 1, next, make));
    return list;
}

template <typename T, typename Make>
nlohmann::ordered_json nested_rows(const std::vector<T>& values, const tensor_shape& shape, Make make) {
    std::size_t next = 0;
    return nested_rows(values, shape, 0, next, make);
}

}  // namespace

std::string stats_line(const tensor_stats& s, std::string_view stage_name, int precision) {
    const auto n = [&](double v) { return stats_number(v, precision); };
    std::string line = "stats: min " + n(s.min) + "  max " + n(s.max) + "  mean " + n(s.mean) + "  std " + n(s.std) +
                       " (n-1)  over " + std::to_string(s.finite) + " finite of " + std::to_string(s.count) +
                       "  zeros " + std::to_string(s.zeros) + "  nan " + std::to_string(s.nans) + "  inf " +
                       std::to_string(s.pos_infs) + "  -inf " + std::to_string(s.neg_infs);
    if (s.kind == stats_kind::scores) {
        const std::string dk = stats_number(s.head_dim, 0);
        if (stage_name == "scores")
            line += ";  var " + n(s.var()) + " = " + n(s.var() / s.head_dim) + "·dk (dk " + dk +
                    "; Var(q·k) ≈ dk for unit-variance q, k)";
        else
            line += ";  var " + n(s.var()) + " (≈ 1 for unit-variance q, k: / √dk divides Var(q·k) ≈ dk = " + dk +
                    " by dk)";
    }
    if (s.kind == stats_kind::weights)
        line += ";  entropy mean " + n(s.mean_entropy) + " nats, uniform over the same keys " + n(s.uniform_entropy) +
                " (" + std::to_string(s.rows_in_means) + " of " + std::to_string(s.entropy.size()) + " rows)";
    return line;
}

std::string row_stats_text(const tensor_stats& s, std::size_t row, int precision,
                           const std::vector<std::string>* tokens) {
    if (row >= s.entropy.size()) return "";
    const auto key = static_cast<std::size_t>(s.largest_key[row]);
    return "H " + stats_number(s.entropy[row], precision) + "  max " + stats_number(s.largest[row], precision) +
           " @key " + (tokens && key < tokens->size() ? (*tokens)[key] : std::to_string(s.largest_key[row]));
}

nlohmann::ordered_json stats_json(const tensor_stats& s) {
    nlohmann::ordered_json j{{"count", s.count},
                             {"finite", s.finite},
                             {"min", stats_json_element(s.min)},
                             {"max", stats_json_element(s.max)},
                             {"mean", number_json(s.mean)},
                             {"std", number_json(s.std)},
                             {"zeros", s.zeros},
                             {"nan", s.nans},
                             {"inf", s.pos_infs},
                             {"neg_inf", s.neg_infs}};
    if (s.kind == stats_kind::scores) {
        j["var"] = number_json(s.var());
        j["head_dim"] = s.head_dim;
        j["var_over_head_dim"] = number_json(s.var() / s.head_dim);
    }
    if (s.kind == stats_kind::weights) {
        j["entropy"] = nested_rows(s.entropy, s.row_shape, number_json);
        j["max_weight"] = nested_rows(s.largest, s.row_shape, [](float v) { return stats_json_element(v); });
        j["max_key"] = nested_rows(s.largest_key, s.row_shape, [](std::int64_t k) { return nlohmann::ordered_json(k); });
        j["mean_entropy"] = number_json(s.mean_entropy);
        j["uniform_entropy"] = number_json(s.uniform_entropy);
        j["rows_in_means"] = s.rows_in_means;
    }
    return j;
}

std::vector<stats_array> stats_arrays(const tensor_stats& s) {
    const auto one = [](const char* stat, double v) { return stats_array{stat, {}, {static_cast<float>(v)}}; };
    std::vector<stats_array> arrays{one("count", static_cast<double>(s.count)),
                                    one("finite", static_cast<double>(s.finite)),
                                    one("min", s.min),
                                    one("max", s.max),
                                    one("mean", s.mean),
                                    one("std", s.std),
                                    one("zeros", static_cast<double>(s.zeros)),
                                    one("nan", static_cast<double>(s.nans)),
                                    one("inf", static_cast<double>(s.pos_infs)),
                                    one("neg_inf", static_cast<double>(s.neg_infs))};
    if (s.kind == stats_kind::scores) {
        arrays.push_back(one("var", s.var()));
        arrays.push_back(one("head_dim", s.head_dim));
        arrays.push_back(one("var_over_head_dim", s.var() / s.head_dim));
    }
    if (s.kind == stats_kind::weights) {
        const std::vector<std::size_t> shape(s.row_shape.begin(), s.row_shape.end());
        arrays.push_back({"entropy", shape, std::vector<float>(s.entropy.begin(), s.entropy.end())});
        arrays.push_back({"max_weight", shape, s.largest});
        arrays.push_back({"max_key", shape, std::vector<float>(s.largest_key.begin(), s.largest_key.end())});
        arrays.push_back(one("mean_entropy", s.mean_entropy));
        arrays.push_back(one("uniform_entropy", s.uniform_entropy));
        arrays.push_back(one("rows_in_means", static_cast<double>(s.rows_in_means)));
    }
    return arrays;
}

}  // namespace attn
