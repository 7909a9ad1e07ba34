#!/usr/bin/env node
// Load benchmark for `offgraph serve`: C concurrent streaming clients (C = 1, 4, 8 by default),
// each sending R chat requests back to back; prints aggregate generated tok/s, time to first
// token p50/p99 and inter-token latency p50/p99 per level. Loopback only.
//
//   node scripts/serve_bench.mjs --program model.ogp [--parallel 4] [--threads 0]   # starts and stops a server
//   node scripts/serve_bench.mjs --port 8080 [--api-key KEY]                        # a running server on 127.0.0.1
//   options: --concurrency 1,4,8 --requests 4 --max-tokens 64 --prompt "..." --ctx-size N
import { spawn } from 'node:child_process';
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
const prompt = args.prompt ?? 'Write a short story about a lighthouse keeper who finds a message in a bottle.';
const headers = { 'Content-Type': 'application/json', ...(args['api-key'] ? { Authorization: `Bearer ${args['api-key']}` } : {}) };

let server, port = Number(args.port ?? 0);
if (args.program) {
  const maxPar = Math.max(...levels);
  const serveArgs = ['serve', '-m', args.program, '--host', '127.0.0.1', '--port', '0', '--parallel', String(args.parallel ?? maxPar),
                     '--threads', String(args.threads ?? 0)];
  if (args['ctx-size']) serveArgs.push('--ctx-size', args['ctx-size']);
  server = spawn(binary, serveArgs, { stdio: ['ignore', 'ignore', 'pipe'] });
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

// One streamed request: [ttft seconds, inter-token gaps, completion tokens].
async function one(seed) {
  const t0 = performance.now();
  const r = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST', headers, signal: AbortSignal.timeout(600000),
    body: JSON.stringify({ messages: [{ role: 'user', content: `${prompt} (${seed})` }], max_tokens: maxTokens,
                           temperature: 0.8, seed, stream: true, stream_options: { include_usage: true } }) });
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

try {
  await one(0);  // warm-up
  console.log(`serve_bench: ${base}, ${perClient} requests per client, max_tokens ${maxTokens}`);
  console.log('clients  requests  tokens    tok/s   ttft p50  ttft p99   itl p50   itl p99  (ms)');
  for (const c of levels) {
    const start = performance.now();
    const results = (await Promise.all(Array.from({ length: c }, async (_, k) => {
      const out = [];
      for (let i = 0; i < perClient; ++i) out.push(await one(1 + k * perClient + i));
      return out;
    }))).flat();
    const wall = (performance.now() - start) / 1000;
    const tokens = results.reduce((a, r) => a + r.tokens, 0);
    const ttfts = results.map((r) => r.ttft).filter((x) => x !== null);
    const gaps = results.flatMap((r) => r.gaps);
    console.log(`${String(c).padStart(7)} ${String(results.length).padStart(9)} ${String(tokens).padStart(7)} ${(tokens / wall).toFixed(1).padStart(8)} ` +
                `${ms(pct(ttfts, 50))}  ${ms(pct(ttfts, 99))}  ${ms(pct(gaps, 50))}  ${ms(pct(gaps, 99))}`);
  }
} finally {
  if (server) {
    server.kill('SIGTERM');
    await new Promise((r) => server.on('exit', r));
  }
}
