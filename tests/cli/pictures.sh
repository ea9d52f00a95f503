#!/usr/bin/env bash
# Command-line tests: the pictures. --format heatmap in a terminal (run under a
# pseudo-terminal with script(1)) and without one; --format svg and png (parsed with
# Python's standard library: XML, and the PNG's header and pixels); --format html, and
# when Debian's chromium is installed, that page in a headless browser.
# Usage: pictures.sh path/to/attn. Needs python3; uses script(1) and chromium if present.
set -u
attn=${1:?usage: pictures.sh path/to/attn}
. "$(dirname "$0")/common.sh"

esc=$'\e'

# in_terminal ENV... -- ARGS...: runs attn under a pseudo-terminal; its output in $work/tty.
in_terminal() {
  local env=()
  while [ "$1" != "--" ]; do env+=("$1"); shift; done
  shift
  script -qefc "env -u NO_COLOR TERM=xterm-256color ${env[*]} $(printf '%q ' "$attn" "$@")" /dev/null >"$work/tty" 2>&1
  rc=$?
}

# --- the terminal heatmap ---------------------------------------------------------------
if command -v script >/dev/null; then
  in_terminal -- trace "${notebook[@]}" --format heatmap
  check "in a terminal: 24-bit background colours" grep -q "$esc\[48;2;" "$work/tty"
  check "... and 24-bit foreground colours (labels, marks)" grep -q "$esc\[38;2;" "$work/tty"
  check "... the top of the scale is viridis' yellow (weight 1 of query 0)" grep -q "$esc\[48;2;253;231;37m  " "$work/tty"
  in_terminal NO_COLOR=1 -- trace "${notebook[@]}" --format heatmap
  check "in a terminal with NO_COLOR: no colour" test "$(grep -c "$esc\[" "$work/tty")" = 0
  check "... the shade ramp instead" grep -q "██" "$work/tty"
  in_terminal -- trace "${notebook[@]}" --format heatmap --color never
  check "in a terminal with --color never: no colour" test "$(grep -c "$esc\[" "$work/tty")" = 0
  in_terminal -- trace "${notebook[@]}" --format png
  check "--format png to a terminal is refused (exit 2)" test "$rc" = 2
  check "... with a clear message" grep -q "attn: error: --format png writes a picture: give --out FILE.png (or redirect stdout to a file)" "$work/tty"
  in_terminal -- trace "${notebook[@]}" --format svg
  check "--format svg to a terminal is refused" grep -q "attn: error: --format svg writes a picture: give --out FILE.svg" "$work/tty"
  in_terminal -- trace "${notebook[@]}" --format html
  check "--format html to a terminal is refused" grep -q "attn: error: --format html writes a page: give --out FILE.html" "$work/tty"
else
  echo "skip the pseudo-terminal tests: no script(1)"
fi

expect_ok "--format heatmap in a pipe" trace "${notebook[@]}" --format heatmap
cp "$work/out" "$work/heatmap.txt"
check "in a pipe: no escape codes" test "$(grep -c "$esc" "$work/heatmap.txt")" = 0
check "by default only the softmax weights" test "$(grep -c '^── ' "$work/heatmap.txt")" = 1
check "... stage 10" grep -q '^── 10 · softmax ── attention weights' "$work/heatmap.txt"
check "one grid per batch item and head" test "$(grep -o 'batch [01], head [0-3]' "$work/heatmap.txt" | sort -u | wc -l)" = 8
check "query and key labels" grep -q '^  query 0 ██ · · · ·' "$work/heatmap.txt"
check "... keys numbered over the columns" grep -q '      key  0 1 2 3 4' "$work/heatmap.txt"
check "a legend with the min, the shade ramp, the max and the masked mark" \
  grep -qx '  0.0000 \[  ░░▒▒▓▓██\] 1.0000    · masked' "$work/heatmap.txt"
expect_ok "--color always in a pipe" trace "${notebook[@]}" --format heatmap --color always
check "... colours" grep -q "$esc\[48;2;" "$work/out"

expect_ok "a row with no allowed key (--lengths 3,0)" trace --batch 2 --seq 5 --mask padding --lengths 3,0 --format heatmap \
  --stage masked,softmax
check "... its NaN weights are marked ??" grep -q '^  query 0 ??????????  query 0 ??????????$' "$work/out"
check "... and so are masked keys" grep -q ' · ·  query 0 ' "$work/out"
check "... the legend names both marks" grep -q '· masked   ?? NaN$' "$work/out"
check "... the masked stage: every key of batch 1 masked, its -inf not shown as -∞" \
  grep -q '^  query 0  · · · · ·  query 0  · · · · ·$' "$work/out"
printf '[[[1, 0], [-1, 0], [0, 1]]]' >"$work/q.json"
printf '[[["inf", 0], [1, 1], [0, 0]]]' >"$work/k.json"
expect_ok "scores of ±inf from the inputs (no mask)" trace --q "$work/q.json" --k "$work/k.json" --v "$work/q.json" \
  --heads 1 --stage scores --format heatmap
check "... marked +∞ and -∞, distinct from masked" grep -q '^  query 0 +∞' "$work/out"
check "... -∞" grep -q '^        1 -∞' "$work/out"
check "... 0·inf is NaN" grep -q '^        2 ??' "$work/out"
check "... the legend names them" grep -q -e '-∞ -inf   +∞ inf   ?? NaN$' "$work/out"
expect_error "--stage without a [.., Sq, Sk] tensor" 2 \
  "attn: error: --stage input,view: --format heatmap draws the stages with a picture (in this run scores, scaled, softmax), and these have none" \
  trace --format heatmap --stage input,view
expect_ok "--format heatmap --stage 6-10: scores, scaled, mask, masked, softmax" trace --mask causal --format heatmap --stage 6-10
check "... five stages" test "$(grep -c '^── ' "$work/out")" = 5
expect_ok "a large plane is cut" trace --seq 50 --heads 1 --format heatmap
check "... saying so" grep -q 'queries 0–31 of 50, keys 0–31 of 50 (--full draws all)' "$work/out"

# --- scales ---------------------------------------------------------------------------------
# The largest |scaled| of the run, from its JSON (PyTorch's numbers, tests/reference): the
# scaled scores' scale is -m .. m, so that 0 is the middle colour.
expect_ok "the scaled scores as JSON" trace "${notebook[@]}" --stage scaled --format json
m=$(jq -r '[.stages.scaled.tensors.scaled.data | flatten[] | fabs] | max | . * 10000 | round / 10000 | tostring' "$work/out")
expect_ok "--format heatmap --stage scaled" trace "${notebook[@]}" --stage scaled --format heatmap
check "the scale of signed scores is symmetric around 0: -$m .. $m" grep -qx "  -$m \\[  ░░▒▒▓▓██\\] $m" "$work/out"
expect_ok "--vmin 0 --vmax 0.5" trace "${notebook[@]}" --format heatmap --vmin 0 --vmax 0.5
check "... the weights' scale is 0 .. 0.5" grep -q '^  0.0000 \[  ░░▒▒▓▓██\] 0.5000 ' "$work/out"
check "... a weight of 1 is drawn as the top, 0.5" grep -q '^  query 0 ██ · · · ·' "$work/out"
expect_ok "--vmin -1 alone" trace "${notebook[@]}" --format heatmap --stage scaled --vmin -1
check "... replaces the bottom only" grep -qx "  -1.0000 \\[  ░░▒▒▓▓██\\] $m" "$work/out"
expect_ok "--format svg --vmin -2 --vmax 2" trace "${notebook[@]}" --format svg --stage scaled --vmin -2 --vmax 2 --out "$work/v.svg"
check "... the colour bar says the scale" test "$(grep -c -E '>(-2.0000|2.0000)</text>' "$work/v.svg")" = 16
expect_error "--vmin above --vmax" 2 "attn: error: --vmin 1 --vmax 0.5: --vmin must be below --vmax" \
  trace "${notebook[@]}" --format png --vmin 1 --vmax 0.5 --out "$work/no.png"
expect_error "--vmin equal to --vmax" 2 "attn: error: --vmin 1 --vmax 1: --vmin must be below --vmax" \
  trace "${notebook[@]}" --format heatmap --vmin 1 --vmax 1
expect_error "--vmin nan" 2 "attn: error: --vmin nan: expected a finite number such as -2.5" \
  trace "${notebook[@]}" --format heatmap --vmin nan
expect_error "--vmax inf" 2 "attn: error: --vmax inf: expected a finite number such as -2.5" \
  trace "${notebook[@]}" --format heatmap --vmax inf
expect_error "--vmax with a format that draws nothing" 2 \
  "attn: error: --vmax sets the colour scale of a picture, and --format json draws none: use --format heatmap, svg, png or html" \
  trace "${notebook[@]}" --format json --vmax 1
expect_error "--vmin alone above a tensor's own top" 2 \
  "attn: error: --vmin 2.0000 is not below the top of the scale of softmax.weights (1.0000): give --vmax too" \
  trace "${notebook[@]}" --format heatmap --vmin 2
check "no file is left by the refused --format png" test ! -e "$work/no.png"

# --- svg and png ----------------------------------------------------------------------------
expect_ok "--format svg" trace "${notebook[@]}" --format svg --out "$work/t.svg"
check "the SVG parses as XML" python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$work/t.svg"
svg_panels() {  # prints the ids of the panels, one a line
  python3 - "$1" <<'PY'
import sys, xml.etree.ElementTree as E
root = E.parse(sys.argv[1]).getroot()
for e in root.iter('{http://www.w3.org/2000/svg}svg'):
    if e.get('class') == 'panel':
        print(e.get('id'))
PY
}
check "one panel per batch item and head" test "$(svg_panels "$work/t.svg" | wc -l)" = 8
check "... named by stage, tensor, batch item and head" test "$(svg_panels "$work/t.svg" | sed -n 6p)" = softmax-weights-b1-h1
check "every id in the SVG is unique" python3 -c '
import re, sys; ids = re.findall(r" id=\"([^\"]+)\"", open(sys.argv[1]).read()); assert len(ids) == len(set(ids)), len(ids)' "$work/t.svg"
check "each panel titled" grep -q '<title>softmax.weights — batch 1, head 3</title>' "$work/t.svg"
expect_ok "--format svg --stage mask,softmax" trace "${notebook[@]}" --format svg --stage mask,softmax --out "$work/m.svg"
check "... the mask one panel per batch item, the weights one per item and head" test "$(svg_panels "$work/m.svg" | wc -l)" = 10

check "the SVG is well-formed XML (minidom)" python3 -c 'import xml.dom.minidom, sys; xml.dom.minidom.parse(sys.argv[1])' "$work/t.svg"
check "its labels are <text>: the stage title" \
  grep -q '<text x="14" y="27" font-family="DejaVu Sans, sans-serif" font-size="13" font-weight="bold" fill="#212121">softmax.weights — batch 1, head 3</text>' "$work/t.svg"
check "... the axes and the scale" test "$(grep -c -E '>(key j|query i|1.0000|0.0000)</text>' "$work/t.svg")" = 32
check "no glyph outlines: no <symbol>, <use> or glyph ids" test "$(grep -c -E '<symbol|<use|glyph' "$work/t.svg")" = 0
expect_ok "--format png" trace "${notebook[@]}" --format png --out "$work/t.png"
png_facts() {  # png_facts FILE [ROWS]: "width height colours has_yellow has_masked_grey bottom_colours" of a
               # PNG's first ROWS rows (bottom_colours: in its last eighth)
  python3 - "$1" "${2:-100000}" <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], 'rb').read()
assert data[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG'
pos, idat = 8, b''
while pos < len(data):
    length, kind = struct.unpack('>I4s', data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + length]
    if kind == b'IHDR':
        width, height, depth, colour = struct.unpack('>IIBB', body[:10])
        assert depth == 8 and colour in (2, 6), (depth, colour)  # 8-bit RGB or RGBA
    elif kind == b'IDAT':
        idat += body
    pos += 12 + length
raw = zlib.decompress(idat)
bpp = 4 if colour == 6 else 3
stride = width * bpp
rows, prev, at = [], bytearray(stride), 0
for y in range(min(height, int(sys.argv[2]))):  # undo the PNG filters, row by row
    f, line = raw[at], bytearray(raw[at + 1:at + 1 + stride]); at += 1 + stride
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], (prev[i - bpp] if i >= bpp else 0)
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    rows.append(bytes(line)); prev = line
pixels = {r[i:i + 3] for r in rows for i in range(0, stride, bpp)}  # RGB, leaving alpha out
def has(rgb):  # within 1 per channel: cairo rounds through 16 bits
    return any(all(abs(p[k] - rgb[k]) <= 1 for k in range(3)) for p in pixels)
bottom = {r[i:i + 3] for r in rows[len(rows) * 7 // 8:] for i in range(0, stride, bpp)}
print(width, height, len(pixels), has((253, 231, 37)), has((237, 237, 237)), len(bottom))
PY
}
read -r png_w png_h _ < <(png_facts "$work/t.png" 0)
read -r svg_w svg_h < <(python3 -c '
import sys, xml.etree.ElementTree as E; r = E.parse(sys.argv[1]).getroot()
print(r.get("width").removesuffix("pt"), r.get("height").removesuffix("pt"))' "$work/t.svg")
check "the PNG is the SVG's page at 2 pixels per point (width)" test "$png_w" = $((svg_w * 2))
check "... (height)" test "$png_h" = $((svg_h * 2))
check "... four panels across: wider than tall" test "$png_w" -gt "$png_h"
readme_png="$(dirname "$0")/../../share/attn/doc/heatmap.png"
check "the README's picture (share/attn/doc/heatmap.png) is this run's: the same size" \
  test "$(png_facts "$readme_png" 0 | cut -d' ' -f1,2)" = "$png_w $png_h"
expect_ok "--layout stack is the default" trace "${notebook[@]}" --format png --layout stack --out "$work/stack.png"
check "... the same bytes" cmp -s "$work/stack.png" "$work/t.png"

# --- the slide --------------------------------------------------------------------------------
expect_ok "--layout slide (png)" trace "${notebook[@]}" --stage scaled,softmax --format png --layout slide --out "$work/slide.png"
check "... 16:9, 1920 by 1080 pixels (IHDR)" test "$(python3 -c '
import struct, sys; d = open(sys.argv[1], "rb").read(); assert d[12:16] == b"IHDR"; print(*struct.unpack(">II", d[16:24]))' "$work/slide.png")" = "1920 1080"
check "... nothing said on stderr: every panel fits" test ! -s "$work/err"
readme_slide="$(dirname "$0")/../../share/attn/doc/slide.png"
check "the README's slide (share/attn/doc/slide.png) is this run's: the same bytes" cmp -s "$readme_slide" "$work/slide.png"
expect_ok "--layout slide (svg)" trace "${notebook[@]}" --stage scaled,softmax --format svg --layout slide --out "$work/slide.svg"
check "... 960 by 540 points" grep -q '^<svg xmlns="http://www.w3.org/2000/svg" width="960pt" height="540pt" ' "$work/slide.svg"
check "... well-formed" python3 -c 'import xml.dom.minidom, sys; xml.dom.minidom.parse(sys.argv[1])' "$work/slide.svg"
check "... a title line and the run" grep -q '>Attention, stage by stage: 7 scaled, 10 softmax</text>' "$work/slide.svg"
check "... the run, as the title's second line" grep -q '>seed 24 · B 2 · Sq 5 · Sk 5 · D 8 · H 4 (dk 2) · mask causal</text>' "$work/slide.svg"
check "... the stages side by side: their headings on one baseline" test "$(grep -E '>(7 scaled|10 softmax)[:.]' "$work/slide.svg" | grep -o ' y="[0-9.]*"' | sort -u | wc -l)" = 1
check "... all 16 panels" test "$(svg_panels "$work/slide.svg" | wc -l)" = 16
check "... every panel inside the page" python3 -c '
import sys, xml.etree.ElementTree as E
for e in E.parse(sys.argv[1]).getroot().iter("{http://www.w3.org/2000/svg}svg"):
    if e.get("class") == "panel":
        x, y, w, h = (float(e.get(k)) for k in ("x", "y", "width", "height"))
        assert x >= 0 and y >= 0 and x + w <= 960 and y + h <= 540, (x, y, w, h)' "$work/slide.svg"
expect_ok "--layout slide with too many panels" trace --batch 4 --heads 8 --d-model 16 --seq 6 --stage scores,scaled,softmax \
  --format svg --layout slide --out "$work/many.svg"
check "... says so on stderr, once for the tensors cut alike" test "$(cat "$work/err")" = \
  "attn: warning: --layout slide: scores.scores, scaled.scaled and softmax.weights show 8 of 32 panels (batch 0); the others do not fit: choose with --batch-index or --head, or use --layout stack"
check "... and in the picture, without the command line's advice" grep -q '>scores.scores, scaled.scaled and softmax.weights show 8 of 32 panels (batch 0); the others do not fit on the slide<' "$work/many.svg"
check "... no flag drawn into the picture (was: '--layout slide: ... choose with --batch-index')" bash -c "! grep -q -- '--batch-index\|--layout' '$work/many.svg'"
check "... which has those 24 panels" test "$(svg_panels "$work/many.svg" | wc -l)" = 24
expect_ok "--format html --layout slide" trace "${notebook[@]}" --stage scaled,softmax --format html --layout slide --out "$work/slide.html"
check "... opens with the slide" grep -q '^<figure class="slide">$' "$work/slide.html"
check "... the same 16:9 SVG as --format svg" grep -q '^<svg xmlns="http://www.w3.org/2000/svg" width="960pt" height="540pt" ' "$work/slide.html"
check "... then the stages, their heatmaps as before" test "$(grep -c '<figure class="heatmap"' "$work/slide.html")" = 16
expect_error "--layout slide with a format that has no page" 2 \
  "attn: error: --layout slide places the panels on a page, and --format heatmap has none: use --format svg, png or html" \
  trace "${notebook[@]}" --format heatmap --layout slide

expect_ok "--format png of one head" trace --seq 5 --heads 1 --mask causal --format png --out "$work/one.png"
read -r _ _ png_colours png_yellow png_grey png_bottom < <(png_facts "$work/one.png")
check "the PNG is not blank: many colours" test "$png_colours" -gt 200
check "... among them viridis' yellow (weight 1)" test "$png_yellow" = True
check "... and the grey of masked cells" test "$png_grey" = True
check "... drawn over the whole page, to its last rows (the card's edge)" test "$png_bottom" -gt 1
expect_ok "--format png of another seed" trace "${notebook[@]:2}" --seed 1 --format png --out "$work/t1.png"
check "... is another picture" test "$(cmp -s "$work/t.png" "$work/t1.png"; echo $?)" = 1
expect_ok "--format png to a redirected stdout" trace "${notebook[@]}" --format png
check "... the same bytes as --out" cmp -s "$work/out" "$work/t.png"
cp "$work/t.png" "$work/keep.png"
expect_error "a failing run leaves --out as it was" 2 \
  "attn: error: --stage input: --format png draws the stages with a picture (in this run scores, scaled, softmax), and these have none" \
  trace --format png --stage input --out "$work/keep.png"
check "... untouched" cmp -s "$work/keep.png" "$work/t.png"
check "... and no temporary file beside it" test -z "$(ls "$work" | grep 'keep.png.tmp')"
expect_error "--out in a missing folder" 1 \
  "attn: error: --out $work/no/such/t.png: cannot create a file in $work/no/such: No such file or directory" \
  trace --format png --out "$work/no/such/t.png"

# --- the position stages ---------------------------------------------------------------------
# pe [S,Din] (2b positions), rope's cos and sin [Sq,dk] (5a rope), alibi's bias [1,H,Sq,Sk] (7a).
expect_ok "--pos sinusoidal --stage positions --format heatmap" trace --pos sinusoidal --stage positions --format heatmap
check "... draws pe, one grid for every batch item and head" test "$(grep -c '^  every batch item and head$' "$work/out")" = 1
check "... its header names its axes" grep -qx 'pe \[4,8\] (seq, d_in)' "$work/out"
check "... positions down, features across" grep -q '^     feature  0 1 2 3 4 5 6 7$' "$work/out"
# PyTorch's pe row 0 is sin 0 = 0, cos 0 = 1 alternating: on -1 .. 1, the middle shade then the top
check "... row 0: 0, 1, 0, 1, ... as the middle and the top shade" grep -q '^  position 0 ▒▒██▒▒██▒▒██▒▒██$' "$work/out"
check "... on -1 .. 1" grep -qx '  -1.0000 \[  ░░▒▒▓▓██\] 1.0000' "$work/out"
check "... and x (not a table of positions) is not drawn" test "$(grep -c '^x \[' "$work/out")" = 0
expect_ok "... in colour" trace --pos sinusoidal --stage positions --format heatmap --color always
check "... row 0's sin 0 = 0 is viridis' middle, cos 0 = 1 its top" \
  grep -q "position 0$esc\[0m $esc\[48;2;33;145;140m  $esc\[0m$esc\[48;2;253;231;37m  $esc\[0m" "$work/out"
expect_ok "... a large table is cut" trace --pos sinusoidal --seq 40 --d-model 64 --stage positions --format heatmap
check "... saying so in positions and features" grep -q 'positions 0–31 of 40, features 0–31 of 64 (--full draws all)' "$work/out"
expect_ok "--format svg --stage 2b (pe, Din 64, 32 positions)" trace --pos sinusoidal --seq 32 --d-model 64 --stage 2b \
  --format svg --out "$work/pe.svg"
check "... well-formed" python3 -c 'import xml.dom.minidom, sys; xml.dom.minidom.parse(sys.argv[1])' "$work/pe.svg"
check "... one panel, named by stage and tensor" test "$(svg_panels "$work/pe.svg" | tr '\n' ' ')" = "positions-pe "
check "... titled" grep -q '<title>positions.pe — every batch item and head</title>' "$work/pe.svg"
check "... its axes labelled position and feature" test "$(grep -c -E '>(position|feature)</text>' "$work/pe.svg")" = 2
check "... not query and key" test "$(grep -c -E '>(query i|key j)</text>' "$work/pe.svg")" = 0
check "... positions numbered down the left to 30" grep -q 'text-anchor="end">30</text>' "$work/pe.svg"
check "... features across the top to 60" grep -q 'text-anchor="middle">60</text>' "$work/pe.svg"
check "... the colour bar says -1 .. 1" test "$(grep -c -E '>(-1.0000|1.0000)</text>' "$work/pe.svg")" = 2
expect_ok "--format png of pe" trace --pos sinusoidal --seq 32 --d-model 64 --stage positions --format png --out "$work/pe.png"
check "... a PNG" sh -c "file '$work/pe.png' | grep -q 'PNG image data'"
read -r _ _ pe_colours pe_yellow _ < <(png_facts "$work/pe.png")
check "... of many colours, viridis' yellow (1) among them" test "$pe_colours" -gt 100 -a "$pe_yellow" = True
readme_positions="$(dirname "$0")/../../share/attn/doc/positions.png"
expect_ok "the README's command for pe" trace --pos sinusoidal --seq 64 --d-model 128 --stage positions --format png \
  --out "$work/positions.png"
check "... makes the README's picture (share/attn/doc/positions.png): the same bytes" \
  cmp -s "$readme_positions" "$work/positions.png"
read -r pe_w pe_h < <(python3 -c '
import sys, xml.etree.ElementTree as E; r = E.parse(sys.argv[1]).getroot()
print(r.get("width").removesuffix("pt"), r.get("height").removesuffix("pt"))' "$work/pe.svg")
check "... the SVG's page at 2 pixels per point" test "$(png_facts "$work/pe.png" 0 | cut -d' ' -f1,2)" = "$((pe_w * 2)) $((pe_h * 2))"

expect_ok "--pos rope --past 3 --stage rope --format heatmap" trace --pos rope --past 3 --seq 2 --stage rope --format heatmap
check "... cos and sin, each one grid" test "$(grep -c '^  every batch item and head$' "$work/out")" = 2
check "... rows numbered by position, 3 and 4 (the new tokens after 3 cached)" grep -q '^  position 3 ' "$work/out"
check "... columns the head's dims" grep -q '^         dim  0 1 2 3$' "$work/out"
check "... the rotated q and k are not drawn" test "$(grep -c -E '^(q|k) \[' "$work/out")" = 0
expect_ok "--pos rope --stage rope --format svg" trace --pos rope --stage rope --format svg --out "$work/rope.svg"
check "... two panels, cos and sin" test "$(svg_panels "$work/rope.svg" | tr '\n' ' ')" = "rope-cos rope-sin "
check "... labelled position and head dim" test "$(grep -c -E '>(position|head dim)</text>' "$work/rope.svg")" = 4
expect_ok "--pos rope --stage rope,softmax --layout slide" trace --pos rope --mask causal --stage rope,softmax --format svg \
  --layout slide --out "$work/rope-slide.svg"
check "... the title names rope once, though it draws cos and sin" \
  grep -q '>Attention, stage by stage: 5a rope, 10 softmax</text>' "$work/rope-slide.svg"
check "... cos, sin and the two heads' weights" test "$(svg_panels "$work/rope-slide.svg" | wc -l)" = 4

expect_ok "--pos alibi --heads 4 --batch 2 --stage alibi --format svg" trace --pos alibi --heads 4 --batch 2 --mask causal \
  --stage alibi --format svg --out "$work/alibi.svg"
check "... one panel per head, not per batch item: the bias is [1,H,Sq,Sk]" test "$(svg_panels "$work/alibi.svg" | tr '\n' ' ')" = \
  "alibi-bias-h0 alibi-bias-h1 alibi-bias-h2 alibi-bias-h3 "
check "... titled" grep -q '<title>alibi.bias — head 3 (every batch item)</title>' "$work/alibi.svg"
# head 0's slope is 1/4: -0.75 at (3, 0), +0.75 at (0, 3); one scale for the four heads
check "... on one scale symmetric around 0, -0.75 .. 0.75 (head 0's corners)" \
  test "$(grep -c -E '>(-0.7500|0.7500)</text>' "$work/alibi.svg")" = 8
check "... the values in the cells: head 0's -0.25 below the diagonal" grep -q '>-0.25</text>' "$work/alibi.svg"
check "... not masked: the bias comes before the mask" test "$(grep -c '>masked</text>' "$work/alibi.svg")" = 0
expect_ok "--pos alibi --stage alibi --format heatmap --batch-index 1 --head 2" trace --pos alibi --heads 4 --batch 2 \
  --stage alibi --format heatmap --batch-index 1 --head 2
check "... head 2, the same for every batch item" test "$(grep -c 'head 2 (every batch item)' "$work/out")" = 1
check "... alone" test "$(grep -c '(every batch item)' "$work/out")" = 1
expect_ok "--pos alibi --stage 7a,7b --format png --layout slide" trace --pos alibi --heads 4 --stage 7a,7b --format png \
  --layout slide --out "$work/alibi-slide.png"
check "... a 1920 by 1080 PNG" sh -c "file '$work/alibi-slide.png' | grep -q 'PNG image data, 1920 x 1080'"
expect_ok "... as svg" trace --pos alibi --heads 4 --stage 7a,7b --format svg --layout slide --out "$work/alibi-slide.svg"
check "... the title line names both stages" grep -q '>Attention, stage by stage: 7a alibi, 7b biased</text>' "$work/alibi-slide.svg"
check "... the run's line its positions" grep -q '>seed 0 · B 1 · Sq 4 · Sk 4 · D 8 · H 4 (dk 2) · pos alibi</text>' "$work/alibi-slide.svg"
check "... 4 + 4 panels" test "$(svg_panels "$work/alibi-slide.svg" | wc -l)" = 8
expect_error "--stage with nothing to draw names this run's drawable stages" 2 \
  "attn: error: --stage projections: --format svg draws the stages with a picture (in this run positions, scores, scaled, mask, masked, softmax), and these have none" \
  trace --pos sinusoidal --mask causal --stage projections --format svg --out "$work/no.svg"
expect_error "... with alibi" 2 \
  "attn: error: --stage 3: --format heatmap draws the stages with a picture (in this run scores, scaled, alibi, biased, softmax), and these have none" \
  trace --pos alibi --stage 3 --format heatmap

# --- html -----------------------------------------------------------------------------------
expect_ok "--format html" trace "${notebook[@]}" --format html --out "$work/t.html"
check "a whole HTML document" grep -q '^<!DOCTYPE html>' "$work/t.html"
check "... ending" grep -q '^</html>$' "$work/t.html"
check "nothing fetched: no src=, <link, @import or http(s) address but the SVG namespaces" test "$(
  grep -o -E 'src=|<link|@import|https?://[^"]*' "$work/t.html" | grep -v -E '^http://www.w3.org/(2000/svg|1999/xlink)$' | wc -l)" = 0
check "every stage of the run, in order" test "$(grep -o 'id="stage-[a-z]*"' "$work/t.html" | tr '\n' ' ')" = \
  'id="stage-input" id="stage-params" id="stage-projections" id="stage-view" id="stage-transpose" id="stage-scores" id="stage-scaled" id="stage-mask" id="stage-masked" id="stage-softmax" id="stage-context" id="stage-merge" id="stage-concat" '
check "... each with its number, name and title" grep -q '<h2><span class="step">10</span><code>softmax</code><span class="title">attention weights: softmax over the key axis (last)</span></h2>' "$work/t.html"
check "... and formula" grep -q '<p class="formula"><code>weights = softmax(masked, dim=-1)</code></p>' "$work/t.html"
check "... the stages it skips" grep -q '<p class="skipped">11 <code>dropout</code>: skipped' "$work/t.html"
check "small tensors as tables" grep -q '<caption>x\[batch=1\]</caption>' "$work/t.html"
# scores 8, scaled 8, mask 2 (the same for every head), masked 8, softmax 8
check "one heatmap per stage, batch item and head" test "$(grep -c '<figure class="heatmap"' "$work/t.html")" = 34
# PyTorch's weights of batch 0, head 0: 1 | 0.43915778 0.56084222 | ...; "*" marks masked cells
check "... each with its cells' values for the pointer, masked ones marked" \
  grep -q 'data-values="1.0000 0.0000\* 0.0000\* 0.0000\* 0.0000\* 0.4392 0.5608 0.0000\* ' "$work/t.html"
expect_ok "--format html of a large plane" trace --seq 70 --heads 1 --format html --stage softmax --out "$work/big.html"
check "... heatmaps cut, saying so" grep -q 'queries 0–63 of 70, keys 0–63 of 70 (--full draws all)' "$work/big.html"
check "... tables summarised" grep -q '<th>…</th>' "$work/big.html"
expect_ok "--format html of many heads" trace --batch 2 --heads 16 --d-model 16 --format html --stage softmax --out "$work/heads.html"
check "... draws the first 16 panels of a tensor, saying so" test "$(grep -c '<figure class="heatmap"' "$work/heads.html")" = 16
check "... saying so" grep -q '16 of 32 panels: batch 0 (--full draws all)' "$work/heads.html"
expect_ok "--format html --pos sinusoidal" trace --pos sinusoidal --format html --out "$work/pe.html"
check "... the positions stage shows pe as a heatmap" \
  grep -q '^<figure class="heatmap" data-stage="positions" data-tensor="pe" data-batch="all" data-head="all">$' "$work/pe.html"
check "... and only pe of its tensors (not x)" test "$(grep -c 'data-stage="positions"' "$work/pe.html")" = 1
# PyTorch's pe row 1: sin 1, cos 1, sin 0.1, cos 0.1, ...
check "... its cells' values for the pointer, named position and feature" \
  grep -q 'data-row-name="position" data-column-name="feature" data-queries="0 1 2 3" data-keys="0 1 2 3 4 5 6 7" data-values="0.0000 1.0000 0.0000 1.0000 0.0000 1.0000 0.0000 1.0000 0.8415 0.5403 0.0998 ' "$work/pe.html"
expect_ok "--format html --pos rope --past 3" trace --pos rope --past 3 --seq 2 --format html --stage rope --out "$work/rope.html"
check "... cos and sin, rows numbered 3 and 4" test "$(grep -c 'data-row-name="position" data-column-name="dim" data-queries="3 4"' "$work/rope.html")" = 2
expect_ok "--format html --pos alibi" trace --pos alibi --batch 2 --format html --out "$work/alibi.html"
check "... the bias a heatmap per head, for every batch item" \
  test "$(grep -c '<figure class="heatmap" data-stage="alibi" data-tensor="bias" data-batch="all" data-head="[01]">' "$work/alibi.html")" = 2

chromium_bin=$(command -v chromium || command -v chromium-browser || true)
if [ -n "$chromium_bin" ]; then
  browse() {  # browse OUTPUT-FLAG FILE: headless chromium on the page; its log in $work/chrome.log
    timeout 120 "$chromium_bin" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
      --disable-background-networking --disable-component-update --disable-sync \
      --user-data-dir="$(mktemp -d "$work/chrome.XXXXXX")" --enable-logging=stderr --v=0 \
      --window-size=1200,2000 "$1" "$2" 2>>"$work/chrome.log"
  }
  # A copy of the page that points at two cells of the first softmax panel, as a mouse
  # would, and keeps what the page then writes under it.
  probe_page() {  # probe_page PAGE OUT STAGE: a copy of PAGE that points at two cells of STAGE's first panel
  python3 - "$1" "$2" "$3" <<'PY'
import sys
probe = """<script>
var grid = document.querySelector('figure.heatmap[data-stage="STAGE"] rect.grid');
function point(row, col) {
  var cell = Number(grid.dataset.cell), p = grid.ownerSVGElement.createSVGPoint();
  p.x = Number(grid.getAttribute('x')) + cell * (col + 0.5);
  p.y = Number(grid.getAttribute('y')) + cell * (row + 0.5);
  p = p.matrixTransform(grid.getScreenCTM());
  grid.dispatchEvent(new MouseEvent('mousemove', {clientX: p.x, clientY: p.y, bubbles: true}));
  return grid.closest('figure').querySelector('figcaption').textContent;
}
document.documentElement.setAttribute('data-probe', point(1, 0) + ' | ' + point(0, 1));
</script>
</body>"""
open(sys.argv[2], 'w').write(open(sys.argv[1]).read().replace('</body>', probe.replace('STAGE', sys.argv[3])))
PY
  }
  probe_page "$work/t.html" "$work/probe.html" softmax
  browse --dump-dom "$work/probe.html" >"$work/probe-dom.html"
  check "... pointing at a cell writes its value under the figure" \
    grep -q 'data-probe="query 1, key 0: 0.4392 | query 0, key 1: 0.0000 (masked)"' "$work/probe-dom.html"
  probe_page "$work/pe.html" "$work/pe-probe.html" positions
  browse --dump-dom "$work/pe-probe.html" >"$work/pe-probe-dom.html"
  check "... on pe: the position and the feature, and pe's value there (sin 1, cos 1)" \
    grep -q 'data-probe="position 1, feature 0: 0.8415 | position 0, feature 1: 1.0000"' "$work/pe-probe-dom.html"
  probe_page "$work/rope.html" "$work/rope-probe.html" rope
  browse --dump-dom "$work/rope-probe.html" >"$work/rope-probe-dom.html"
  check "... on rope's cos after 3 cached tokens: position 4, cos 4 = -0.6536" \
    grep -q 'data-probe="position 4, dim 0: -0.6536 | position 3, dim 1: 0.9996"' "$work/rope-probe-dom.html"
  "$attn" trace --params "$gpt2/model.safetensors" --tokens "@$gpt2/tokens.txt" --vocab "$gpt2/vocab.json" \
    --stage softmax --head 0 --format html --out "$work/tokens.html"
  probe_page "$work/tokens.html" "$work/tokens-probe.html" softmax
  browse --dump-dom "$work/tokens-probe.html" >"$work/tokens-probe-dom.html"
  check "... with --vocab the readout names each token beside its position" \
    grep -q 'data-probe="query 1 Ġrobot, key 0 The: 0.3302 | query 0 The, key 1 Ġrobot: 0.0000 (masked)"' "$work/tokens-probe-dom.html"
  browse --dump-dom "$work/t.html" >"$work/dom.html"
  check "in Chromium: the page's script ran" grep -q '<html lang="en" data-ready="yes">' "$work/dom.html"
  check "... without an error" test "$(grep -c '<html[^>]*data-script-error' "$work/dom.html")" = 0
  check "... and the DOM has the 34 heatmaps" test "$(grep -c '<figure class="heatmap"' "$work/dom.html")" = 34
  check "... and no console error in the log" test "$(grep -c -i -E 'CONSOLE.*(error|uncaught)|Uncaught' "$work/chrome.log")" = 0
  (cd "$work" && browse --screenshot=shot.png t.html >/dev/null)
  read -r shot_w shot_h shot_colours _ < <(png_facts "$work/shot.png" 700)
  check "... a screenshot is made" test "$shot_w $shot_h" = "1200 2000"
  check "... and is not blank" test "$shot_colours" -gt 50
else
  echo "skip the browser tests: no chromium"
fi

finish
