#!/usr/bin/env node
// Load benchmark for `offgraph serve`: C concurrent streaming clients (C = 1, 4, 8 by default),
// each sending R chat requests back to back; prints aggregate generated tok/s, time to first
// token p50/p99 and inter-token latency p50/p99 per level. Loopback only.
//
//   node scripts/serve_bench.mjs --program model.ogp [--parallel 4] [--threads 0]   # starts and stops a server
//   node scripts/serve_bench.mjs --port 8080 [--api-key KEY]                        # a running server on 127.0.0.1
//   options: --concurrency 1,4,8 --requests 4 --max-tokens 64 --prompt "..." | --prompt-words N
//            --ctx-size N --tokenizer PATH (passed to serve) --cache-ram MiB (passed to serve)
//            --prompt-step-ratio R (passed to serve)
//            --stagger S|auto: client k starts k·S seconds after the first (auto: a lone
//            request's duration / C), so that the first wave's prompts do not all arrive at once
// Each request's prompt starts with its own number, so requests share no cached prefix
// beyond the chat template's header. Per level it prints each stream's decode rate (1 / mean
// inter-token gap), to compare a lone stream with `offgraph bench` on the same program.
//
//   --gap-test N: instead, 3 streams decode; once each has --steady-tokens, a request with an N-word
//   prompt (about N tokens) arrives; prints the streams' steady inter-token gap (median before
//   it arrived) and their longest gap while it was prefilled (chunked prefill at work).
//   --steady-tokens N: tokens each stream decodes before the prompt arrives (default 32).
//   --drop F: a fraction F of the requests (chosen by their number) is abandoned by its client
//   mid-request: streamed ones after their second token, the others (sent unstreamed) after
//   0.2 s. After each level the server's /metrics gauges are printed: with drops, the running
//   and waiting counts must be 0 and the throughput that of a run without them.
//   --json-schema JSON: each level runs four times, alternately without and with
//   response_format {type: json_schema, schema: JSON} (constrained sampling), and prints both
//   and the ratio of constrained to plain decode rate and aggregate tok/s (the same server, interleaved).
//   --log-steps: passed to serve (one stderr line per batched step); --server-log FILE keeps
//   the server's stderr.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) => {
  if (a.startsWith('--')) acc.push([a.slice(2), all[i + 1] && !all[i + 1].startsWith('--') ? all[i + 1] : 'true']);
  return acc;
}, []));
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const binary = args.binary ?? path.join(root, 'build/release/src/cli/offgraph');
const levels = (args.concurrency ?? '1,4,8').split(',').map(Number);
const perClient = Number(args.requests ?? 4);
const maxTokens = Number(args['max-tokens'] ?? 64);
const words_ = 'the of and to in is was for on that with as by at from his her an which this be or are'.split(' ');
const prompt = args['prompt-words']
  ? Array.from({ length: Number(args['prompt-words']) }, (_, i) => words_[(i * 7 + (i >> 3)) % words_.length]).join(' ')
  : args.prompt ?? 'Write a short story about a lighthouse keeper who finds a message in a bottle.';
const headers = { 'Content-Type': 'application/json', ...(args['api-key'] ? { Authorization: `Bearer ${args['api-key']}` } : {}) };

let server, port = Number(args.port ?? 0);
if (args.program) {
  const maxPar = Math.max(...levels);
  const serveArgs = ['serve', '-m', args.program, '--host', '127.0.0.1', '--port', '0', '--parallel', String(args.parallel ?? maxPar),
                     '--threads', String(args.threads ?? 0)];
  if (args['ctx-size']) serveArgs.push('--ctx-size', args['ctx-size']);
  if (args.tokenizer) serveArgs.push('--tokenizer', args.tokenizer);
  if (args['cache-ram']) serveArgs.push('--cache-ram', args['cache-ram']);
  if (args['log-steps']) serveArgs.push('--log-steps');
  if (args['prompt-step-ratio']) serveArgs.push('--prompt-step-ratio', args['prompt-step-ratio']);
  server = spawn(binary, serveArgs, { stdio: ['ignore', 'ignore', 'pipe'] });
  if (args['server-log']) server.stderr.pipe(fs.createWriteStream(args['server-log']));
  port = await new Promise((resolve, reject) => {
    let log = '';
    const timer = setTimeout(() => reject(new Error('server did not start in 120 s\n' + log)), 120000);
    server.stderr.on('data', (d) => {
      log += d;
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(log);
      if (m) { clearTimeout(timer); resolve(Number(m[1])); }
    });
    server.on('exit', (c) => reject(new Error(`server exited (${c})\n${log}`)));
  });
}
const base = `http://127.0.0.1:${port}`;

// One streamed request: [ttft seconds, inter-token gaps, completion tokens]; with `times`,
// also every token's arrival time (ms), and onToken(count) after each token.
const dropFraction = Number(args.drop ?? 0);
// Whether request `seed` is one its client abandons (a fixed hash, so runs compare).
const dropped = (seed) => dropFraction > 0 && seed > 0 && ((seed * 2654435761) % 1000) / 1000 < dropFraction;  // never the warm-up

// A request whose client goes away mid-way: streamed (odd seeds) after two content chunks,
// unstreamed after 0.2 s. Returns the tokens it saw (0 for unstreamed).
async function abandon(seed, tokensMax, text) {
  const abort = new AbortController();
  const stream = seed % 2 === 1;
  let tokens = 0;
  if (!stream) setTimeout(() => abort.abort(), 200);
  try {
    const r = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST', headers, signal: abort.signal,
      body: JSON.stringify({ messages: [{ role: 'user', content: `(${seed}) ${text}` }], max_tokens: tokensMax,
                             temperature: 0.8, seed, stream }) });
    if (!stream) {  // answered within 0.2 s: not abandoned after all
      await r.text();
      return { ttft: null, gaps: [], tokens: 0, dropped: true };
    }
    for await (const bytes of r.body) {
      tokens += (new TextDecoder().decode(bytes).match(/"content":"[^"]/g) ?? []).length;
      if (tokens >= 2) abort.abort();
    }
  } catch (e) {
    if (e.name !== 'AbortError') throw e;
  }
  return { ttft: null, gaps: [], tokens, dropped: true };
}

const jsonSchema = args['json-schema'] ? JSON.parse(args['json-schema']) : null;
let constrained = false;  // this level's requests carry response_format (--json-schema)

async function one(seed, { times = null, onToken = null, tokensMax = maxTokens, text = prompt } = {}) {
  if (dropped(seed)) return abandon(seed, tokensMax, text);
  const t0 = performance.now();
  const req = { messages: [{ role: 'user', content: `(${seed}) ${text}` }], max_tokens: tokensMax,
                temperature: 0.8, seed, stream: true, stream_options: { include_usage: true } };
  if (constrained) req.response_format = { type: 'json_schema', json_schema: { name: 'bench', schema: jsonSchema } };
  const r = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST', headers, signal: AbortSignal.timeout(600000), body: JSON.stringify(req) });
  if (r.status !== 200) throw new Error(`HTTP ${r.status}: ${await r.text()}`);
  const decoder = new TextDecoder();
  let buf = '', ttft = null, last = null, tokens = 0;
  const gaps = [];
  for await (const bytes of r.body) {
    buf += decoder.decode(bytes, { stream: true });
    let at;
    while ((at = buf.indexOf('\n\n')) >= 0) {
      const event = buf.slice(0, at);
      buf = buf.slice(at + 2);
      if (!event.startsWith('data: ') || event === 'data: [DONE]') continue;
      const c = JSON.parse(event.slice(6));
      if (c.usage) tokens = c.usage.completion_tokens;
      if (!c.choices?.[0]?.delta?.content) continue;
      const now = performance.now();
      if (ttft === null) ttft = (now - t0) / 1000;
      else gaps.push((now - last) / 1000);
      last = now;
      if (times) times.push(now);
      if (onToken) onToken(times ? times.length : 0);
    }
  }
  return { ttft, gaps, tokens };
}

const pct = (xs, p) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const ms = (x) => (x * 1000).toFixed(1).padStart(8);

async function gapTest(words, steadyTokens) {
  const long = Array.from({ length: words }, (_, i) => words_[(i * 11 + (i >> 4)) % words_.length]).join(' ');
  const times = [[], [], []];
  let arrived = null, done = null, ready = 0, release;
  const allReady = new Promise((r) => { release = r; });
  const streams = times.map((t, k) => one(100 + k, { times: t, tokensMax: 2000, onToken: (n) => {
    if (n === steadyTokens && ++ready === 3) release();
  } }));
  await allReady;
  arrived = performance.now();
  const r = await one(200, { text: long, tokensMax: 1 });
  done = performance.now();
  // Let the streams run a little past the prefill, then stop waiting for them.
  await new Promise((res) => setTimeout(res, 2000));
  if (server) server.kill('SIGTERM');
  await Promise.allSettled(streams);
  const steady = [], during = [];
  for (const t of times)
    for (let i = 1; i < t.length; ++i) {
      const gap = t[i] - t[i - 1];
      if (t[i] <= arrived) steady.push(gap);
      else if (t[i - 1] < done) during.push(gap);
    }
  const med = pct(steady, 50), worst = Math.max(...during), f = (x) => x.toFixed(1);
  console.log(`gap test: ${words}-word prompt beside 3 streams, prefilled in ${((done - arrived) / 1000).toFixed(2)} s ` +
              `(ttft ${r.ttft?.toFixed(2)} s)`);
  // The steady gaps' own maximum shows how far one step strays with no prompt at all (the
  // host's noise), against which the longest gap during the prefill is to be read.
  console.log(`  steady gaps (${steady.length}): median ${f(med)} ms, p90 ${f(pct(steady, 90))} ms, max ${f(Math.max(...steady))} ms`);
  console.log(`  gaps during the prefill (${during.length}): median ${f(pct(during, 50))} ms, p90 ${f(pct(during, 90))} ms, ` +
              `max ${f(worst)} ms = ${(worst / med).toFixed(2)}x the steady median`);
}

try {
  const warmStart = performance.now();
  await one(0);  // warm-up, and a lone request's duration for --stagger auto
  const loneSeconds = (performance.now() - warmStart) / 1000;
  if (args['gap-test']) { await gapTest(Number(args['gap-test']), Number(args['steady-tokens'] ?? 32)); process.exit(0); }
  console.log(`serve_bench: ${base}, ${perClient} requests per client, max_tokens ${maxTokens}, ` +
              `stagger ${args.stagger ?? 0} (a lone request took ${loneSeconds.toFixed(2)} s)`);
  console.log('clients  requests  tokens    tok/s   ttft p50  ttft p99   itl p50   itl p99  (ms)  stream tok/s' +
              (dropFraction > 0 ? '  dropped  running waiting disconnects' : ''));
  // Each run's requests have seeds of their own: a rerun must not hit the prefix cache.
  let seedBase = 0;
  if (jsonSchema) {  // the vocabulary's first constrained reply computes its shared token classes: not timed
    constrained = true;
    await one(1e6);
    constrained = false;
  }
  const runLevel = async (c, label) => {
    const first = seedBase;
    seedBase += 1000;
    // Client k starts k staggers after the first (0: all at once, the worst case for the
    // first wave's time to first token; auto: a lone request's duration spread over the C).
    const stagger = args.stagger === 'auto' ? loneSeconds / c : Number(args.stagger ?? 0);
    const start = performance.now();
    const results = (await Promise.all(Array.from({ length: c }, async (_, k) => {
      await new Promise((res) => setTimeout(res, k * stagger * 1000));
      const out = [];
      for (let i = 0; i < perClient; ++i) out.push(await one(first + 1 + k * perClient + i));
      return out;
    }))).flat();
    const wall = (performance.now() - start) / 1000;
    const tokens = results.reduce((a, r) => a + r.tokens, 0);
    const ttfts = results.map((r) => r.ttft).filter((x) => x !== null);
    const gaps = results.flatMap((r) => r.gaps);
    const streamRate = gaps.length / gaps.reduce((a, g) => a + g, 0);
    let tail = '';
    if (dropFraction > 0) {
      // The gauges once the server has seen every client leave (bounded wait).
      let m = '';
      for (let i = 0; i < 50; ++i) {
        m = await (await fetch(`${base}/metrics`, { headers })).text();
        if (/\noffgraph:num_requests_running 0\n/.test(m) && /\noffgraph:num_requests_waiting 0\n/.test(m)) break;
        await new Promise((res) => setTimeout(res, 100));
      }
      const g = (name) => (new RegExp(`\n${name} ([0-9.e+-]+)\n`).exec(m) ?? [])[1];
      tail = `  ${String(results.filter((r) => r.dropped).length).padStart(7)}  ${String(g('offgraph:num_requests_running')).padStart(7)} ` +
             `${String(g('offgraph:num_requests_waiting')).padStart(7)} ${String(g('offgraph:client_disconnects_total')).padStart(11)}`;
    }
    console.log(`${label}${String(c).padStart(7)} ${String(results.length).padStart(9)} ${String(tokens).padStart(7)} ${(tokens / wall).toFixed(1).padStart(8)} ` +
                `${ms(pct(ttfts, 50))}  ${ms(pct(ttfts, 99))}  ${ms(pct(gaps, 50))}  ${ms(pct(gaps, 99))}  ${streamRate.toFixed(2).padStart(12)}` + tail);
    return { total: tokens / wall, stream: streamRate };
  };
  for (const c of levels) {
    if (!jsonSchema) {
      await runLevel(c, '');
      continue;
    }
    const runs = { plain: [], schema: [] };
    for (let rep = 0; rep < 2; ++rep)
      for (const mode of ['plain', 'schema']) {
        constrained = mode === 'schema';
        runs[mode].push(await runLevel(c, mode.padEnd(7)));
      }
    constrained = false;
    const mean = (xs, k) => xs.reduce((a, x) => a + x[k], 0) / xs.length;
    console.log(`ratio  ${String(c).padStart(7)}  constrained / plain: aggregate ${(mean(runs.schema, 'total') / mean(runs.plain, 'total')).toFixed(3)}, ` +
                `stream decode ${(mean(runs.schema, 'stream') / mean(runs.plain, 'stream')).toFixed(3)}`);
  }
} finally {
  if (server) {
    server.kill('SIGTERM');
    await new Promise((r) => server.on('exit', r));
  }
}
