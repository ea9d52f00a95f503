#!/usr/bin/env bash
# tokens.sh ATTN: layer 0 of a real model from its token ids (--tokens, stage embed) and the
# tokenizer's vocabulary that labels them (--vocab), issue 24: the embed stage, the tokens in
# the table, the SVG, the terminal heatmap, the HTML and JSON; and the refusals, each one
# `attn: error:` line with exit 2 (a flag against the file) or 1 (a file itself).
# The numbers are checked against PyTorch in tests/compute/test_model_fixtures.cpp.
set -u
attn=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
. "$(dirname "$0")/common.sh"

# --- the embed stage ------------------------------------------------------------------------
expect_ok "GPT-2 layer 0 from tokens.txt (--tokens @FILE)" \
  trace --params "$gpt2/model.safetensors" --tokens "@$gpt2/tokens.txt" --format json
check "... embed first (step 0), then input, params, norm" \
  test "$(jq -c '[(.stages | keys_unsorted)[0:4], .stages.embed.step, (.stages.embed.tensors | keys_unsorted)]' "$work/out")" = \
  '[["embed","input","params","norm"],0,["token","position"]]'
schema="$here/../../share/attn/trace.schema.json"
check "... every stage name is one the schema lists" \
  test "$(jq -c --slurpfile s "$schema" '[.stages | keys[] | select(. as $k | $s[0].properties.stages.propertyNames.enum | index($k) | not)]' "$work/out")" = '[]'
check "... config.tokens holds the ids, no token_text without --vocab" \
  test "$(jq -c '[.config.tokens, (.config | has("token_text")), .config.seq, .config.batch]' "$work/out")" = '[[3,6,7,8,33],false,5,1]'
check "... the embed stage says where its rows came from" \
  test "$(jq -r '[.stages.embed.sources.token, .stages.embed.sources.position] | join("|")' "$work/out")" = 'wte.weight[ids]|wpe.weight[0:5]'
check "... input.x is token + position" test "$(jq '[.stages.input.tensors.x.data[0][1][0], .stages.embed.tensors.token.data[0][1][0] + .stages.embed.tensors.position.data[1][0]] | (.[0] - .[1]) | fabs < 1e-6' "$work/out")" = true
expect_ok "the list of ids gives the same run as the file" \
  trace --params "$gpt2/model.safetensors" --tokens " 3, 6,7,8 ,33" --format json
check "... the same ids" test "$(jq -c .config.tokens "$work/out")" = '[3,6,7,8,33]'
expect_ok "BERT: token, position and token_type rows, embeddings.LayerNorm as the norm stage (eps 1e-12)" \
  trace --params "$bert/model.safetensors" --tokens "@$bert/tokens.txt" --format json
check "... its embed tensors and norm" \
  test "$(jq -c '[(.stages.embed.tensors | keys_unsorted), .config.norm, .config.norm_eps, .stages.norm.sources.weight]' "$work/out")" = \
  '[["token","position","token_type"],"layer_norm",1e-12,"bert.embeddings.LayerNorm.weight"]'
expect_ok "Llama: the token rows alone, rope later" \
  trace --params "$llama/model.safetensors" --tokens "@$llama/tokens.txt" --format json --stage embed,rope
check "... only token; config.tokens" \
  test "$(jq -c '[(.stages.embed.tensors | keys_unsorted), .config.tokens, .stages.embed.sources.token]' "$work/out")" = \
  '[["token"],[1,3,7,8,9],"model.embed_tokens.weight[ids]"]'
expect_ok "--stage 0 is embed; --explain says how GPT-2 starts from ids" \
  trace --params "$gpt2/model.safetensors" --tokens 3,6 --stage 0 --explain
check "... the PyTorch line" grep -q 'x = wte.weight\[ids\] + wpe.weight\[torch.arange(S)\]' "$work/out"
expect_ok "--explain with --vocab names the tokens in its introduction" \
  trace --params "$gpt2/model.safetensors" --tokens 3,6 --vocab "$gpt2/vocab.json" --stage softmax --explain
check "... The (3), Ġrobot (6)" sh -c "tr -s ' \n' ' ' <'$work/out' | grep -q 'are The (3), Ġrobot (6): the tokenizer'"
expect_ok "--explain without --vocab: the ids" trace --params "$gpt2/model.safetensors" --tokens 3,6 --stage softmax --explain
check "... the ids 3, 6" sh -c "tr -s ' \n' ' ' <'$work/out' | grep -q 'The tokens are the ids 3, 6 (--tokens)'"
check "... the run line names --tokens" grep -q '^run    self-attention: Q, K, V from x (--tokens, stage embed)' "$work/out"

# --- the tokens as labels (--vocab) -----------------------------------------------------------
expect_ok "the table labels queries and keys with GPT-2's tokens (Ġ kept, as the tokenizer writes it)" \
  trace --params "$gpt2/model.safetensors" --tokens "@$gpt2/tokens.txt" --vocab "$gpt2/vocab.json" --stage softmax --head 0
check "... a row per token" grep -q '^query Ġrobot ' "$work/out"
check "... the key columns" grep -q 'key The  *key Ġrobot  *key Ġreads  *key Ġbook  *key s$' "$work/out"
check "... columns lined up by characters, not bytes: every row as wide as the header" \
  test "$(grep -E '^(query|  ) ' "$work/out" | awk '/key The/ {h = length($0)} END {print (h > 0)}')" = 1
expect_ok "--stats: each row's largest weight names its key's token" \
  trace --params "$gpt2/model.safetensors" --tokens "@$gpt2/tokens.txt" --vocab "$gpt2/vocab.json" --stage softmax --head 0 --stats
check "... @key Ġrobot" grep -q '^query Ġrobot .* max 0.6698 @key Ġrobot$' "$work/out"
expect_ok "JSON: config.token_text beside config.tokens" \
  trace --params "$llama/model.safetensors" --tokens "@$llama/tokens.txt" --vocab "$llama/vocab.json" --format json --stage softmax
check "... SentencePiece's ▁ kept, <s> as is" test "$(jq -c '.config.token_text' "$work/out")" = '["<s>","▁The","▁robot","▁reads","▁book"]'
expect_ok "SVG: the tokens on both axes, XML-escaped" \
  trace --params "$llama/model.safetensors" --tokens "@$llama/tokens.txt" --vocab "$llama/vocab.json" --stage softmax --head 0 --format svg --out "$work/l.svg"
check "... <s> escaped, keys turned" grep -q 'transform="rotate(-90 [0-9. ]*)">&lt;s&gt;</text>' "$work/l.svg"
check "... ▁robot as a row label" grep -q 'text-anchor="end">▁robot</text>' "$work/l.svg"
check "... valid XML" xmllint --noout "$work/l.svg"
expect_ok "the terminal heatmap: a row per token, the keys' tokens listed" \
  trace --params "$bert/model.safetensors" --tokens "@$bert/tokens.txt" --vocab "$bert/vocab.json" --stage softmax --head 1 --format heatmap
check "... the keys line" grep -q 'keys: 0 \[CLS\] 1 the 2 robot 3 reads 4 \[SEP\]' "$work/out"
check "... query [CLS] first" grep -q '^  query \[CLS\] ' "$work/out"
expect_ok "HTML: the tokens in the heatmap and the numbers' table" \
  trace --params "$gpt2/model.safetensors" --tokens "@$gpt2/tokens.txt" --vocab "$gpt2/vocab.json" --stage softmax --head 0 --format html --out "$work/g.html"
check "... a row header per token" grep -q '<th>query Ġreads</th>' "$work/g.html"
# a vocabulary {id: token} with control characters: shown escaped, never sent to the terminal
printf '{"0": "a\\u001b[2Jb", "1": "c", "2": "d", "3": "\\u009b31m"}' >"$work/hostile.json"
expect_ok "a token holding ESC and a C1 CSI is escaped in the table" \
  trace --params "$gpt2/model.safetensors" --tokens 0,3 --vocab "$work/hostile.json" --stage scores --head 0
check "... no ESC reaches stdout" test "$(grep -c $'\x1b' "$work/out")" = 0
check "... a\\x1b[2Jb shown" grep -qF 'query a\x1b[2Jb' "$work/out"
# bidirectional controls, U+2028 and noncharacters in a vocabulary: escaped as control characters
# are, on the terminal and in the pages; the SVG and the HTML stay well-formed XML
printf '{"0": "a\\u202eevil", "1": "x\\u2066y\\u2069", "2": "l\\u2028m", "3": "n\\ufffe\\uffffo\\ufdd0"}' >"$work/bidi.json"
expect_ok "tokens holding U+202E, U+2066, U+2028 and noncharacters: the table" \
  trace --params "$gpt2/model.safetensors" --tokens 0,1,2,3 --vocab "$work/bidi.json" --stage scores --head 0
check "... none of them reaches stdout raw" \
  bash -c "! grep -qP '\\x{202e}|\\x{2066}|\\x{2069}|\\x{2028}|\\x{fffe}|\\x{ffff}|\\x{fdd0}' '$work/out'"
check "... shown as escapes" bash -c "grep -qF 'a\\u202eevil' '$work/out' && grep -qF 'n\\ufffe\\uffffo\\ufdd0' '$work/out'"
for f in svg html; do
  expect_ok "the same tokens in --format $f" \
    trace --params "$gpt2/model.safetensors" --tokens 0,1,2,3 --vocab "$work/bidi.json" --stage scores --head 0 \
    --format $f --out "$work/bidi.$f"
  check "... no bidi control, separator or noncharacter in the $f" \
    bash -c "! grep -qP '\\x{202e}|\\x{2066}|\\x{2028}|\\x{fffe}|\\x{ffff}|\\x{fdd0}' '$work/bidi.$f'"
done
check "... the SVG is well-formed XML" /usr/bin/python3 -c "import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])" "$work/bidi.svg"

# --- refusals -------------------------------------------------------------------------------
expect_error "an id past the token table" 2 \
  "attn: error: --tokens: id 40 (token 2) is past the vocabulary: wte.weight has 40 rows, ids 0 to 39" \
  trace --params "$gpt2/model.safetensors" --tokens 3,40
expect_error "a word instead of an id" 2 \
  "attn: error: --tokens: 'x' is not a token id (a whole number from 0 to 2147483647)" \
  trace --params "$gpt2/model.safetensors" --tokens 3,x
expect_error "a negative id" 2 \
  "attn: error: --tokens: '-1' is not a token id (a whole number from 0 to 2147483647)" \
  trace --params "$gpt2/model.safetensors" --tokens=-1
expect_error "an empty list" 2 \
  "attn: error: --tokens: no token ids (expected comma-separated ids, e.g. --tokens 464,2068,7586)" \
  trace --params "$gpt2/model.safetensors" --tokens ""
expect_error "an empty item" 2 \
  "attn: error: --tokens: an empty item at position 2 (expected comma-separated ids, e.g. 464,2068,7586)" \
  trace --params "$gpt2/model.safetensors" --tokens 3,,4
expect_error "more tokens than GPT-2 has positions" 2 \
  "attn: error: --tokens: 17 tokens, but wpe.weight has positions for 16" \
  trace --params "$gpt2/model.safetensors" --tokens 1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1
expect_error "a missing tokens file names it" 1 \
  "attn: error: --tokens @$work/none.txt: cannot open: No such file or directory" \
  trace --params "$gpt2/model.safetensors" --tokens "@$work/none.txt"
expect_error "--tokens with --input" 2 \
  "attn: error: --tokens cannot be used with --input: the tokens' embeddings are the input" \
  trace --params "$gpt2/model.safetensors" --tokens 3 --input "$gpt2/hidden.npy"
expect_error "--tokens for layer 1: the layers before it are not computed" 2 \
  "attn: error: --tokens gives layer 0's input (the embeddings), but --layer 1 reads the output of the layers before it, which attn does not compute: dump that layer's input (Hugging Face's output_hidden_states[1]) and give --input" \
  trace --params "$gpt2/model.safetensors" --tokens 3 --layer 1
expect_error "--seq against the number of tokens" 2 \
  "attn: error: --tokens (2 ids) has shape [1,2,16] [B,Sq,Din], so Sq = 2, but --seq 4 says Sq = 4" \
  trace --params "$gpt2/model.safetensors" --tokens 3,4 --seq 4
expect_error "--tokens without --params" 2 \
  "attn: error: --tokens needs --params with a model's embedding tables (a GPT-2, BERT or Llama checkpoint)" \
  trace --tokens 3
expect_error "--tokens with an nn.MultiheadAttention state_dict: no tables" 2 \
  "attn: error: --tokens needs a model's embedding tables (GPT-2's wte, BERT's word_embeddings, Llama's embed_tokens), but --params $mha/model.safetensors is nn.MultiheadAttention's, which has none: give --input instead" \
  trace --params "$mha/model.safetensors" --heads 4 --tokens 3
expect_ok "--format py looks the tokens up in the checkpoint's tables (py.sh runs it in PyTorch)" \
  trace --params "$gpt2/model.safetensors" --tokens 3 --format py
check "... the script reads the ids and wte, wpe from the file" \
  bash -c "grep -qx 'ids = torch.tensor(\[\[3\]\])  # --tokens' '$work/out' && grep -qx 'wte = Table(param(P, \"wte.weight\"))' '$work/out'"
expect_error "--vocab without --tokens" 2 \
  "attn: error: --vocab $gpt2/vocab.json labels the ids of --tokens, which is not given" \
  trace --params "$gpt2/model.safetensors" --vocab "$gpt2/vocab.json"
expect_error "--tokens with --from" 2 \
  "attn: error: --tokens cannot be used with --from (a dump replays its own input)" \
  trace --from "$work/none.npz" --tokens 3
printf '{"a": 1, "b": 1}' >"$work/dup.json"
expect_error "a vocabulary giving one id twice" 1 \
  "attn: error: --vocab $work/dup.json: id 1 is given twice ('a' and 'b')" \
  trace --params "$gpt2/model.safetensors" --tokens 1 --vocab "$work/dup.json"
printf '{"a": "1"}' >"$work/type.json"
expect_error "a vocabulary of the wrong types" 1 \
  "attn: error: --vocab $work/type.json: key 'a' is not a token id (a vocabulary of {\"id\": \"token\"} has whole numbers from 0 to 2147483647 as keys)" \
  trace --params "$gpt2/model.safetensors" --tokens 1 --vocab "$work/type.json"
printf '{"a": 0}' >"$work/short.json"
expect_error "a vocabulary without one of the ids" 1 \
  "attn: error: --vocab $work/short.json: no token for id 5 (it holds 1 tokens)" \
  trace --params "$gpt2/model.safetensors" --tokens 0,5 --vocab "$work/short.json"
run trace --params "$gpt2/model.safetensors" --tokens 3,6 --format npz --out "$work/t.npz"
expect_error "a dump from tokens is refused by --from" 1 \
  "attn: error: --from $work/t.npz: a run from a model's --tokens (gpt2 layer 0 of $gpt2/model.safetensors) does not replay with --from; run it again with --params and --tokens" \
  trace --from "$work/t.npz"

# --- memory: the tables are decoded whole, within --max-memory --------------------------------
# a GPT-2 checkpoint whose wte is 65536 x 16 (4 MiB), as .safetensors and .npz: from the
# .safetensors only the ids' rows are read; an .npz table is decoded whole, within --max-memory
write_big_gpt2 "$work/big"
expect_ok "from a .safetensors only the ids' rows are read: a 4 MiB token table under --max-memory 1MiB" \
  trace --params "$work/big/model.safetensors" --tokens 3,65535 --max-memory 1MiB --stage embed --format json
check "... row 65535 is the table's last (65535·16 = 1048560)" \
  test "$(jq -c '[.stages.embed.tensors.token.data[0][1][0], .stages.embed.tensors.token.data[0][0][0]]' "$work/out")" = '[1048560,48]'
expect_error "... an id past its 65536 rows, from the header alone" 2 \
  "attn: error: --tokens: id 65536 (token 1) is past the vocabulary: wte.weight has 65536 rows, ids 0 to 65535" \
  trace --params "$work/big/model.safetensors" --tokens 65536 --max-memory 1MiB
expect_refusal "an .npz table is decoded whole: --max-memory 1MiB refuses its 4 MiB, naming it" 1 \
  "attn: error: --params $work/big/model.npz: wte.weight: shape [65536,16] as float32 needs 4.0 MiB, more than the 1.0 MiB --max-memory allows (--max-memory none: no limit)" \
  trace --params "$work/big/model.npz" --tokens 3,65535 --max-memory 1MiB
expect_ok "... and runs with 8 MiB" trace --params "$work/big/model.npz" --tokens 3,65535 --max-memory 8MiB --stage embed

# a checkpoint from a FIFO gives its bytes once: read whole, then its tables and layer parsed
mkdir -p "$work/fifo" && cp "$gpt2/config.json" "$work/fifo/" && mkfifo "$work/fifo/model.safetensors"
(cat "$gpt2/model.safetensors" >"$work/fifo/model.safetensors" &)
check "a GPT-2 checkpoint from a FIFO with --tokens (read once; 30 s at most)" \
  timeout 30 "$attn" trace --params "$work/fifo/model.safetensors" --tokens 3,6 --stage embed --format json --out "$work/fifo.json"
check "... its rows" test "$(jq -c '.config.tokens' "$work/fifo.json")" = '[3,6]'

# --- the README's "Layer 0 from token ids" output is what the program prints -----------------
readme_output '^#### Layer 0 from token ids' >"$work/readme-tokens"
(cd "$gpt2" && "$attn" trace --params model.safetensors --tokens @tokens.txt --vocab vocab.json --stage softmax --head 2) >"$work/actual-tokens"
check "README's --tokens output block is real" diff "$work/readme-tokens" "$work/actual-tokens"
check "... and not empty" test -s "$work/readme-tokens"

# --- text in: the checkpoint's own tokenizer (GPT-2's vocab.json and merges.txt beside it) ---
expect_ok "attn tokens: the ids and pieces of a text" \
  tokens --params "$gpt2/model.safetensors" --text "The robot reads the books."
check "... the ids line, ready for --tokens" grep -q '^ids     3,6,7,4,8,33,1   (7 tokens; --tokens takes this list)$' "$work/out"
check "... a row per token, the space written Ġ" grep -Eq '^ +1 +6  Ġrobot$' "$work/out"
expect_ok "attn tokens --format json" tokens --params "$gpt2/model.safetensors" --text "The robot" --format json
check "... attn.tokens/1 with ids and tokens" \
  test "$(jq -c '[.format, .ids, .tokens]' "$work/out")" = '["attn.tokens/1",[3,6],["The","Ġrobot"]]'
printf 'The robot reads the book.\n' >"$work/story.txt"
expect_ok "attn trace --text @FILE: layer 0 from the text, the same run as its ids with --vocab" \
  trace --params "$gpt2/model.safetensors" --text "@$work/story.txt" --format json --stage softmax
"$attn" trace --params "$gpt2/model.safetensors" --tokens 3,6,7,4,8,1,38 --vocab "$gpt2/vocab.json" --format json \
  --stage softmax >"$work/ids.json"
check "... every number and label equal (the newline is Ċ, id 38)" \
  test "$(jq -c '[.config.tokens, .config.token_text, .stages]' "$work/out" | md5sum)" = \
       "$(jq -c '[.config.tokens, .config.token_text, .stages]' "$work/ids.json" | md5sum)"
run trace --params "$gpt2/model.safetensors" --text "The robot" --stage softmax
check "... and the table's run line names --text (not --tokens)" \
  grep -qx 'run    self-attention: Q, K, V from x (--text, stage embed)' "$work/out"
expect_error "a word the tiny vocabulary lacks: named, with why" 1 \
  "attn: error: --text: \"Ġh\" is not a token of $gpt2/vocab.json (a vocabulary with every byte's token encodes any text)" \
  trace --params "$gpt2/model.safetensors" --text "The robot, hello"
expect_error "--text and --tokens together" 2 \
  "attn: error: --text and --tokens both give layer 0's tokens: give one of them" \
  trace --params "$gpt2/model.safetensors" --text "The robot" --tokens 3,6
expect_error "--text without --params" 2 \
  "attn: error: --text is tokenized by a checkpoint's own tokenizer: give --params FILE (GPT-2's, with vocab.json and merges.txt beside it)" \
  trace --text "The robot"
expect_error "--text beside a checkpoint without GPT-2's tokenizer files" 1 \
  "attn: error: --text: no tokenizer beside --params $llama/model.safetensors: attn reads GPT-2's vocab.json and merges.txt (in $llama); tokenizer.json, BERT's vocab.txt and SentencePiece's tokenizer.model are not read yet: give the ids with --tokens" \
  trace --params "$llama/model.safetensors" --text "The robot"
printf 'The \377robot' >"$work/latin1.txt"
expect_error "text that is not UTF-8" 1 \
  "attn: error: --text @$work/latin1.txt: not UTF-8 text (byte 4); GPT-2's tokenizer reads UTF-8" \
  tokens --params "$gpt2/model.safetensors" --text "@$work/latin1.txt"

/usr/bin/python3 -c "print(' the' * 70000)" >"$work/long.txt"
expect_error "more tokens than a run takes: said as soon as there are" 1 \
  "attn: error: --text @$work/long.txt: more than 65536 tokens (the most a run takes, as --tokens)" \
  tokens --params "$here/../reference/tokenizers/gpt2/model.safetensors" --text "@$work/long.txt"
/usr/bin/python3 -c "import random; random.seed(1); print(''.join(random.choice('thequickbrown') for _ in range(2000000)))" >"$work/word.txt"
run tokens --params "$here/../reference/tokenizers/gpt2/model.safetensors" --text "@$work/word.txt" --format json
check "a 2 MB word merges in a heap, not encoder.py's pass per merge (was: minutes)" test "$rc" -le 1
readme_output '^#### Text in: --text and attn tokens' >"$work/readme-text"
(cd "$gpt2" && "$attn" tokens --params model.safetensors --text "The robot reads the books.") >"$work/actual-text"
check "README's attn tokens output block is real" diff "$work/readme-text" "$work/actual-text"

finish
