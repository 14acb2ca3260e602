package main

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"flowchat/engine/fixtures"
)

// TestRunSpeculative: `run` with each drafter prints the plain greedy
// text and a statistics line on stderr; bad speculation flags are usage
// errors that say what is wrong.
func TestRunSpeculative(t *testing.T) {
	m := fixtures.Path(t, "models/stories260K/stories260K-F32.gguf")
	base := []string{"run", "-m", m, "--temp", "0", "-n", "40", "-t", "1", "--prompt", "Lily and Tom went to the park."}
	plain, _, code := run(t, base...)
	if code != 0 || plain == "" {
		t.Fatalf("plain run: exit %d", code)
	}
	for _, extra := range [][]string{{"--draft", "ngram"}, {"--draft-quant", "Q4_0", "--draft-n", "3"}, {"--draft-model", fixtures.Path(t, "models/stories260K/stories260K-Q8_0mix.gguf"), "--draft-fixed"}} {
		out, stderr, code := run(t, append(append([]string{}, base...), extra...)...)
		if code != 0 || out != plain || !strings.Contains(stderr, "[speculative, ") || !strings.Contains(stderr, "strict accept") {
			t.Errorf("%v: exit %d, text %q (plain %q), stderr %q", extra, code, out, plain, stderr)
		}
	}
	for _, c := range []struct {
		args    []string
		mention string
	}{
		{[]string{"--draft", "magic"}, "ngram"},
		{[]string{"--draft", "ngram", "--draft-quant", "Q4_0"}, "choose one drafter"},
		{[]string{"--draft", "ngram", "--draft-n", "0"}, "--draft-n"},
		{[]string{"--draft", "ngram", "--spec-accept", "any"}, "any"},
		{[]string{"--draft-quant", "Q9_9"}, "--draft-quant"},
		{[]string{"--draft-model", fixtures.Path(t, "models/tinystories-656K/TinyStories-656K-F32.gguf")}, "vocabulary"},
	} {
		_, stderr, code := run(t, append(append([]string{}, base...), c.args...)...)
		if code == 0 || !strings.Contains(stderr, c.mention) {
			t.Errorf("%v: exit %d, stderr %q; want a failure mentioning %q", c.args, code, stderr, c.mention)
		}
	}
}

// TestBenchSpeculative: bench with a drafter alternates plain and
// speculative generations and reports each round: the ratio column is
// the quotient of the two rates it prints, drafts are counted and kept
// ones are at most those drafted, and the summary's median is one of
// the rounds' ratios.
func TestBenchSpeculative(t *testing.T) {
	m := fixtures.Path(t, "models/stories260K/stories260K-F32.gguf")
	draft := fixtures.Path(t, "models/stories260K/stories260K-Q8_0mix.gguf")
	out, stderr, code := run(t, "bench", "-m", m, "--draft-model", draft, "--draft-fixed", "--draft-n", "3", "-n", "40", "-t", "1", "--spec-rounds", "3", "--prompt", "Lily and Tom went to the park.")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var ratios []string
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(line, "|")
		if len(f) != 12 || strings.TrimSpace(f[1]) == "round" || strings.HasPrefix(strings.TrimSpace(f[1]), "-") {
			continue
		}
		var plain, spec, ratio float64
		var drafted, kept int
		_, e1 := fmt.Sscanf(strings.TrimSpace(f[2]), "%g", &plain)
		_, e2 := fmt.Sscanf(strings.TrimSpace(f[3]), "%g", &spec)
		_, e3 := fmt.Sscanf(strings.TrimSpace(f[4]), "%g×", &ratio)
		_, e4 := fmt.Sscanf(strings.TrimSpace(f[7]), "%d", &drafted)
		_, e5 := fmt.Sscanf(strings.TrimSpace(f[8]), "%d", &kept)
		if err := errors.Join(e1, e2, e3, e4, e5); err != nil {
			t.Fatalf("row %q: %v", line, err)
		}
		if plain <= 0 || spec <= 0 || math.Abs(ratio-spec/plain) > 0.002*ratio+0.001 || drafted == 0 || kept > drafted {
			t.Errorf("row %q: plain %g, speculative %g, ratio %g, drafted %d, kept %d", line, plain, spec, ratio, drafted, kept)
		}
		ratios = append(ratios, strings.TrimSpace(f[4]))
	}
	if len(ratios) != 3 {
		t.Fatalf("%d rounds in:\n%s", len(ratios), out)
	}
	i := strings.Index(out, "median ")
	if i < 0 || !slices.Contains(ratios, strings.TrimSuffix(strings.Fields(out[i+len("median "):])[0], ",")) {
		t.Errorf("summary's median is none of the rounds' %v:\n%s", ratios, out)
	}
	for _, args := range [][]string{{"--spec-rounds", "0"}, {"-n", "0"}, {"--temp", "-1"}} {
		_, stderr, code := run(t, append([]string{"bench", "-m", m, "--draft", "ngram"}, args...)...)
		if code == 0 || !strings.Contains(stderr, strings.TrimLeft(args[0], "-")) {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
}
