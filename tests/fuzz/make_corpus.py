#!/usr/bin/env python3
"""Writes the committed fuzz corpus (tests/fuzz/corpus/<harness>/): seed
inputs made by mhaq itself, and one regression input per defect found in hardening
("defect_*"). Deterministic; run it again after a format change:

    python3 tests/fuzz/make_corpus.py build/mhaq

tests/cli_hardening.sh feeds the same files to the program and checks each
exit code (2, 3 or 0), the time (5 s) and that no signal ends it.
"""
import json, os, subprocess, sys, tempfile

mhaq = os.path.abspath(sys.argv[1])
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
tmp = tempfile.mkdtemp()


def run(*args):
    subprocess.run([mhaq, *args], check=True, stdout=subprocess.DEVNULL)


def out(harness, name, data):
    d = os.path.join(root, harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def made(args, name):
    path = os.path.join(tmp, name)
    run(*args, path)
    return open(path).read()


# ---------------------------------------------------------------- model
plain = made(["generate", "--d", "2", "--heads", "2", "--seed", "7", "--share-w", "-o"], "m.json")
out("model", "seed_plain_d2_sharew.json", plain)
out("model", "seed_plain_d1.json", made(["generate", "--d", "1", "--heads", "3", "--seed", "2", "--cancel-v", "-o"], "m1.json"))
fact = open(os.path.join(os.path.dirname(root), "..", "data", "factored_example.json")).read()
out("model", "seed_factored_example.json", fact)
out("model", "seed_factored_per_head.json", json.dumps({
    "format": "mhaq-model-factored", "version": 1, "d": 2, "d_k": 1, "d_v": 1, "d_out": 1, "scale": "1/2",
    "heads": [{"Q": [["1"], ["-1"]], "K": [["1/2"], ["1"]], "V": [["1"], ["2"]], "O": [["1"]]},
              {"Q": [["1"], ["-1"]], "K": [["1/2"], ["1"]], "V": [["-1"], ["-2"]], "O": [["1"]]}],
    "readout": ["3/4"]}))
m = json.loads(plain)
def model_with(path_edit):
    j = json.loads(plain)
    path_edit(j)
    return json.dumps(j)
out("model", "defect_overflow_d_1e400.json", plain.replace('"d": 2', '"d": 1e400', 1))
out("model", "defect_overflow_entry_1e400.json", plain.replace('"-1"', '-1e400', 1))
out("model", "defect_w_entry_1e30.json", model_with(lambda j: j["heads"][0]["W"][0].__setitem__(0, "1e30")))
out("model", "defect_w_entry_401_digits.json", model_with(lambda j: j["heads"][0]["W"][1].__setitem__(0, "7" * 401)))
out("model", "defect_invalid_utf8.json", plain.encode().replace(b'"v": ["', b'"v": ["\xff\xfe', 1))
out("model", "defect_invalid_utf8_key.json", plain.encode().replace(b'"heads"', b'"he\xc3ads"', 1))
out("model", "defect_u64_wraps_d.json", plain.replace('"d": 2', '"d": 18446744073709551615', 1))
out("model", "defect_u64_entry.json", json.dumps({"format": "mhaq-model", "version": 1, "d": 1, "heads": [{"W": [["1"]], "v": [18446744073709551615]}]}))
out("model", "defect_duplicate_key.json", plain.replace('"d": 2', '"d": 2, "d": 3', 1))
out("model", "defect_duplicate_key_in_head.json", plain.replace('"v": [', '"v": ["1", "1"], "v": [', 1))
out("model", "defect_d_float_2.0.json", plain.replace('"d": 2', '"d": 2.0', 1))
out("model", "defect_long_numeric_string.json", model_with(lambda j: j["heads"][0]["v"].__setitem__(0, "1" * 100000)))
out("model", "defect_deep_nesting.json", '{"format": "mhaq-model", "d": 1, "heads": ' + "[" * 100000 + "]" * 100000 + "}")
nines = "9" * 2501
out("model", "defect_convert_5002_chars.json", json.dumps({
    "format": "mhaq-model-factored", "version": 1, "d": 1, "d_k": 1, "d_v": 1, "d_out": 1,
    "heads": [{"Q": [[nines]], "K": [[nines]], "V": [["1"]], "O": [["1"]]}], "readout": ["1"]}))
def heads(n, distinct=True):
    return json.dumps({"format": "mhaq-model", "version": 1, "d": 1,
                       "heads": [{"W": [[str(h if distinct else 0)]], "v": ["1"]} for h in range(n)]})
out("model", "limit_1024_heads.json", heads(1024))
out("model", "defect_1025_heads.json", heads(1025))

# transformer files (model harness): the strict-reader rules of model files
tplain = made(["generate", "--d", "2", "--heads", "2", "--seed", "3", "--ffn", "2", "-o"], "t.json")
out("model", "seed_transformer_d2_h2_m2.json", tplain)
out("model", "seed_transformer_share_w_parallel.json",
    made(["generate", "--d", "2", "--heads", "2", "--seed", "4", "--ffn", "2", "--share-w", "--parallel-neurons", "--zero-neuron", "-o"], "t2.json"))
tfact = {"format": "mhaq-transformer-factored", "version": 1, "d": 2, "d_k": 1, "d_v": 1, "scale": "1/2",
         "heads": [{"Q": [["1"], ["-1"]], "K": [["1/2"], ["1"]], "V": [["1"], ["2"]]},
                   {"Q": [["1"], ["1"]], "K": [["1"], ["-1/2"]], "V": [["-1"], ["1"]]}],
         "O": [["1", "0"], ["0", "1"]], "ffn": [["1", "-1"], ["1/2", "1"]], "readout": ["1", "-1"]}
out("model", "seed_transformer_factored.json", json.dumps(tfact))
def transformer_with(edit):
    j = json.loads(tplain)
    edit(j)
    return json.dumps(j)
out("model", "defect_transformer_overflow_d_1e400.json", tplain.replace('"d": 2', '"d": 1e400', 1))
out("model", "defect_transformer_u64_wraps_d.json", tplain.replace('"d": 2', '"d": 18446744073709551615', 1))
out("model", "defect_transformer_d_float_2.0.json", tplain.replace('"d": 2', '"d": 2.0', 1))
out("model", "defect_transformer_duplicate_key.json", tplain.replace('"d": 2', '"d": 2, "d": 2', 1))
out("model", "defect_transformer_duplicate_key_in_neuron.json", tplain.replace('"u": ', '"u": "1", "u": ', 1))
out("model", "defect_transformer_invalid_utf8.json", tplain.encode().replace(b'"U": [["', b'"U": [["\xff\xfe', 1))
out("model", "defect_transformer_long_entry.json", transformer_with(lambda j: j["neurons"][0].__setitem__("u", "1" * 5000)))
out("model", "defect_transformer_w_entry_1e30.json", transformer_with(lambda j: j["heads"][0]["W"][0].__setitem__(0, "1e30")))
out("model", "defect_transformer_257_neurons.json", transformer_with(lambda j: j.__setitem__("neurons", [j["neurons"][k % 2] for k in range(257)])))
out("model", "defect_transformer_65_heads.json", json.dumps({"format": "mhaq-transformer", "version": 1, "d": 1,
    "heads": [{"W": [[str(h)]]} for h in range(65)], "neurons": [{"u": "1", "U": [["1"]] * 65}]}))

# ---------------------------------------------------------------- certificate
def cert(args, name):
    return made(["recover", *args, "--certificate"], name)
seeds = {
    "seed_exact_d2_h1.json": ["--d", "2", "--heads", "1", "--seed", "1"],
    "seed_exact_lean_d2_h2.json": ["--d", "2", "--heads", "2", "--seed", "3", "--schedule", "lean"],
    "seed_exact_h0_d1.json": ["--d", "1", "--heads", "1", "--seed", "2", "--max-heads", "2"],
    "seed_ball_d2_h1.json": ["--d", "2", "--heads", "1", "--seed", "1", "--arith", "ball", "--bits", "64"],
    "seed_ball_d1_h1_160bits.json": ["--d", "1", "--heads", "1", "--seed", "1", "--arith", "ball", "--bits", "160"],
    "seed_ball_noise_d1_h2.json": ["--d", "1", "--heads", "2", "--seed", "4", "--arith", "ball", "--bits", "80", "--noise", "1e-15"],
    "seed_mpfr_d2_h1.json": ["--d", "2", "--heads", "1", "--seed", "1", "--arith", "mpfr", "--bits", "64"],
    "seed_double_d1_h1.json": ["--d", "1", "--heads", "1", "--seed", "5", "--arith", "double"],
}
certs = {}
for name, args in seeds.items():
    certs[name] = cert(args, name)
    out("certificate", name, certs[name])
ball = json.loads(certs["seed_ball_d2_h1.json"])
mp = json.loads(certs["seed_mpfr_d2_h1.json"])
ex = json.loads(certs["seed_exact_d2_h1.json"])
def edit(j, f):
    j = json.loads(json.dumps(j))
    f(j)
    return json.dumps(j)
out("certificate", "defect_ball_bits_16777216.json", edit(ball, lambda j: j.__setitem__("bits", 16777216)))
out("certificate", "limit_ball_bits_65536.json", edit(ball, lambda j: j.__setitem__("bits", 65536)))
out("certificate", "defect_ball_bits_16_too_few.json", edit(json.loads(certs["seed_ball_d1_h1_160bits.json"]), lambda j: j.__setitem__("bits", 16)))
out("certificate", "defect_tolerance_one_third.json", edit(mp, lambda j: j["tolerances"].__setitem__("pairs", "1/3")))
out("certificate", "defect_ball_with_tolerances.json", edit(ball, lambda j: j.__setitem__("tolerances", {"answers": "1/3", "pairs": "1/3", "heads": "1/3"})))
def big_plan(j):
    d = 64
    j["model"] = {"format": "mhaq-model", "version": 1, "d": d, "heads": [{"W": [["0"] * d] * d, "v": ["1"] * d}]}
    j["inputs"]["heads_learner"] = 64
    j["plan"]["d"] = d
    j["plan"]["H"] = 64
    j["plan"]["B"] = [[str(int(r == c)) for c in range(d)] for r in range(d)]
    j["plan"]["Delta"] = j["plan"]["B"]
    for k in ("queries", "answers", "pairs", "heads"):
        j[k] = []
out("certificate", "defect_d64_h64_no_queries.json", edit(ex, big_plan))
def small_plan(j):  # d=8, H=8: within the plan limit, no queries: fails fast
    big_plan(j)
    d = 8
    j["model"] = {"format": "mhaq-model", "version": 1, "d": d, "heads": [{"W": [["0"] * d] * d, "v": ["1"] * d}]}
    j["inputs"]["heads_learner"] = 8
    j["plan"]["d"] = d
    j["plan"]["H"] = 8
    j["plan"]["B"] = [[str(int(r == c)) for c in range(d)] for r in range(d)]
    j["plan"]["Delta"] = j["plan"]["B"]
out("certificate", "defect_d8_h8_no_queries.json", edit(ex, small_plan))
out("certificate", "defect_overflow_bits.json", certs["seed_ball_d2_h1.json"].replace('"bits": 64', '"bits": 1e400', 1))
out("certificate", "defect_u64_wraps_bits.json", certs["seed_ball_d2_h1.json"].replace('"bits": 64', '"bits": 18446744073709551615', 1))
out("certificate", "defect_duplicate_key.json", certs["seed_ball_d2_h1.json"].replace('"bits": 64', '"bits": 64, "bits": 65', 1))
out("certificate", "defect_invalid_utf8.json", certs["seed_exact_d2_h1.json"].encode().replace(b'"paper"', b'"pa\xffper"', 1))
out("certificate", "defect_wild_token.json", edit(ex, lambda j: j["queries"][3]["runs"][0]["token"].__setitem__(0, "9" * 4000)))
out("certificate", "defect_wild_pole.json", edit(ex, lambda j: j["pairs"][1]["poles"][0].__setitem__("n", 1 << 39)))
h0 = json.loads(certs["seed_exact_h0_d1.json"])  # the plan's 5 queries, then 25 small-grid witness queries
assert h0["claims"]["grid_witness_queries"] == 25
out("certificate", "defect_witness_range_2p30.json", edit(h0, lambda j: j["inputs"].__setitem__("witness_range", 1 << 30)))
out("certificate", "defect_witness_count_4096.json", edit(h0, lambda j: j["claims"].__setitem__("grid_witness_queries", 4096)))
out("certificate", "defect_model_1025_heads.json", edit(ex, lambda j: j["model"].__setitem__("heads", [{"W": [["0", "0"], ["0", "0"]], "v": ["1", "0"]}] * 1025)))

# ---------------------------------------------------------------- golden
gold = {
    "seed_exact_d1_h1.json": ["--d", "1", "--heads", "1", "--seed", "1", "--digits", "12"],
    "seed_exact_d2_h1.json": ["--d", "2", "--heads", "1", "--seed", "1", "--digits", "12"],
    "seed_ball_d1_h1.json": ["--d", "1", "--heads", "1", "--seed", "1", "--digits", "12", "--arith", "ball", "--bits", "64"],
    "seed_mpfr_d1_h2.json": ["--d", "1", "--heads", "2", "--seed", "3", "--digits", "12", "--arith", "mpfr", "--bits", "64"],
}
gs = {}
for name, args in gold.items():
    gs[name] = made(["golden", "export", *args, "-o"], name)
    out("golden", name, gs[name])
g = json.loads(gs["seed_exact_d2_h1.json"])
out("golden", "defect_token_off_grid_1_3.json", edit(g, lambda j: j["queries"][4]["runs"][0]["token"].__setitem__(1, "1/3")))
out("golden", "defect_huge_token.json", edit(g, lambda j: j["queries"][4]["runs"][0]["token"].__setitem__(0, "7" * 401)))
out("golden", "defect_token_1e6.json", edit(g, lambda j: j["queries"][4]["runs"][0]["token"].__setitem__(0, "1000000")))
out("golden", "defect_token_range_1e9.json", edit(g, lambda j: j["inputs"].__setitem__("token_range", 1000000000)))
out("golden", "defect_overflow_seed.json", gs["seed_exact_d2_h1.json"].replace('"seed": 1,', '"seed": 1e400,', 1))
out("golden", "defect_u64_wraps_heads.json", edit(g, lambda j: j["inputs"].__setitem__("heads_learner", 18446744073709551615)))
out("golden", "defect_duplicate_key.json", gs["seed_exact_d2_h1.json"].replace('"digits": 12', '"digits": 12, "digits": 13', 1))
out("golden", "defect_invalid_utf8.json", gs["seed_exact_d2_h1.json"].encode().replace(b'"paper"', b'"pa\xc0\xafper"', 1))
out("golden", "defect_w_entry_1e30.json", edit(g, lambda j: j["model"]["heads"][0]["W"][0].__setitem__(0, "1e30")))
out("golden", "defect_generate_cancel_v_one_head.json", edit(g, lambda j: j["inputs"]["generate"].__setitem__("cancel_v", True)))
# transformer golden files (model_kind "transformer")
gs["seed_transformer_d1_h1_m1.json"] = made(["golden", "export", "--d", "1", "--heads", "1", "--ffn", "1", "--seed", "1", "--digits", "12", "-o"], "gt.json")
out("golden", "seed_transformer_d1_h1_m1.json", gs["seed_transformer_d1_h1_m1.json"])
gt = json.loads(gs["seed_transformer_d1_h1_m1.json"])
out("golden", "defect_transformer_token_off_grid.json", edit(gt, lambda j: j["queries"][3]["runs"][0]["token"].__setitem__(0, "1/17")))
out("golden", "defect_transformer_token_1e6.json", edit(gt, lambda j: j["queries"][3]["runs"][0]["token"].__setitem__(0, "1000000")))
out("golden", "defect_transformer_model_kind.json", edit(gt, lambda j: j.__setitem__("model_kind", "mlp")))
out("golden", "defect_transformer_no_neurons.json", edit(gt, lambda j: j["model"].__setitem__("neurons", [])))
out("golden", "defect_transformer_attention_model.json", edit(gt, lambda j: j.__setitem__("model", {"format": "mhaq-model", "version": 1, "d": 1, "heads": [{"W": [["1"]], "v": ["1"]}]})))
out("golden", "defect_transformer_empty_runs.json", edit(gt, lambda j: j["queries"][2].__setitem__("runs", [])))

# ---------------------------------------------------------------- recover (bytes choose a tiny model and options)
for i, b in enumerate([b"\x00\x10\x21\x32\x43\x54\x65\x76\x01\x02\x03", b"\x03\x11\x22\x33\x44\x55\x66\x77\x88\x99\xaa\xbb\xcc\x00\x01",
                       b"\x05\x04\x50\x61\x72\x83\x94\xa5\xb6\xc7\xd8\xe9\x09\x00\x01\x01", b"\x01\x00\x44\x48\x4c\x40\x05\x06",
                       b"\x02\x13\x24\x35\x46\x57\x68\x79\x8a\x9b\x08\x01\x00\x05", b"\x04" + bytes(range(40, 80))]):
    out("recover", "seed_%d.bin" % i, b)
print("corpus written to", root)
