package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"flowchat/engine/fixtures"
)

// lastLine is the final non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// TestPerplexityCommand: `flowchat perplexity -c 128` ends with llama-
// perplexity's value for stories260K F32 (reference/trained/perplexity.json).
func TestPerplexityCommand(t *testing.T) {
	model := fixtures.Path(t, "models/stories260K/stories260K-F32.gguf")
	text := fixtures.Path(t, "text/tinystories_eval.txt")
	out, errOut, code := run(t, "perplexity", "--model", model, "--file", text, "-c", "128", "-t", "1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if got := lastLine(out); got != "perplexity: 4.1433" {
		t.Fatalf("last line %q, want llama-perplexity's 4.1433\n%s", got, out)
	}
	if !strings.Contains(errOut, "[27]4.1433,") {
		t.Errorf("running values missing: %s", errOut)
	}
	out, errOut, code = run(t, "perplexity", "--model", model, "--file", text, "-c", "128", "--kv-type", "f16")
	if got := lastLine(out); code != 0 || got != "perplexity: 4.1433" { // llama-perplexity -ctk/-ctv f16: 4.1431
		t.Errorf("F16 cache: exit %d, %q: %s", code, got, errOut)
	}
}

// TestPerplexityKLCommand saves a base with the F32 model and compares
// llama.cpp's Q8_0 file and a load-time Q3H model with it.
func TestPerplexityKLCommand(t *testing.T) {
	dir := "models/tinystories-656K/"
	f32 := fixtures.Path(t, dir+"TinyStories-656K-F32.gguf")
	q8 := fixtures.Path(t, dir+"TinyStories-656K-Q8_0.gguf")
	text := fixtures.Path(t, "text/tinystories_eval.txt")
	base := filepath.Join(t.TempDir(), "base.bin")
	out, errOut, code := run(t, "perplexity", "-m", f32, "-f", text, "-c", "128", "--chunks", "4", "--save-base", base)
	if code != 0 || !strings.HasPrefix(lastLine(out), "perplexity: ") {
		t.Fatalf("save-base: exit %d: %s%s", code, out, errOut)
	}
	basePPL := strings.TrimPrefix(lastLine(out), "perplexity: ")
	for _, args := range [][]string{{"-m", f32}, {"-m", q8}, {"-m", f32, "--type", "Q3H", "--weights"}} {
		out, errOut, code := run(t, append([]string{"perplexity", "--kl-base", base}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		var kld, top1 float64
		for _, l := range strings.Split(out, "\n") {
			fmt.Sscanf(l, "KLD = %g", &kld)
			fmt.Sscanf(l, "top-1 agreement: %g%%", &top1)
		}
		t.Logf("%v: KLD %g, top-1 %g%%, %s", args[1:], kld, top1, lastLine(out))
		switch {
		case len(args) == 2 && args[1] == f32:
			if kld > 1e-6 || top1 != 100 || lastLine(out) != "perplexity: "+basePPL {
				t.Errorf("the base against itself: %s", out)
			}
		case !(kld > 0 && top1 < 100):
			t.Errorf("%v: KLD %g, top-1 %g%%", args, kld, top1)
		}
	}
}

func TestPerplexityUsage(t *testing.T) {
	model := fixtures.Path(t, "models/stories260K/stories260K-F32.gguf")
	if _, _, code := run(t, "perplexity", "-m", model); code != 2 {
		t.Errorf("no --file: exit %d, want 2", code)
	}
	bad := filepath.Join(t.TempDir(), "bad.bin")
	os.WriteFile(bad, []byte("not a base file"), 0o644)
	_, errOut, code := run(t, "perplexity", "-m", model, "--kl-base", bad)
	if code != 1 || !strings.Contains(errOut, "malformed base-logits file") {
		t.Errorf("bad base: exit %d: %s", code, errOut)
	}
	if _, errOut, code := run(t, "perplexity", "-m", model, "-f", bad, "--type", "Q9"); code != 1 || !strings.Contains(errOut, "unknown target type") {
		t.Errorf("bad type: exit %d: %s", code, errOut)
	}
}

// TestQuantizeCommand: a file written by quantize, to a GGML type or to an
// Inferflow level, scores exactly like the same conversion done at load.
func TestQuantizeCommand(t *testing.T) {
	model := fixtures.Path(t, "models/tinystories-656K/TinyStories-656K-F32.gguf")
	text := fixtures.Path(t, "text/tinystories_eval.txt")
	for _, typ := range [][]string{{"--type", "Q4_0", "--output-type", "Q8_0"}, {"--type", "Q3H"}} {
		out := filepath.Join(t.TempDir(), "q.gguf")
		if so, se, code := run(t, append([]string{"quantize", model, out}, typ...)...); code != 0 || !strings.Contains(so, "15 of 15 matrices converted") {
			t.Fatalf("%v: exit %d: %s%s", typ, code, so, se)
		}
		fromFile, _, _ := run(t, "perplexity", "-m", out, "-f", text, "-c", "128", "--chunks", "3")
		atLoad, _, _ := run(t, append([]string{"perplexity", "-m", model, "-f", text, "-c", "128", "--chunks", "3"}, typ...)...)
		if lastLine(fromFile) != lastLine(atLoad) || !strings.HasPrefix(lastLine(atLoad), "perplexity: ") {
			t.Errorf("%v: file %q, load-time %q", typ, lastLine(fromFile), lastLine(atLoad))
		}
	}
}
