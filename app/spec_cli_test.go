package main

import (
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
