package serve

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

var prompts = []string{"Once upon a time", "Lily and Tom", "The cat sat", "One day, a little boy"}

func TestSDKModels(t *testing.T) {
	ts, _ := newTestServer(t, model(t), 1, Config{})
	c := client(ts, "")
	page, err := c.Models.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 1 || page.Data[0].ID != "stories" {
		t.Fatalf("models = %+v, want one entry \"stories\"", page.Data)
	}
	m, err := c.Models.Get(context.Background(), "stories")
	if err != nil || m.ID != "stories" {
		t.Fatalf("Get = %+v, %v", m, err)
	}
}

// TestSDKChatGreedyMatchesEngine runs the prompts one at a time and then
// all at once: interleaved sessions must not change a single token.
func TestSDKChatGreedyMatchesEngine(t *testing.T) {
	m := model(t)
	const maxTokens = 40
	refs := make([]reference, len(prompts))
	for i, p := range prompts {
		refs[i] = generateRef(t, m, chatTokens(t, m, p), maxTokens, false)
	}
	ts, _ := newTestServer(t, m, 4, Config{})
	c := client(ts, "")
	check := func(i int) error {
		resp, err := c.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
			Model: "stories", Messages: userMsg(prompts[i]), Temperature: openai.Float(0), MaxTokens: openai.Int(maxTokens)})
		if err != nil {
			return err
		}
		got, ref := resp.Choices[0], refs[i]
		if got.Message.Content != ref.text {
			return fmt.Errorf("prompt %q: server %q, engine %q", prompts[i], got.Message.Content, ref.text)
		}
		if int(resp.Usage.CompletionTokens) != ref.stats.GenTokens || int(resp.Usage.PromptTokens) != ref.stats.PromptTokens {
			return fmt.Errorf("prompt %q: usage %+v, engine %+v", prompts[i], resp.Usage, ref.stats)
		}
		if want := finishReason(ref.stats.StopReason, false); got.FinishReason != want {
			return fmt.Errorf("prompt %q: finish %q, want %q", prompts[i], got.FinishReason, want)
		}
		return nil
	}
	for i := range prompts {
		if err := check(i); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, 16) // 16 requests in flight on 4 slots
	for k := range errs {
		wg.Go(func() { errs[k] = check(k % len(prompts)) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

func TestSDKStreamEqualsNonStream(t *testing.T) {
	m := model(t)
	ts, _ := newTestServer(t, m, 2, Config{})
	c := client(ts, "")
	for _, p := range prompts {
		params := openai.ChatCompletionNewParams{Model: "stories", Messages: userMsg(p), Temperature: openai.Float(0), MaxTokens: openai.Int(48)}
		whole, err := c.Chat.Completions.New(context.Background(), params)
		if err != nil {
			t.Fatal(err)
		}
		params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
		stream := c.Chat.Completions.NewStreaming(context.Background(), params)
		var acc openai.ChatCompletionAccumulator
		chunks := 0
		for stream.Next() {
			acc.AddChunk(stream.Current())
			chunks++
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		if got, want := acc.Choices[0].Message.Content, whole.Choices[0].Message.Content; got != want {
			t.Errorf("%q: stream %q, non-stream %q", p, got, want)
		}
		if acc.Choices[0].FinishReason != whole.Choices[0].FinishReason {
			t.Errorf("%q: stream finish %q, non-stream %q", p, acc.Choices[0].FinishReason, whole.Choices[0].FinishReason)
		}
		if acc.Usage.CompletionTokens != whole.Usage.CompletionTokens || acc.Usage.CompletionTokens == 0 {
			t.Errorf("%q: stream usage %+v, non-stream %+v", p, acc.Usage, whole.Usage)
		}
		if chunks < 3 {
			t.Errorf("%q: %d chunks; a 48-token answer should stream in pieces", p, chunks)
		}
	}
}

// TestSDKStopAcrossChunks puts a stop string across a token boundary of
// the greedy output: the answer must end right before it, with no part of
// it ever streamed; a stop string that only starts in the output must not
// lose the text held back for it.
func TestSDKStopAcrossChunks(t *testing.T) {
	m := model(t)
	prompt := prompts[0]
	ref := generateRef(t, m, chatTokens(t, m, prompt), 60, false)
	k := boundary(ref.pieces)
	if k < 0 {
		t.Fatalf("no two neighbouring pieces of 2+ bytes in %q", ref.pieces)
	}
	left, right := ref.pieces[k-1], ref.pieces[k]
	before := strings.Join(ref.pieces[:k-1], "") + left[:len(left)-2]
	stop := left[len(left)-2:] + right[:2]
	if strings.Contains(before, stop) {
		t.Fatalf("stop %q occurs earlier in %q", stop, ref.text)
	}
	ts, _ := newTestServer(t, m, 1, Config{})
	c := client(ts, "")
	cases := []struct {
		stops     []string
		want, fin string
	}{
		{[]string{stop}, before, "stop"},
		{[]string{"@@@", stop}, before, "stop"},
		{[]string{stop + "\x00never"}, ref.text, finishReason(ref.stats.StopReason, false)},
	}
	for _, tc := range cases {
		params := openai.ChatCompletionNewParams{Model: "stories", Messages: userMsg(prompt), Temperature: openai.Float(0),
			MaxTokens: openai.Int(60), Stop: openai.ChatCompletionNewParamsStopUnion{OfStringArray: tc.stops}}
		stream := c.Chat.Completions.NewStreaming(context.Background(), params)
		var got strings.Builder
		fin := ""
		for stream.Next() {
			for _, ch := range stream.Current().Choices {
				got.WriteString(ch.Delta.Content)
				if ch.FinishReason != "" {
					fin = ch.FinishReason
				}
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		if got.String() != tc.want || fin != tc.fin {
			t.Errorf("stop %q: streamed %q (finish %q), want %q (finish %q)", tc.stops, got.String(), fin, tc.want, tc.fin)
		}
		whole, err := c.Chat.Completions.New(context.Background(), params)
		if err != nil {
			t.Fatal(err)
		}
		if whole.Choices[0].Message.Content != tc.want {
			t.Errorf("stop %q: non-stream %q, want %q", tc.stops, whole.Choices[0].Message.Content, tc.want)
		}
	}
}

// boundary finds k from the middle on such that pieces k-1 and k both
// have at least two bytes, or -1.
func boundary(pieces []string) int {
	for k := len(pieces) / 2; k < len(pieces); k++ {
		if len(pieces[k-1]) >= 2 && len(pieces[k]) >= 2 {
			return k
		}
	}
	return -1
}

// TestSDKLogprobs checks the first token's logprobs against a softmax of
// the engine's own logits for the prompt.
func TestSDKLogprobs(t *testing.T) {
	m := model(t)
	ids := chatTokens(t, m, prompts[1])
	all, err := m.Logits(ids)
	if err != nil {
		t.Fatal(err)
	}
	last := all[(len(ids)-1)*m.Net.NVocab:]
	ts, _ := newTestServer(t, m, 1, Config{})
	c := client(ts, "")
	resp, err := c.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "stories",
		Messages: userMsg(prompts[1]), Temperature: openai.Float(0), MaxTokens: openai.Int(5), Logprobs: openai.Bool(true), TopLogprobs: openai.Int(3)})
	if err != nil {
		t.Fatal(err)
	}
	lps := resp.Choices[0].Logprobs.Content
	if len(lps) != int(resp.Usage.CompletionTokens) {
		t.Fatalf("%d logprobs for %d tokens", len(lps), resp.Usage.CompletionTokens)
	}
	first := lps[0]
	if len(first.TopLogprobs) != 3 || first.TopLogprobs[0].Token != first.Token {
		t.Fatalf("greedy token %q is not the top alternative of %+v", first.Token, first.TopLogprobs)
	}
	want := logSoftmax(last)
	for _, alt := range first.TopLogprobs {
		id := m.Tok.Encode(alt.Token, false, false)
		if len(id) == 1 && math.Abs(alt.Logprob-want[id[0]]) > 1e-4 {
			t.Errorf("token %q: logprob %g, softmax of the engine's logits %g", alt.Token, alt.Logprob, want[id[0]])
		}
	}
	for i := 1; i < len(first.TopLogprobs); i++ {
		if first.TopLogprobs[i].Logprob > first.TopLogprobs[i-1].Logprob {
			t.Errorf("top_logprobs not sorted: %+v", first.TopLogprobs)
		}
	}
}

func logSoftmax(x []float32) []float64 {
	maxV := math.Inf(-1)
	for _, v := range x {
		maxV = math.Max(maxV, float64(v))
	}
	var sum float64
	for _, v := range x {
		sum += math.Exp(float64(v) - maxV)
	}
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v) - maxV - math.Log(sum)
	}
	return out
}

func TestSDKCompletions(t *testing.T) {
	m := model(t)
	texts := []string{"Once upon a time", "Lily"}
	// The text of a completion is what the generated tokens add to the
	// decoded prompt.
	want := make([]string, len(texts))
	for i, p := range texts {
		ids := m.Tok.Encode(p, true, true)
		ref := generateRef(t, m, ids, 12, false)
		prompt, all := m.Tok.Decode(ids), m.Tok.Decode(append(ids, ref.ids...))
		if !strings.HasPrefix(all, prompt) {
			t.Fatalf("decoded prompt %q is not a prefix of %q", prompt, all)
		}
		want[i] = all[len(prompt):]
	}
	ts, _ := newTestServer(t, m, 2, Config{})
	c := client(ts, "")
	resp, err := c.Completions.New(context.Background(), openai.CompletionNewParams{Model: "stories",
		Prompt: openai.CompletionNewParamsPromptUnion{OfArrayOfStrings: texts}, Temperature: openai.Float(0),
		MaxTokens: openai.Int(12), Echo: openai.Bool(true), N: openai.Int(2)})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Choices) != 4 {
		t.Fatalf("%d choices, want 2 prompts × n 2", len(resp.Choices))
	}
	for _, ch := range resp.Choices {
		p := int(ch.Index) / 2
		if want := texts[p] + want[p]; ch.Text != want {
			t.Errorf("choice %d: %q, want echo + engine output %q", ch.Index, ch.Text, want)
		}
	}
}

func TestSDKAuth(t *testing.T) {
	ts, _ := newTestServer(t, model(t), 1, Config{APIKey: "s3cret"})
	wrong, right := client(ts, "wrong"), client(ts, "s3cret")
	_, err := wrong.Models.List(context.Background())
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 401 || apiErr.Code != "invalid_api_key" {
		t.Fatalf("wrong key: %v, want a 401 invalid_api_key", err)
	}
	if _, err := right.Models.List(context.Background()); err != nil {
		t.Fatalf("right key: %v", err)
	}
	noKey := openai.NewClient(option.WithBaseURL(ts.URL+"/v1"), option.WithMaxRetries(0), option.WithHeaderDel("Authorization"))
	if _, err := noKey.Models.List(context.Background()); !errors.As(err, &apiErr) || apiErr.StatusCode != 401 {
		t.Fatalf("no key: %v, want 401", err)
	}
}

// TestSDKSamplingFieldsReachTheEngine: a seed reproduces a sampled
// answer, and logit_bias -100 bans the token greedy decoding would pick
// first.
func TestSDKSamplingFieldsReachTheEngine(t *testing.T) {
	m := model(t)
	ts, _ := newTestServer(t, m, 2, Config{})
	c := client(ts, "")
	ask := func(p openai.ChatCompletionNewParams) openai.ChatCompletionChoice {
		t.Helper()
		p.Model, p.Messages, p.MaxTokens = "stories", userMsg(prompts[0]), openai.Int(30)
		resp, err := c.Chat.Completions.New(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Choices[0]
	}
	sampled := openai.ChatCompletionNewParams{Temperature: openai.Float(1.5), TopP: openai.Float(1), Seed: openai.Int(42)}
	if a, b := ask(sampled).Message.Content, ask(sampled).Message.Content; a != b {
		t.Errorf("seed 42 gave %q and then %q", a, b)
	}
	ref := generateRef(t, m, chatTokens(t, m, prompts[0]), 30, false)
	first := ref.ids[0]
	firstTok := string(m.Tok.Piece(first))
	if greedy := ask(openai.ChatCompletionNewParams{Temperature: openai.Float(0), Logprobs: openai.Bool(true)}); greedy.Logprobs.Content[0].Token != firstTok {
		t.Fatalf("greedy first token %q, engine %q", greedy.Logprobs.Content[0].Token, firstTok)
	}
	banned := ask(openai.ChatCompletionNewParams{Temperature: openai.Float(0), Logprobs: openai.Bool(true),
		LogitBias: map[string]int64{fmt.Sprint(first): -100}})
	if got := banned.Logprobs.Content[0].Token; got == firstTok {
		t.Errorf("logit_bias -100 on %q (id %d): it was still chosen", firstTok, first)
	}
}

// TestSDKCachedPromptTokens: asking again reuses the prompt from the
// scheduler's prefix cache (its whole blocks of 16 positions, short of the
// last token, which is re-evaluated for its logits) and says so in usage.
func TestSDKCachedPromptTokens(t *testing.T) {
	ts, _ := newTestServer(t, model(t), 1, Config{})
	c := client(ts, "")
	long := strings.Repeat(prompts[2]+" ", 4)
	params := openai.ChatCompletionNewParams{Model: "stories", Messages: userMsg(long), Temperature: openai.Float(0), MaxTokens: openai.Int(4)}
	first, err := c.Chat.Completions.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	second, err := c.Chat.Completions.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	if got := first.Usage.PromptTokensDetails.CachedTokens; got != 0 {
		t.Errorf("first request: %d cached tokens on a fresh slot", got)
	}
	if got, want := second.Usage.PromptTokensDetails.CachedTokens, (second.Usage.PromptTokens-1)/16*16; got != want || want == 0 {
		t.Errorf("second request: %d cached tokens, want %d", got, want)
	}
}

// TestSDKChoicesRunTogether: n choices (the later ones run at once, batched,
// and find the prompt in the prefix cache) are each the answer a single
// request with that choice's seed gets.
func TestSDKChoicesRunTogether(t *testing.T) {
	ts, _ := newTestServer(t, model(t), 4, Config{})
	c := client(ts, "")
	long := strings.Repeat(prompts[1]+" ", 3)
	params := openai.ChatCompletionNewParams{Model: "stories", Messages: userMsg(long), Temperature: openai.Float(0.9),
		Seed: openai.Int(7), MaxTokens: openai.Int(16), N: openai.Int(3)}
	all, err := c.Chat.Completions.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Choices) != 3 {
		t.Fatalf("%d choices", len(all.Choices))
	}
	for i, ch := range all.Choices {
		one := params
		one.N, one.Seed = openai.Int(1), openai.Int(int64(7+i))
		single, err := c.Chat.Completions.New(context.Background(), one)
		if err != nil {
			t.Fatal(err)
		}
		if ch.Index != int64(i) || ch.Message.Content != single.Choices[0].Message.Content {
			t.Errorf("choice %d (index %d): %q; alone with seed %d: %q", i, ch.Index, ch.Message.Content, 7+i, single.Choices[0].Message.Content)
		}
	}
}
