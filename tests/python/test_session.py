# Sessions through Python against the CLI's logits (bit for bit) and the float64 reference.
import gc
import threading

import numpy as np
import pytest

import offgraph
from conftest import cli

TOKENS = [128000, 791, 4062, 14198, 39935, 35308, 927, 279, 16053, 5679, 13, 578, 4062, 374, 220, 1041, 1135, 17, 3]


def cli_logits(program_path, tmp_path, tokens, chunk):
    out = tmp_path / f"cli_{chunk}.npy"
    cli("logits", "--program", program_path, "--tokens", ",".join(map(str, tokens)), "--chunk", chunk, "--out", out)
    return np.load(out)


def test_prefill_chunks_equal_cli_logits_bit_for_bit(program, program_path, tmp_path):
    expected = cli_logits(program_path, tmp_path, TOKENS, 7)
    s = program.session()
    got = np.concatenate([s.step(TOKENS[i:i + 7], logits="all") for i in range(0, len(TOKENS), 7)])
    assert got.dtype == np.float32 and got.shape == (len(TOKENS), program.vocab_size)
    assert np.array_equal(got, expected)
    assert s.length == len(TOKENS)


def test_mapped_program_equals_the_cli_bit_for_bit(program_path, tmp_path):
    # mmap=True runs the weights in place from the file's mapping; the CLI read them into huge pages.
    expected = cli_logits(program_path, tmp_path, TOKENS, 7)
    s = offgraph.Program(program_path, mmap=True).session()
    got = np.concatenate([s.step(TOKENS[i:i + 7], logits="all") for i in range(0, len(TOKENS), 7)])
    assert np.array_equal(got, expected)


def test_decode_equals_cli_logits_bit_for_bit(program, program_path, tmp_path):
    expected = cli_logits(program_path, tmp_path, TOKENS, 1)
    s = program.session(threads=1)
    rows = [s.step([t], positions=[i])[0] for i, t in enumerate(TOKENS)]
    assert np.array_equal(np.stack(rows), expected)


def test_fp32_program_agrees_with_the_float64_reference(program, model_dir, tmp_path):
    ref_path = tmp_path / "ref.npy"
    cli("reference", "-m", model_dir, "--tokens", ",".join(map(str, TOKENS)), "--out", ref_path)
    ref = np.load(ref_path).astype(np.float64)  # computed in float64, stored as float32
    s = program.session()
    got = np.concatenate([s.step(TOKENS[:16], logits="all"), s.step(TOKENS[16:], logits="all")])
    err = np.max(np.abs(got.astype(np.float64) - ref))
    assert err <= 1e-4 * np.max(np.abs(ref)), err


def test_rewind_save_load_clear(program, tmp_path):
    s = program.session()
    first = s.step(TOKENS[:10], logits="all")
    s.rewind(5)
    assert s.length == 5
    assert np.array_equal(s.step(TOKENS[5:10], logits="all"), first[5:])
    s.save(str(tmp_path / "cache.bin"))
    after = s.step(TOKENS[10:12])
    t = program.session()
    t.load(str(tmp_path / "cache.bin"))
    assert t.length == 10
    assert np.array_equal(t.step(TOKENS[10:12]), after)
    t.clear()
    assert t.length == 0
    assert np.array_equal(t.step(TOKENS[:10], logits="all"), first)
    with pytest.raises(offgraph.InputError):
        program.session(kv_dtype="bf16").load(str(tmp_path / "cache.bin"))


def test_bad_arguments_raise_and_leave_the_session_unchanged(program):
    s = program.session()
    s.step(TOKENS[:3])
    with pytest.raises(offgraph.InputError):
        s.step([program.vocab_size])
    with pytest.raises(offgraph.InputError):
        s.step([-1])
    with pytest.raises(offgraph.InputError):
        s.step([1], positions=[7])  # not continuing the sequence
    with pytest.raises(offgraph.Error):
        s.step(TOKENS[:1] * (program.prefill_chunk_size + 1))
    with pytest.raises(offgraph.Error):
        s.step([])
    with pytest.raises(TypeError):
        s.step([1.5])
    with pytest.raises(TypeError):
        s.step("abc")
    with pytest.raises(TypeError):
        s.step([2 ** 40])
    with pytest.raises(TypeError):
        s.step(np.array([1.0], dtype=np.float32))
    with pytest.raises(TypeError):
        s.step(None)
    with pytest.raises(TypeError):
        s.step([1], positions="3")
    with pytest.raises(ValueError):
        s.step([1], logits="first")
    with pytest.raises(offgraph.Error):
        s.rewind(100)
    assert s.length == 3
    with pytest.raises(offgraph.UsageError):
        program.session(kv_dtype="int4")
    with pytest.raises(ValueError):
        program.session(threads=-1)
    with pytest.raises(offgraph.Error):
        s.load("/nonexistent/cache.bin")
    assert s.length == 3
    np_ids = np.array(TOKENS[3:5], dtype=np.int64)
    assert s.step(np_ids).shape == (1, program.vocab_size)


def test_closed_session_raises_on_use(program, tmp_path):
    s = program.session()
    kept = s.step(TOKENS[:2])
    s.close()
    assert s.closed
    for use in (lambda: s.step([1]), lambda: s.length, lambda: s.rewind(0), lambda: s.clear(),
                lambda: s.save(str(tmp_path / "c.bin")), lambda: s.load(str(tmp_path / "c.bin")),
                lambda: offgraph.step_batch([(s, [1])])):
        with pytest.raises(ValueError, match="closed"):
            use()
    assert kept.shape == (1, program.vocab_size) and np.isfinite(kept).all()
    s.close()  # twice is fine
    with program.session() as t:
        t.step([1])
    assert t.closed


def test_session_keeps_its_program_alive_and_arrays_stay_valid(program_path):
    p = offgraph.Program(program_path)
    s = p.session()
    del p
    gc.collect()
    a = s.step(TOKENS[:4], logits="all")
    a_copy = a.copy()
    b = s.step(TOKENS[4:8], logits="all")
    assert np.array_equal(a, a_copy)
    assert not np.array_equal(a, b)
    assert s.program.vocab_size == a.shape[1]


def test_two_threads_step_two_sessions_at_once(program):
    def run(session, tokens, out):
        out.extend(session.step([t])[0] for t in tokens)

    seqs = [TOKENS, list(reversed(TOKENS))]
    sequential = []
    for seq in seqs:
        out = []
        run(program.session(), seq, out)
        sequential.append(out)
    results = [[], []]
    threads = [threading.Thread(target=run, args=(program.session(), seqs[i], results[i])) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for got, want in zip(results, sequential):
        assert len(got) == len(want) and all(np.array_equal(g, w) for g, w in zip(got, want))


def test_step_batch_equals_solo_steps(program):
    a, b, c = program.session(), program.session(), program.session()
    a.step(TOKENS[:5])
    solo_a = program.session()
    solo_a.step(TOKENS[:5])
    want = [solo_a.step(TOKENS[5:6]), program.session().step(TOKENS[:7]), program.session().step(TOKENS[:3], logits="all")]
    got = offgraph.step_batch([(a, TOKENS[5:6]), (b, TOKENS[:7])])
    got.append(offgraph.step_batch([(c, TOKENS[:3], [0, 1, 2])], logits="all")[0])
    assert all(np.array_equal(g, w) for g, w in zip(got, want))
    assert (a.length, b.length, c.length) == (6, 7, 3)
    # One bad entry refuses the whole step; no session changes.
    with pytest.raises(offgraph.InputError):
        offgraph.step_batch([(a, [1]), (b, [program.vocab_size])])
    assert (a.length, b.length) == (6, 7)
    with pytest.raises(TypeError):
        offgraph.step_batch([a])
    with pytest.raises(TypeError):
        offgraph.step_batch([(1, [1])])
    with pytest.raises(TypeError):
        offgraph.step_batch([(a, [1.5])])
    with pytest.raises(offgraph.InputError):
        offgraph.step_batch([(a, [1]), (a, [2])])  # one session twice
    with pytest.raises(ValueError):
        offgraph.step_batch([(a, [1]), (offgraph.Program(program.path).session(), [1])])
    assert offgraph.step_batch([]) == []


def test_math_mode_names_the_cli_flag_and_each_mode_equals_the_cli(model_dir, tmp_path):
    # A bf16 program: --math fast rounds the linears' activations to bf16, exact keeps f32;
    # each mode's logits equal the CLI's in the same mode bit for bit, and the two differ.
    path = tmp_path / "bf16.ogp"
    cli("export", "-m", model_dir, "-o", path, "--dtype", "bf16", "--max-ctx-len", 64)
    got = {}
    for math in ("exact", "fast"):
        program = offgraph.Program(str(path), math=math)
        assert program.math == math
        out = tmp_path / f"cli_{math}.npy"
        cli("logits", "--program", path, "--tokens", ",".join(map(str, TOKENS)), "--chunk", 7, "--math", math,
            "--out", out)
        s = program.session()
        got[math] = np.concatenate([s.step(TOKENS[i:i + 7], logits="all") for i in range(0, len(TOKENS), 7)])
        assert np.array_equal(got[math], np.load(out))
    assert not np.array_equal(got["exact"], got["fast"])
    with pytest.raises(ValueError, match="--math 'quick'"):
        offgraph.Program(str(path), math="quick")


@pytest.mark.parametrize("kv", ["q8_0", "q4_0"])
def test_quantized_kv_keeps_every_equality_and_a_bounded_error(program, program_path, model_dir, tmp_path, kv):
    # Rows are quantized once, when written (GGUF's blocks of 32, an fp16 scale each): the CLI's
    # chunked prefill, Python's decode and a saved-and-loaded session read the same bytes.
    out = tmp_path / f"{kv}.npy"
    cli("logits", "--program", program_path, "--tokens", ",".join(map(str, TOKENS)), "--chunk", 7, "--kv-dtype", kv,
        "--out", out)
    expected = np.load(out)
    s = program.session(kv_dtype=kv, threads=1)
    rows = [s.step([t])[0] for t in TOKENS[:12]]
    s.save(str(tmp_path / f"{kv}.bin"))
    t = program.session(kv_dtype=kv)
    t.load(str(tmp_path / f"{kv}.bin"))
    rows += [t.step([tok])[0] for tok in TOKENS[12:]]
    assert np.array_equal(np.stack(rows), expected)
    # Against the float64 reference: further than fp32 KV (1e-4, test above), within the
    # quantization's scale (a step is 1/127 or 1/8 of a block's largest value).
    ref_path = tmp_path / "ref.npy"
    cli("reference", "-m", model_dir, "--tokens", ",".join(map(str, TOKENS)), "--out", ref_path)
    ref = np.load(ref_path).astype(np.float64)
    err = np.max(np.abs(expected.astype(np.float64) - ref)) / np.max(np.abs(ref))
    assert 1e-4 < err <= {"q8_0": 0.05, "q4_0": 0.5}[kv], err
