// The plan of a run from its sizes alone (run_plan.hpp): the layouts step by step in
// attention.cpp's order with tensor.hpp's rules, then what each stage reads, holds and costs.
#include "attn/compute/run_plan.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "attn/compute/checked.hpp"
#include "attn/compute/mistake.hpp"

namespace attn {
namespace {

using planned_dims = std::vector<std::string>;
using layouts = std::vector<planned_tensor>;

constexpr std::uint64_t most = std::numeric_limits<std::uint64_t>::max();  // saturated: absurd sizes, refused

std::uint64_t saturating_product(std::uint64_t a, std::uint64_t b) { return checked_mul(a, b).value_or(most); }
std::uint64_t saturating_sum(std::uint64_t a, std::uint64_t b) { return checked_add(a, b).value_or(most); }

/// The run's sizes under CLI.md's letters.
struct run_sizes {
    std::size_t B, Sq, Sk, D, H, dk, Din, Dkv, N, G, Dg;
    std::size_t S;     // x's tokens: N + Sq = Sk in a decoding step, else Sq
    std::size_t S_kv;  // the tokens k and v are projected from: the Sq new ones in a step, else Sk
    std::string tokens, kv_tokens, kv_out, kv_head;  // their dimension names

    explicit run_sizes(const config& c)
        : B(c.batch), Sq(c.seq), Sk(c.kv_seq), D(c.d_model), H(c.heads), dk(c.head_dim()), Din(c.d_in),
          Dkv(c.d_kv_in), N(c.past), G(c.kv_head_count()), Dg(G * dk), S(N > 0 ? Sk : Sq), S_kv(N > 0 ? Sq : Sk),
          tokens(N > 0 ? "kv_seq" : "seq"), kv_tokens(N > 0 ? "seq" : "kv_seq"),
          kv_out(c.grouped() ? "kv_width" : "d_model"), kv_head(c.grouped() ? "kv_head" : "head") {}
};

/// A tensor with its own memory, contiguous.
planned_tensor fresh_tensor(std::string name, planned_dims dims, tensor_shape shape,
                            element_type type = element_type::float32) {
    return {std::move(name), std::move(dims), contiguous_layout(std::move(shape)), type, "", ""};
}

/// A view with `layout` of the memory `of` reads (its owner's: a view of a view names the owner).
planned_tensor view_tensor(const planned_tensor& of, const std::string& of_path, planned_dims dims,
                           tensor_layout layout) {
    return {of.name, std::move(dims), std::move(layout), of.type, of.view_of.empty() ? of_path : of.view_of, ""};
}

/// 0 embed: the token rows [B,Sq,Din], the position rows [Sq,Din] (GPT-2, BERT) and BERT's
/// token_type rows [Sq,Din], copies of the tables' rows. 1 input: x [B,S,Din], x_kv [B,Sk,Dkv].
/// 2 params in nn.Linear's layout [out, in], w_k w_v [G·dk,Dkv]. 2a norm: the normalised x
/// [B,S,Din], its weight (and LayerNorm's bias) [Din]. 2b positions: pe [S,Din], x + pe [B,S,Din]
/// (and pe_kv [Sk,Dkv], x_kv + pe_kv in cross-attention).
layouts input_layouts(stage_id id, const config& c, const run_sizes& z) {
    switch (id) {
        case stage_id::embed: {
            layouts embed{fresh_tensor("token", {"batch", "seq", "d_in"}, {z.B, z.Sq, z.Din})};
            if (c.sources.model_arch == "gpt2" || c.sources.model_arch == "bert")
                embed.push_back(fresh_tensor("position", {"seq", "d_in"}, {z.Sq, z.Din}));
            if (c.sources.model_arch == "bert") embed.push_back(fresh_tensor("token_type", {"seq", "d_in"}, {z.Sq, z.Din}));
            return embed;
        }
        case stage_id::input: {
            layouts input{fresh_tensor("x", {"batch", z.tokens, "d_in"}, {z.B, z.S, z.Din})};
            if (c.cross()) input.push_back(fresh_tensor("x_kv", {"batch", "kv_seq", "d_kv_in"}, {z.B, z.Sk, z.Dkv}));
            return input;
        }
        case stage_id::params: {
            layouts params{fresh_tensor("w_q", {"d_model", "d_in"}, {z.D, z.Din})};
            if (c.qkv_bias) params.push_back(fresh_tensor("b_q", {"d_model"}, {z.D}));
            for (const char* kv : {"k", "v"}) {
                params.push_back(fresh_tensor(std::string("w_") + kv, {z.kv_out, "d_kv_in"}, {z.Dg, z.Dkv}));
                if (c.qkv_bias) params.push_back(fresh_tensor(std::string("b_") + kv, {z.kv_out}, {z.Dg}));
            }
            if (c.out_proj) params.push_back(fresh_tensor("w_o", {"d_model", "d_model"}, {z.D, z.D}));
            if (c.out_proj && c.out_bias) params.push_back(fresh_tensor("b_o", {"d_model"}, {z.D}));
            return params;
        }
        case stage_id::norm: {
            layouts norm{fresh_tensor("x", {"batch", z.tokens, "d_in"}, {z.B, z.S, z.Din}),
                         fresh_tensor("weight", {"d_in"}, {z.Din})};
            if (c.norm == norm_kind::layer_norm) norm.push_back(fresh_tensor("bias", {"d_in"}, {z.Din}));
            return norm;
        }
        default: {  // positions
            layouts positions{fresh_tensor("pe", {z.tokens, "d_in"}, {z.S, z.Din}),
                              fresh_tensor("x", {"batch", z.tokens, "d_in"}, {z.B, z.S, z.Din})};
            if (c.cross()) {
                positions.push_back(fresh_tensor("pe_kv", {"kv_seq", "d_kv_in"}, {z.Sk, z.Dkv}));
                positions.push_back(fresh_tensor("x_kv", {"batch", "kv_seq", "d_kv_in"}, {z.B, z.Sk, z.Dkv}));
            }
            return positions;
        }
    }
}

/// 3-5: q [B,Sq,D] -> view [B,Sq,H,dk] -> transpose(1, 2) [B,H,Sq,dk]; k and v with S_kv
/// tokens and G heads. 5a rope: cos, sin [Sq,dk]; q [B,H,Sq,dk] and the new keys [B,G,S_kv,dk]
/// rotated, fresh. 5b cache: (x[:, :N]·W_kᵀ + b_k).view(B,N,G,dk).transpose(1, 2), views of
/// their own projection [B,N,G·dk] (k rotated, fresh, with rope). 5c append: torch.cat(...,
/// dim=2) [B,G,N+Sq,dk], fresh. 5d repeat_kv: repeat_interleave(H/G, dim=1) [B,H,Sk,dk], fresh.
layouts head_layouts(stage_id id, const config& c, const run_sizes& z) {
    const layouts projected{fresh_tensor("q", {"batch", "seq", "d_model"}, {z.B, z.Sq, z.D}),
                            fresh_tensor("k", {"batch", z.kv_tokens, z.kv_out}, {z.B, z.S_kv, z.Dg}),
                            fresh_tensor("v", {"batch", z.kv_tokens, z.kv_out}, {z.B, z.S_kv, z.Dg})};
    if (id == stage_id::projections) return projected;
    if (id == stage_id::view || id == stage_id::transpose) {
        layouts split, heads;
        for (const planned_tensor& t : projected) {
            const std::string seq = t.dims[1], head = t.name == "q" ? "head" : z.kv_head;
            const std::size_t count = t.name == "q" ? z.H : z.G;
            // t.view(B, S, count, dk) of a contiguous t: contiguous strides over the same memory
            split.push_back(view_tensor(t, "projections." + t.name, {"batch", seq, head, "head_dim"},
                                        contiguous_layout({t.layout.shape[0], t.layout.shape[1], count, z.dk})));
            heads.push_back(view_tensor(split.back(), "", {"batch", head, seq, "head_dim"},
                                        transposed(split.back().layout, 1, 2)));
        }
        return id == stage_id::view ? split : heads;
    }
    if (id == stage_id::rope)
        return {fresh_tensor("cos", {"seq", "head_dim"}, {z.Sq, z.dk}), fresh_tensor("sin", {"seq", "head_dim"}, {z.Sq, z.dk}),
                fresh_tensor("q", {"batch", "head", "seq", "head_dim"}, {z.B, z.H, z.Sq, z.dk}),
                fresh_tensor("k", {"batch", z.kv_head, z.kv_tokens, "head_dim"}, {z.B, z.G, z.S_kv, z.dk})};
    layouts kv;
    for (const std::string name : {"k", "v"}) {
        const bool rotated = c.pos == position_encoding::rope && name == "k";
        if (id == stage_id::cache) {
            const tensor_layout past = transposed(contiguous_layout({z.B, z.N, z.G, z.dk}), 1, 2);  // a view of [B,N,G·dk]
            if (rotated) kv.push_back(fresh_tensor(name, {"batch", z.kv_head, "past", "head_dim"}, {z.B, z.G, z.N, z.dk}));
            else kv.push_back({name, {"batch", z.kv_head, "past", "head_dim"}, past, element_type::float32, "", ""});
        } else if (id == stage_id::append) {
            kv.push_back(fresh_tensor(name, {"batch", z.kv_head, "kv_seq", "head_dim"}, {z.B, z.G, z.Sk, z.dk}));
            kv.back().copy_of = "cache." + name;  // and transpose's (rope's)
            kv.back().copy_by = rotated ? "torch.cat with rope" : "torch.cat with transpose";
        } else {  // repeat_kv
            kv.push_back(fresh_tensor(name, {"batch", "head", "kv_seq", "head_dim"}, {z.B, z.H, z.Sk, z.dk}));
            kv.back().copy_of = (z.N > 0 ? "append." : rotated ? "rope." : "transpose.") + name;
            kv.back().copy_by = "repeat_interleave";
        }
    }
    return kv;
}

/// 6-11: the planes [B,H,Sq,Sk], fresh; 7a alibi's bias [1,H,Sq,Sk]; the mask [B,1,Sq,Sk],
/// broadcast over the heads; dropout's keep beside its weights.
layouts plane_layouts(stage_id id, const run_sizes& z) {
    const planned_dims plane{"batch", "head", "query", "key"};
    const tensor_shape whole{z.B, z.H, z.Sq, z.Sk};
    if (id == stage_id::alibi) return {fresh_tensor("bias", plane, {1, z.H, z.Sq, z.Sk})};
    if (id == stage_id::mask) return {fresh_tensor("mask", plane, {z.B, 1, z.Sq, z.Sk}, element_type::boolean)};
    if (id == stage_id::dropout)
        return {fresh_tensor("weights", plane, whole), fresh_tensor("keep", plane, whole, element_type::boolean)};
    return {fresh_tensor(std::string(info_of(id).tensors[0]), plane, whole)};
}

/// 12 context [B,H,Sq,dk]; 12a flash: nb = ceil(Sk/N) blocks, m, l, rescale [B,H,Sq,nb], acc
/// [B,H,Sq,nb,dk], its own context; 13 merge, context.transpose(1, 2) [B,Sq,H,dk]; 14 concat,
/// merge.contiguous().view(B,Sq,D) (a view when merge is contiguous: one head or one query);
/// 15 out [B,Sq,D].
layouts output_layouts(stage_id id, const config& c, const run_sizes& z) {
    const planned_tensor context = fresh_tensor("context", {"batch", "head", "seq", "head_dim"}, {z.B, z.H, z.Sq, z.dk});
    const planned_tensor merged =
        view_tensor(context, "context.context", {"batch", "seq", "head", "head_dim"}, transposed(context.layout, 1, 2));
    switch (id) {
        case stage_id::context: return {context};
        case stage_id::flash: {
            const std::size_t block = static_cast<std::size_t>(std::max<std::int64_t>(c.flash_block, 1));
            const std::size_t nb = (z.Sk + block - 1) / block;
            const planned_dims per_block{"batch", "head", "query", "block"};
            return {fresh_tensor("m", per_block, {z.B, z.H, z.Sq, nb}), fresh_tensor("l", per_block, {z.B, z.H, z.Sq, nb}),
                    fresh_tensor("rescale", per_block, {z.B, z.H, z.Sq, nb}),
                    fresh_tensor("acc", {"batch", "head", "query", "block", "head_dim"}, {z.B, z.H, z.Sq, nb, z.dk}), context};
        }
        case stage_id::merge: return {merged};
        case stage_id::concat: {
            planned_tensor concat = fresh_tensor("concat", {"batch", "seq", "d_model"}, {z.B, z.Sq, z.D});
            if (is_contiguous(merged.layout)) concat.view_of = merged.view_of;
            else concat.copy_of = "merge.context";
            return {concat};
        }
        default: return {fresh_tensor("out", {"batch", "seq", "d_model"}, {z.B, z.Sq, z.D})};
    }
}

/// 15a-15d, a model's block after attention, each [B,Sq,D] but the MLP's hidden [B,Sq,F]:
/// residual x; mlp_norm x, weight [D] (and LayerNorm's bias); mlp gate (gated only), up,
/// hidden [B,Sq,F], out; block sum (post-norm only: before its norm) and x. All new tensors.
layouts block_layouts(stage_id id, const config& c, const run_sizes& z) {
    const std::size_t F = static_cast<std::size_t>(c.block.width);
    const auto stream = [&](const char* name) { return fresh_tensor(name, {"batch", "seq", "d_model"}, {z.B, z.Sq, z.D}); };
    const auto hidden = [&](const char* name) { return fresh_tensor(name, {"batch", "seq", "d_ff"}, {z.B, z.Sq, F}); };
    switch (id) {
        case stage_id::residual: return {stream("x")};
        case stage_id::mlp_norm: {
            layouts norm{stream("x"), fresh_tensor("weight", {"d_model"}, {z.D})};
            if (c.block.norm == norm_kind::layer_norm) norm.push_back(fresh_tensor("bias", {"d_model"}, {z.D}));
            return norm;
        }
        case stage_id::mlp: {
            layouts mlp;
            if (c.block.gated) mlp.push_back(hidden("gate"));
            mlp.insert(mlp.end(), {hidden("up"), hidden("hidden"), stream("out")});
            return mlp;
        }
        default: {  // block
            layouts block;
            if (c.block.post_norm) block.push_back(stream("sum"));
            block.push_back(stream("x"));
            return block;
        }
    }
}

layouts layouts_of(stage_id id, const config& c, const run_sizes& z) {
    switch (id) {  // no default: a new stage fails to build (-Werror=switch) until it is planned here
        case stage_id::embed:
        case stage_id::input:
        case stage_id::params:
        case stage_id::norm:
        case stage_id::positions: return input_layouts(id, c, z);
        case stage_id::projections:
        case stage_id::view:
        case stage_id::transpose:
        case stage_id::rope:
        case stage_id::cache:
        case stage_id::append:
        case stage_id::repeat_kv: return head_layouts(id, c, z);
        case stage_id::scores:
        case stage_id::scaled:
        case stage_id::alibi:
        case stage_id::biased:
        case stage_id::mask:
        case stage_id::masked:
        case stage_id::softmax:
        case stage_id::dropout: return plane_layouts(id, z);
        case stage_id::context:
        case stage_id::flash:
        case stage_id::merge:
        case stage_id::concat:
        case stage_id::output: return output_layouts(id, c, z);
        case stage_id::residual:
        case stage_id::mlp_norm:
        case stage_id::mlp:
        case stage_id::block: return block_layouts(id, c, z);
    }
    throw std::logic_error("a stage with no plan");
}

/// Which of q, k and v a stage makes as they pass along transpose → rope → append → repeat_kv,
/// and which it reads.
bool makes(stage_id id, const std::string& name) {
    switch (id) {
        case stage_id::transpose: return true;
        case stage_id::rope: return name != "v";  // v is not rotated
        case stage_id::append:
        case stage_id::repeat_kv: return name != "q";
        default: return false;
    }
}
bool makes_any(stage_id id) { return makes(id, "k") || makes(id, "q"); }
bool reads_head_tensor(stage_id id, const std::string& name) {
    switch (id) {
        case stage_id::scores: return name != "v";
        case stage_id::flash: return true;
        case stage_id::context:
        case stage_id::append:
        case stage_id::repeat_kv: return name != "q";
        default: return false;
    }
}

/// The stages `s` reads in this run, in order. The stage table lists what a stage may read
/// (what must be computed for it); here each of q, k and v comes from the last stage before
/// `s` that made it, a plane stage reads the plane before it, the projections (and a decoding
/// step's cache) read x and the weights, and biased adds alibi's bias.
std::vector<stage_id> stages_read(stage_id id, const run_plan& plan) {
    const stage_info& info = info_of(id);
    stage_set reads = info.reads;
    if (id == stage_id::projections || id == stage_id::cache) reads |= stages(stage_id::input, stage_id::params);
    if (id == stage_id::biased) reads |= stage_bit(stage_id::alibi);
    std::vector<stage_id> read;
    const planned_stage* plane_before = nullptr;
    const bool reads_heads = reads_head_tensor(id, "k");  // every reader of q, k or v reads k
    for (const planned_stage& before : plan.stages) {
        if (before.id >= id) break;
        const bool chain = makes_any(before.id) && reads_heads;                     // source_of below
        const bool plane = info_of(before.id).plane && info.reads_previous_plane;  // plane_before below
        if ((reads & stage_bit(before.id)) && !chain && !plane) read.push_back(before.id);
        if (info_of(before.id).plane) plane_before = &before;
    }
    for (const char* name : {"q", "k", "v"})
        if (reads_head_tensor(id, name)) read.push_back(plan.source_of(name, id));
    if (info.reads_previous_plane && plane_before) read.push_back(plane_before->id);
    std::sort(read.begin(), read.end());
    read.erase(std::unique(read.begin(), read.end()), read.end());
    return read;
}

double count_of(const std::vector<bool>& shown, double all) {
    return shown.empty() ? all : static_cast<double>(std::count(shown.begin(), shown.end(), true));
}

/// The elements of `s`'s tensors of its own (views none): an elementwise stage's work.
double own_elements(const planned_stage& s) {
    double n = 0;
    for (const planned_tensor& t : s.tensors)
        if (t.view_of.empty()) n += static_cast<double>(t.elements());
    return n;
}

/// The work of each stage computed, as `plan.choice` lays out the planes: rows and planes it
/// skips are not counted, and in rows each shown [B,H,Sq,Sk] stage is a pass of its own from
/// the scores. Input draws the weights and x, shown or not.
void plan_work(const config& c, run_plan& plan) {
    const run_sizes z(c);
    const double B = z.B, Sq = z.Sq, Sk = z.Sk, D = z.D, H = z.H, dk = z.dk, Din = z.Din, Dkv = z.Dkv,
                 Dg = z.Dg, N = z.N, S_kv = z.S_kv;
    const stage_plan& choice = plan.choice;
    const bool whole = choice.layout == plane_layout::whole_tensor;
    const double rows = choice.computes_every_query_row(c) ? Sq : count_of(choice.shown_query, Sq);
    const planned_stage* dropout = plan.find(stage_id::dropout);
    const bool every_plane = whole || (dropout && dropout->computed);  // dropout's draws are one stream
    const double planes = every_plane ? B * H : count_of(choice.shown_batch, B) * count_of(choice.shown_head, H);
    const double scores_flops = 2 * rows * Sk * dk;  // per plane: [rows,dk] · [dk,Sk]
    double steps_before = 0;                         // in rows: the elementwise steps a pass makes again
    for (planned_stage& s : plan.stages) {
        if (!s.computed) continue;
        work& w = s.cost;
        if (info_of(s.id).plane) {
            const bool pass = whole || choice.shows(s.id);  // in rows: a pass from the scores
            if (s.id == stage_id::dropout) w.draws = B * H * Sq * Sk;
            if (s.id != stage_id::scores) ++steps_before;
            if (!pass) continue;
            w.flops = (whole && s.id != stage_id::scores ? 0 : scores_flops) * planes;
            w.elements = (whole ? 1 : steps_before) * rows * Sk * planes;
            continue;
        }
        switch (s.id) {
            case stage_id::input:  // drawn before the run: the weights, then x (and x_kv)
                if (!c.sources.params_from_file) w.draws += D * Din + 2 * Dg * Dkv + (c.out_proj ? D * D : 0);
                if (!c.sources.x_from_file) w.draws += B * z.S * Din;
                if (c.cross() && !c.sources.x_kv_from_file) w.draws += B * Sk * Dkv;
                break;
            case stage_id::params: break;  // drawn with input
            case stage_id::projections:
                if (!c.sources.from_projections) w.flops = 2 * B * Sq * Din * D + 2 * 2 * B * S_kv * Dkv * Dg;
                break;
            case stage_id::cache:  // the N earlier tokens' k and v, projected again (a real cache keeps them)
                w.flops = 2 * 2 * B * N * Dkv * Dg;
                break;
            case stage_id::context:  // its own pass over every plane, unless the last one shown was it
                w.flops = 2 * rows * Sk * dk * B * H + (whole ? 0 : scores_flops * B * H);
                w.elements = whole ? 0 : steps_before * rows * Sk * B * H;
                break;
            case stage_id::flash:  // per plane: S_j = Q·K_jᵀ and P_j·V_j over every block, exp and sums on each score
                w.flops = 2 * 2 * Sq * Sk * dk * B * H;
                w.elements = 3 * Sq * Sk * B * H;
                break;
            case stage_id::output: w.flops = 2 * B * Sq * D * D; break;
            case stage_id::mlp:  // up (and gate) [B·Sq,D]·[D,F], down [B·Sq,F]·[F,D]
                w.flops = 2 * B * Sq * D * static_cast<double>(c.block.width) * (c.block.gated ? 3 : 2);
                w.elements = own_elements(s);
                break;
            default: w.elements = own_elements(s);  // an elementwise pass or a copy making each of its tensors
        }
    }
}

}  // namespace

std::uint64_t planned_tensor::elements() const {
    std::uint64_t n = 1;
    for (std::size_t size : layout.shape) n = saturating_product(n, size);
    return n;
}

std::uint64_t planned_tensor::bytes() const { return view_of.empty() ? saturating_product(elements(), 4) : 0; }

std::string stage_instance::name() const {
    return (layer >= 0 ? "layer" + std::to_string(layer) + "." : "") + (gradient ? "grad." : "") +
           std::string(info_of(id).name);
}

const planned_stage* run_plan::find(stage_id id) const {
    for (const planned_stage& s : stages)
        if (s.id == id) return &s;
    return nullptr;
}

const planned_tensor& run_plan::tensor_of(stage_id id, const std::string& name) const {
    if (const planned_stage* s = find(id))
        for (const planned_tensor& t : s->tensors)
            if (t.name == name) return t;
    throw std::logic_error("the plan has no " + std::string(info_of(id).name) + "." + name);
}

stage_id run_plan::source_of(const std::string& name, stage_id reader) const {
    stage_id from = stage_id::transpose;
    for (const planned_stage& s : stages)
        if (s.id < reader && makes(s.id, name)) from = s.id;
    return from;
}

run_plan make_plan(const config& c, const stage_plan& choice) {
    const run_sizes z(c);
    run_plan plan{choice, {}};
    const stage_set needed = stages_needed(c, choice.shown);
    for (const stage_info& info : stage_table) {
        if (!stage_in_run(c, info.id)) continue;
        planned_stage s;
        s.id = info.id;
        s.tensors = layouts_of(info.id, c, z);
        for (const planned_tensor& t : s.tensors) s.bytes = saturating_sum(s.bytes, t.bytes());
        // the mask: the float copy the trace holds, and the booleans it was built from
        if (info.id == stage_id::mask) s.bytes = saturating_sum(s.bytes, s.tensors[0].elements());
        s.computed = (needed & stage_bit(info.id)) || (info.id == stage_id::input && !c.sources.from_projections);
        plan.stages.push_back(std::move(s));
    }
    for (planned_stage& s : plan.stages) s.reads = stages_read(s.id, plan);
    plan_work(c, plan);
    return plan;
}

std::string dim_letter(const std::string& dim) {
    if (dim == "batch") return "B";
    if (dim == "seq" || dim == "query") return "Sq";
    if (dim == "kv_seq" || dim == "key") return "Sk";
    if (dim == "d_model") return "D";
    if (dim == "head") return "H";
    if (dim == "head_dim") return "dk";
    if (dim == "d_in") return "Din";
    if (dim == "d_kv_in") return "Dkv";
    if (dim == "past") return "N";
    if (dim == "kv_head") return "G";
    if (dim == "kv_width") return "G·dk";
    if (dim == "block") return "nb";
    if (dim == "d_ff") return "F";
    return dim;
}

void check_planned_layouts(const run_plan& plan, const stage& s) {
    const planned_stage* planned = plan.find(s.id());
    if (!planned) throw std::logic_error("the plan has no stage " + std::string(s.name()));
    for (const tensor& t : s.tensors) {
        const planned_tensor& p = plan.tensor_of(s.id(), t.name);
        const tensor_layout made = t.layout();
        if (made.shape != p.layout.shape || (!s.in_rows() && made.strides != p.layout.strides))
            throw std::logic_error("the forward pass made " + std::string(s.name()) + "." + t.name +
                                   " with another layout than the plan's");
    }
}

std::optional<run_plan> layouts_to_check(const config& c, const stage_plan& choice) {
#ifdef NDEBUG
    (void)c, (void)choice;
    return std::nullopt;
#else
    if (c.mistake != mistake::none) return std::nullopt;
    return make_plan(c, choice);
#endif
}

}  // namespace attn
