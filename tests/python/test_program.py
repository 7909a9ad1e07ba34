# Layout, inspect, export and the tokenizer through Python against the CLI's output.
import json
import os
import shutil

import numpy as np
import pytest

import offgraph
from conftest import REPO, cli


def test_layout_of_a_model_equals_the_cli(model_dir):
    expected = json.loads(cli("layout", model_dir, "--json").stdout)
    assert offgraph.layout(str(model_dir)) == expected
    assert offgraph.layout(str(model_dir / "config.json"))["n_caches"] == expected["n_caches"]


def test_program_layout_and_inspect_equal_the_cli(program, program_path):
    expected = json.loads(cli("inspect", program_path, "--json").stdout)
    assert program.inspect() == expected
    verified = json.loads(cli("inspect", program_path, "--json", "--verify").stdout)
    assert program.inspect(verify=True) == verified
    assert program.layout == {k: expected[k] for k in program.layout}
    assert set(program.layout) >= {"n_caches", "layer_to_cache", "kv_heads", "head_dims", "windows"}


def test_export_writes_the_program_the_cli_writes(model_dir, program_path, tmp_path):
    calls = []
    out = tmp_path / "py.ogp"
    summary = offgraph.export(str(model_dir), str(out), max_ctx_len=512, prefill_chunk_size=16,
                              progress=lambda done, total, nbytes: calls.append((done, total, nbytes)))
    assert summary["tensors"] > 0
    assert offgraph.Program(str(out)).inspect()["checksum"] == json.loads(cli("inspect", program_path, "--json").stdout)["checksum"]
    assert calls and [c[0] for c in calls] == sorted(c[0] for c in calls)
    assert calls[-1][2] > 0


def test_export_quantized_equals_the_cli(model_dir, tmp_path):
    cli("export", "-m", model_dir, "-o", tmp_path / "cli.ogp", "--qlinear", "8w", "--dtype", "bf16", "--max-ctx-len", 64)
    offgraph.export(str(model_dir), str(tmp_path / "py.ogp"), dtype="bf16", qlinear="8w", max_ctx_len=64)
    a = json.loads(cli("inspect", tmp_path / "cli.ogp", "--json").stdout)
    assert offgraph.Program(str(tmp_path / "py.ogp")).inspect()["checksum"] == a["checksum"]


def test_export_qhead_equals_the_cli(model_dir, tmp_path):
    cli("export", "-m", model_dir, "-o", tmp_path / "cli.ogp", "--qlinear", "8w", "--qhead", "4w", "--max-ctx-len", 64)
    offgraph.export(str(model_dir), str(tmp_path / "py.ogp"), qlinear="8w", qhead="4w", max_ctx_len=64)
    a = json.loads(cli("inspect", tmp_path / "cli.ogp", "--json").stdout)
    assert offgraph.Program(str(tmp_path / "py.ogp")).inspect()["checksum"] == a["checksum"]
    assert "Q4/g32" in a["weights_by_storage"]
    with pytest.raises(offgraph.UsageError, match="--qhead '5w'"):
        offgraph.export(str(model_dir), str(tmp_path / "x.ogp"), qhead="5w", max_ctx_len=64)


def test_export_progress_exception_is_raised(model_dir, tmp_path):
    def boom(*args):
        raise RuntimeError("stop here")
    with pytest.raises(RuntimeError, match="stop here"):
        offgraph.export(str(model_dir), str(tmp_path / "x.ogp"), max_ctx_len=64, progress=boom)


def test_tokenizer_equals_the_cli(program, program_path):
    text = "Hello world, the quick brown fox"
    def ids_of(out):
        j = json.loads(out)
        return j["ids"] if isinstance(j, dict) else j
    ids = program.tokenizer.encode(text, add_special=False)
    assert ids == ids_of(cli("tokenize", "--tokenizer", program_path, "--text", text).stdout)
    assert program.tokenizer.encode(text) == ids_of(
        cli("tokenize", "--tokenizer", program_path, "--text", text, "--add-special").stdout)
    assert program.tokenizer.decode(ids) == text


def test_chat_template_renders_the_llama3_format(program):
    # This template (tokenizer_config.json) always ends with the assistant header.
    rendered = program.tokenizer.apply_chat_template([{"role": "system", "content": "Be brief. "},
                                                     {"role": "user", "content": "Hi"}])
    assert rendered == ("<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
                        "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
                        "<|start_header_id|>assistant<|end_header_id|>\n\n")
    assert 128009 in program.tokenizer.stop_ids
    with pytest.raises(TypeError):
        program.tokenizer.apply_chat_template(["not a dict"])
    with pytest.raises(ValueError):
        program.tokenizer.apply_chat_template([{"role": "user"}])


def test_errors_carry_the_cli_exit_class(tmp_path, model_dir):
    missing = str(tmp_path / "missing.ogp")
    code = cli("inspect", missing, check=False).returncode
    with pytest.raises(offgraph.Error) as e:
        offgraph.Program(missing)
    assert e.value.exit_code == code and "missing.ogp" in str(e.value)
    garbage = tmp_path / "garbage.ogp"
    garbage.write_bytes(b"not a program at all" * 10)
    code = cli("inspect", garbage, check=False).returncode
    with pytest.raises(offgraph.InputError) as e:
        offgraph.Program(str(garbage))
    assert e.value.exit_code == code == 2
    r = cli("export", "-m", model_dir, "-o", tmp_path / "x.ogp", "--dtype", "fp64", check=False)
    with pytest.raises(offgraph.UsageError) as e:
        offgraph.export(str(model_dir), str(tmp_path / "x.ogp"), dtype="fp64")
    assert e.value.exit_code == r.returncode == 1
    assert str(e.value) in r.stderr  # the message, unchanged
    assert isinstance(e.value, ValueError)
    with pytest.raises(offgraph.Error):
        offgraph.layout(str(tmp_path / "nowhere"))
    with pytest.raises(TypeError):
        offgraph.Program(42)


def test_program_without_tokenizer_raises_on_text_use(tmp_path):
    d = tmp_path / "m"
    cli("gen-model", "--family", "llama", "--out", d)
    cli("export", "-m", d, "-o", tmp_path / "p.ogp", "--max-ctx-len", 64)
    p = offgraph.Program(str(tmp_path / "p.ogp"))
    with pytest.raises(offgraph.InputError, match="no tokenizer"):
        p.tokenizer
    with pytest.raises(offgraph.InputError, match="no tokenizer"):
        p.generate("hi")
    assert p.session().step([1, 2, 3]).shape == (1, p.vocab_size)


def test_chat_template_renders_tools_tool_calls_and_template_variables(model_dir, tmp_path):
    # A program with Qwen3-Coder's template (tests/data/chat/lcpp_qwen3_coder.jinja): tools go to
    # the system prompt, an assistant's tool_calls become <function=...><parameter=...> blocks,
    # and keyword arguments are template variables (as transformers' apply_chat_template).
    d = tmp_path / "m"
    shutil.copytree(model_dir, d)
    shutil.copy(os.path.join(REPO, "tests", "data", "chat", "lcpp_qwen3_coder.jinja"), d / "chat_template.jinja")
    cli("export", "-m", d, "-o", tmp_path / "p.ogp", "--max-ctx-len", 64)
    tok = offgraph.Program(str(tmp_path / "p.ogp")).tokenizer
    tools = [{"type": "function", "function": {"name": "get_weather", "description": "Weather in a city",
                                               "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]
    messages = [{"role": "user", "content": "Paris?"},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "21 C"}]
    text = tok.apply_chat_template(messages, tools=tools)
    assert "<name>get_weather</name>" in text
    assert "<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>" in text
    assert "21 C" in text and text.endswith("<|im_start|>assistant\n")
    assert "<name>get_weather</name>" not in tok.apply_chat_template(messages[:1])
    # A template variable: Qwen3's template closes an empty reasoning block under enable_thinking=False.
    shutil.copy(os.path.join(REPO, "tests", "data", "chat", "qwen3.jinja"), d / "chat_template.jinja")
    cli("export", "-m", d, "-o", tmp_path / "q.ogp", "--max-ctx-len", 64)
    qwen3 = offgraph.Program(str(tmp_path / "q.ogp")).tokenizer
    assert qwen3.apply_chat_template(messages[:1], enable_thinking=False).endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")
    assert qwen3.apply_chat_template(messages[:1]).endswith("<|im_start|>assistant\n")
    with pytest.raises(TypeError):
        tok.apply_chat_template(messages, tools=[object()])
