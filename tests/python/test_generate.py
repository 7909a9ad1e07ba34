# Generation through Python equals `offgraph run` (same program, prompt, sampling, seed).
import json
import shutil
import threading

import pytest

import offgraph
from conftest import cli


def cli_run(program_path, prompt, *flags):
    out = cli("run", "-m", program_path, "-p", prompt, "--no-report", *flags).stdout
    assert out.endswith("\n")
    return out[:-1]  # run ends the text with a newline


def test_greedy_generation_equals_cli_run(program, program_path):
    expected = cli_run(program_path, "Once upon a time", "-n", 12, "--temp", 0)
    assert program.generate("Once upon a time", max_tokens=12, temperature=0) == expected
    assert len(expected) > 0


@pytest.mark.parametrize("seed", [3, 11])
def test_sampled_generation_equals_cli_run(program, program_path, seed):
    expected = cli_run(program_path, "The quick brown fox", "-n", 16, "--temp", 0.9, "--top-k", 50, "--top-p", 0.9,
                       "--min-p", 0.0, "--seed", seed)
    got = program.generate("The quick brown fox", max_tokens=16, temperature=0.9, top_k=50, top_p=0.9, min_p=0.0,
                           seed=seed)
    assert got == expected


def test_default_sampling_equals_cli_defaults(program, program_path):
    assert program.generate("Hello", max_tokens=10, seed=5) == cli_run(program_path, "Hello", "-n", 10, "--seed", 5)


def test_chat_messages_equal_cli_run_chat(program, program_path):
    expected = cli_run(program_path, "Tell me a story", "--chat", "-n", 12, "--temp", 0, "--system", "Be brief.")
    got = program.generate([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Tell me a story"}],
                           max_tokens=12, temperature=0)
    assert got == expected


def test_stream_pieces_concatenate_to_the_generated_text(program):
    kwargs = dict(max_tokens=20, temperature=0.7, seed=9)
    pieces = list(program.stream("Once upon a time", **kwargs))
    assert len(pieces) > 1 and all(isinstance(p, str) and p for p in pieces)
    assert "".join(pieces) == program.generate("Once upon a time", **kwargs)


def test_stream_can_stop_early_and_run_beside_other_threads(program):
    with program.stream("Once upon a time", max_tokens=200, temperature=0) as stream:
        first = next(stream)
    assert isinstance(first, str)
    stream.close()
    with pytest.raises(StopIteration):  # closed: nothing more
        while True:
            next(stream)
    texts = [None, None]

    def run(i):
        texts[i] = program.generate("Hello", max_tokens=8, temperature=0)
    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert texts[0] == texts[1] == program.generate("Hello", max_tokens=8, temperature=0)


def test_stop_ids_end_generation(program):
    ids = program.tokenizer.encode(program.generate("Hello", max_tokens=6, temperature=0), add_special=False)
    assert program.generate("Hello", max_tokens=6, temperature=0, stop=[ids[0]]) == ""


def test_stop_ids_add_to_the_programs_own_end_tokens(program, model_dir, tmp_path):
    # The same weights exported with the first greedy token as the model's end token: a
    # `stop` list naming another id must not replace it (generation still ends before it).
    ids = program.tokenizer.encode(program.generate("Hello", max_tokens=6, temperature=0), add_special=False)
    d = tmp_path / "eos"
    shutil.copytree(model_dir, d)
    config = json.loads((d / "config.json").read_text())
    config["eos_token_id"] = [ids[0]]
    (d / "config.json").write_text(json.dumps(config))
    out = tmp_path / "eos.ogp"
    cli("export", "-m", d, "-o", out, "--max-ctx-len", 512, "--prefill-chunk-size", 16)
    p = offgraph.Program(str(out))
    unrelated = next(t for t in range(128000, 128256) if t not in ids)
    assert p.generate("Hello", max_tokens=6, temperature=0) == ""
    assert p.generate("Hello", max_tokens=6, temperature=0, stop=[unrelated]) == ""


def test_bad_generation_arguments(program):
    with pytest.raises(offgraph.UsageError):
        program.generate("x", top_p=0.0)
    with pytest.raises(offgraph.UsageError):
        program.generate("x", temperature=-1.0)
    with pytest.raises(ValueError):
        program.generate("x", max_tokens=-2)
    with pytest.raises(TypeError):
        program.generate(42)
    with pytest.raises(TypeError):
        program.generate("x", seed=-1)
    with pytest.raises(TypeError):
        program.generate([{"role": "user", "content": 3}])


# A tool-call-like schema: the reply is constrained to it (checked by the independent
# `jsonschema` validator), at temperature 1 over random weights, and equals `offgraph run
# --json-schema` for the same seed.
TOOL_SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "maxLength": 12},
        "days": {"type": "integer", "minimum": 1, "maximum": 14},
        "low": {"type": "number", "exclusiveMinimum": -50, "maximum": 60},
        "units": {"enum": ["metric", "imperial"]},
        "hourly": {"type": "boolean"},
        "fields": {"type": "array", "items": {"type": "string", "maxLength": 6}, "maxItems": 3},
        "nested": {"anyOf": [{"type": "null"}, {"$ref": "#/$defs/point"}]},
    },
    "required": ["city", "days", "units"],
    "additionalProperties": False,
    "$defs": {"point": {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
                        "required": ["x", "y"], "additionalProperties": False}},
}


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_json_schema_replies_validate_and_equal_cli_run(program, program_path, seed):
    import jsonschema
    got = program.generate("Weather, as JSON:", max_tokens=300, temperature=1.0, top_k=0, top_p=1.0, min_p=0.0,
                           seed=seed, json_schema=TOOL_SCHEMA)
    jsonschema.validate(json.loads(got), TOOL_SCHEMA)
    assert list(json.loads(got).keys())[:2] == ["city", "days"], "properties come in the schema's order"
    expected = cli_run(program_path, "Weather, as JSON:", "-n", 300, "--temp", 1.0, "--top-k", 0, "--top-p", 1.0,
                       "--min-p", 0.0, "--seed", seed, "--json-schema", json.dumps(TOOL_SCHEMA))
    assert got == expected
    assert "".join(program.stream("Weather, as JSON:", max_tokens=300, temperature=1.0, top_k=0, top_p=1.0,
                                  min_p=0.0, seed=seed, json_schema=json.dumps(TOOL_SCHEMA))) == got


def test_bad_json_schemas_name_the_keyword(program, program_path):
    with pytest.raises(offgraph.InputError, match="'not' is not supported"):
        program.generate("x", json_schema={"type": "object", "not": {}})
    with pytest.raises(offgraph.InputError, match="no JSON value satisfies it"):
        program.generate("x", json_schema=False)
    with pytest.raises(ValueError):
        program.generate("x", json_schema="{not json")
    r = cli("run", "-m", program_path, "-p", "x", "--json-schema", '{"multipleOf": 3}', check=False)
    assert r.returncode == 2 and "--json-schema: json schema /: 'multipleOf' is not supported" in r.stderr, r.stderr
    r = cli("run", "-m", program_path, "-p", "x", "--json-schema", "no-such-file.json", check=False)
    assert r.returncode == 1 and "no such file" in r.stderr, r.stderr
