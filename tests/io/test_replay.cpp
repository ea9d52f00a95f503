// replay: `attn trace --from DUMP`. A dump's config reads back as the config that wrote
// it; its input tensors come back with the same float32 bits from .npz and .json; a
// replay draws what the dump lacks exactly as the run drew it, and refuses flags that
// contradict the tensors it takes.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "attn/compute/attention.hpp"
#include "attn/compute/error.hpp"
#include "attn/io/config_fields.hpp"
#include "attn/io/file_inputs.hpp"
#include "attn/compute/inputs.hpp"
#include "attn/io/npz.hpp"
#include "attn/render/render_json.hpp"
#include "attn/render/render_npz.hpp"
#include "attn/io/replay.hpp"

#include "support.hpp"

namespace {

namespace fs = std::filesystem;


/// Writes `t` as `path` (.json or .npz), only `stages` when given, as --format json/npz do.
void write_dump(const attn::trace& t, const std::string& path, std::vector<std::string> stages = {}) {
    attn::render_options options;
    for (const std::string& name : stages) options.stages |= attn::stage_bit(attn::find_stage_info(name)->id);
    if (path.size() > 4 && path.substr(path.size() - 4) == ".npz") {
        attn::render_npz(t, options, path, "--out " + path);
        return;
    }
    std::ofstream out(path);
    attn::render_json(t, options, out);
}

bool same_bits(const xt::xarray<float>& a, const xt::xarray<float>& b) {
    return a.shape() == b.shape() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

/// config_to_json(config_from_json(config_to_json(c))) == config_to_json(c), and the
/// fields config_to_json derives from agree too.
void check_round_trip(const attn::config& c) {
    const nlohmann::ordered_json written = attn::config_to_json(c);
    const attn::config back = attn::config_from_json(parse_json(json_text(written)), "--from t.json");
    CHECK(attn::config_to_json(back) == written);
    CHECK(back.cross() == c.cross());
    CHECK(bits(back.fill) == bits(c.fill));
    CHECK(back.fill_text == c.fill_text);
}

/// The dump names of the input tensors of `t`: "input.x", "params.w_q", ...
std::set<std::string> input_names(const attn::trace& t) {
    std::set<std::string> names;
    for (const attn::stage& s : t.stages)
        for (const attn::tensor& x : s.tensors) {
            const std::string name = std::string(s.name()) + "." + x.name;
            if (attn::replay_reads(name)) names.insert(name);
        }
    return names;
}

attn::config causal_config() {
    attn::config c;
    c.batch = 2;
    c.seq = c.kv_seq = 3;
    c.d_model = c.d_in = c.d_kv_in = 4;
    c.seed = 7;
    c.mask.causal = true;
    return c;
}

}  // namespace

TEST_SUITE("replay") {
    TEST_CASE("config_from_json reads back what config_to_json wrote") {
        attn::config c;
        SUBCASE("the defaults") { check_round_trip(c); }
        SUBCASE("cross-attention by sizes, no biases, no output projection, the largest seed") {
            c.kv_seq = 6;
            c.d_kv_in = 3;
            c.qkv_bias = c.out_proj = false;
            c.seed = std::numeric_limits<std::uint64_t>::max();
            check_round_trip(c);
        }
        SUBCASE("cross-attention asked for with equal sizes (--cross): separate_kv") {
            c.separate_kv = true;
            check_round_trip(c);
            CHECK(attn::config_from_json(attn::config_to_json(c), "--from t.json").separate_kv);
        }
        SUBCASE("every mask kind, a finite fill as typed") {
            c.batch = 2;
            c.mask.causal = c.mask.padding = c.mask.window = c.mask.random = true;
            c.mask.lengths = {4, 0};
            c.mask.window_size = 1;
            c.mask.random_seed = 3;
            c.mask.random_keep = 0.7;
            c.fill = -1e9f;
            c.fill_text = "-1e9";
            check_round_trip(c);
        }
        SUBCASE("causal aligned lower-right, --safe-softmax") {
            c.kv_seq = 6;
            c.mask.causal = true;
            c.mask.causal_align = attn::causal_alignment::lower_right;
            c.safe_softmax = true;
            check_round_trip(c);
            const attn::config back = attn::config_from_json(attn::config_to_json(c), "--from t.json");
            CHECK(back.mask.causal_align == attn::causal_alignment::lower_right);
            CHECK(back.safe_softmax);
            CHECK(attn::config_to_json(c)["causal_align"] == "lower-right");
            CHECK(attn::config_to_json(c)["safe_softmax"] == true);
        }
        SUBCASE("the defaults write neither causal_align nor safe_softmax") {
            c.mask.causal = true;
            CHECK_FALSE(attn::config_to_json(c).contains("causal_align"));
            CHECK_FALSE(attn::config_to_json(c).contains("safe_softmax"));
        }
        SUBCASE("a fill that is no short double: -0.1 as float32") {
            c.mask.causal = true;
            c.fill = -0.1f;
            check_round_trip(c);
        }
        SUBCASE("dropout in training mode") {
            c.dropout.p = 0.1;
            c.dropout.train = true;
            c.dropout.seed = 9;
            check_round_trip(c);
        }
        SUBCASE("tensors from files, a mask file read as mha, key padding") {
            c.sources.from_projections = true;
            c.sources.params_from_file = true;
            c.mask.from_file = c.mask.key_padding = true;
            c.mask.file_convention = attn::mask_convention::mha;
            check_round_trip(c);
            attn::config x = attn::config{};
            x.sources.x_from_file = x.sources.x_kv_from_file = true;
            x.separate_kv = true;
            check_round_trip(x);
        }
    }

    TEST_CASE("config_from_json: one line naming the key") {
        nlohmann::json j = attn::config_to_json(attn::config{});
        const auto refuse = [&] { (void)attn::config_from_json(j, "--from t.json"); };
        SUBCASE("a missing key") {
            j.erase("seq");
            CHECK_THROWS_WITH_AS(refuse(), "--from t.json: config has no \"seq\"", attn::error);
        }
        SUBCASE("a value of the wrong type") {
            j["qkv_bias"] = "yes";
            CHECK_THROWS_WITH_AS(refuse(), "--from t.json: config \"qkv_bias\" is \"yes\"; expected true or false",
                                 attn::error);
        }
        SUBCASE("a negative seed (dumps write it wrapped, as torch.manual_seed does)") {
            j["seed"] = -1;
            CHECK_THROWS_WITH_AS(refuse(), "--from t.json: config \"seed\" is -1; expected a whole number, 0 or more",
                                 attn::error);
        }
        SUBCASE("an unknown mask kind") {
            j["mask"] = "causal+diagonal";
            CHECK_THROWS_WITH_AS(refuse(),
                                 "--from t.json: config \"mask\" is \"causal+diagonal\"; expected none, or causal, "
                                 "padding, window, random joined by '+'",
                                 attn::error);
        }
        SUBCASE("a causal alignment that is neither") {
            j["causal_align"] = "middle";
            CHECK_THROWS_WITH_AS(refuse(),
                                 "--from t.json: config \"causal_align\" is \"middle\"; expected upper-left or lower-right",
                                 attn::error);
        }
        SUBCASE("a key this attn does not know") {
            j["rope"] = true;
            CHECK_THROWS_WITH_AS(refuse(),
                                 "--from t.json: config \"rope\" is not a setting this attn knows (a dump of "
                                 "a newer attn?)",
                                 attn::error);
        }
        SUBCASE("cross false with sizes that make it cross-attention") {
            j["kv_seq"] = 6;
            CHECK_THROWS_WITH_AS(refuse(),
                                 "--from t.json: config \"cross\" is false, but kv_seq 6 and d_kv_in 8 differ from "
                                 "seq 4 and d_in 8",
                                 attn::error);
        }
        SUBCASE("a head_dim that is not d_model / heads") {
            j["head_dim"] = 2;
            CHECK_THROWS_WITH_AS(refuse(), "--from t.json: config \"head_dim\" is 2, but d_model 8 / heads 2 is 4",
                                 attn::error);
        }
        SUBCASE("a run that cannot be made: not a usage error, the file is wrong") {
            j["mask"] = "padding";
            CHECK_THROWS_WITH_AS(refuse(),
                                 "--from t.json: config is not a run attn can make: --mask padding needs --lengths "
                                 "n1,n2,... (one valid key length per batch item)",
                                 attn::error);
            try {
                refuse();
            } catch (const attn::usage_error&) {
                FAIL("a bad dump is not a usage error");
            } catch (const attn::error&) {
            }
        }
        SUBCASE("a number outside the flag's range, a string longer than any flag's value") {
            j["mask_keep"] = 2.5;
            CHECK_THROWS_WITH_AS(refuse(), "--from t.json: config \"mask_keep\" is 2.5; expected a number from 0 to 1",
                                 attn::error);
            j["mask_keep"] = 0.5;
            j["mistake"] = std::string(65, 'x');
            CHECK_THROWS_WITH_AS(refuse(), "--from t.json: config \"mistake\" is a string of 65 bytes; expected at most 64",
                                 attn::error);
        }
        SUBCASE("a fill_text that Python would not read as the fill (hex), or float32 makes 0") {
            j["fill"] = 8.0;
            j["fill_text"] = "0x1p3";
            CHECK_THROWS_WITH_AS(refuse(), doctest::Contains("config \"fill_text\" is \"0x1p3\""), attn::error);
            j["fill"] = 0.0;
            j["fill_text"] = "1e-50";
            CHECK_THROWS_WITH_AS(refuse(), doctest::Contains("config \"fill_text\" is \"1e-50\""), attn::error);
            j["fill"] = 1e-50;
            j.erase("fill_text");
            CHECK_THROWS_WITH_AS(refuse(), doctest::Contains("config \"fill\" is 1e-50"), attn::error);
        }
        SUBCASE("not an object") {
            j = nlohmann::json::array({1, 2});
            CHECK_THROWS_WITH_AS(refuse(), "--from t.json: config is [1,2]; expected a JSON object", attn::error);
        }
    }

    TEST_CASE("read_dump: the config and the input tensors, bit for bit, from .npz and .json") {
        const scratch_dir dir("replay");
        attn::config c = causal_config();
        c.kv_seq = 5;  // cross-attention: input.x_kv too
        c.sources.x_from_file = true;
        c.mask.from_file = true;
        attn::given_inputs given;
        given.x = xt::xarray<float>::from_shape({2, 3, 4});
        const std::vector<float> odd{-0.0f, 0.1f, 1e-45f, -inf, inf, std::nanf(""), 3.4028235e38f, -1.1754944e-38f};
        for (std::size_t i = 0; i < given.x->size(); ++i) given.x->data()[i] = odd[i % odd.size()] * (i < 8 ? 1.0f : 0.5f);
        given.mask = xt::xarray<bool>({2, 1, 3, 5}, true);
        (*given.mask)(1, 0, 2, 4) = false;
        const attn::trace t = run(c, given);
        for (const std::string ext : {".npz", ".json"}) {
            CAPTURE(ext);
            write_dump(t, dir / ("t" + ext));
            const attn::dump d = attn::read_dump(dir / ("t" + ext));
            CHECK(d.what == "--from " + (dir / ("t" + ext)));
            CHECK(attn::config_to_json(d.cfg) == attn::config_to_json(c));
            std::set<std::string> names;
            for (const auto& [name, tensor] : d.tensors) names.insert(name);
            CHECK(names == input_names(t));  // input, params and mask; no other stage
            CHECK(names.size() == 14);  // projections too: read in case the run started there
            for (const attn::stage& s : t.stages)
                for (const attn::tensor& x : s.tensors) {
                    const auto it = d.tensors.find(std::string(s.name()) + "." + x.name);
                    if (it == d.tensors.end()) continue;
                    CAPTURE(it->first);
                    CHECK(same_bits(it->second.values, x.values));
                    CHECK(it->second.boolean == (x.type == attn::element_type::boolean));
                }
            CHECK(std::signbit(d.tensors.at("input.x").values.data()[0]));  // -0 stays -0
            CHECK(d.tensors.at("input.x").non_finite > 0);
        }
    }

    TEST_CASE("read_dump: files that are not dumps") {
        const scratch_dir dir("replay");
        const auto write = [&](const std::string& name, const std::string& text) {
            std::ofstream(dir / name) << text;
            return dir / name;
        };
        const std::string tensor = write("x.json", "[[1, 2]]");
        CHECK_THROWS_WITH_AS(attn::read_dump(tensor),
                             ("--from " + tensor + ": not a dump of attn trace --format json (it has no \"format\": "
                                                   "\"attn.trace/1\")").c_str(),
                             attn::error);
        const std::string broken = write("b.json", "{\"format\": \"attn.trace/1\", \"config\": {");
        CHECK_THROWS_WITH_AS(attn::read_dump(broken),
                             ("--from " + broken + ": parse error at line 1, column 39: syntax error while parsing "
                                                   "object key - unexpected end of input; expected string literal")
                                 .c_str(),
                             attn::error);
        const float one = 1.0f;
        attn::write_npz(dir / "plain.npz", "--out plain.npz", {attn::npz_member::tensor("input.x", {1}, &one)});
        CHECK_THROWS_WITH_AS(attn::read_dump(dir / "plain.npz"),
                             ("--from " + (dir / "plain.npz") +
                              ": not a dump of attn trace --format npz (it has no config text member)")
                                 .c_str(),
                             attn::error);
        attn::write_npz(dir / "bad.npz", "--out bad.npz", {attn::npz_member::text_member("config", "{\"seq\": ")});
        CHECK_THROWS_WITH_AS(attn::read_dump(dir / "bad.npz"),
                             ("--from " + (dir / "bad.npz") +
                              ": config: not valid JSON: parse error at line 1, column 9: syntax error while parsing value - "
                              "unexpected end of input; expected '[', '{', or a literal")
                                 .c_str(),
                             attn::error);
        CHECK_THROWS_WITH_AS(attn::read_dump("t.txt"),
                             "--from t.txt: expected a dump of attn trace: .npz (--format npz) or .json (--format json)",
                             attn::error);
    }

    TEST_CASE("load_replay: what the dump holds is given, what it lacks drawn as the run drew it") {
        const scratch_dir dir("replay");
        attn::config c = causal_config();
        c.kv_seq = 4;  // cross-attention: params, x, then x_kv are drawn
        const attn::inputs original = attn::draw_inputs(c);
        const attn::trace t = run(c);
        const auto replayed = [&](const std::vector<std::string>& stages) {
            write_dump(t, dir / "t.npz", stages);
            attn::dump d = attn::read_dump(dir / "t.npz");
            const attn::config rc = d.cfg;
            attn::loaded_inputs in = attn::load_replay(std::move(d), rc, {}, {});
            return attn::draw_inputs(in.cfg, std::move(in.given));
        };
        const auto check_same = [&](const attn::inputs& in) {
            CHECK(same_bits(in.x, original.x));
            CHECK(same_bits(*in.x_kv, *original.x_kv));
            CHECK(same_bits(in.params.w_q, original.params.w_q));
            CHECK(same_bits(in.params.w_v, original.params.w_v));
            CHECK(same_bits(*in.params.b_o, *original.params.b_o));
        };
        SUBCASE("a whole dump") { check_same(replayed({})); }
        SUBCASE("input alone: the weights are drawn before it") { check_same(replayed({"input"})); }
        SUBCASE("params alone: x and x_kv are drawn after them") { check_same(replayed({"params"})); }
        SUBCASE("neither: everything is drawn") { check_same(replayed({"softmax"})); }
    }

    TEST_CASE("load_replay: a flag that contradicts a tensor taken from the dump names both") {
        const scratch_dir dir("replay");
        attn::config c = causal_config();
        write_dump(run(c), dir / "t.json");
        attn::dump d = attn::read_dump(dir / "t.json");
        const std::string what = "--from " + (dir / "t.json");
        attn::config flags = d.cfg;
        attn::size_flags sizes;
        const auto replay = [&] { (void)attn::load_replay(d, flags, sizes, {}); };
        SUBCASE("a size") {
            sizes.seq = 6;
            CHECK_THROWS_WITH_AS(replay(), (what + " input.x has shape [2,3,4] [B,Sq,Din], so Sq = 3, but --seq 6 says Sq = 6").c_str(),
                                 attn::usage_error);
        }
        SUBCASE("a seed other than the one that drew the dump's tensors") {
            flags.seed = 8;
            CHECK_THROWS_WITH_AS(replay(), ("--seed 8 contradicts " + what +
                                            ", whose input.x and params were drawn with --seed 7 (a replay takes them "
                                            "as they are)").c_str(),
                                 attn::usage_error);
        }
        SUBCASE("--no-out-proj") {
            flags.out_proj = false;
            CHECK_THROWS_WITH_AS(replay(), (what + " holds w_o, but --no-out-proj says there is none").c_str(),
                                 attn::usage_error);
        }
        SUBCASE("--q on a run that starts at the input") {
            attn::input_paths paths;
            paths.q = "q.json";
            CHECK_THROWS_WITH_AS((void)attn::load_replay(d, flags, sizes, paths),
                                 ("--q q.json cannot be used with " + what +
                                  ": its run starts at the input, not at the projections").c_str(),
                                 attn::usage_error);
        }
        SUBCASE("--heads and the mask kinds are free when no tensor holds them") {
            flags.heads = 4;
            flags.mask.causal = false;
            flags.mask.window = true;
            flags.mask.window_size = 0;
            const attn::loaded_inputs in = attn::load_replay(d, flags, sizes, {});
            CHECK(in.cfg.heads == 4);
            CHECK(in.cfg.mask.window);
        }
    }

    TEST_CASE("load_replay: a mask from a file comes from the dump, with the kinds ANDed into it") {
        const scratch_dir dir("replay");
        attn::config c = causal_config();
        c.mask.from_file = true;
        attn::given_inputs given;
        given.mask = xt::xarray<bool>({2, 1, 3, 3}, true);
        (*given.mask)(0, 0, 2, 0) = false;
        const attn::trace t = run(c, given);
        write_dump(t, dir / "t.npz");
        attn::dump d = attn::read_dump(dir / "t.npz");
        attn::config flags = d.cfg;
        SUBCASE("as it was") {
            const attn::loaded_inputs in = attn::load_replay(d, flags, {}, {});
            REQUIRE(in.given.mask);
            CHECK(in.given.mask->shape() == std::vector<std::size_t>{2, 1, 3, 3});
            CHECK_FALSE((*in.given.mask)(0, 0, 2, 0));
            CHECK_FALSE((*in.given.mask)(0, 0, 0, 1));  // causal, already in the dump's mask
            CHECK(in.cfg.mask.from_file);
        }
        SUBCASE("a kind cannot be dropped") {
            flags.mask.causal = false;
            CHECK_THROWS_WITH_AS((void)attn::load_replay(d, flags, {}, {}),
                                 ("--mask none drops causal, but " + d.what +
                                  " mask.mask holds it already (ANDed with the run's mask file); give --mask-file to "
                                  "replace that mask").c_str(),
                                 attn::usage_error);
        }
        SUBCASE("a dump without it cannot replay the run") {
            write_dump(t, dir / "soft.npz", {"softmax"});
            attn::dump soft = attn::read_dump(dir / "soft.npz");
            const attn::config sc = soft.cfg;
            CHECK_THROWS_WITH_AS((void)attn::load_replay(soft, sc, {}, {}),
                                 (soft.what + ": no array mask.mask: the run read it from --mask-file, and the dump "
                                              "does not hold it (give --mask-file FILE, or dump the mask stage)").c_str(),
                                 attn::error);
        }
    }

    TEST_CASE("load_replay: a key padding mask comes from the dump's mask.mask (--key-padding-mask)") {
        const scratch_dir dir("replay");
        attn::config c = causal_config();
        c.mask.key_padding = true;
        attn::given_inputs given;
        given.mask = xt::xarray<bool>({2, 1, 3, 3}, true);
        for (std::size_t i = 0; i < 3; ++i) (*given.mask)(1, 0, i, 2) = false;  // batch item 1: key 2 is padding
        write_dump(run(c, given), dir / "t.json");
        attn::dump d = attn::read_dump(dir / "t.json");
        const attn::config flags = d.cfg;
        SUBCASE("taken as the run's mask, key padding still said") {
            const attn::loaded_inputs in = attn::load_replay(d, flags, {}, {});
            REQUIRE(in.given.mask);
            CHECK_FALSE((*in.given.mask)(1, 0, 2, 2));
            CHECK((*in.given.mask)(0, 0, 2, 2));
            CHECK(in.cfg.mask.key_padding);
            CHECK_FALSE(in.cfg.mask.from_file);
        }
        SUBCASE("--mask-file cannot replace it: the key padding would be lost") {
            attn::input_paths paths;
            paths.mask = "m.json";
            CHECK_THROWS_WITH_AS((void)attn::load_replay(d, flags, {}, paths),
                                 ("--mask-file m.json cannot replace the mask of " + d.what +
                                  ": its mask.mask holds the run's key padding mask too").c_str(),
                                 attn::usage_error);
        }
    }

    TEST_CASE("load_replay: Q, K, V and the output layer read from files") {
        const scratch_dir dir("replay");
        attn::config c = causal_config();
        c.sources.from_projections = true;
        c.sources.params_from_file = true;
        attn::given_inputs given;
        given.qkv = attn::projections{xt::xarray<float>({2, 3, 4}, 0.5f), xt::xarray<float>({2, 3, 4}, -0.25f),
                                      xt::xarray<float>({2, 3, 4}, 2.0f)};
        given.params = attn::parameters{};
        given.params->w_o = xt::xarray<float>({4, 4}, 0.125f);
        given.params->b_o = xt::xarray<float>({4}, 1.0f);
        write_dump(run(c, given), dir / "t.npz");
        attn::dump d = attn::read_dump(dir / "t.npz");
        const attn::config flags = d.cfg;
        // A run that starts at the projections has no params stage: its dump cannot hold w_o.
        CHECK_THROWS_WITH_AS((void)attn::load_replay(d, flags, {}, {}),
                             (d.what + ": no array params.w_o: the run read w_o and b_o from --params, and a run "
                                       "that starts at the projections has no params stage to dump (give --params FILE)")
                                 .c_str(),
                             attn::error);
        attn::config no_output = flags;
        no_output.out_proj = false;
        const attn::loaded_inputs in = attn::load_replay(d, no_output, {}, {});
        REQUIRE(in.given.qkv);
        CHECK(in.given.qkv->k(1, 2, 3) == -0.25f);
    }

    TEST_CASE("check_inputs with a recorded run: its sizes where no flag or tensor gives one") {
        attn::config recorded;  // Sq = Sk = 4, D = Din = Dkv = 8
        attn::size_flags flags;
        flags.seq = 6;
        flags.d_model = 16;
        SUBCASE("a size that equalled its default follows it") {
            const attn::config c = attn::check_inputs(recorded, flags, {}, &recorded).cfg;
            CHECK(c.kv_seq == 6);
            CHECK(c.d_in == 16);
            CHECK(c.d_kv_in == 16);
        }
        SUBCASE("one that differed stays") {
            recorded.kv_seq = 5;
            recorded.d_kv_in = 3;
            const attn::config c = attn::check_inputs(recorded, flags, {}, &recorded).cfg;
            CHECK(c.kv_seq == 5);
            CHECK(c.d_kv_in == 3);
            CHECK(c.batch == 1);
        }
    }
}
