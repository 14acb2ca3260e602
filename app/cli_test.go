package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adrg/xdg"

	"flowchat/engine/fixtures"
)

// The XDG_CACHE_HOME the tests started with: go build, run by the GUI
// end-to-end test, must find Go's build cache there, not in the tests'
// temporary directory (a cold cache recompiles GLFW's C code: minutes).
var (
	userCacheHome string
	hadCacheHome  bool
)

// TestMain keeps the tests' data (the installed demo model) out of the
// user's real data directory.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "flowchat-test-data")
	if err != nil {
		panic(err)
	}
	userCacheHome, hadCacheHome = os.LookupEnv("XDG_CACHE_HOME")
	os.Setenv("XDG_DATA_HOME", dir)
	os.Setenv("XDG_CONFIG_HOME", dir)
	os.Setenv("XDG_CACHE_HOME", dir)
	xdg.Reload()
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// run calls the CLI in-process and returns stdout, stderr and the exit code.
func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := runMain(args, &out, &errOut)
	return out.String(), errOut.String(), code
}

type refCase struct {
	Model         string  `json:"model"`
	PromptText    string  `json:"prompt_text"`
	InputIDs      []int32 `json:"input_ids"`
	GeneratedText string  `json:"generated_text"`
	GeneratedIDs  []int32 `json:"generated_ids"`
	NVocab        int     `json:"n_vocab"`
	PromptLogits  string  `json:"prompt_logits_file"`
}

func loadCase(t *testing.T, p string) refCase {
	var c refCase
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// trainedModel finds the GGUF a trained case was made from.
func trainedModel(t *testing.T, root string, c refCase) string {
	m, _ := filepath.Glob(filepath.Join(root, "models", "*", filepath.Base(c.Model)))
	if len(m) != 1 {
		t.Skipf("model %s not in this fixture set", c.Model)
	}
	return m[0]
}

// TestRunGreedyMatchesLlamaCpp: `flowchat run --greedy -n 48` prints exactly
// llama.cpp's generated text for every public prompt, float types strictly;
// quantized types are reported (they match llama.cpp closely but a single
// near-tie can flip one token).
func TestRunGreedyMatchesLlamaCpp(t *testing.T) {
	root := fixtures.Shared(t)
	cases, _ := filepath.Glob(filepath.Join(root, "reference", "trained", "*", "*", "p*.json"))
	if len(cases) == 0 {
		t.Fatal("no trained reference cases")
	}
	exact, total := 0, 0
	for _, cp := range cases {
		typ := filepath.Base(filepath.Dir(cp))
		name := strings.TrimPrefix(cp, filepath.Join(root, "reference", "trained")+"/")
		c := loadCase(t, cp)
		model := trainedModel(t, root, c)
		out, stderr, code := run(t, "run", "--model", model, "--prompt", c.PromptText, "--greedy", "-n", "48", "-t", "1")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, stderr)
		}
		total++
		if out == c.GeneratedText {
			exact++
			continue
		}
		if typ == "F32" || typ == "F16" || typ == "BF16" {
			t.Errorf("%s:\n got %q\nwant %q", name, out, c.GeneratedText)
		} else {
			t.Logf("%s (quantized) differs:\n got %q\nwant %q", name, out, c.GeneratedText)
		}
	}
	t.Logf("%d of %d generations identical to llama.cpp's", exact, total)
}

// TestLogitsCommand checks the outside interface: `flowchat logits --tokens`
// writes [n_tokens, n_vocab] float32 agreeing with llama.cpp's.
func TestLogitsCommand(t *testing.T) {
	root := fixtures.Shared(t)
	for _, cp := range []string{
		filepath.Join(root, "reference", "trained", "stories260K", "F32", "p1.json"),
		filepath.Join(root, "reference", "arch", "gpt2", "s0.json"),
	} {
		c := loadCase(t, cp)
		model := filepath.Join(root, strings.TrimPrefix(c.Model, "models/"))
		if strings.Contains(cp, "trained") {
			model = trainedModel(t, root, c)
		}
		ids := make([]string, len(c.InputIDs))
		for i, id := range c.InputIDs {
			ids[i] = itoa(int(id))
		}
		out := filepath.Join(t.TempDir(), "l.f32")
		if _, stderr, code := run(t, "logits", "--model", model, "--tokens", strings.Join(ids, ","), "--out", out); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		got, want := fixtures.ReadF32(t, out), fixtures.ReadF32(t, filepath.Join(filepath.Dir(cp), c.PromptLogits))
		if len(got) != len(want) {
			t.Fatalf("%s: %d values, want %d", cp, len(got), len(want))
		}
		var num, den float64
		for i := range got {
			d := float64(got[i] - want[i])
			num, den = num+d*d, den+float64(want[i])*float64(want[i])
		}
		if e := math.Sqrt(num / den); e > 1e-3 {
			t.Errorf("%s: relative RMS error %.2e", cp, e)
		}
	}
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

func TestTokenizeCommand(t *testing.T) {
	root := fixtures.Shared(t)
	c := loadCase(t, filepath.Join(root, "reference", "trained", "stories260K", "F32", "p1.json"))
	out, stderr, code := run(t, "tokenize", "--model", trainedModel(t, root, c), "--prompt", c.PromptText)
	if code != 0 {
		t.Fatal(stderr)
	}
	ids := make([]string, len(c.InputIDs))
	for i, id := range c.InputIDs {
		ids[i] = itoa(int(id))
	}
	if strings.TrimSpace(out) != strings.Join(ids, ",") {
		t.Errorf("got %s, want %s", out, strings.Join(ids, ","))
	}
}

// TestBadInputs: clear errors, never a panic.
func TestBadInputs(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.gguf")
	os.WriteFile(garbage, []byte("GGUF\x03\x00\x00\x00not really"), 0o644)
	notGGUF := filepath.Join(dir, "text.gguf")
	os.WriteFile(notGGUF, []byte("hello"), 0o644)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"run", "--model", filepath.Join(dir, "missing.gguf"), "--prompt", "x"}, "no such file"},
		{[]string{"run", "--model", garbage, "--prompt", "x"}, "malformed"},
		{[]string{"run", "--model", notGGUF, "--prompt", "x"}, "not a GGUF file"},
		{[]string{"run", "--prompt", "x", "--top-p", "1.5"}, "top_p"},
		{[]string{"run", "--prompt", "x", "--temperature", "-1"}, "temperature"},
		{[]string{"logits", "--tokens", "1,99999", "--out", filepath.Join(dir, "o")}, "outside the vocabulary"},
		{[]string{"nosuchcommand"}, "unknown command"},
	}
	for _, c := range cases {
		_, stderr, code := run(t, c.args...)
		if code == 0 || !strings.Contains(strings.ToLower(stderr), strings.ToLower(c.want)) {
			t.Errorf("%v: exit %d, stderr %q; want an error mentioning %q", c.args, code, stderr, c.want)
		}
	}
}

func TestSynthAndBench(t *testing.T) {
	out := filepath.Join(t.TempDir(), "s.gguf")
	if _, stderr, code := run(t, "synth", "--shape", "stories15m", "--type", "Q8_0", "--out", out); code != 0 {
		t.Fatal(stderr)
	}
	table, stderr, code := run(t, "bench", "--model", out, "-p", "16", "-n", "8", "-t", "1", "-r", "1")
	if code != 0 {
		t.Fatal(stderr)
	}
	if !strings.Contains(table, "pp16") || !strings.Contains(table, "tg8") || !strings.Contains(table, "Q8_0") || !strings.Contains(table, "| CPU |") {
		t.Errorf("bench table:\n%s", table)
	}
	// --gpu-layers: the device path (here a CPU stand-in device), named in
	// the backend column; with --suite it is refused.
	table, stderr, code = run(t, "bench", "--model", out, "-p", "16", "-n", "8", "-t", "1", "-r", "1", "--ngl", "all", "--devices", "cpu")
	if code != 0 {
		t.Fatal(stderr)
	}
	if !strings.Contains(table, "GPU 6/6 layers + head · cpu:0") || !strings.Contains(table, "tg8") || strings.Contains(stderr, "a run failed") {
		t.Errorf("bench --ngl all --devices cpu:\n%s\n%s", table, stderr)
	}
	if _, stderr, code := run(t, "bench", "--suite", "smoke", "--ngl", "all"); code != 2 || !strings.Contains(stderr, "--gpu-layers measures one --model") {
		t.Errorf("bench --suite --ngl: exit %d, %s", code, stderr)
	}
}

// TestExplainSampling: --explain-sampling writes one JSON object per
// generated token to stderr, and the text on stdout is unaffected.
func TestExplainSampling(t *testing.T) {
	model := fixtures.Path(t, "models/stories260K/stories260K-F32.gguf")
	plain, _, _ := run(t, "run", "--model", model, "--prompt", "Once upon a time", "-n", "5", "--seed", "7", "--top-k", "10")
	out, stderr, code := run(t, "run", "--model", model, "--prompt", "Once upon a time", "-n", "5", "--seed", "7", "--top-k", "10", "--explain-sampling")
	if code != 0 {
		t.Fatal(stderr)
	}
	if out != plain {
		t.Errorf("explaining changed the output: %q vs %q", out, plain)
	}
	objects := 0
	for _, line := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(line, "{") {
			var v map[string]any
			if err := json.Unmarshal([]byte(line), &v); err != nil {
				t.Fatalf("bad JSON line %q: %v", line, err)
			}
			objects++
		}
	}
	if objects != 5 {
		t.Errorf("%d JSON objects for 5 tokens:\n%s", objects, stderr)
	}
}

// TestSamplingFlagsValidate: invalid sampling settings are refused with a
// message naming the parameter.
func TestSamplingFlagsValidate(t *testing.T) {
	for _, args := range [][]string{
		{"--mirostat", "3"}, {"--typical-p", "0"}, {"--min-p", "2"}, {"--decoding", "beam"},
	} {
		_, stderr, code := run(t, append([]string{"run", "--prompt", "x"}, args...)...)
		if code == 0 || !strings.Contains(stderr, strings.TrimPrefix(strings.ReplaceAll(args[0], "-", "_"), "__")) {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
}

func TestModelsInspect(t *testing.T) {
	out, stderr, code := run(t, "models", "inspect", fixtures.Path(t, "arch/rand-qwen2-F32.gguf"))
	if code != 0 {
		t.Fatal(stderr)
	}
	for _, want := range []string{"format", "gguf", "qwen2 (specs/qwen2.json)", "4 / 2 / 16", "bpe, 512 tokens", "blk.1.ffn_down.weight"} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect output lacks %q:\n%s", want, out)
		}
	}
}

// TestLoadTimeQuantAndKVType: --quant re-quantizes at load and --kv-type
// changes the cache; both still produce the story, and bad values are
// refused.
func TestLoadTimeQuantAndKVType(t *testing.T) {
	model := fixtures.Path(t, "models/stories260K/stories260K-F32.gguf")
	ref, _, _ := run(t, "run", "--model", model, "--prompt", "Once upon a time", "-n", "12", "--greedy")
	for _, args := range [][]string{{"--quant", "Q8"}, {"--kv-type", "F16"}, {"--quant", "Q8_0", "--kv-type", "Q8_0"}} {
		out, stderr, code := run(t, append([]string{"run", "--model", model, "--prompt", "Once upon a time", "-n", "12", "--greedy"}, args...)...)
		if code != 0 || len(out) < 20 {
			t.Fatalf("%v: exit %d %q %s", args, code, out, stderr)
		}
		if args[0] == "--quant" && args[1] == "Q8" && out[:10] != ref[:10] {
			t.Errorf("%v: 8-bit weights changed the start of the story: %q vs %q", args, out, ref)
		}
	}
	table, _, code := run(t, "bench", "--model", model, "-p", "8", "-n", "4", "-t", "1", "-r", "1", "--quant", "Q4")
	if code != 0 || !strings.Contains(table, "Q4_B") {
		t.Errorf("bench with --quant Q4 does not show the new type:\n%s", table)
	}
	for _, args := range [][]string{{"--quant", "Q7"}, {"--kv-type", "Q4_0"}} {
		if _, stderr, code := run(t, append([]string{"run", "--model", model, "--prompt", "x"}, args...)...); code == 0 {
			t.Errorf("%v accepted (%s)", args, stderr)
		}
	}
}

// TestUsageErrorsSayWhy: a command line that makes no sense exits 2 with a
// message, not silently.
func TestUsageErrorsSayWhy(t *testing.T) {
	_, stderr, code := run(t, "logits", "--out", "x")
	if code != 2 || !strings.Contains(stderr, "exactly one of --tokens or --prompt") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	_, stderr, code = run(t, "run", "--no-such-flag")
	if code != 2 || strings.Count(stderr, "no-such-flag") != 1 {
		t.Errorf("bad flag: exit %d, stderr %q", code, stderr)
	}
}

// TestQuantlabCommand: the lab prints its table, writes its charts, reads
// its cache on the second run, and continues a prompt side by side.
func TestQuantlabCommand(t *testing.T) {
	model := fixtures.Path(t, "models/stories260K/stories260K-F32.gguf")
	dir := t.TempDir()
	args := []string{"quantlab", model, "--types", "F32,Q8,Q3H,Q3", "--chunks", "2", "--gen-tokens", "0", "--out", dir, "--width", "320", "--height", "200"}
	out, stderr, code := run(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"Q8", "Q3H", "Q3"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %s:\n%s", want, out)
		}
	}
	pngs, _ := filepath.Glob(filepath.Join(dir, "*.png"))
	if len(pngs) < 3 {
		t.Errorf("charts written: %v", pngs)
	}
	again, _, code := run(t, args...)
	if code != 0 || again != out {
		t.Errorf("cached run differs:\n%s\nvs\n%s", again, out)
	}
	side, stderr, code := run(t, "quantlab", model, "--types", "F32,Q2", "--chunks", "1", "--gen-tokens", "0", "--prompt", "Once upon a time")
	if code != 0 || !strings.Contains(side, "Q2") {
		t.Errorf("side by side: exit %d\n%s\n%s", code, side, stderr)
	}
}
