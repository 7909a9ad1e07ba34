#!/usr/bin/env node
// The oracle for offgraph's tokenizer tests: HuggingFace's own `tokenizers` (Rust, through
// its Node binding), pinned in package.json together with the real tokenizer.json files.
//
//   node scripts/tokenizer_oracle.mjs generate      write tests/data/tokenizer/expected_<name>.json for
//                                                   each real tokenizer and each variant (variants.json)
//   node scripts/tokenizer_oracle.mjs check         regenerate in memory; exit 1 if the committed files differ
//   node scripts/tokenizer_oracle.mjs bench FILE    encode FILE (UTF-8) with each tokenizer, print MB/s
//
// Every mode first checks that the installed packages have the pinned versions and that each
// tokenizer.json has the sha256 recorded in tests/data/tokenizer/fixtures.json.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dataDir = join(root, 'tests', 'data', 'tokenizer');
const fixtures = JSON.parse(readFileSync(join(dataDir, 'fixtures.json'), 'utf8'));

function fail(message) {
  console.error(`tokenizer_oracle: ${message}`);
  process.exit(1);
}

function installedVersion(pkg) {
  try {
    return JSON.parse(readFileSync(join(root, 'node_modules', pkg, 'package.json'), 'utf8')).version;
  } catch {
    fail(`${pkg} is not installed; run scripts/install-deps.sh (npm ci)`);
  }
}

function sha256(path) {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

// Verifies pins and hashes; returns [{name, path, sha256}] for every fixture.
function verifiedFixtures() {
  const oracleVersion = installedVersion(fixtures.oracle.package);
  if (oracleVersion !== fixtures.oracle.version)
    fail(`${fixtures.oracle.package} is ${oracleVersion}, pinned ${fixtures.oracle.version}`);
  return Object.entries(fixtures.tokenizers).map(([name, f]) => {
    const version = installedVersion(f.package);
    if (version !== f.version) fail(`${f.package} is ${version}, pinned ${f.version}`);
    const path = join(root, f.path);
    const digest = sha256(path);
    if (digest !== f.sha256) fail(`${f.path} has sha256 ${digest}, pinned ${f.sha256}`);
    return { name, path, sha256: digest };
  });
}

async function loadTokenizer(path) {
  const { Tokenizer } = await import('tokenizers');
  return Tokenizer.fromFile(path);
}

// A variant is a real tokenizer.json with top-level keys replaced, model fields set and
// added-token flags patched; tests/tokenizer_test.cc applies the same patch.
async function loadVariant(variant, paths) {
  const { Tokenizer } = await import('tokenizers');
  const j = JSON.parse(readFileSync(paths[variant.base], 'utf8'));
  Object.assign(j, variant.replace);
  Object.assign(j.model, variant.model_fields);
  for (const t of j.added_tokens) Object.assign(t, variant.added_token_flags[t.content] ?? {});
  return Tokenizer.fromString(JSON.stringify(j));
}

// One JSON line per case keeps the committed files diffable.
function render(header, cases) {
  const head = JSON.stringify(header).slice(0, -1);
  return `${head},"cases":[\n${cases.map((c) => JSON.stringify(c)).join(',\n')}\n]}\n`;
}

async function expectedFiles() {
  const corpusText = readFileSync(join(dataDir, 'corpus.json'), 'utf8');
  const corpus = JSON.parse(corpusText);
  const corpusSha = createHash('sha256').update(corpusText).digest('hex');
  const out = {};
  const real = verifiedFixtures();
  const paths = Object.fromEntries(real.map((f) => [f.name, f.path]));
  const variants = JSON.parse(readFileSync(join(dataDir, 'variants.json'), 'utf8'));
  const all = [...real, ...Object.entries(variants).map(([name, v]) => ({ name, variant: v, sha256: real.find((f) => f.name === v.base).sha256 }))];
  for (const f of all) {
    const tok = f.variant ? await loadVariant(f.variant, paths) : await loadTokenizer(f.path);
    const cases = [];
    // Variants test components, not long words: they skip strings over 200 characters,
    // which keeps the committed files small.
    for (const original of f.variant ? corpus.filter((s) => s.length <= 200) : corpus) {
      // The binding hands Rust UTF-8 with lone surrogates replaced by U+FFFD; record that
      // text, so the C++ side (which only takes valid UTF-8) tokenizes the same bytes.
      const text = Buffer.from(original, 'utf8').toString('utf8');
      const ids = (await tok.encode(text, null, { addSpecialTokens: false })).getIds();
      const idsSpecial = (await tok.encode(text, null, { addSpecialTokens: true })).getIds();
      const again = (await tok.encode(original, null, { addSpecialTokens: false })).getIds();
      if (JSON.stringify(again) !== JSON.stringify(ids)) fail(`${f.name}: sanitizing ${JSON.stringify(original)} changed its ids`);
      // Fields equal to their default (ids_special: ids; decoded text: the input) are left
      // out to keep the files small.
      const c = { text, ids };
      if (JSON.stringify(idsSpecial) !== JSON.stringify(ids)) c.ids_special = idsSpecial;
      const decoded = await tok.decode(ids, false);
      const decodedSkip = await tok.decode(idsSpecial, true);
      if (decoded !== text) c.decoded = decoded;
      if (decodedSkip !== text) c.decoded_skip_special = decodedSkip;
      cases.push(c);
    }
    const header = { oracle: `${fixtures.oracle.package}@${fixtures.oracle.version}`, tokenizer: f.name,
                     base_sha256: f.sha256, corpus_sha256: corpusSha };
    out[join(dataDir, `expected_${f.name}.json`)] = render(header, cases);
  }
  return out;
}

// FNV-1a (32-bit) over the ids as little-endian uint32: tokenizer_bench prints the same.
function fnv1a(ids) {
  let h = 0x811c9dc5;
  for (const id of ids)
    for (let k = 0; k < 4; ++k) h = Math.imul(h ^ ((id >>> (8 * k)) & 0xff), 0x01000193) >>> 0;
  return h.toString(16).padStart(8, '0');
}

async function bench(file) {
  const text = readFileSync(file, 'utf8');
  const bytes = Buffer.byteLength(text, 'utf8');
  for (const f of verifiedFixtures()) {
    const tok = await loadTokenizer(f.path);
    await tok.encode(text.slice(0, 100000), null, { addSpecialTokens: false });  // warm-up
    let best = Infinity;
    let encoding = null;
    for (let rep = 0; rep < 2; ++rep) {
      const t0 = process.hrtime.bigint();
      encoding = await tok.encode(text, null, { addSpecialTokens: false });
      best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e9);
    }
    const ids = encoding.getIds();
    console.log(JSON.stringify({ tokenizer: f.name, impl: `tokenizers@${fixtures.oracle.version} (node)`, bytes,
                                 ids: ids.length, ids_fnv1a: fnv1a(ids), seconds: +best.toFixed(3),
                                 mb_per_s: +(bytes / 1e6 / best).toFixed(2) }));
  }
}

const [mode, arg] = process.argv.slice(2);
if (mode === 'generate') {
  for (const [path, body] of Object.entries(await expectedFiles())) {
    writeFileSync(path, body);
    console.log(`wrote ${path} (${body.length} chars)`);
  }
} else if (mode === 'check') {
  let stale = 0;
  for (const [path, body] of Object.entries(await expectedFiles())) {
    let committed = '';
    try { committed = readFileSync(path, 'utf8'); } catch { /* missing counts as stale */ }
    if (committed !== body) {
      ++stale;
      console.error(`STALE ${path}: differs from what the pinned oracle produces; run: node scripts/tokenizer_oracle.mjs generate`);
    }
  }
  if (stale) process.exit(1);
  console.log('expected ids match the pinned oracle');
} else if (mode === 'bench' && arg) {
  await bench(arg);
} else {
  fail('usage: tokenizer_oracle.mjs generate | check | bench FILE');
}
