#!/usr/bin/env bash
# Command-line tests for attn's own voice: help text, usage-error messages (never
# CLI11's own words), --stage by name, number and tensor, and the README's install
# step. Usage: help.sh path/to/attn
# Needs jq. Prints one line per check and "N passed, N failed".
set -u
attn=${1:?usage: help.sh path/to/attn}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"

# --- --stage takes numbers, ranges, and tells a tensor name where it lives ------------
expect_ok "--stage by number" trace --format json --stage 10
check "--stage 10 is softmax" test "$(jq -c '.stages | keys_unsorted' "$work/out")" = '["softmax"]'
expect_ok "--stage numbers and names mixed" trace --format json --stage 7,6,softmax
check "--stage 7,6,softmax keeps stage order" test "$(jq -c '.stages | keys_unsorted' "$work/out")" = \
  '["scores","scaled","softmax"]'
expect_ok "--stage a range" trace --format json --mask causal --stage 6-10
check "--stage 6-10 with a mask" test "$(jq -c '.stages | keys_unsorted' "$work/out")" = \
  '["scores","scaled","mask","masked","softmax"]'
expect_ok "--stage a range over absent stages" trace --format json --stage 6-10
check "--stage 6-10 without a mask takes the stages this run has" \
  test "$(jq -c '.stages | keys_unsorted' "$work/out")" = '["scores","scaled","softmax"]'
expect_error "--stage a tensor name" 2 \
  "attn: error: --stage weights: no stage is called weights; the tensor weights is in stage softmax (10) and dropout (11): --stage softmax" \
  trace --stage weights
expect_error "--stage a tensor of three stages" 2 \
  "attn: error: --stage q: no stage is called q; the tensor q is in stage projections (3), view (4) and transpose (5): --stage projections" \
  trace --stage q
expect_error "--stage a tensor of a stage absent from this run" 2 \
  "attn: error: --stage keep: no stage is called keep; the tensor keep is in stage dropout (11), which this run does not have (it needs --dropout P with P > 0 and --train)" \
  trace --stage keep
expect_error "--stage a number absent from this run" 2 \
  "attn: error: --stage 8: this run has no mask stage (it needs --mask or --mask-file)" trace --stage 8
expect_error "--stage a number absent with --no-out-proj" 2 \
  "attn: error: --stage 15: this run has no output stage (it is off with --no-out-proj)" trace --no-out-proj --stage 15
expect_error "--stage a number no stage has" 2 \
  "attn: error: --stage 16: there is no stage 16 (the stages are numbered 1 to 15)" trace --stage 16
expect_error "--stage a range downwards" 2 "attn: error: --stage 10-6: a range goes up, as in 6-10" trace --stage 10-6
expect_error "--stage a range of absent stages" 2 \
  "attn: error: --stage 8-9: this run has none of these stages (mask: it needs --mask or --mask-file)" trace --stage 8-9
expect_error "--stage an unknown name" 2 \
  "attn: error: --stage foo: no stage is called foo (the stages: input, params, projections, view, transpose, scores, scaled, mask, masked, softmax, dropout, context, merge, concat, output; or their numbers, 1 to 15)" \
  trace --stage foo

finish
