#!/usr/bin/env python3
"""Renders tests/data/chat/*.jinja with Jinja2 set up exactly as transformers does, and
writes tests/data/chat/expected.json, the oracle tests/chat_template_test.cc must match
byte for byte.

The environment copies transformers' _compile_jinja_template
(src/transformers/utils/chat_template_utils.py): ImmutableSandboxedEnvironment with
trim_blocks, lstrip_blocks, the loopcontrols extension and the {% generation %} tag, its
tojson override (json.dumps, no HTML escaping), raise_exception and strftime_now. The
variables are those apply_chat_template passes: messages, tools=None, documents=None,
add_generation_prompt, the tokenizer's special tokens that are set, and extra kwargs.

Run with Debian's python3-jinja2 (no transformers needed):
    /usr/bin/python3 scripts/render_chat_oracle.py
"""

import json
import os
import sys
from datetime import datetime

import jinja2
from jinja2.ext import Extension
from jinja2.sandbox import ImmutableSandboxedEnvironment

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "chat")

# Special tokens as tokenizer_config.json sets them (None-valued ones are not passed).
LLAMA3 = {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"}
DEEPSEEK = {"bos_token": "<｜begin▁of▁sentence｜>", "eos_token": "<｜end▁of▁sentence｜>",
            "pad_token": "<｜end▁of▁sentence｜>"}
QWEN = {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"}
TEMPLATES = {
    "llama3": {"bos_token": "<|begin_of_text|>", "eos_token": "<|end_of_text|>"},
    "llama3_lenml31": LLAMA3,
    "llama3_1": LLAMA3,
    "llama3_2": LLAMA3,
    "gemma2": {"bos_token": "<bos>", "eos_token": "<eos>", "pad_token": "<pad>", "unk_token": "<unk>"},
    "gemma3": {"bos_token": "<bos>", "eos_token": "<end_of_turn>", "pad_token": "<pad>", "unk_token": "<unk>"},
    "qwen2_5": QWEN,
    "qwen3": QWEN,
    "qwq": QWEN,
    "phi3_5": {"bos_token": "<s>", "eos_token": "<|endoftext|>", "pad_token": "<|endoftext|>", "unk_token": "<unk>"},
    "mistral_nemo": {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"},
    "mistral_small_3_2": {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"},
    "smollm3": {"eos_token": "<|im_end|>", "pad_token": "<|im_end|>"},
    "deepseek_v3": DEEPSEEK,
    "deepseek_r1_distill": DEEPSEEK,
    "hermes3_tool_use": {"bos_token": "<|begin_of_text|>", "eos_token": "<|im_end|>"},
    "gpt_oss": {"bos_token": "<|startoftext|>", "eos_token": "<|return|>", "pad_token": "<|endoftext|>"},
}

# llama.cpp's collection of real templates (lcpp_*.jinja, PROVENANCE.md) comes without the
# models' tokenizer configs: each is rendered with the same generic special tokens.
for _f in sorted(os.listdir(DATA)):
    if _f.startswith("lcpp_") and _f.endswith(".jinja"):
        TEMPLATES[_f[:-len(".jinja")]] = {"bos_token": "<s>", "eos_token": "</s>"}

SYSTEM = "You are a helpful assistant."
TRICKY = ("Line one\nline \"two\" with 'quotes' and a backslash \\ here\n  indented {{ x }} "
          "{% if y %}{# z #} and {%- raw %}\tTab, é, 中文, emoji 🙂, NBSP\u00a0, JSON {\"a\": [1, 2]}")
TOOLS = [{
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name, e.g. Paris"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
        },
    },
}]


def msg(role, content, **extra):
    return {"role": role, "content": content, **extra}


# Every conversation is rendered with date_string fixed (Llama 3.x would otherwise call
# strftime_now) and with add_generation_prompt true and false.
CONVERSATIONS = {
    "user": {"messages": [msg("user", "Hello!")]},
    "system_user": {"messages": [msg("system", SYSTEM), msg("user", "What is 2+2?")]},
    "multi_turn": {"messages": [msg("user", "Hi"), msg("assistant", "Hello! How can I help?"),
                                msg("user", "Tell me a joke.")]},
    "ends_with_assistant": {"messages": [msg("system", SYSTEM), msg("user", "Hi"), msg("assistant", "Hello."),
                                         msg("user", "Bye"), msg("assistant", "Goodbye!")]},
    "tricky_content": {"messages": [msg("system", "  " + TRICKY + "  \n"), msg("user", TRICKY),
                                    msg("assistant", "\n  padded answer with trailing spaces  \n"),
                                    msg("user", "\u3000ideographic-space padded\u3000")]},
    "thinking": {"messages": [msg("user", "What is 2+2?"),
                              msg("assistant", "<think>\nAdd two and two.\n</think>\n\nThe answer is 4."),
                              msg("user", "And 3+3?")]},
    "no_thinking_flag": {"messages": [msg("system", "Be brief."), msg("user", "Hi")],
                         "extra": {"enable_thinking": False}},
    "roles_not_alternating": {"messages": [msg("user", "one"), msg("user", "two")]},
    "assistant_first": {"messages": [msg("assistant", "I speak first."), msg("user", "ok")]},
    "system_only": {"messages": [msg("system", SYSTEM)]},
    "empty": {"messages": []},
    # Multimodal-style content: Gemma 3 walks the parts, others print or reject the list.
    "list_content": {"messages": [msg("system", [{"type": "text", "text": "Be brief."}]),
                                  msg("user", [{"type": "text", "text": "Describe this:"}, {"type": "image"}])]},
    "tool_calls": {
        "messages": [
            msg("user", "What's the weather in Paris?"),
            msg("assistant", "", tool_calls=[{"id": "call12345", "type": "function", "function": {
                "name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}}]),
            msg("tool", "{\"temperature\": 21, \"unit\": \"celsius\"}", tool_call_id="call12345",
                name="get_weather"),
            msg("assistant", "It is 21 °C in Paris."),
        ],
        "extra": {"tools": TOOLS},
    },
}
# OpenAI-style tool call: content None and arguments as a JSON string (the DeepSeek path).
CONVERSATIONS["tool_calls_string_args"] = {
    "messages": [
        msg("system", SYSTEM),
        msg("user", "Weather in Paris and Rome?"),
        msg("assistant", None, tool_calls=[
            {"id": "callAAAAA", "type": "function",
             "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}},
            {"id": "callBBBBB", "type": "function",
             "function": {"name": "get_weather", "arguments": "{\"city\": \"Rome\"}"}}]),
        msg("tool", "21", tool_call_id="callAAAAA"),
        msg("tool", "25", tool_call_id="callBBBBB"),
        msg("assistant", "Paris 21, Rome 25."),
    ],
    "extra": {"tools": TOOLS},
}
COMMON_EXTRA = {"date_string": "26 Jul 2024"}
# strftime_now() sees this time in both renderers (RenderOptions::now on the C++ side).
FIXED_NOW = datetime(2024, 7, 26, 12, 30, 0)

# Small templates that pin down one rule each (operators, Python str()/repr(), filters,
# tests, scoping, whitespace control). Rendered with SNIPPET_CONTEXT; errors must be errors.
SNIPPET_CONTEXT = {
    "d": {"b": 2, "a": 1, "C": 3},
    "l": [1, 2, 2],
    "users": [{"name": "amy", "admin": True, "age": 30}, {"name": "bob", "admin": False}],
    "nums": [{"n": 1}, {"n": 2.5}],
    "v": {"s": "é\"\\\n\t\u0001<>&'/", "n": None, "b": True, "i": 1, "f": 1.5, "f2": 1.0, "big": 1e20,
          "l": [1, [2, []], {}], "u": "中🙂"},
}
SNIPPETS = [
    # arithmetic and Python number formatting
    "{{ 1 + 2 }}|{{ 7 // 2 }}|{{ -7 // 2 }}|{{ -7 % 3 }}|{{ 7 % -3 }}|{{ 2 ** 10 }}|{{ 1 / 2 }}|{{ 4 / 2 }}|{{ 7.5 // 2 }}|{{ -7.5 % 2 }}",
    "{{ 0.1 + 0.2 }}|{{ 1e20 }}|{{ 1.5e-5 }}|{{ 123456789012345678.0 }}|{{ 1e16 }}|{{ 1e15 }}|{{ 0.0001 }}|{{ 0.00001 }}|{{ -0.0 }}|{{ 3.0 }}|{{ 2.5e3 }}|{{ 1_000 }}",
    "{{ 'a' ~ 1 ~ none ~ true ~ 1.0 }}|{{ 'ab' * 3 }}|{{ 3 * 'ab' }}|{{ [1] * 2 }}|{{ [1, 2] + [3] }}|{{ (1, 2) + (3,) }}|{{ true + 1 }}",
    "{{ -3 }}|{{ +3 }}|{{ -(2 + 3) }}|{{ - 2 ** 2 }}|{{ 2 + 3 * 4 }}|{{ (2 + 3) * 4 }}|{{ 10 - 2 - 3 }}|{{ 2 ** 3 ** 2 }}|{{ 1 ~ 2 * 3 }}",
    # logic, comparison, membership, conditional expressions
    "{{ true and 'x' }}|{{ false or 'y' }}|{{ 0 or '' or 'z' }}|{{ none and 1 }}|{{ not none }}|{{ not 'a' }}|{{ not 1 == 2 }}",
    "{{ 1 == 1.0 }}|{{ true == 1 }}|{{ 'a' != 'b' }}|{{ [1, 2] == [1, 2] }}|{{ (1, 2) == [1, 2] }}|{{ {'a': 1} == {'a': 1} }}|{{ none == none }}|{{ undefined_x == undefined_y }}|{{ d == {'a': 1, 'b': 2, 'C': 3} }}",
    "{{ 1 < 2 < 3 }}|{{ 3 > 2 > 2 }}|{{ 'abc' < 'abd' }}|{{ [1, 2] < [1, 3] }}|{{ 2 >= 2 }}|{{ 1 <= 0 }}|{{ 'é' > 'z' }}",
    "{{ 'b' in 'abc' }}|{{ 2 in [1, 2] }}|{{ 'k' in {'k': 1} }}|{{ 'z' not in 'abc' }}|{{ 1 in undefined_x }}|{{ 'a' in d }}|{{ [1] in [[1], 2] }}",
    "{{ 'yes' if 1 else 'no' }}|{{ 'yes' if 0 else 'no' }}|[{{ 'yes' if 0 }}]|{{ 1 if none is none else 2 }}|{{ 'a' if false else 'b' if true else 'c' }}",
    "{{ 'a' + 'b' | upper }}|{{ ('a' + 'b') | upper }}|{{ -1 | abs }}|{{ 'ab' ~ 'cd' | upper }}|{{ not true | string }}",
    # literals and Python str()/repr()
    "{{ \"don't\" }}|{{ 'say \"hi\"' }}|{{ 'a\\nb' }}|{{ 'tab\\there' }}|{{ '\\u00e9\\x41\\101' }}|{{ 'back\\\\slash' }}|{{ 'unknown \\d escape' }}|{{ 'adj' 'acent' }}|{{ 'it\\'s' }}",
    "{{ none }}|{{ true }}|{{ false }}|{{ True }}|{{ None }}|{{ [1, 'a', none, true, 1.5, [2], {'k': 'v'}] }}|{{ {'a': [1, 2], 'b': {'c': none}} }}|{{ (1,) }}|{{ () }}|{{ (1, 'x') }}",
    "{{ [\"it's\", 'say \"x\"', 'both \\' \"', 'nl\\n', 'tab\\t', 'é中🙂', '\\x00\\x7f', '\\u00a0\\u3000\\u200b', 'back\\\\'] }}",
    "{{ d }}|{{ l }}|{{ users[0] }}|[{{ none.attr }}]|[{{ d.missing }}]|[{{ undefined_x }}]|[{{ users[5] }}]|[{{ 'abc'.nomethod }}]",
    # subscripts and slices (by code point)
    "{{ 'hello'[1:3] }}|{{ 'hello'[::-1] }}|{{ 'hello'[-2:] }}|{{ 'hello'[:-2] }}|{{ 'hello'[::2] }}|{{ [1,2,3,4][1:] }}|{{ [1,2,3,4][::-2] }}|{{ [1,2,3][5:] }}|{{ 'héllo'[1] }}|{{ 'héllo'[1:3] }}|{{ [1,2,3][-1] }}|[{{ [1,2,3][7] }}]|{{ 'abc'[10:1:-1] }}|{{ [1,2,3,4,5][-10:10:3] }}|{{ (1,2,3)[1:] }}",
    "{{ d.a }}|{{ d['a'] }}|{{ d.items() | list }}|{{ d.keys() | list }}|{{ d.values() | list }}|{{ d.get('a') }}|{{ d.get('zz') }}|{{ d.get('zz', 5) }}|{{ l.0 }}|{{ l[0] }}|{{ l.index(2) }}|{{ l.count(2) }}|{{ users[0]['name'] }}|{{ users.0.name }}",
    # str methods
    "{{ '  a b  '.strip() }}|{{ 'xxaxx'.strip('x') }}|{{ '  a '.lstrip() }}|{{ ' a  '.rstrip() }}|{{ '\\u3000a\\u00a0'.strip() }}|{{ 'a,b,,c'.split(',') }}|{{ ' a  b\\tc\\n'.split() }}|{{ 'a,b,c'.split(',', 1) }}|{{ 'a,b,c'.rsplit(',', 1) }}|{{ '  x  y '.rsplit() }}|{{ 'a b c'.split(none, 1) }}|{{ 'a<sep>b'.split('<sep>')[-1] }}",
    "{{ 'Hello'.startswith('He') }}|{{ 'Hello'.endswith(('x', 'lo')) }}|{{ 'hello world'.title() }}|{{ 'hELLO'.capitalize() }}|{{ 'aXb'.upper() }}|{{ 'aXb'.lower() }}|{{ 'aaa'.replace('a', 'b', 2) }}|{{ 'abc'.replace('', '-') }}|{{ 'héllo'.find('l') }}|{{ 'abc'.find('z') }}|{{ 'a-b-c'.count('-') }}|{{ ', '.join(['a', 'b']) }}|{{ '{} and {}'.format('x', 1) }}|{{ '{0}{name}{{}}'.format('a', name='b') }}|{{ '12'.isdigit() }}|{{ 'ab1'.isalpha() }}|{{ \"they're bill's\".title() }}|{{ 'l1ne x2y'.title() }}",
    # filters
    "{{ '  x  ' | trim }}|{{ 'xxyxx' | trim('x') }}|{{ 'abc' | length }}|{{ 'héllo' | length }}|{{ [1, 2] | count }}|{{ d | length }}|{{ undefined_x | length }}|{{ 'ab' | upper }}|{{ 'AB' | lower }}|{{ 'hello world' | title }}|{{ 'hello World' | capitalize }}|{{ 5 | trim }}|[{{ undefined_x | trim }}]",
    "{{ v | tojson }}",
    "{{ v | tojson(indent=2) }}",
    "{{ v | tojson(ensure_ascii=true) }}|{{ v | tojson(indent=2, sort_keys=true) }}|{{ v | tojson(separators=(',', ':')) }}|{{ v | tojson(indent='\\t') }}",
    "{{ none | select | list }}|{{ none | map(attribute='a') | list }}|{{ undefined_x | rejectattr('a') | list }}|{{ '' | map('upper') | list }}",
    "{{ 'x' | tojson }}|{{ none | tojson }}|{{ [] | tojson(indent=4) }}|{{ (1, 2) | tojson }}|{{ 1.0 | tojson }}|{{ d | tojson(indent=0) }}|{{ {} | tojson }}",
    "{{ d | items | list }}|{% for k, v in d | items %}{{ k }}={{ v }};{% endfor %}|{% for k, v in d.items() %}{{ k }}{{ v }}{% endfor %}|{{ d | dictsort }}|{{ d | dictsort(reverse=true) }}|{{ d | dictsort(true) }}|{{ d | dictsort(by='value') }}",
    "{{ [3, 1, 2] | first }}|{{ [3, 1, 2] | last }}|{{ 'abc' | first }}|{{ 'abc' | last }}|[{{ [] | first }}]|{{ d | first }}|{{ d | last }}",
    "{{ undefined_x | default('dflt') }}|{{ none | default('dflt') }}|{{ '' | default('dflt', true) }}|{{ 0 | d('z', boolean=true) }}|{{ 'v' | default('dflt') }}|{{ undefined_x | default }}|",
    "{{ ['a', 'b'] | join(', ') }}|{{ [1, 2] | join }}|{{ users | join(', ', attribute='name') }}|{{ 'abc' | join('-') }}|{{ [none, 1.0] | join(' ') }}",
    "{{ 'aXbX' | replace('X', 'y') }}|{{ 'aaa' | replace('a', 'b', 2) }}|{{ 5 | string }}|{{ [1] | string }}|{{ none | string }}|[{{ undefined_x | string }}]|{{ 1.0 | string }}",
    "{{ '42' | int }}|{{ '3.7' | int }}|{{ 'x' | int }}|{{ 'x' | int(-1) }}|{{ 3.9 | int }}|{{ true | int }}|{{ ' 12 ' | int }}|{{ '1_000' | int }}|{{ '2.5' | float }}|{{ 3 | float }}|{{ 'x' | float }}|{{ -3.9 | int }}",
    "{{ 'ab' | list }}|{{ d | list }}|{{ (1, 2) | list }}|{{ -3 | abs }}|{{ -2.5 | abs }}|{{ 2.5 | round }}|{{ 3.5 | round }}|{{ 2.675 | round(2) }}|{{ 2.1 | round(0, 'ceil') }}|{{ 2.9 | round(method='floor') }}|{{ 5 | round }}|{{ 1234.5678 | round(-2) }}",
    "{{ [1, 0, 2, none] | select | list }}|{{ [1, 2, 3, 4] | select('odd') | list }}|{{ [1, 2, 3, 4] | reject('even') | list }}|{{ [1, 2, 3] | select('gt', 1) | list }}|{{ users | selectattr('admin') | map(attribute='name') | list }}|{{ users | rejectattr('admin') | map(attribute='name') | join }}|{{ users | selectattr('name', 'equalto', 'bob') | list | length }}|{{ users | selectattr('name', '==', 'amy') | first }}|{{ users | map(attribute='age', default=0) | list }}|{{ ['a', 'B'] | map('upper') | list }}|{{ users | map(attribute='name') | map('upper') | join(',') }}",
    "{% if [1] | select('none') %}generator is truthy{% endif %}|{% set g = [1, 2] | map('string') %}{{ g | list }}{{ g | list }}|{% for x in d | items %}{% endfor %}{{ d | items | list | length }}",
    "{{ [3, 1, 2] | sort }}|{{ ['b', 'A', 'c'] | sort }}|{{ ['b', 'A', 'c'] | sort(case_sensitive=true) }}|{{ [3, 1, 2] | sort(reverse=true) }}|{{ users | sort(attribute='name', reverse=true) | map(attribute='name') | join }}|{{ [1, 2, 1, 3] | unique | list }}|{{ ['a', 'A', 'b'] | unique | list }}|{{ 'abc' | reverse }}|{{ [1, 2, 3] | reverse | list }}|{{ [3, 1, 2] | min }}|{{ [3, 1, 2] | max }}|{{ ['b', 'A'] | min }}|{{ [1, 2, 3] | sum }}|{{ nums | sum(attribute='n') }}",
    "{{ 'a\\nb\\n\\nc' | indent }}|{{ 'a\\nb' | indent(2, true) }}|{{ 'a\\n\\nb' | indent(width='> ', blank=true) }}|{{ 'x\\n' | indent }}|{{ '' | indent(first=true) }}",
    "{{ '<a href=\"x\">&' | e }}|{{ 'x' | safe }}|[{{ d | attr('a') }}]|{{ 'x' | attr('upper') is callable }}",
    # tests
    "{{ 1 is number }}|{{ true is number }}|{{ 1.0 is integer }}|{{ 1 is integer }}|{{ true is integer }}|{{ true is boolean }}|{{ none is none }}|{{ 'a' is string }}|{{ {} is mapping }}|{{ [] is mapping }}|{{ [] is iterable }}|{{ 'a' is iterable }}|{{ 1 is iterable }}|{{ undefined_x is iterable }}|{{ {} is sequence }}|{{ 'a' is sequence }}|{{ 1 is sequence }}|{{ none is defined }}|{{ undefined_x is undefined }}|{{ true is true }}|{{ 1 is true }}|{{ false is false }}|{{ 0 is false }}|{{ 1.5 is float }}",
    "{{ 3 is odd }}|{{ 4 is even }}|{{ 9 is divisibleby 3 }}|{{ 9 is divisibleby(4) }}|{{ 'a' is in 'abc' }}|{{ 2 is in [1, 2] }}|{{ 1 is eq 1 }}|{{ 'x' is equalto 'x' }}|{{ 1 is ne 2 }}|{{ 1 is lt 2 }}|{{ 3 is gt 2 }}|{{ 2 is ge 2 }}|{{ 2 is le 1 }}|{{ 'abc' is lower }}|{{ 'ABC' is upper }}|{{ 'aB' is lower }}|{{ none is sameas none }}|{{ d is sameas d }}|{{ 'upper' is filter }}|{{ 'nope' is filter }}|{{ 'odd' is test }}|{{ raise_exception is callable }}|{{ 'x'.upper is callable }}|{{ 1 is not none }}|{{ not 1 is none }}|{{ d.a is defined }}|{{ d.zz is not defined }}",
    # loops, scoping, namespaces, macros, blocks
    "{% for x in ['a', 'b', 'c'] %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}{{ loop.previtem }}{{ loop.nextitem }}{{ loop.cycle('o', 'e') }};{% endfor %}",
    "{% for x in [] %}x{% else %}empty{% endfor %}|{% for x in [1, 2, 3, 4] if x is even %}{{ x }}{{ loop.length }}{{ loop.last }}{% endfor %}|{% for i in range(3) %}{{ i }}{% endfor %}|{% for i in range(1, 10, 3) %}{{ i }}{% endfor %}|{% for i in range(5, 0, -2) %}{{ i }}{% endfor %}|{% for x in [1] if x > 5 %}x{% else %}filtered-empty{% endfor %}",
    "{% for i in range(10) %}{% if i == 2 %}{% continue %}{% endif %}{% if i == 5 %}{% break %}{% endif %}{{ i }}{% endfor %}|{% for i in range(3) %}{% for j in range(3) %}{% if j > i %}{% break %}{% endif %}{{ i }}{{ j }} {% endfor %}{% endfor %}",
    "{% set x = 1 %}{% for i in [1, 2] %}{{ x }}{% set x = x + 10 %}{{ x }};{% endfor %}{{ x }}|{% if true %}{% set y = 5 %}{% endif %}{{ y }}|{% for i in [1] %}{% set z = 3 %}{% endfor %}[{{ z }}]|{% for i in [1, 2] %}{% if loop.first %}{% set w = 'first' %}{% endif %}[{{ w }}]{% endfor %}",
    "{% set ns = namespace(count=0, seen=[]) %}{% for i in range(4) %}{% set ns.count = ns.count + i %}{% endfor %}{{ ns.count }}|{% set ns2 = namespace({'a': 1}, b=2) %}{{ ns2.a }}{{ ns2.b }}{{ ns2['a'] }}|{% set alias = ns %}{% set alias.count = 99 %}{{ ns.count }}",
    "{% for a, b in [[1, 2], (3, 4)] %}{{ a }}-{{ b }};{% endfor %}|{% set p, q = [7, 8] %}{{ p }}{{ q }}|{% for k, v in {'x': 1}.items() %}{{ k }}{{ v }}{% endfor %}|{% for k in {'b': 1, 'a': 2} %}{{ k }}{% endfor %}|{% for c in 'héllo' %}[{{ c }}]{% endfor %}|{% for (a, b) in [(1, 2)] %}{{ a + b }}{% endfor %}",
    "{% set block %}  inner {{ 1 + 1 }}  {% endset %}[{{ block }}]|{% set up | upper %}shout{% endset %}{{ up }}|{% filter upper %}hello {{ 'world' }}{% endfilter %}|{% filter trim | upper %}  pad  {% endfilter %}",
    "{% macro greet(name, punct='!') %}Hello {{ name }}{{ punct }}{% endmacro %}{{ greet('amy') }}|{{ greet('bob', punct='?') }}|{{ greet(punct='.', name='cy') }}|{{ greet() }}|{{ greet('x') | upper }}|{{ greet('y') | length }}",
    "{% set g = 'G' %}{% macro m(n) %}{{ g }}{% if n > 0 %}{{ m(n - 1) }}{% endif %}{% endmacro %}{{ m(2) }}|{% macro two(a, b=a ~ '!') %}{{ a }}{{ b }}{% endmacro %}{{ two('z') }}",
    "{% for v in [0, 1, 2, 3] %}{% if v == 0 %}zero{% elif v == 1 %}one{% elif v == 2 %}two{% else %}many{% endif %},{% endfor %}",
    "{% raw %}{{ not evaluated }}{% endraw %}|{%- raw -%}  keep {{ x }}  {%- endraw -%}  |{% generation %}{{ 'gen' }}{% endgeneration %}|{{ messages | length }}{{ add_generation_prompt }}{{ tools }}",
    # whitespace control, trim_blocks, lstrip_blocks, newlines
    "a  {{- 'b' -}}  c|a\n  {%- if true -%}\n  b\n  {%- endif -%}\n  c",
    "line1\n{% if true %}\nline2\n{% endif %}\nline3\n    {% if true %}\n    indented\n    {% endif %}\nend",
    "{% for i in [1, 2] %}\n  item {{ i }}\n{% endfor %}\ndone\n",
    "  {{ 'var tags are not lstripped' }}\n  {% if true %}x{% endif %}  \n{%+ if true %}plus keeps indent{% endif %}\n  {%+ if true %}y{% endif %}\n{% if true +%}\nno trim after +\n{% endif %}",
    "x   {#- c #}\ny\n  {# c #}\nz\n{# c -#}   \n  w",
    "two trailing newlines\n\n",
    "crlf\r\nline\r\n{% if true %}\r\nx\r\n{% endif %}\r\nold mac\rend\r\n",
    "{{ 'a' }}\n{{ 'b' }}\n{%- if true %}  lead{% endif %}|   {%- if true %}x{% endif %}|a\u3000\u00a0 {{- 'b' }}|  {% if true %}  same line{% endif %}|\t\t{% if true %}tabbed{% endif %}",
    "<ul>\n{% for i in [1, 2] %}\n  {% if i == 1 %}\n  <li>{{ i }}</li>\n  {% else %}\n  <li>other</li>\n  {% endif %}\n{% endfor %}\n</ul>",
    "{%- set x = 1 -%}\n\n   {{ x }}   \n\n{%- set y = 2 %}\n{{ y }}\n{{- ' z ' -}}\n   end   ",
    "{{ {'a': {'b': 1}} }}|{{ {'k': [1, {'x': (2, 3)}]}['k'][1]['x'] }}|{{ [{'a': 1}][0].a }}",
    # errors: Jinja raises, og::chat must return an error
    "{{ undefined_x.attr }}",
    "{{ undefined_x + 1 }}",
    "{{ 'a' + 1 }}",
    "{{ 'x' ~ 1 + 2 }}",
    "{{ [1, 2] | select | length }}",
    "{{ [1].append(2) }}",
    "{{ d.update({}) }}",
    "{{ raise_exception('custom failure message') }}",
    "{% if true %}{{ raise_exception('raised inside if on line 1') }}{% endif %}",
    "{{ 1 / 0 }}",
    "{{ 1 < 'a' }}",
    "{% for x in 5 %}{% endfor %}",
    "{{ 'x' | nofilter }}",
    "{{ 1 is notatest }}",
    "{{ range(200000) | length }}",
    "{{ undefined_fn() }}",
    "{% set ns = {} %}{% set ns.x = 1 %}",
    "{{ none | tojson }}{{ undefined_x | tojson }}",
    "{{ [1, 2] | last }}{{ [1, 2] | select | last }}",
    "{{ none | select | list }}{{ none | map('upper') | list }}{{ none | selectattr('x') | list }}{{ none | list }}",
    "{% do 1 %}",
    "{% if x %}unclosed",
    "{% for x in y %}",
    "{{ 1 + }}",
    "{% endif %}",
    "{{ 'unterminated }}",
    "{% if %}{% endif %}",
    "{{ (1 }}",
    "{# unclosed comment",
    "{% macro m( %}{% endmacro %}",
    "{{ 1 }",
    "{% for x in [1] %}{% endfor x %}",
    # dicts with number, None and bool keys (Seed-OSS's {0: 0, 512: 128}); an unhashable key finds nothing
    "{% set d = {0: 'a', 512: 'b', none: 'n', true: 't', 2.5: 'f'} %}{{ d[512] }}|{{ d[0] }}|{{ d[none] }}|{{ d[2.5] }}|{{ d }}|{{ 512 in d }}|{{ 7 in d }}|{{ d|tojson }}|{{ d.get(512) }}|{{ d.get(9, 'z') }}|{{ d[[1]] is defined }}",
    "{% for k, v in {16384: 'x', 2: 'y', 512: 'w'}|dictsort %}{{ k + 1 }}{{ v }},{% endfor %}|{{ {1.0: 'a'}[1] }}|{{ {1: 'a'}.keys()|list }}|{{ {3: 1}|items|list }}",
    # Markup: `+` with a |safe or |escape string escapes the plain side; `~` joins as str
    "{{ ('<a>'|safe) + '<b>' }}|{{ '<c>' + ('<d>'|safe) }}|{{ ('x&'|e) + '&' }}|{{ 'a' ~ ('<'|safe) ~ '<' }}|{{ ('\"'|forceescape) }}|{{ (('<'|e)|e) + '' }}|{{ (5|safe) + '>' }}",
]


class AssistantTracker(Extension):
    """transformers' {% generation %} tag, minus the index tracking: renders its body."""
    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_generation_support"), [], [], body).set_lineno(lineno)

    @jinja2.pass_eval_context
    def _generation_support(self, context, caller):
        return caller()


def make_env():
    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(format):
        return FIXED_NOW.strftime(format)  # transformers: datetime.now()

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[AssistantTracker, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def main():
    env = make_env()
    cases = []
    for name, tokens in TEMPLATES.items():
        with open(os.path.join(DATA, name + ".jinja"), encoding="utf-8", newline="") as f:
            source = f.read()
        template = env.from_string(source)
        for conv_name, conv in CONVERSATIONS.items():
            for agp in (True, False):
                kwargs = {**tokens, **COMMON_EXTRA, **conv.get("extra", {})}
                case = {"template": name, "conversation": conv_name, "add_generation_prompt": agp}
                try:
                    case["output"] = template.render(messages=conv["messages"], tools=kwargs.pop("tools", None),
                                                     documents=None, add_generation_prompt=agp, **kwargs)
                except jinja2.exceptions.TemplateError as e:  # raise_exception, undefined, sandbox
                    case["error"] = str(e)
                    case["raised"] = type(e) is jinja2.exceptions.TemplateError
                except (TypeError, ValueError, KeyError, IndexError, AttributeError) as e:
                    case["error"] = f"{type(e).__name__}: {e}"
                    case["raised"] = False
                cases.append(case)
    snippet_cases = []
    for source in SNIPPETS:
        case = {"source": source}
        try:
            case["output"] = env.from_string(source).render(messages=[], tools=None, documents=None,
                                                            add_generation_prompt=True, **SNIPPET_CONTEXT)
        except jinja2.exceptions.TemplateError as e:
            case["error"] = str(e)
            case["raised"] = type(e) is jinja2.exceptions.TemplateError
        except (TypeError, ValueError, KeyError, IndexError, AttributeError, ZeroDivisionError, OverflowError) as e:
            case["error"] = f"{type(e).__name__}: {e}"
            case["raised"] = False
        snippet_cases.append(case)
    out = {
        "generator": "scripts/render_chat_oracle.py",
        "jinja2_version": jinja2.__version__,
        "common_extra": COMMON_EXTRA,
        "fixed_now": FIXED_NOW.isoformat(),
        "templates": {name: {"file": name + ".jinja", "special_tokens": tokens} for name, tokens in TEMPLATES.items()},
        "conversations": CONVERSATIONS,
        "cases": cases,
        "snippet_context": SNIPPET_CONTEXT,
        "snippets": snippet_cases,
    }
    path = os.path.join(DATA, "expected.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")
    errors = sum("error" in c for c in cases)
    print(f"{path}: {len(cases)} cases, {errors} expected errors", file=sys.stderr)


if __name__ == "__main__":
    main()
