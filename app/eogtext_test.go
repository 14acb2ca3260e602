package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"flowchat/app/serve"
	"flowchat/engine"
	"flowchat/engine/fixtures"
	"flowchat/engine/stoptext"
)

// TestStopFilter: text is passed on unchanged until a stop text, however
// the pieces split it; the stop text and what follows are dropped; a
// held-back prefix that does not complete a stop text is released.
func TestStopFilter(t *testing.T) {
	stops := []string{"<|end_story|>", "</s>"}
	for _, c := range []struct {
		pieces []string
		want   string
		hit    bool
	}{
		{[]string{"Once", " upon", " a time."}, "Once upon a time.", false},
		{[]string{"The end.", "<|", "end", "_story", "|>"}, "The end.", true},
		{[]string{"The end.<|end_story|>", "more"}, "The end.", true},
		{[]string{"<|end_story|>"}, "", true},
		{[]string{"a <", "b> <|", "end"}, "a <b> <|end", false}, // flushed at the end
		{[]string{"x</", "s>y"}, "x", true},
		{[]string{"<|end_st", "ory|> tail"}, "", true},
		{[]string{"1 <| 2", " <|end_story|", "| 3"}, "1 <| 2 <|end_story|| 3", false},
	} {
		var got strings.Builder
		f := &stopFilter{m: stoptext.Matcher{Stops: stops}, next: func(s string) bool { got.WriteString(s); return true }}
		for _, p := range c.pieces {
			if !f.piece(p) {
				break
			}
		}
		if !f.m.Hit() {
			f.flush()
		}
		if got.String() != c.want || f.m.Hit() != c.hit {
			t.Errorf("%q: got %q hit %v, want %q hit %v", c.pieces, got.String(), f.m.Hit(), c.want, c.hit)
		}
	}
}

// TestRunHidesSpelledEndOfText: TinyStories-656K spells "<|end_story|>"
// out of ordinary pieces before its EOS token; run stops there (stop:
// eog) and never prints the marker. Exact-length runs (-n, as llama.cpp's
// reference runs) are untouched.
func TestRunHidesSpelledEndOfText(t *testing.T) {
	model := fixtures.Path(t, "models/tinystories-656K/TinyStories-656K-F32.gguf")
	eog := 0
	for seed := 1; seed <= 6; seed++ {
		out, stderr, code := run(t, "run", "-m", model, "-p", "Once upon a time", "--seed", fmt.Sprint(seed), "-t", "1")
		if code != 0 {
			t.Fatal(stderr)
		}
		if strings.Contains(out, "end_story") || strings.Contains(out, "<|") {
			t.Errorf("seed %d: marker shown: %q", seed, out)
		}
		if strings.Contains(stderr, "stop: eog") {
			eog++
		}
	}
	if eog == 0 {
		t.Error("no run ended at the end of the story")
	}
}

// TestServeHidesSpelledEndOfText: flowchat serve stops where TinyStories
// spells its end-of-text marker, never sends it, and reports "stop".
func TestServeHidesSpelledEndOfText(t *testing.T) {
	m, err := engine.Load(fixtures.Path(t, "models/tinystories-656K/TinyStories-656K-F32.gguf"), engine.LoadOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ts := httptest.NewServer(serve.New(serve.Config{Model: m, Backend: serve.NewModelBackend(m, 2, 0, 8), ModelID: "ts", EndTexts: eogTexts(m)}))
	defer ts.Close()
	stopped := 0
	for seed := 1; seed <= 6; seed++ {
		body := fmt.Sprintf(`{"prompt":"Once upon a time","seed":%d,"max_tokens":400}`, seed)
		resp, err := http.Post(ts.URL+"/v1/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			Choices []struct {
				Text         string `json:"text"`
				FinishReason string `json:"finish_reason"`
			}
		}
		json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if resp.StatusCode != 200 || len(out.Choices) != 1 {
			t.Fatalf("seed %d: status %d, %+v", seed, resp.StatusCode, out)
		}
		if c := out.Choices[0]; strings.Contains(c.Text, "end_story") || strings.Contains(c.Text, "<|") {
			t.Errorf("seed %d: marker sent: %q", seed, c.Text)
		} else if c.FinishReason == "stop" {
			stopped++
		}
	}
	if stopped == 0 {
		t.Error("no completion ended at the end of the story")
	}
}
