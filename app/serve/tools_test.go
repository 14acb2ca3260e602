package serve

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/openai/openai-go/v3"

	"flowchat/engine"
	"flowchat/engine/chat"
	"flowchat/engine/fixtures"
)

func TestParseToolCalls(t *testing.T) {
	tools := []toolDef{{Type: "function"}, {Type: "function"}}
	tools[0].Function.Name, tools[1].Function.Name = "get_weather", "add"
	cases := []struct {
		name, text string
		want       []toolFunc // nil: no calls, text kept
		rest       string
	}{
		{"hermes", "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
			[]toolFunc{{"get_weather", `{"city":"Paris"}`}}, ""},
		{"hermes two and text", "Sure.\n<tool_call>{\"name\":\"add\",\"arguments\":{\"a\":1}}</tool_call>\n<tool_call>{\"name\":\"add\",\"arguments\":{\"a\":2}}</tool_call>",
			[]toolFunc{{"add", `{"a":1}`}, {"add", `{"a":2}`}}, "Sure."},
		{"mistral", `[TOOL_CALLS][{"name": "add", "arguments": {"a": 1, "b": 2}}]`, []toolFunc{{"add", `{"a":1,"b":2}`}}, ""},
		{"llama3", `{"name": "get_weather", "parameters": {"city": "Oslo"}}`, []toolFunc{{"get_weather", `{"city":"Oslo"}`}}, ""},
		{"llama3 python tag", `<|python_tag|>{"name": "add", "parameters": {}}`, []toolFunc{{"add", `{}`}}, ""},
		{"string arguments", `<tool_call>{"name":"add","arguments":"{\"a\":3}"}</tool_call>`, []toolFunc{{"add", `{"a":3}`}}, ""},
		{"unknown tool", `<tool_call>{"name":"rm_rf","arguments":{}}</tool_call>`, nil, ""},
		{"plain text", "It is sunny in Paris.", nil, ""},
		{"broken json", `<tool_call>{"name": "add", "arguments": {</tool_call>`, nil, ""},
	}
	for _, tc := range cases {
		calls, rest := parseToolCalls(tc.text, tools)
		var got []toolFunc
		for _, c := range calls {
			got = append(got, c.Function)
			if c.Type != "function" || !strings.HasPrefix(c.ID, "call_") {
				t.Errorf("%s: call %+v lacks type or id", tc.name, c)
			}
		}
		if len(got) != len(tc.want) {
			t.Errorf("%s: calls %+v, want %+v", tc.name, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s: call %d = %+v, want %+v", tc.name, i, got[i], tc.want[i])
			}
		}
		wantRest := tc.rest
		if tc.want == nil {
			wantRest = tc.text
		}
		if rest != wantRest {
			t.Errorf("%s: rest %q, want %q", tc.name, rest, wantRest)
		}
	}
}

// scripted is a Backend that answers every generation with a fixed text
// and remembers the prompt it was given.
type scripted struct {
	text   string
	prompt []int32
}

func (s *scripted) Generate(ctx context.Context, p []int32, opt engine.GenerateOptions) (engine.Stats, error) {
	s.prompt = p
	opt.OnPiece(s.text)
	return engine.Stats{GenTokens: 1, StopReason: "eog"}, nil
}

func (s *scripted) Embed(context.Context, string) ([]float32, int, error) {
	return nil, 0, errors.New("no embeddings")
}

func (s *scripted) Load() Load { return Load{} }

// TestSDKToolCalls gives the demo model Qwen2.5's template (which renders
// tools) and a scripted answer, and checks both directions: the tools
// reach the prompt, the call comes back as tool_calls, streamed or not,
// and a follow-up turn renders the call and its result.
func TestSDKToolCalls(t *testing.T) {
	src, err := os.ReadFile(fixtures.Path(t, "chat_templates/templates/Qwen-Qwen2.5-7B-Instruct.jinja"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := engine.Load(fixtures.Path(t, storiesPath), engine.LoadOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.Template, err = chat.Parse(string(src)); err != nil {
		t.Fatal(err)
	}
	be := &scripted{text: "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"}
	ts, _ := newTestServer(t, m, 1, Config{Backend: be})
	c := client(ts, "")
	tool := openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{Name: "get_weather",
		Parameters: openai.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}})
	params := openai.ChatCompletionNewParams{Model: "stories", Messages: userMsg("Weather in Paris?"), Tools: []openai.ChatCompletionToolUnionParam{tool}}
	resp, err := c.Chat.Completions.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	if prompt := m.Tok.Decode(be.prompt); !strings.Contains(prompt, "<tools>") || !strings.Contains(prompt, `"get_weather"`) {
		t.Errorf("the tools are not in the rendered prompt:\n%s", prompt)
	}
	checkCall(t, resp.Choices[0].FinishReason, resp.Choices[0].Message.ToolCalls)

	stream := c.Chat.Completions.NewStreaming(context.Background(), params)
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	checkCall(t, acc.Choices[0].FinishReason, acc.Choices[0].Message.ToolCalls)

	params.Messages = append(params.Messages, resp.Choices[0].Message.ToParam(),
		openai.ToolMessage("18 degrees and sunny", resp.Choices[0].Message.ToolCalls[0].ID))
	if _, err := c.Chat.Completions.New(context.Background(), params); err != nil {
		t.Fatal(err)
	}
	prompt := m.Tok.Decode(be.prompt)
	if !strings.Contains(prompt, `{"name": "get_weather", "arguments": {"city":"Paris"}}`) || !strings.Contains(prompt, "18 degrees and sunny") {
		t.Errorf("the follow-up prompt lacks the call or its result:\n%s", prompt)
	}
}

func checkCall(t *testing.T, finish string, calls []openai.ChatCompletionMessageToolCallUnion) {
	t.Helper()
	if finish != "tool_calls" || len(calls) != 1 {
		t.Fatalf("finish %q, calls %+v; want one call", finish, calls)
	}
	var args map[string]string
	if calls[0].Function.Name != "get_weather" || json.Unmarshal([]byte(calls[0].Function.Arguments), &args) != nil || args["city"] != "Paris" {
		t.Errorf("call %+v, want get_weather{city: Paris}", calls[0].Function)
	}
}

// TestConcurrentTemplateRendering renders a real Jinja template (with
// tools) from several requests at once; run with -race.
func TestConcurrentTemplateRendering(t *testing.T) {
	src, err := os.ReadFile(fixtures.Path(t, "chat_templates/templates/Qwen-Qwen2.5-7B-Instruct.jinja"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := engine.Load(fixtures.Path(t, storiesPath), engine.LoadOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.Template, err = chat.Parse(string(src)); err != nil {
		t.Fatal(err)
	}
	// The tool prompt is ~400 tokens: use the model's whole context.
	ts, _ := newTestServer(t, m, 4, Config{Backend: NewModelBackend(m, 4, 512, 16)})
	body := `{"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"}],"max_tokens":4,"temperature":0,
		"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}]}`
	var wg sync.WaitGroup
	codes := make([]int, 8)
	for i := range codes {
		wg.Go(func() {
			resp, err := http.Post(ts.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
			if err == nil {
				codes[i] = resp.StatusCode
				if resp.StatusCode != 200 {
					b, _ := io.ReadAll(resp.Body)
					t.Logf("%s", b)
				}
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	for i, c := range codes {
		if c != 200 {
			t.Errorf("request %d: status %d", i, c)
		}
	}
}
