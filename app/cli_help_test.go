package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"flowchat/engine"
	"flowchat/engine/chat"
	"flowchat/engine/sample"
)

// TestVersion: --version (and `version`) print the release and the commit
// the Makefile stamps, and nothing else.
func TestVersion(t *testing.T) {
	defer func(v, c string) { version, commit = v, c }(version, commit)
	version, commit = "", "0123456789ab-dirty"
	for _, arg := range []string{"--version", "-version", "version"} {
		out, stderr, code := run(t, arg)
		want := fmt.Sprintf("flowchat %s (commit 0123456789ab-dirty)\n", appVersion)
		if code != 0 || out != want || stderr != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want %q", arg, code, out, stderr, want)
		}
	}
	commit = ""
	if out, _, _ := run(t, "--version"); !strings.Contains(out, "commit") {
		t.Errorf("without a stamped commit: %q", out)
	}
}

// TestBadFlagsOneLine: a bad flag or value is one line naming it, and a
// hint to the command's --help; never the whole usage. Negative counts
// are bad values.
func TestBadFlagsOneLine(t *testing.T) {
	cases := [][]string{
		{"run", "--bogus"},
		{"run", "-n", "abc"},
		{"run", "-n", "-5", "--prompt", "x"},
		{"run", "--ctx", "-1", "--prompt", "x"},
		{"run", "--threads", "-2", "--prompt", "x"},
		{"run", "-t", "-2", "--prompt", "x"},
		{"chat", "-n", "-1"},
		{"bench", "-r", "-3"},
		{"perplexity", "--chunks", "-1"},
		{"quantlab", "--gen-tokens", "-4"},
		{"search", "--limit", "-1"},
		{"models", "inspect", "--nope"},
	}
	for _, args := range cases {
		_, stderr, code := run(t, args...)
		lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
		name := args[0]
		if args[0] == "models" {
			name = "models inspect"
		}
		hint := fmt.Sprintf("Run 'flowchat %s --help' for usage.", name)
		if code != 2 || len(lines) != 2 || !strings.HasPrefix(lines[0], "flowchat "+name+": ") || lines[1] != hint {
			t.Errorf("%v: exit %d, stderr:\n%s", args, code, stderr)
		}
	}
	// -1 means "the whole history" for the penalty windows
	if _, stderr, code := run(t, "run", "--prompt", "x", "-n", "1", "--repeat-last-n", "-1", "--dry-penalty-last-n", "-1"); code != 0 {
		t.Errorf("--repeat-last-n -1 refused: %s", stderr)
	}
}

// TestEveryCommandHelp: each subcommand's --help shows its synopsis with
// the positional arguments, and at least one example that names it, on
// stdout (as `flowchat --help` does), so that it pipes to less or grep.
func TestEveryCommandHelp(t *testing.T) {
	names := []string{"models inspect", "gpu compile"}
	for n := range commands {
		names = append(names, n)
	}
	for _, n := range names {
		h, ok := helpTexts[n]
		if !ok || len(h.examples) == 0 {
			t.Errorf("%s: no entry with examples in helpTexts", n)
			continue
		}
		out, stderr, code := run(t, append(strings.Fields(n), "--help")...)
		if code != 0 || stderr != "" || !strings.HasPrefix(out, "Usage: flowchat "+n+" "+h.args+"\n") || !strings.Contains(out, "\nExamples:\n  flowchat "+n) {
			t.Errorf("%s --help: exit %d, stdout:\n%s\nstderr:\n%s", n, code, out, stderr)
		}
	}
}

// TestBenchBadFileNoHeader: bench on a file that does not load prints the
// error only, no table header above it.
func TestBenchBadFileNoHeader(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.gguf")
	os.WriteFile(bad, []byte("not a model"), 0o644)
	out, stderr, code := run(t, "bench", "--model", bad, "-p", "4", "-n", "2", "-r", "1")
	if code != 1 || out != "" || !strings.Contains(stderr, "not a GGUF file") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}

// TestErrorsNamePathOnce: a missing file is named once in the error.
func TestErrorsNamePathOnce(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.gguf")
	for _, args := range [][]string{
		{"quantize", missing, missing + ".out", "--type", "Q4_0"},
		{"run", "--model", missing, "--prompt", "x"},
		{"models", "inspect", missing},
		{"perplexity", "--file", missing},
	} {
		_, stderr, code := run(t, args...)
		if code == 0 || strings.Count(stderr, missing) != 1 {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
}

// TestModelsLabelsDemoBundled: the demo the app installed itself is not
// "downloaded".
func TestModelsLabelsDemoBundled(t *testing.T) {
	out, stderr, code := run(t, "models")
	if code != 0 {
		t.Fatal(stderr)
	}
	line := regexp.MustCompile(`(?m)^stories260K-demo .*$`).FindString(out)
	if !strings.Contains(line, " bundled ") || strings.Contains(line, "downloaded") {
		t.Errorf("demo line %q in\n%s", line, out)
	}
}

// TestRunChatWithoutTemplate: --chat on a model with no chat template says
// so on stderr.
func TestRunChatWithoutTemplate(t *testing.T) {
	_, stderr, code := run(t, "run", "--chat", "--prompt", "Hi", "-n", "1")
	if code != 0 || !strings.Contains(stderr, "has no chat template") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

func demoChat(t *testing.T, ctx int) *termChat {
	t.Helper()
	m, err := (&modelFlags{threads: 1}).load()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	c := &termChat{m: m, sess: m.NewSession(ctx), out: &bytes.Buffer{}, errOut: &bytes.Buffer{}, policy: policyDrop}
	c.opt = engine.GenerateOptions{MaxTokens: 24, Sampling: sample.DefaultParams()}
	c.opt.Sampling.Decoding = "greedy"
	return c
}

// TestTermChatCommands: /help lists every command the loop handles,
// aliases included; an unknown command says so.
func TestTermChatCommands(t *testing.T) {
	c := demoChat(t, 0)
	var in strings.Builder
	var all []string
	for _, cmd := range chatCommands {
		all = append(all, strings.Fields(cmd.names)...)
	}
	in.WriteString("/help\n/frobnicate\n")
	for _, name := range all {
		if name != "/quit" && name != "/exit" && name != "/bye" {
			in.WriteString(name + "\n")
		}
	}
	if err := c.loop(strings.NewReader(in.String())); err != nil {
		t.Fatal(err)
	}
	out := c.out.(*bytes.Buffer).String()
	help := out[:strings.Index(out, "unknown command")]
	for _, name := range all {
		if !regexp.MustCompile(`(^|\s)` + regexp.QuoteMeta(name) + `(\s|$)`).MatchString(help) {
			t.Errorf("/help does not list %s:\n%s", name, help)
		}
	}
	if !strings.Contains(out, "unknown command /frobnicate") || strings.Count(out, "unknown command") != 1 {
		t.Errorf("output:\n%s", out)
	}
	for _, quit := range []string{"/quit", "/exit", "/bye"} {
		if !c.command(quit) {
			t.Errorf("%s does not quit", quit)
		}
	}
}

// TestTermChatPrintsReplyOnce: piped, a reply is streamed once and not
// printed again; on a terminal the streamed rows are erased before the
// rendered reply is drawn in their place.
func TestTermChatPrintsReplyOnce(t *testing.T) {
	c := demoChat(t, 0)
	if err := c.turn("Once upon a time"); err != nil {
		t.Fatal(err)
	}
	reply := c.msgs[len(c.msgs)-1].Content
	out := c.out.(*bytes.Buffer).String()
	if len(reply) < 20 || strings.Count(out, reply) != 1 || out != reply+"\n" {
		t.Errorf("reply %q printed as %q", reply, out)
	}

	c = demoChat(t, 0)
	c.width, c.height = 40, 100
	if err := c.turn("Once upon a time"); err != nil {
		t.Fatal(err)
	}
	reply = c.msgs[len(c.msgs)-1].Content
	out = c.out.(*bytes.Buffer).String()
	erase := fmt.Sprintf("\n\x1b[%dA\r\x1b[J", textRows(reply, 40))
	if !strings.HasPrefix(out, reply+erase) || len(out) <= len(reply+erase) {
		t.Errorf("reply %q (%d rows) shown as %q", reply, textRows(reply, 40), out)
	}
}

// TestTermChatSaysReplyLimit: a reply cut by the reply limit (the demo's
// stories run past it, ending mid-word) says so on the stats line.
func TestTermChatSaysReplyLimit(t *testing.T) {
	c := demoChat(t, 0)
	if err := c.turn("Once upon a time"); err != nil {
		t.Fatal(err)
	}
	if s := c.errOut.(*bytes.Buffer).String(); !strings.Contains(s, "[24 tokens") || !strings.Contains(s, "the reply limit; -n N sets it") {
		t.Errorf("stats line %q", s)
	}
}

func TestTextRows(t *testing.T) {
	for _, c := range []struct {
		text  string
		width int
		rows  int
	}{
		{"abc", 80, 1},
		{"abc\n", 80, 2},
		{"", 80, 1},
		{strings.Repeat("x", 80), 80, 1},
		{strings.Repeat("x", 81), 80, 2},
		{strings.Repeat("界", 41), 80, 2}, // two cells each
		{"a\n\nb", 10, 3},
		{"\tx", 4, 3}, // a tab counts as 8 cells
	} {
		if got := textRows(c.text, c.width); got != c.rows {
			t.Errorf("textRows(%q, %d) = %d, want %d", c.text, c.width, got, c.rows)
		}
	}
}

// TestTermChatContextPolicy: with drop-oldest the conversation goes on
// past a full context, leaving the oldest turns out (the system prompt
// stays); with stop it refuses, saying so.
func TestTermChatContextPolicy(t *testing.T) {
	c := demoChat(t, 96)
	c.msgs = []chat.Message{{Role: "system", Content: "Tell stories."}}
	for i := range 8 {
		if err := c.turn(fmt.Sprintf("Turn %d: once upon a time there was a dog", i)); err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
	}
	if c.msgs[0].Role != "system" || len(c.msgs) >= 17 {
		t.Errorf("%d messages kept, first %q", len(c.msgs), c.msgs[0].Role)
	}
	if !strings.Contains(c.errOut.(*bytes.Buffer).String(), "were left out") {
		t.Errorf("dropping turns was not reported: %s", c.errOut)
	}

	c = demoChat(t, 96)
	c.policy = policyStop
	var err error
	for i := 0; i < 8 && err == nil; i++ {
		err = c.turn(fmt.Sprintf("Turn %d: once upon a time there was a dog", i))
	}
	if !errors.Is(err, engine.ErrContextFull) || !strings.Contains(err.Error(), "/reset") {
		t.Errorf("stop policy: %v", err)
	}
}

func TestDefaultReplyTokens(t *testing.T) {
	for ctx, want := range map[int]int{512: 128, 4096: 1024, 32768: 1024, 2: 1} {
		if got := defaultReplyTokens(ctx); got != want || got >= ctx && ctx > 1 {
			t.Errorf("defaultReplyTokens(%d) = %d, want %d", ctx, got, want)
		}
	}
}

// TestTermChatShiftPolicy: under the shift policy a reply runs past a full
// context (the engine's context shift) and the chat says text left it.
func TestTermChatShiftPolicy(t *testing.T) {
	c := demoChat(t, 64)
	c.policy = policyShift
	c.opt.ContextShift, c.opt.IgnoreEOG, c.opt.MaxTokens = true, true, 150
	if err := c.turn("Once upon a time"); err != nil {
		t.Fatal(err)
	}
	if s := c.errOut.(*bytes.Buffer).String(); !strings.Contains(s, "150 tokens") || !strings.Contains(s, "left the context while replying") {
		t.Fatalf("stats line %q", s)
	}
}

// TestNoDisplayBadFlag: without a display, a bad flag is one error and a
// hint, not first the promise of a terminal chat; run's -n shows no
// made-up default and still refuses negatives and non-numbers.
func TestNoDisplayBadFlag(t *testing.T) {
	t.Setenv("DISPLAY", "")
	t.Setenv("WAYLAND_DISPLAY", "")
	_, stderr, code := run(t, "--bogus")
	if code == 0 || strings.Contains(stderr, "starting the terminal chat") || !strings.Contains(stderr, "-bogus") || strings.Count(stderr, "\n") != 2 {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	help, _, _ := run(t, "run", "--help")
	i := strings.Index(help, "\n  -n N\n")
	if i < 0 {
		t.Fatalf("run --help has no -n N:\n%s", help)
	}
	if line := strings.SplitN(help[i+8:], "\n", 2)[0]; strings.Contains(line, "(default") {
		t.Errorf("run --help's -n: %q", line)
	}
	for _, bad := range []string{"-5", "x"} {
		if _, stderr, code := run(t, "run", "-n", bad, "-p", "hi"); code == 0 || !strings.Contains(stderr, "-n") {
			t.Errorf("-n %s: exit %d, %q", bad, code, stderr)
		}
	}
}
