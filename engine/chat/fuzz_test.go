package chat

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"flowchat/engine/fixtures"
)

// fuzzMessages is a conversation that reaches most branches of real templates.
var fuzzMessages = []Message{
	{Role: "system", Content: "Be brief."},
	{Role: "user", Content: "Hi <b> & 'q' \"dq\" 日本語 😀"},
	{Role: "assistant", Content: "<think>x</think>Hello"},
	{Role: "user", Content: "  again\n"},
}

var fuzzTools = json.RawMessage(`[{"type": "function", "function": {"name": "f", "description": "d",
	"parameters": {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}}}]`)

// FuzzRender parses and renders arbitrary template text: it must return
// (text or error) without panicking, and within a bounded time.
func FuzzRender(f *testing.F) {
	addTemplateSeeds(f)
	f.Fuzz(func(t *testing.T, src string) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			renderOnce(t, src)
		}()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("render did not finish: %q", src)
		}
	})
}

func renderOnce(t *testing.T, src string) {
	tpl, err := Parse(src)
	if err != nil {
		failOnInternal(t, err, src)
		return
	}
	for _, extra := range []map[string]any{nil, {"tools": fuzzTools}} {
		_, err := tpl.Render(fuzzMessages, Options{AddGenerationPrompt: true, BOS: "<s>", EOS: "</s>",
			Now: fixedNow, Extra: extra})
		failOnInternal(t, err, src)
	}
}

// failOnInternal fails on a recovered panic; template errors are expected.
func failOnInternal(t *testing.T, err error, src string) {
	if e, ok := err.(*Error); ok && e.Kind == "InternalError" {
		t.Fatalf("panic on %q: %v", src, err)
	}
	if err != nil {
		if _, ok := err.(*Error); !ok && !strings.HasPrefix(err.Error(), "chat:") {
			t.Fatalf("error of type %T on %q: %v", err, src, err)
		}
	}
}

func addTemplateSeeds(f *testing.F) {
	f.Add(fallbackSource)
	if dir := fixtures.Find("chat_templates/templates"); dir != "" {
		paths, _ := filepath.Glob(filepath.Join(dir, "*.jinja"))
		for _, p := range paths {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(string(b))
			}
		}
	}
	if b, err := os.ReadFile(filepath.Join("testdata", "probes.jinja")); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if line != "" && !strings.HasPrefix(line, "##") {
				f.Add(line)
			}
		}
	}
}

// FuzzExtraJSON feeds arbitrary JSON as a template variable (tools arrive
// as JSON from API clients).
func FuzzExtraJSON(f *testing.F) {
	f.Add(string(fuzzTools))
	f.Add(`{"a": [1, 2.5, null, true, "x"], "b": {"c": {}}}`)
	tpl, err := Parse("{{ tools | tojson }}{% for t in tools %}{{ t }}{% endfor %}{{ tools is mapping }}")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		_, err := tpl.Render(nil, Options{Extra: map[string]any{"tools": json.RawMessage(raw)}})
		failOnInternal(t, err, raw)
	})
}
