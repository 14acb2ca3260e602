package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"flowchat/engine/fixtures"
	"flowchat/engine/gguf"
)

// TestFileTypeMatchesLlamaQuantize checks the llama-quantize tensor mix of
// the synthetic benchmark files against files llama-quantize wrote: every
// 2-D tensor of each must get the type our rules predict.
func TestFileTypeMatchesLlamaQuantize(t *testing.T) {
	root := fixtures.Full(t)
	files := map[string]string{
		"models/tinystories-656K/TinyStories-656K-Q4_0.gguf":   "Q4_0",
		"models/tinystories-656K/TinyStories-656K-Q5_0.gguf":   "Q5_0",
		"models/tinystories-656K/TinyStories-656K-Q8_0.gguf":   "Q8_0",
		"models/tinystories-656K/TinyStories-656K-Q4_K_M.gguf": "Q4_K_M",
		"models/tinystories-656K/TinyStories-656K-Q5_K_M.gguf": "Q5_K_M",
		"models/tinystories-656K/TinyStories-656K-Q6_K.gguf":   "Q6_K",
		"models/tinystories-656K/TinyStories-656K-F16.gguf":    "F16",
		"models/stories260K/stories260K-Q4_K_M.gguf":           "Q4_K_M",
		"models/stories260K/stories260K-Q6_K.gguf":             "Q6_K",
	}
	for rel, name := range files {
		f, err := gguf.Open(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		ft, err := parseFileType(name, false)
		if err != nil {
			t.Fatal(err)
		}
		layers, _ := f.Uint("llama.block_count")
		_, hasOutput := f.Tensor("output.weight")
		checked := 0
		for _, ti := range f.Tensors {
			if len(ti.Shape) != 2 {
				continue
			}
			want := ft.tensorType(ti.Name, int(ti.Shape[0]), int(layers), !hasOutput)
			if ti.Type != want {
				t.Errorf("%s: %s is %v in llama-quantize's file, our %s rules say %v", rel, ti.Name, ti.Type, name, want)
			}
			checked++
		}
		if checked < 8 {
			t.Errorf("%s: only %d matrices checked", rel, checked)
		}
		f.Close()
	}
}

// TestSynthMixSizes: the synthetic files come out the size of llama.cpp's
// files of the same shape and type (issue 6's table: stories15M Q8_0 26 MB,
// Q4_0 18 MB, Q4_K_M 20 MB, in MiB).
func TestSynthMixSizes(t *testing.T) {
	for typ, mib := range map[string]float64{"Q8_0": 26, "Q4_0": 18, "Q4_K_M": 20} {
		out := filepath.Join(t.TempDir(), typ+".gguf")
		if _, stderr, code := run(t, "synth", "--shape", "stories15m", "--type", typ, "--out", out); code != 0 {
			t.Fatal(stderr)
		}
		st, err := os.Stat(out)
		if err != nil {
			t.Fatal(err)
		}
		if got := float64(st.Size()) / (1 << 20); got < mib-1 || got > mib+1 {
			t.Errorf("stories15m %s: %.1f MiB, llama.cpp's file is %.0f", typ, got, mib)
		}
	}
}

// TestBenchSuiteReport runs the smoke suite end to end twice into a
// markdown file: the section is written between the markers and replaced,
// not appended, on the second run; the text around it is kept.
func TestBenchSuiteReport(t *testing.T) {
	dir := t.TempDir()
	rep := filepath.Join(dir, "PERF.md")
	if err := os.WriteFile(rep, []byte("# Perf\n\nbefore\n\n"+benchBegin+"\nold\n"+benchEnd+"\n\nafter\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		_, stderr, code := run(t, "bench", "--suite", "smoke", "--report", rep, "--dir", filepath.Join(dir, "m"),
			"--quiet-wait", "0s", "-r", "1", "-t", "1")
		if code != 0 {
			t.Fatal(stderr)
		}
	}
	b, _ := os.ReadFile(rep)
	s := string(b)
	if strings.Count(s, benchBegin) != 1 || strings.Count(s, benchEnd) != 1 || strings.Contains(s, "\nold\n") {
		t.Fatalf("section not replaced in place:\n%s", s)
	}
	if !strings.HasPrefix(s, "# Perf\n\nbefore\n\n") || !strings.HasSuffix(s, "\nafter\n") {
		t.Errorf("text around the section changed:\n%s", s)
	}
	for _, want := range []string{"| stories15m | Q8_0 | 25 | 1 | ", "| stories15m | Q4_K_M | 20 | 1 | ", "stories15m pp16/tg8", "2141.3"} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q:\n%s", want, s)
		}
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "m")); len(ents) != 0 {
		t.Errorf("synthetic models left behind without --keep: %v", ents)
	}
}

// TestBenchSuiteSideBySide: --llama-bench runs the given command on the
// same files with llama-bench's arguments and reads its JSON; the ratios
// are against its median. The command here is a stand-in script that
// records its arguments and answers with fixed samples.
func TestBenchSuiteSideBySide(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "llama-bench")
	argsLog := filepath.Join(dir, "args")
	body := `#!/bin/sh
echo "$@" >> ` + argsLog + `
cat <<'J'
[{"build_commit":"abc1234","n_threads":1,"n_prompt":16,"n_gen":0,"avg_ts":10,"stddev_ts":1,"samples_ts":[9,10,50]},
 {"build_commit":"abc1234","n_threads":1,"n_prompt":0,"n_gen":8,"avg_ts":5,"stddev_ts":1,"samples_ts":[4,5,6]}]
J
`
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := run(t, "bench", "--suite", "smoke", "--only", "Q8_0", "--dir", filepath.Join(dir, "m"),
		"--quiet-wait", "0s", "-r", "1", "-t", "1", "--llama-bench", script, "--llama-bench-args", "-fa 1")
	if code != 0 {
		t.Fatal(stderr)
	}
	args, _ := os.ReadFile(argsLog)
	if !strings.Contains(string(args), "stories15m-Q8_0.gguf -p 16 -n 8 -t 1 -r 1 -o json -fa 1") {
		t.Errorf("llama-bench called with %q", args)
	}
	// Medians 10 (pp) and 5 (tg), not the averages.
	if !strings.Contains(out, "| 10.00 ± 1.00 |") || !strings.Contains(out, "| 5.00 ± 1.00 |") || !strings.Contains(out, "build abc1234") {
		t.Errorf("side-by-side figures missing:\n%s", out)
	}
	if strings.Contains(out, "| stories15m | Q4_K_M") {
		t.Errorf("--only Q8_0 ran Q4_K_M too:\n%s", out)
	}
}
