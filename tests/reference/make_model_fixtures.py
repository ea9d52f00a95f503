"""Tiny real-model checkpoints and PyTorch references for attn's model layers (issue 24, item 5).

    /usr/bin/python3 tests/reference/make_model_fixtures.py            # from the repository root
    /usr/bin/python3 tests/reference/make_model_fixtures.py --check-attn build/attn   # also diff attn

It writes tests/reference/models/<model>/ for gpt2, bert, llama (2 kv heads, rotary) and mha
(nn.MultiheadAttention's state_dict), each D = 16, H = 4 (dk = 4), 2 layers, vocab 40, 16 positions:

    config.json                 Hugging Face's keys (none for mha: a bare state_dict)
    model.safetensors           F32, the WHOLE state_dict under the model's own names
    model-f16.safetensors       F16 (weights rounded to half)
    model-bf16.safetensors      BF16; gpt2's with the "transformer." prefix, lm_head.weight and the
                                causal buffers h.L.attn.bias as BOOL; bert's without "bert."
    model.npz                   F32, the names of model.safetensors (np.savez)
    hidden.npy                  [1,5,16] the residual stream entering layer 1 (Hugging Face's
                                output_hidden_states[1]: block 0 run on tokens.txt); mha: x
    tokens.txt, vocab.json      the 5 token ids; the tokenizer's {"token": id} for all 40 ids
    stages-layer1.npz           attn's stage members "<stage>.<tensor>" for layer 1 from hidden.npy
    stages-layer1-f16.npz       the same with the F16 file's weights (rounded, upcast to float32)
    stages-layer1-bf16.npz      the same with the BF16 file's weights
    stages-layer0-tokens.npz    layer 0 from tokens.txt, F32 (gpt2, bert, llama): embed.* first

mha has one layer: its stages-layer1*.npz keep the common name, but are the state_dict's one
layer (no --layer) from hidden.npy (x). Every file is made by this script from fixed seeds.

The references are composed from torch ops exactly as each model's Hugging Face code (eager
attention, eval mode) computes, in float32, and NOT from attn's C++:

    gpt2   x1 = ln_1(x); qkv = torch.addmm(c_attn.bias, x1.view(-1, D), c_attn.weight)  (Conv1D, [in,out])
           q, k, v = qkv.split(D, 2); .view(B,S,H,dk).permute(0,2,1,3); w = q @ k.transpose(-1,-2)
           w = w / torch.full([], dk ** 0.5); w = torch.where(causal, w, finfo(float32).min)
           softmax(-1); a = w @ v; a.permute(0,2,1,3).contiguous().view(B,S,D); addmm with c_proj
    bert   nn.Linear query/key/value; view + permute; scores / math.sqrt(dk); no mask (no padding);
           softmax; @ v; permute(0,2,1,3).contiguous().view; attention.output.dense (nn.Linear)
    llama  x1 = LlamaRMSNorm(x); q/k/v_proj (no bias); view(B,S,-1,dk).transpose(1,2);
           rotary: inv_freq = 1 / (theta ** (arange(0, dk, 2, int64).float() / dk)), freqs =
           inv_freq[None,:,None] @ positions[:,None,:] (one product each: torch.outer's bits),
           emb = cat((freqs, freqs), -1), q*cos + rotate_half(q)*sin; repeat_kv (expand +
           reshape); w = q @ k.transpose(2,3) / math.sqrt(dk); w = w + causal (0 / finfo.min);
           softmax(-1, dtype=float32); @ v; transpose(1,2).contiguous().reshape(B,S,D); o_proj
    and the rest of each block (issue 38), as GPT2Block, BertLayer and LlamaDecoderLayer write it:
    gpt2   h = attn_output + x; m = ln_2(h); up = Conv1D c_fc(m); hidden = gelu_new(up) (separate
           float32 ops, NewGELUActivation); out = Conv1D c_proj(hidden); block = h + out
    bert   h = dense + x; m = attention.output.LayerNorm(h); up = intermediate.dense(m); hidden =
           F.gelu(up); out = output.dense(hidden); sum = out + m; block = output.LayerNorm(sum)
    llama  h = x + attn_out; m = post_attention_layernorm(h) (RMSNorm); gate, up = gate_proj(m),
           up_proj(m); hidden = F.silu(gate) * up; out = down_proj(hidden); block = h + out
    mha    what attn computes for its own names (make_fixtures.run with w_q = in_proj_weight[0:D],
           b_q = in_proj_bias[0:D], ...), plus nn.MultiheadAttention's own attn_output and
           attn_weights (need_weights=True, average_attn_weights=False) as mha.attn_output,
           mha.attn_weights: a check within 1e-6, not attn's bits (it scales q before q @ kᵀ).

Members (float32; mask.mask bool, true = may attend): input.x, norm.{x,weight,bias} (gpt2 ln_1,
llama input_layernorm without bias; bert from tokens: embeddings.LayerNorm; absent otherwise),
params.{w_q,b_q,w_k,b_k,w_v,b_v,w_o,b_o} in nn.Linear's [out,in] (absent biases left out),
projections, view, transpose, rope.{cos,sin,q,k} and repeat_kv.{k,v} (llama), scores, scaled,
mask and masked (gpt2, llama: masked holds finfo(float32).min where the mask is false), softmax,
context, merge, concat, output, then residual.x, mlp_norm.{x,weight,bias} (llama: no bias),
mlp.{gate (llama),up,hidden,out} [1,S,F] (out [1,S,D]), block.{sum (bert),x}; block.x of
stages-layer0-tokens.npz is hidden.npy on the Haswell kernel. stages-layer0-tokens.npz adds embed.token [1,S,D] (the token
embeddings), embed.position [S,D] (gpt2: wpe[0..S-1]; bert: position_embeddings[0..S-1]) and,
for bert, embed.token_type [S,D] (token_type_embeddings[0] per position); input.x is their sum
in the model's order: gpt2 token + position; bert (token + token_type) + position, as
BertEmbeddings adds them; llama the token embeddings alone.

Checks (the script stops on a failure): every safetensors file read back by a reader written
here; gpt2 and bert against nn.MultiheadAttention given the same weights (attn_mask for gpt2's
causal mask), llama against a plain per-head loop in float64 (rope from its formula, kv head
h // (H/G)), each within 1e-6 × max(1, max |value|). With --check-attn, attn itself is run on every
reference (its own names from a temporary npz; gpt2 and llama from norm.x) and every stage
must be the same bits for mha; the others are printed.

One set of bits per OpenBLAS kernel, as make_fixtures.py (read its docstring): the script runs
itself once per kernel of make_fixtures.KERNELS with OPENBLAS_CORETYPE set and writes the Haswell
kernel's files to models/, and for each other set of openblas/kernels.txt (make_fixtures.py's,
so rerun this script after that one) the stage references that differ to
openblas/<Set>/models/<model>/; models/kernels.txt lists the kernels made. Only stages-*.npz may
differ: the checkpoints and hidden.npy (block 0's output on the Haswell kernel) are inputs, the
same for every kernel, and the script checks that. A kernel this CPU cannot run is skipped.
"""

import json
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_fixtures as mf  # noqa: E402

OUT = os.path.join(HERE, "models")

D, H, DK, B, S = 16, 4, 4, 1, 5
LAYERS, VOCAB, POSITIONS = 2, 40, 16
G = 2                  # llama's key/value heads
FFN = 64               # gpt2's n_inner (4·D) and bert's intermediate_size
LLAMA_FFN = 32         # llama's intermediate_size
FMIN = torch.finfo(torch.float32).min
EPS = {"gpt2": 1e-5, "bert": 1e-12, "llama": 1e-6}
ROPE_THETA = 10000.0


# ----------------------------------------------------------------------------
# weights: fixed seeds, scaled so that the softmax rows are far from flat


class Draw:
    """torch.randn from one generator per model, in the order the names are listed."""

    def __init__(self, seed):
        self.g = torch.Generator().manual_seed(seed)

    def normal(self, shape, std, mean=0.0):
        return torch.randn(*shape, generator=self.g) * std + mean


def gpt2_state_dict():
    d, sd = Draw(2401), {}
    sd["wte.weight"] = d.normal((VOCAB, D), 0.5)
    sd["wpe.weight"] = d.normal((POSITIONS, D), 0.2)
    for L in range(LAYERS):
        p = "h.%d." % L
        sd[p + "ln_1.weight"] = d.normal((D,), 0.1, 1.0)
        sd[p + "ln_1.bias"] = d.normal((D,), 0.1)
        sd[p + "attn.c_attn.weight"] = d.normal((D, 3 * D), 0.35)   # Conv1D: [in, out]
        sd[p + "attn.c_attn.bias"] = d.normal((3 * D,), 0.2)
        sd[p + "attn.c_proj.weight"] = d.normal((D, D), 0.25)
        sd[p + "attn.c_proj.bias"] = d.normal((D,), 0.1)
        sd[p + "ln_2.weight"] = d.normal((D,), 0.1, 1.0)
        sd[p + "ln_2.bias"] = d.normal((D,), 0.1)
        sd[p + "mlp.c_fc.weight"] = d.normal((D, FFN), 0.25)
        sd[p + "mlp.c_fc.bias"] = d.normal((FFN,), 0.1)
        sd[p + "mlp.c_proj.weight"] = d.normal((FFN, D), 0.125)
        sd[p + "mlp.c_proj.bias"] = d.normal((D,), 0.1)
    sd["ln_f.weight"] = d.normal((D,), 0.1, 1.0)
    sd["ln_f.bias"] = d.normal((D,), 0.1)
    return sd


def bert_state_dict():
    """BertModel's names (the files add the "bert." prefix of BertFor... where asked)."""
    d, sd = Draw(2402), {}
    sd["embeddings.word_embeddings.weight"] = d.normal((VOCAB, D), 0.5)
    sd["embeddings.position_embeddings.weight"] = d.normal((POSITIONS, D), 0.2)
    sd["embeddings.token_type_embeddings.weight"] = d.normal((2, D), 0.2)
    sd["embeddings.LayerNorm.weight"] = d.normal((D,), 0.1, 1.0)
    sd["embeddings.LayerNorm.bias"] = d.normal((D,), 0.1)
    for L in range(LAYERS):
        p = "encoder.layer.%d." % L
        for n in ("query", "key", "value"):
            sd[p + "attention.self.%s.weight" % n] = d.normal((D, D), 0.35)   # nn.Linear: [out, in]
            sd[p + "attention.self.%s.bias" % n] = d.normal((D,), 0.2)
        sd[p + "attention.output.dense.weight"] = d.normal((D, D), 0.25)
        sd[p + "attention.output.dense.bias"] = d.normal((D,), 0.1)
        sd[p + "attention.output.LayerNorm.weight"] = d.normal((D,), 0.1, 1.0)
        sd[p + "attention.output.LayerNorm.bias"] = d.normal((D,), 0.1)
        sd[p + "intermediate.dense.weight"] = d.normal((FFN, D), 0.25)
        sd[p + "intermediate.dense.bias"] = d.normal((FFN,), 0.1)
        sd[p + "output.dense.weight"] = d.normal((D, FFN), 0.125)
        sd[p + "output.dense.bias"] = d.normal((D,), 0.1)
        sd[p + "output.LayerNorm.weight"] = d.normal((D,), 0.1, 1.0)
        sd[p + "output.LayerNorm.bias"] = d.normal((D,), 0.1)
    sd["pooler.dense.weight"] = d.normal((D, D), 0.25)
    sd["pooler.dense.bias"] = d.normal((D,), 0.1)
    return sd


def llama_state_dict():
    d, sd = Draw(2403), {}
    sd["model.embed_tokens.weight"] = d.normal((VOCAB, D), 0.5)
    for L in range(LAYERS):
        p = "model.layers.%d." % L
        sd[p + "input_layernorm.weight"] = d.normal((D,), 0.1, 1.0)
        sd[p + "self_attn.q_proj.weight"] = d.normal((H * DK, D), 0.35)
        sd[p + "self_attn.k_proj.weight"] = d.normal((G * DK, D), 0.35)
        sd[p + "self_attn.v_proj.weight"] = d.normal((G * DK, D), 0.35)
        sd[p + "self_attn.o_proj.weight"] = d.normal((D, H * DK), 0.25)
        sd[p + "post_attention_layernorm.weight"] = d.normal((D,), 0.1, 1.0)
        sd[p + "mlp.gate_proj.weight"] = d.normal((LLAMA_FFN, D), 0.25)
        sd[p + "mlp.up_proj.weight"] = d.normal((LLAMA_FFN, D), 0.25)
        sd[p + "mlp.down_proj.weight"] = d.normal((D, LLAMA_FFN), 0.175)
    sd["model.norm.weight"] = d.normal((D,), 0.1, 1.0)
    sd["lm_head.weight"] = d.normal((VOCAB, D), 0.25)
    return sd


def mha_state_dict():
    """nn.MultiheadAttention(16, 4, batch_first=True)'s names; its own init leaves the biases 0,
    so all are drawn here (a reader that drops a bias must fail)."""
    d = Draw(2404)
    sd = {"in_proj_weight": d.normal((3 * D, D), 0.35), "in_proj_bias": d.normal((3 * D,), 0.2),
          "out_proj.weight": d.normal((D, D), 0.25), "out_proj.bias": d.normal((D,), 0.1)}
    assert list(sd) == list(nn.MultiheadAttention(D, H, batch_first=True).state_dict())
    return sd


# ----------------------------------------------------------------------------
# tokens and vocabularies: made-up words, each tokenizer's style

STORY = ["robot", "reads", "book", "cat", "sat", "on", "mat", "dog", "ran", "home", "and", "it",
         "was", "warm", "red", "blue", "sky", "sun", "moon", "tree", "bird", "sang", "fast", "big",
         "small", "green", "lamp"]


def gpt2_vocab():
    """Byte-level BPE: "Ġ" marks a word that follows a space; <|endoftext|> last, as in GPT-2."""
    toks = ["!", ".", ",", "The", "Ġthe", "Ġa"] + ["Ġ" + w for w in STORY] + ["s", "ly", "er", "ing",
                                                                             "ed", "Ċ"]
    toks.append("<|endoftext|>")
    return toks, ["The", "Ġrobot", "Ġreads", "Ġbook", "s"]


def bert_vocab():
    """WordPiece: special tokens first, "##" marks a piece inside a word."""
    toks = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "a", ".", ","] + STORY + [
        "##s", "##ly", "##er", "##ing"]
    return toks, ["[CLS]", "the", "robot", "reads", "[SEP]"]


def llama_vocab():
    """SentencePiece: "▁" marks a word start; <unk>, <s>, </s> are ids 0, 1, 2 as in Llama."""
    toks = ["<unk>", "<s>", "</s>", "▁The", "▁the", "▁a", "."] + ["▁" + w for w in STORY] + [
        "s", "ly", "er", "ing", "ed", "<0x0A>"]
    return toks, ["<s>", "▁The", "▁robot", "▁reads", "▁book"]


def mha_vocab():
    toks = ["<pad>", "the", "a", ".", ","] + STORY + ["s", "ly", "er", "ing", "ed", "<eos>", "<bos>", "<unk>"]
    return toks, ["the", "robot", "reads", "a", "book"]


VOCABS = {"gpt2": gpt2_vocab, "bert": bert_vocab, "llama": llama_vocab, "mha": mha_vocab}


def vocab_and_ids(model):
    toks, sentence = VOCABS[model]()
    assert len(toks) == VOCAB and len(set(toks)) == VOCAB, (model, len(toks))
    vocab = {t: i for i, t in enumerate(toks)}
    return vocab, [vocab[t] for t in sentence]


# ----------------------------------------------------------------------------
# the models, composed as Hugging Face's modeling code computes (eval mode: dropout is the identity)


def conv1d(x, weight, bias):
    """transformers.pytorch_utils.Conv1D.forward: weight [in, out]."""
    size_out = x.size()[:-1] + (weight.size(-1),)
    return torch.addmm(bias, x.view(-1, x.size(-1)), weight).view(size_out)


def gelu_new(x):
    """GPT-2's activation (NewGELUActivation)."""
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def rms_norm(x, weight, eps):
    """LlamaRMSNorm.forward."""
    variance = x.to(torch.float32).pow(2).mean(-1, keepdim=True)
    x = x * torch.rsqrt(variance + eps)
    return weight * x.to(torch.float32)


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def keep_mask():
    """[1,1,S,S] bool, true = may attend: attn's convention (GPT-2's tril buffer sliced)."""
    bias = torch.tril(torch.ones((POSITIONS, POSITIONS), dtype=torch.bool)).view(1, 1, POSITIONS, POSITIONS)
    return bias[:, :, 0:S, 0:S]


def gpt2_attention(sd, L, x):
    """Stages of GPT2Attention in block L from the residual stream x [B,S,D]; returns (stages, out)."""
    p = "h.%d." % L
    W, bias = sd[p + "attn.c_attn.weight"], sd[p + "attn.c_attn.bias"]      # [D,3D], [3D]
    Wo, bo = sd[p + "attn.c_proj.weight"], sd[p + "attn.c_proj.bias"]
    st = {"input.x": x}
    for i, n in enumerate("qkv"):                                           # nn.Linear's [out, in]
        st["params.w_" + n] = W[:, i * D:(i + 1) * D].t()
        st["params.b_" + n] = bias[i * D:(i + 1) * D]
    st["params.w_o"], st["params.b_o"] = Wo.t(), bo
    x1 = F.layer_norm(x, (D,), sd[p + "ln_1.weight"], sd[p + "ln_1.bias"], EPS["gpt2"])
    st.update({"norm.x": x1, "norm.weight": sd[p + "ln_1.weight"], "norm.bias": sd[p + "ln_1.bias"]})
    qkv = conv1d(x1, W, bias)                                               # [B,S,3D]
    q, k, v = qkv.split(D, dim=2)                                           # [B,S,D] each
    st.update({"projections.q": q, "projections.k": k, "projections.v": v})
    q, k, v = (t.view(B, S, H, DK) for t in (q, k, v))                      # [B,S,H,dk]
    st.update({"view.q": q, "view.k": k, "view.v": v})
    q, k, v = (t.permute(0, 2, 1, 3) for t in (q, k, v))                    # [B,H,S,dk]
    st.update({"transpose.q": q, "transpose.k": k, "transpose.v": v})
    w = torch.matmul(q, k.transpose(-1, -2))                                # [B,H,S,S]
    st["scores.scores"] = w
    w = w / torch.full([], v.size(-1) ** 0.5, dtype=w.dtype, device=w.device)
    st["scaled.scaled"] = w
    causal = keep_mask()
    mask_value = torch.full([], FMIN, dtype=w.dtype, device=w.device)
    w = torch.where(causal, w.to(w.dtype), mask_value)
    st.update({"mask.mask": causal, "masked.masked": w})
    w = nn.functional.softmax(w, dim=-1).type(v.dtype)
    st["softmax.weights"] = w
    a = torch.matmul(w, v)                                                  # [B,H,S,dk]
    st["context.context"] = a
    a = a.permute(0, 2, 1, 3).contiguous()                                  # [B,S,H,dk]
    st["merge.context"] = a
    a = a.view(a.size()[:-2] + (H * DK,))                                   # [B,S,D]
    st["concat.concat"] = a
    out = conv1d(a, Wo, bo)
    st["output.out"] = out
    return st, out


def gpt2_block_rest(sd, L, x, attn_out):
    """The rest of GPT2Block after the attention: residual, ln_2, MLP, residual; (stages, output)."""
    p = "h.%d." % L
    h = attn_out + x                                                        # hidden_states = attn_output + residual
    w, b = sd[p + "ln_2.weight"], sd[p + "ln_2.bias"]
    m = F.layer_norm(h, (D,), w, b, EPS["gpt2"])
    up = conv1d(m, sd[p + "mlp.c_fc.weight"], sd[p + "mlp.c_fc.bias"])    # [B,S,F]
    hidden = gelu_new(up)
    out = conv1d(hidden, sd[p + "mlp.c_proj.weight"], sd[p + "mlp.c_proj.bias"])
    x_next = h + out                                                        # residual + feed_forward_hidden_states
    return {"residual.x": h, "mlp_norm.x": m, "mlp_norm.weight": w, "mlp_norm.bias": b, "mlp.up": up,
            "mlp.hidden": hidden, "mlp.out": out, "block.x": x_next}, x_next


def gpt2_embed(sd, ids):
    """GPT2Model: inputs_embeds + position_embeds."""
    tok = sd["wte.weight"][torch.tensor([ids])]                             # [B,S,D]
    pos = sd["wpe.weight"][torch.arange(S)]                                 # [S,D]
    x = tok + pos
    return {"embed.token": tok, "embed.position": pos}, x


def bert_attention(sd, L, x):
    """Stages of BertSelfAttention + BertSelfOutput.dense in layer L from its input x."""
    p = "encoder.layer.%d.attention." % L
    st = {"input.x": x}
    lin = {}
    for n, hf in (("q", "self.query"), ("k", "self.key"), ("v", "self.value"), ("o", "output.dense")):
        lin[n] = (sd[p + hf + ".weight"], sd[p + hf + ".bias"])
        st["params.w_" + n], st["params.b_" + n] = lin[n]
    q, k, v = (F.linear(x, *lin[n]) for n in "qkv")                         # nn.Linear, [B,S,D]
    st.update({"projections.q": q, "projections.k": k, "projections.v": v})
    q, k, v = (t.view(t.size()[:-1] + (H, DK)) for t in (q, k, v))          # [B,S,H,dk]
    st.update({"view.q": q, "view.k": k, "view.v": v})
    q, k, v = (t.permute(0, 2, 1, 3) for t in (q, k, v))                    # [B,H,S,dk]
    st.update({"transpose.q": q, "transpose.k": k, "transpose.v": v})
    scores = torch.matmul(q, k.transpose(-1, -2))
    st["scores.scores"] = scores
    scores = scores / math.sqrt(DK)
    st["scaled.scaled"] = scores          # the extended attention mask of a sentence without padding
    probs = nn.functional.softmax(scores, dim=-1)   # is -0.0 everywhere: adding it changes no bit
    st["softmax.weights"] = probs
    ctx = torch.matmul(probs, v)
    st["context.context"] = ctx
    ctx = ctx.permute(0, 2, 1, 3).contiguous()
    st["merge.context"] = ctx
    ctx = ctx.view(ctx.size()[:-2] + (D,))
    st["concat.concat"] = ctx
    out = F.linear(ctx, *lin["o"])
    st["output.out"] = out
    return st, out


def bert_layer_rest(sd, L, x, dense_out):
    """BertSelfOutput's LayerNorm(dense + input), BertIntermediate (gelu), BertOutput; (stages, output)."""
    p = "encoder.layer.%d." % L
    h = dense_out + x                                                       # LayerNorm(hidden_states + input_tensor)
    w, b = sd[p + "attention.output.LayerNorm.weight"], sd[p + "attention.output.LayerNorm.bias"]
    a = F.layer_norm(h, (D,), w, b, EPS["bert"])
    up = F.linear(a, sd[p + "intermediate.dense.weight"], sd[p + "intermediate.dense.bias"])
    i = F.gelu(up)
    o = F.linear(i, sd[p + "output.dense.weight"], sd[p + "output.dense.bias"])
    total = o + a
    x_next = F.layer_norm(total, (D,), sd[p + "output.LayerNorm.weight"], sd[p + "output.LayerNorm.bias"], EPS["bert"])
    return {"residual.x": h, "mlp_norm.x": a, "mlp_norm.weight": w, "mlp_norm.bias": b, "mlp.up": up,
            "mlp.hidden": i, "mlp.out": o, "block.sum": total, "block.x": x_next}, x_next


def bert_embed(sd, ids):
    """BertEmbeddings: (inputs_embeds + token_type_embeddings) + position_embeddings, LayerNorm."""
    tok = sd["embeddings.word_embeddings.weight"][torch.tensor([ids])]      # [B,S,D]
    tt = sd["embeddings.token_type_embeddings.weight"][torch.zeros(S, dtype=torch.long)]  # [S,D]
    pos = sd["embeddings.position_embeddings.weight"][torch.arange(S)]      # [S,D]
    x = tok + tt
    x += pos
    return {"embed.token": tok, "embed.token_type": tt, "embed.position": pos}, x


def llama_rope():
    """LlamaRotaryEmbedding.forward for positions 0..S-1: cos, sin [S,dk]."""
    inv_freq = 1.0 / (ROPE_THETA ** (torch.arange(0, DK, 2, dtype=torch.int64).float() / DK))
    position_ids = torch.arange(S).view(1, S)
    inv_freq_expanded = inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
    position_ids_expanded = position_ids[:, None, :].float()
    freqs = (inv_freq_expanded.float() @ position_ids_expanded.float()).transpose(1, 2)   # [1,S,dk/2]
    assert torch.equal(freqs[0], torch.outer(torch.arange(S).float(), inv_freq))
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos()[0], emb.sin()[0]


def llama_attention(sd, L, x):
    """Stages of LlamaAttention (eager) in layer L from the residual stream x; returns (stages, out)."""
    p = "model.layers.%d." % L
    Wq, Wk, Wv, Wo = (sd[p + "self_attn.%s_proj.weight" % n] for n in "qkvo")
    st = {"input.x": x, "params.w_q": Wq, "params.w_k": Wk, "params.w_v": Wv, "params.w_o": Wo}
    nw = sd[p + "input_layernorm.weight"]
    x1 = rms_norm(x, nw, EPS["llama"])
    st.update({"norm.x": x1, "norm.weight": nw})
    q, k, v = F.linear(x1, Wq), F.linear(x1, Wk), F.linear(x1, Wv)          # [B,S,H·dk], [B,S,G·dk]
    st.update({"projections.q": q, "projections.k": k, "projections.v": v})
    q, k, v = (t.view(B, S, -1, DK) for t in (q, k, v))                     # [B,S,H|G,dk]
    st.update({"view.q": q, "view.k": k, "view.v": v})
    q, k, v = (t.transpose(1, 2) for t in (q, k, v))                        # [B,H|G,S,dk]
    st.update({"transpose.q": q, "transpose.k": k, "transpose.v": v})
    cos, sin = llama_rope()                                                 # [S,dk]
    c, s = cos.unsqueeze(0).unsqueeze(1), sin.unsqueeze(0).unsqueeze(1)      # [1,1,S,dk]
    q = (q * c) + (rotate_half(q) * s)
    k = (k * c) + (rotate_half(k) * s)
    st.update({"rope.cos": cos, "rope.sin": sin, "rope.q": q, "rope.k": k})
    n_rep = H // G
    k, v = (t[:, :, None, :, :].expand(B, G, n_rep, S, DK).reshape(B, G * n_rep, S, DK) for t in (k, v))
    st.update({"repeat_kv.k": k, "repeat_kv.v": v})
    w = torch.matmul(q, k.transpose(2, 3))
    st["scores.scores"] = w
    w = w / math.sqrt(DK)
    st["scaled.scaled"] = w
    causal_mask = torch.triu(torch.full((S, S), FMIN), diagonal=1)[None, None]   # 0 / finfo.min
    w = w + causal_mask
    st.update({"mask.mask": keep_mask(), "masked.masked": w})
    w = nn.functional.softmax(w, dim=-1, dtype=torch.float32).to(q.dtype)
    st["softmax.weights"] = w
    a = torch.matmul(w, v)
    st["context.context"] = a
    a = a.transpose(1, 2).contiguous()
    st["merge.context"] = a
    a = a.reshape(B, S, -1)
    st["concat.concat"] = a
    out = F.linear(a, Wo)
    st["output.out"] = out
    return st, out


def llama_layer_rest(sd, L, x, attn_out):
    """LlamaDecoderLayer after the attention: residual, post_attention_layernorm, SiLU MLP, residual."""
    p = "model.layers.%d." % L
    h = x + attn_out                                                        # residual + hidden_states
    w = sd[p + "post_attention_layernorm.weight"]
    m = rms_norm(h, w, EPS["llama"])
    gate, up = F.linear(m, sd[p + "mlp.gate_proj.weight"]), F.linear(m, sd[p + "mlp.up_proj.weight"])
    hidden = F.silu(gate) * up                                              # act_fn(gate_proj(x)) * up_proj(x)
    out = F.linear(hidden, sd[p + "mlp.down_proj.weight"])
    x_next = h + out
    return {"residual.x": h, "mlp_norm.x": m, "mlp_norm.weight": w, "mlp.gate": gate, "mlp.up": up,
            "mlp.hidden": hidden, "mlp.out": out, "block.x": x_next}, x_next


def llama_embed(sd, ids):
    tok = sd["model.embed_tokens.weight"][torch.tensor([ids])]
    return {"embed.token": tok}, tok


def mha_attn_names(sd):
    """attn's own names from in_proj_weight / in_proj_bias (the three stacked) and out_proj."""
    p = {}
    for i, n in enumerate("qkv"):
        p["w_" + n] = sd["in_proj_weight"][i * D:(i + 1) * D]
        p["b_" + n] = sd["in_proj_bias"][i * D:(i + 1) * D]
    p["w_o"], p["b_o"] = sd["out_proj.weight"], sd["out_proj.bias"]
    return p


def mha_stages(sd, x):
    """What attn computes for its own names (make_fixtures.run), flattened, plus nn.MultiheadAttention's."""
    c = mf.case("mha", batch=B, seq=S, d_model=D, heads=H)[1]
    stages, _ = mf.run(c, given={"x": x, "params": mha_attn_names(sd)})
    st = {"%s.%s" % (s, t): v for s, ts in stages.items() for t, v in ts.items()}
    m = nn.MultiheadAttention(D, H, batch_first=True)
    m.load_state_dict(sd)
    m.eval()
    out, weights = m(x, x, x, need_weights=True, average_attn_weights=False)
    st["mha.attn_output"], st["mha.attn_weights"] = out, weights
    return st, out


ATTENTION = {"gpt2": gpt2_attention, "bert": bert_attention, "llama": llama_attention}
REST = {"gpt2": gpt2_block_rest, "bert": bert_layer_rest, "llama": llama_layer_rest}
EMBED = {"gpt2": gpt2_embed, "bert": bert_embed, "llama": llama_embed}
STATE_DICT = {"gpt2": gpt2_state_dict, "bert": bert_state_dict, "llama": llama_state_dict, "mha": mha_state_dict}


def tokens_stages(model, sd, ids):
    """Layer 0 from the token ids: embed.*, input.x (the residual stream), then the layer's stages;
    bert's norm stage is embeddings.LayerNorm, whose output is what layer 0 reads."""
    emb, x = EMBED[model](sd, ids)
    if model == "bert":
        w, b = sd["embeddings.LayerNorm.weight"], sd["embeddings.LayerNorm.bias"]
        x1 = F.layer_norm(x, (D,), w, b, EPS["bert"])
        st, out = bert_attention(sd, 0, x1)
        st["input.x"] = x                              # the residual stream: the sum, before the norm
        params = {k: v for k, v in st.items() if k.startswith("params.")}
        rest = {k: v for k, v in st.items() if not k.startswith(("params.", "input."))}
        st = dict(emb, **{"input.x": x}, **params, **{"norm.x": x1, "norm.weight": w, "norm.bias": b}, **rest)
        block, x_next = bert_layer_rest(sd, 0, x1, out)
        return dict(st, **block), x_next
    st, out = ATTENTION[model](sd, 0, x)
    block, x_next = REST[model](sd, 0, x, out)
    return dict(emb, **st, **block), x_next


# ----------------------------------------------------------------------------
# independent formulations: the references must agree with them within a few float32 ulps


def close(name, got, want):
    """The largest |got - want|, held to 1e-6 × max(1, max |want|) (a few float32 ulps)."""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, (name, got.shape, want.shape)
    diff, atol = float(np.abs(got - want).max()), 1e-6 * max(1.0, float(np.abs(want).max()))
    assert diff <= atol, "%s: max |diff| %.3g > %.3g" % (name, diff, atol)
    return diff


def check_with_torch_mha(model, st):
    """gpt2 and bert against nn.MultiheadAttention given the same weights in its own layout."""
    x1 = st.get("norm.x", st["input.x"])                                    # what the projections read
    m = nn.MultiheadAttention(D, H, batch_first=True)
    m.load_state_dict({
        "in_proj_weight": torch.cat([st["params.w_" + n] for n in "qkv"]),
        "in_proj_bias": torch.cat([st["params.b_" + n] for n in "qkv"]),
        "out_proj.weight": st["params.w_o"], "out_proj.bias": st["params.b_o"]})
    m.eval()
    mask = ~keep_mask()[0, 0] if model == "gpt2" else None                  # MHA: true = not allowed
    out, w = m(x1, x1, x1, attn_mask=mask, need_weights=True, average_attn_weights=False)
    return max(close(model + " output (nn.MultiheadAttention)", out, st["output.out"]),
               close(model + " weights (nn.MultiheadAttention)", w, st["softmax.weights"]))


def check_llama_loop(st):
    """llama head by head in float64: RMSNorm, rope from its formula, kv head h // (H/G), causal."""
    f = lambda n: st[n].double().numpy()
    x, nw = f("input.x")[0], f("norm.weight")
    x1 = x / np.sqrt((x * x).mean(-1, keepdims=True) + EPS["llama"]) * nw
    q, k, v = x1 @ f("params.w_q").T, x1 @ f("params.w_k").T, x1 @ f("params.w_v").T
    out_heads = np.zeros((S, D))
    weights = np.zeros((H, S, S))
    half = DK // 2
    for h in range(H):
        g = h // (H // G)
        qh, kh, vh = q[:, h * DK:(h + 1) * DK], k[:, g * DK:(g + 1) * DK], v[:, g * DK:(g + 1) * DK]
        def rot(t):
            r = np.empty_like(t)
            for pos in range(S):
                for i in range(half):
                    a = pos / ROPE_THETA ** (2 * i / DK)
                    x0, y0 = t[pos, i], t[pos, i + half]
                    r[pos, i], r[pos, i + half] = x0 * math.cos(a) - y0 * math.sin(a), y0 * math.cos(a) + x0 * math.sin(a)
            return r
        qh, kh = rot(qh), rot(kh)
        for i in range(S):
            s = np.array([qh[i] @ kh[j] / math.sqrt(DK) for j in range(i + 1)])
            e = np.exp(s - s.max())
            weights[h, i, :i + 1] = e / e.sum()
            out_heads[i, h * DK:(h + 1) * DK] = weights[h, i, :i + 1] @ vh[:i + 1]
    out = out_heads @ f("params.w_o").T
    return max(close("llama output (loop)", out[None], st["output.out"]),
               close("llama weights (loop)", weights[None], st["softmax.weights"]))


# ----------------------------------------------------------------------------
# files


def write_safetensors(path, tensors):
    """{name: torch tensor (float32/float16/bfloat16/bool)} -> a .safetensors file: u64 LE header
    length, the JSON header ({"__metadata__"} then the tensors in name order) padded with spaces to
    a multiple of 8, then the data, contiguous, in the same order."""
    code = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16", torch.bool: "BOOL"}
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name in sorted(tensors):
        t = tensors[name].detach().contiguous()
        raw = (t.view(torch.int16) if t.dtype == torch.bfloat16 else t).numpy().tobytes()
        assert len(raw) == t.numel() * t.element_size()
        header[name] = {"dtype": code[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as fh:
        fh.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def read_safetensors(path):
    """The reader the files are checked with: {name: float32 / bool numpy array}."""
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    assert n % 8 == 0 and 8 + n <= len(data), path
    header = json.loads(data[8:8 + n].decode())
    assert header.pop("__metadata__") == {"format": "pt"}
    body, out, end = data[8 + n:], {}, 0
    for name in sorted(header):
        e = header[name]
        b, f = e["data_offsets"]
        assert b == end, (path, name)  # contiguous, in name order
        end = f
        raw = body[b:f]
        if e["dtype"] == "F32":
            a = np.frombuffer(raw, "<f4")
        elif e["dtype"] == "F16":
            a = np.frombuffer(raw, "<f2").astype(np.float32)
        elif e["dtype"] == "BF16":
            a = (np.frombuffer(raw, "<u2").astype(np.uint32) << 16).view(np.float32)
        elif e["dtype"] == "BOOL":
            a = np.frombuffer(raw, np.uint8).astype(bool)
        out[name] = a.reshape(e["shape"])
    assert end == len(body), path
    return out


def rounded(sd, dtype):
    """The weights a float32 model holds after loading a checkpoint stored in `dtype`."""
    return {n: t.to(dtype).float() for n, t in sd.items()}


def file_names(model, kind):
    """{name in the file: name in the model's state_dict as composed here}; kind f32/f16/bf16."""
    sd_names = list(STATE_DICT[model]())
    if model == "gpt2" and kind == "bf16":
        m = {"transformer." + n: n for n in sd_names}
        m["lm_head.weight"] = "wte.weight"                                   # tied to wte
        return m
    if model == "bert" and kind != "bf16":
        return {"bert." + n: n for n in sd_names}
    return {n: n for n in sd_names}


def save_npz(path, members):
    np.savez(path, **{k: t.detach().contiguous().numpy() for k, t in members.items()})


def make_model(model, root, hidden_from=None):
    """models/<model>/ under root; hidden.npy from hidden_from/<model>/ when given (the main
    kernel's: an input, the same for every kernel), else block 0's output on this kernel."""
    sd = STATE_DICT[model]()
    d = os.path.join(root, model)
    os.makedirs(d)
    torch_dtype = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
    for kind, fname in (("f32", "model.safetensors"), ("f16", "model-f16.safetensors"),
                        ("bf16", "model-bf16.safetensors")):
        names = file_names(model, kind)
        tensors = {fn: sd[n].to(torch_dtype[kind]) for fn, n in names.items()}
        if model == "gpt2" and kind == "bf16":  # the old causal buffer: a dtype a reader must skip
            for L in range(LAYERS):
                tensors["transformer.h.%d.attn.bias" % L] = torch.tril(
                    torch.ones((POSITIONS, POSITIONS), dtype=torch.bool)).view(1, 1, POSITIONS, POSITIONS)
        write_safetensors(os.path.join(d, fname), tensors)
        back = read_safetensors(os.path.join(d, fname))
        assert sorted(back) == sorted(tensors), fname
        for fn, t in tensors.items():
            assert np.array_equal(back[fn], (t if t.dtype == torch.bool else t.float()).numpy()), (fname, fn)
        if kind == "f32":
            save_npz(os.path.join(d, "model.npz"), {fn: sd[n] for fn, n in names.items()})

    vocab, ids = vocab_and_ids(model)
    with open(os.path.join(d, "vocab.json"), "w", encoding="utf-8") as fh:
        json.dump(vocab, fh, ensure_ascii=False, indent=1)
        fh.write("\n")
    with open(os.path.join(d, "tokens.txt"), "w") as fh:
        fh.write(",".join(map(str, ids)) + "\n")

    report = {}
    if model == "mha":
        hidden = Draw(2405).normal((B, S, D), 1.0)                          # x
    else:
        config = {
            "gpt2": {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_embd": D, "n_head": H,
                     "n_layer": LAYERS, "n_positions": POSITIONS, "n_inner": None,
                     "activation_function": "gelu_new", "layer_norm_epsilon": EPS["gpt2"], "vocab_size": VOCAB},
            "bert": {"model_type": "bert", "architectures": ["BertForMaskedLM"], "hidden_size": D,
                     "num_attention_heads": H, "num_hidden_layers": LAYERS, "intermediate_size": FFN,
                     "hidden_act": "gelu", "layer_norm_eps": EPS["bert"], "max_position_embeddings": POSITIONS,
                     "type_vocab_size": 2, "vocab_size": VOCAB},
            "llama": {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": D,
                      "num_attention_heads": H, "num_key_value_heads": G, "num_hidden_layers": LAYERS,
                      "intermediate_size": LLAMA_FFN, "hidden_act": "silu", "rms_norm_eps": EPS["llama"],
                      "rope_theta": ROPE_THETA, "max_position_embeddings": POSITIONS, "vocab_size": VOCAB,
                      "tie_word_embeddings": False},
        }[model]
        config["torch_dtype"] = "float32"
        with open(os.path.join(d, "config.json"), "w") as fh:
            json.dump(config, fh, indent=2)
            fh.write("\n")
        st0, hidden = tokens_stages(model, sd, ids)                      # block 0 from the tokens
        if hidden_from is not None:
            hidden = torch.from_numpy(np.load(os.path.join(hidden_from, model, "hidden.npy")))
        save_npz(os.path.join(d, "stages-layer0-tokens.npz"), st0)
        report["layer0 check"] = (check_with_torch_mha(model, st0) if model != "llama" else check_llama_loop(st0))
    np.save(os.path.join(d, "hidden.npy"), hidden.detach().numpy().astype("<f4"))

    for kind, suffix in (("f32", ""), ("f16", "-f16"), ("bf16", "-bf16")):
        w = sd if kind == "f32" else rounded(sd, torch_dtype[kind])
        if model == "mha":
            st, _ = mha_stages(w, hidden)
            report["mha " + kind] = max(close("mha attn_output", st["mha.attn_output"], st["output.out"]),
                                        close("mha attn_weights", st["mha.attn_weights"], st["softmax.weights"]))
        else:
            st, out = ATTENTION[model](w, 1, hidden)
            report[kind] = check_with_torch_mha(model, st) if model != "llama" else check_llama_loop(st)
            st.update(REST[model](w, 1, hidden, out)[0])
        save_npz(os.path.join(d, "stages-layer1%s.npz" % suffix), st)
        if kind == "f32":
            spread = st["softmax.weights"].max(dim=-1).values.mean().item()
            report["mean row max weight"] = round(spread, 3)
    return report


def write_one_kernel(root, hidden_from):
    """Every file for the kernel OPENBLAS_CORETYPE names, under root/models/."""
    if mf.cpu_capability() not in ("AVX2", "AVX512"):
        sys.exit("make_model_fixtures.py: torch uses the %s kernel; the fixtures need AVX2" % mf.cpu_capability())
    want, core = os.environ.get("OPENBLAS_CORETYPE"), mf.openblas_corename()
    if core != want:  # OpenBLAS falls back to the CPU's own kernel on a name it cannot run
        sys.stderr.write("make_model_fixtures.py: OPENBLAS_CORETYPE=%s, but OpenBLAS runs %s\n" % (want, core))
        sys.exit(mf.CANNOT_RUN_HERE)
    torch.set_num_threads(1)
    with torch.no_grad():
        for model in MODELS:
            print(model, make_model(model, os.path.join(root, "models"), hidden_from))


def tree(root):
    """{relative path: bytes} of the files under root."""
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            path = os.path.join(d, f)
            out[os.path.relpath(path, root)] = open(path, "rb").read()
    return out


def install(tmp, made):
    """The main kernel's files in models/; for each other set of openblas/kernels.txt (make_fixtures.py's)
    the stage references that differ in openblas/<Set>/models/; models/kernels.txt."""
    sets = read_kernel_sets(os.path.join(mf.KERNEL_DIR, "kernels.txt"))
    main = mf.KERNELS[0]
    files = {k: tree(os.path.join(tmp, k, "models")) for k in made}
    first = {}  # set -> the files of its first kernel
    for kernel in made:
        assert sorted(files[kernel]) == sorted(files[main]), kernel
        for rel, data in files[kernel].items():  # only the references depend on the kernel
            if not os.path.basename(rel).startswith("stages-"):
                assert data == files[main][rel], "%s: %s depends on the kernel" % (kernel, rel)
        if first.setdefault(sets[kernel], files[kernel]) != files[kernel]:
            sys.exit("make_model_fixtures.py: kernel %s differs from its set %s; rerun make_fixtures.py"
                     % (kernel, sets[kernel]))
    shutil.rmtree(OUT, ignore_errors=True)
    shutil.copytree(os.path.join(tmp, main, "models"), OUT)
    for set_name in dict.fromkeys(sets.values()):
        overlay = os.path.join(mf.KERNEL_DIR, set_name, "models")
        if set_name not in first:
            continue  # not made here: its committed overlay (if any) is left alone
        shutil.rmtree(overlay, ignore_errors=True)
        differ = {rel: d for rel, d in first[set_name].items() if d != files[main][rel]}
        for rel, data in differ.items():
            os.makedirs(os.path.dirname(os.path.join(overlay, rel)), exist_ok=True)
            with open(os.path.join(overlay, rel), "wb") as fh:
                fh.write(data)
        print("set %-12s %2d of %d model files differ from %s, %7d bytes" % (
            set_name, len(differ), len(files[main]), main, sum(len(d) for d in differ.values())))
    with open(os.path.join(OUT, "kernels.txt"), "w") as fh:
        fh.write("# OpenBLAS kernels whose model references make_model_fixtures.py made (their set as in\n"
                 "# openblas/kernels.txt): openblas/<Set>/models/<path> replaces models/<path> where it exists.\n"
                 "# torch %s. For another kernel only a tolerance can hold.\n" % torch.__version__)
        fh.writelines("%s %s\n" % (k, sets[k]) for k in made)
    with open(os.path.join(OUT, "README.md"), "w") as fh:
        fh.write(README)


def read_kernel_sets(path):
    """kernels.txt: kernel -> set."""
    sets = {}
    with open(path) as fh:
        for line in fh:
            words = line.split()
            if len(words) == 2 and not line.startswith("#"):
                sets[words[0]] = words[1]
    return sets


def reference_file(rel, kernel):
    """models/<rel> as the given kernel computes it: its set's overlay where that exists."""
    sets = read_kernel_sets(os.path.join(OUT, "kernels.txt"))
    overlay = os.path.join(mf.KERNEL_DIR, sets.get(kernel, "-"), "models", rel)
    return overlay if kernel in sets and os.path.exists(overlay) else os.path.join(OUT, rel)


def check_attn(attn):
    """Run attn today, once per kernel made, on each reference's input with its weights under attn's
    own names (a temporary npz) and print the members that are not the same bits (with the largest
    difference); mha's must all be. Where a norm stage exists, attn gets norm.x as its input (it
    has no norm or embed stage yet); llama gets a zero b_o."""
    flags = {"gpt2": ["--mask", "causal", "--fill", repr(float(FMIN))],
             "bert": [],
             "llama": ["--mask", "causal", "--fill", repr(float(FMIN)), "--pos", "rope", "--kv-heads", str(G),
                       "--no-qkv-bias"],
             "mha": []}
    bits = lambda a: a.view(np.uint32) if a.dtype == np.float32 else a
    with tempfile.TemporaryDirectory() as tmp:
        for kernel in read_kernel_sets(os.path.join(OUT, "kernels.txt")):
            all_equal = True
            for model in MODELS:
                for name in ("layer1", "layer1-f16", "layer1-bf16") + (("layer0-tokens",) if model != "mha" else ()):
                    ref = dict(np.load(reference_file("%s/stages-%s.npz" % (model, name), kernel)))
                    params = {k: v for k, v in ref.items() if k.startswith("params.")}
                    params.setdefault("params.b_o", np.zeros(D, np.float32))
                    np.savez(os.path.join(tmp, "p.npz"), **params)
                    np.save(os.path.join(tmp, "x.npy"), ref.get("norm.x", ref["input.x"]))
                    out = os.path.join(tmp, "out.npz")
                    cmd = [attn, "trace", "--input", os.path.join(tmp, "x.npy"), "--params",
                           os.path.join(tmp, "p.npz"), "--heads", str(H), "--format", "npz", "--out", out]
                    r = subprocess.run(cmd + flags[model], capture_output=True, text=True,
                                       env=dict(os.environ, OPENBLAS_CORETYPE=kernel))
                    assert r.returncode == 0, (cmd, r.stderr)
                    got = dict(np.load(out))
                    line = []
                    for k, want in ref.items():
                        if k.startswith(("norm.", "mha.", "embed.")) or (k == "input.x" and "norm.x" in ref):
                            continue
                        g = got.get(k)
                        if g is None:
                            line.append("%s missing" % k)
                        elif g.shape != want.shape or g.dtype != want.dtype:
                            line.append("%s %s %s != %s %s" % (k, g.dtype, g.shape, want.dtype, want.shape))
                        elif not np.array_equal(bits(g), bits(want)):
                            line.append("%s %.3g" % (k, float(np.abs(g.astype(np.float64) - want).max())))
                    if line:
                        all_equal = False
                        print("attn (%s) vs %s stages-%s differs: %s" % (kernel, model, name, ", ".join(line)))
                    if model == "mha":
                        assert not line, "attn differs from the mha reference"
            if all_equal:
                print("attn (%s): every stage of every reference to the bit (gpt2, llama, bert's tokens from norm.x)" % kernel)


MODELS = ("gpt2", "bert", "llama", "mha")

README = """# Tiny real-model checkpoints (issue 24); made by make_model_fixtures.py, do not edit

    /usr/bin/python3 tests/reference/make_model_fixtures.py [--check-attn build/attn]

gpt2/ bert/ llama/ (2 kv heads, rotary) mha/ (nn.MultiheadAttention state_dict): D 16, 4 heads, 2 layers.
config.json (Hugging Face's; none for mha), model.safetensors F32 / -f16 / -bf16 (whole state_dict,
model's own names; gpt2 bf16: transformer. prefix, lm_head, BOOL attn.bias; bert f32/f16: bert. prefix),
model.npz (F32). hidden.npy: the residual stream entering layer 1 (mha: x); tokens.txt, vocab.json.
stages-layer1[-f16|-bf16].npz: attn's "<stage>.<tensor>" for layer 1 from hidden.npy with that file's
weights (mha: its one layer); stages-layer0-tokens.npz: layer 0 from tokens.txt, embed.* first (bert:
input.x = (embed.token + embed.token_type) + embed.position, BertEmbeddings' order). Composition: the
script's docstring. Bits per OpenBLAS kernel: kernels.txt; ../openblas/<Set>/models/ overrides.
"""


def main():
    args = sys.argv[1:]
    if len(args) in (2, 3) and args[0] == "--one-kernel":
        write_one_kernel(args[1], args[2] if len(args) == 3 else None)  # a subprocess of the run below
        return
    attn = None
    if args[:1] == ["--check-attn"] and len(args) == 2:
        attn = args[1]
    elif args:
        sys.exit("usage: /usr/bin/python3 tests/reference/make_model_fixtures.py [--check-attn path/to/attn]")
    made = []
    with tempfile.TemporaryDirectory() as tmp:
        for kernel in mf.KERNELS:
            cmd = [sys.executable, os.path.abspath(__file__), "--one-kernel", os.path.join(tmp, kernel)]
            if kernel != mf.KERNELS[0]:
                cmd.append(os.path.join(tmp, mf.KERNELS[0], "models"))
            r = subprocess.run(cmd, env=dict(os.environ, OPENBLAS_CORETYPE=kernel), capture_output=True, text=True)
            if r.returncode in (-4, 132, mf.CANNOT_RUN_HERE) and kernel != mf.KERNELS[0]:
                print("OpenBLAS kernel %s cannot run on this CPU: its committed overlay is kept" % kernel)
                continue
            if kernel == mf.KERNELS[0] or r.returncode != 0:
                sys.stdout.write(r.stdout)
            sys.stderr.write(r.stderr)
            if r.returncode != 0:
                sys.exit("make_model_fixtures.py: the run with OPENBLAS_CORETYPE=%s failed" % kernel)
            made.append(kernel)
        install(tmp, made)
    if attn:
        check_attn(attn)


if __name__ == "__main__":
    main()
