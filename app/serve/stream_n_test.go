package serve

import (
	"context"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// streamN is what a streamed request with n > 1 delivered, gathered per
// choice index as a client does.
type streamN struct {
	text, finish map[int]string
	// interleaved is set when a choice sent text before another choice,
	// already sending, had finished: the choices ran at once.
	interleaved bool
	open        map[int]bool // choices that sent text and have not finished
}

func newStreamN() *streamN {
	return &streamN{text: map[int]string{}, finish: map[int]string{}, open: map[int]bool{}}
}

func (s *streamN) add(i int, text, finish string) {
	if text != "" {
		if !s.open[i] {
			for k := range s.open {
				if k != i {
					s.interleaved = true
				}
			}
		}
		s.text[i] += text
		s.open[i] = true
	}
	if finish != "" {
		s.finish[i] = finish
		delete(s.open, i)
	}
}

// TestSDKChatStreamN: a streamed chat with n = 3 at temperature 1 runs its
// choices at once, interleaving their chunks, and each index carries the
// same text as the non-streamed choice of the same seed.
func TestSDKChatStreamN(t *testing.T) {
	const n, maxTokens = 3, 40
	m := model(t)
	ts, _ := newTestServer(t, m, 4, Config{})
	c := client(ts, "")
	params := openai.ChatCompletionNewParams{Model: "stories", Messages: userMsg(prompts[0]), Temperature: openai.Float(1),
		Seed: openai.Int(7), N: openai.Int(n), MaxTokens: openai.Int(maxTokens),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}}
	noEOS := option.WithJSONSet("ignore_eos", true) // every choice runs its 40 tokens
	whole, err := c.Chat.Completions.New(context.Background(), params, noEOS)
	if err != nil {
		t.Fatal(err)
	}
	if len(whole.Choices) != n {
		t.Fatalf("%d choices, want %d", len(whole.Choices), n)
	}
	stream := c.Chat.Completions.NewStreaming(context.Background(), params, noEOS)
	got := newStreamN()
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		ch := stream.Current()
		acc.AddChunk(ch)
		for _, choice := range ch.Choices {
			got.add(int(choice.Index), choice.Delta.Content, choice.FinishReason)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	distinct := map[string]bool{}
	for _, w := range whole.Choices {
		i := int(w.Index)
		if got.text[i] != w.Message.Content || got.finish[i] != w.FinishReason {
			t.Errorf("choice %d: streamed %q (%q), non-streamed %q (%q)", i, got.text[i], got.finish[i], w.Message.Content, w.FinishReason)
		}
		if len(acc.Choices) == n && acc.Choices[i].Message.Content != w.Message.Content {
			t.Errorf("choice %d: the SDK's accumulator has %q", i, acc.Choices[i].Message.Content)
		}
		distinct[w.Message.Content] = true
	}
	if len(acc.Choices) != n {
		t.Errorf("the SDK's accumulator has %d choices, want %d", len(acc.Choices), n)
	}
	if len(distinct) != n {
		t.Errorf("%d distinct texts among %d choices: seeds are not per choice", len(distinct), n)
	}
	if !got.interleaved {
		t.Error("the choices streamed one after another, not at once")
	}
	if acc.Usage.CompletionTokens != whole.Usage.CompletionTokens || acc.Usage.CompletionTokens != n*maxTokens {
		t.Errorf("usage streamed %+v, non-streamed %+v, want %d completion tokens", acc.Usage, whole.Usage, n*maxTokens)
	}
}

// TestSDKCompletionStreamN: the same for /v1/completions with two prompts
// and n = 2: four indices (prompt × n + choice), each equal to its
// non-streamed choice, echo included.
func TestSDKCompletionStreamN(t *testing.T) {
	const n, maxTokens = 2, 30
	m := model(t)
	ts, _ := newTestServer(t, m, 4, Config{})
	c := client(ts, "")
	texts := []string{"Once upon a time", "The little dog"}
	params := openai.CompletionNewParams{Model: "stories", Prompt: openai.CompletionNewParamsPromptUnion{OfArrayOfStrings: texts},
		Temperature: openai.Float(1), Seed: openai.Int(11), N: openai.Int(n), MaxTokens: openai.Int(maxTokens), Echo: openai.Bool(true)}
	noEOS := option.WithJSONSet("ignore_eos", true)
	whole, err := c.Completions.New(context.Background(), params, noEOS)
	if err != nil {
		t.Fatal(err)
	}
	if len(whole.Choices) != len(texts)*n {
		t.Fatalf("%d choices, want %d", len(whole.Choices), len(texts)*n)
	}
	stream := c.Completions.NewStreaming(context.Background(), params, noEOS)
	got := newStreamN()
	for stream.Next() {
		for _, ch := range stream.Current().Choices {
			got.add(int(ch.Index), ch.Text, string(ch.FinishReason))
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	for _, w := range whole.Choices {
		i := int(w.Index)
		if !strings.HasPrefix(w.Text, texts[i/n]) || len(w.Text) == len(texts[i/n]) {
			t.Errorf("choice %d: %q does not echo %q and continue it", i, w.Text, texts[i/n])
		}
		if got.text[i] != w.Text || got.finish[i] != string(w.FinishReason) {
			t.Errorf("choice %d: streamed %q (%q), non-streamed %q (%q)", i, got.text[i], got.finish[i], w.Text, w.FinishReason)
		}
	}
	if !got.interleaved {
		t.Error("the choices streamed one after another, not at once")
	}
}
