package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"flowchat/engine/grammar"
)

// validator compiles schema with santhosh-tekuri/jsonschema, a validator
// independent of engine/grammar.
func validator(t *testing.T, schema string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("schema.json")
	if err != nil {
		t.Fatalf("%s: %v", schema, err)
	}
	return sch
}

func validate(sch *jsonschema.Schema, text string) error {
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		return fmt.Errorf("not JSON: %v", err)
	}
	return sch.Validate(inst)
}

// TestSDKJSONSchema: the official client asks for json_schema output and
// gets JSON the schema accepts, sampled at temperature 1, several seeds.
func TestSDKJSONSchema(t *testing.T) {
	ts, _ := newTestServer(t, model(t), 2, Config{})
	c := client(ts, "")
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"name": map[string]any{"type": "string", "minLength": 1, "maxLength": 8},
			"age":  map[string]any{"type": "integer"},
			"pets": map[string]any{"type": "array", "items": map[string]any{"enum": []any{"cat", "dog"}}, "maxItems": 2},
		},
		"required":             []string{"name", "age", "pets"},
		"additionalProperties": false,
	}
	raw, _ := json.Marshal(schema)
	sch := validator(t, string(raw))
	for seed := range int64(4) {
		resp, err := c.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
			Model: "stories", Messages: userMsg("Tell me about a girl."), Temperature: openai.Float(1), Seed: openai.Int(seed), MaxTokens: openai.Int(150),
			ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
				JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "person", Schema: schema, Strict: openai.Bool(true)}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		text := resp.Choices[0].Message.Content
		if err := validate(sch, text); err != nil || resp.Choices[0].FinishReason != "stop" {
			t.Errorf("seed %d: %q (finish %s) does not validate: %v", seed, text, resp.Choices[0].FinishReason, err)
		}
	}
}

// TestGrammarField: llama-server's grammar field constrains chat and
// completions alike.
func TestGrammarField(t *testing.T) {
	ts, _ := newTestServer(t, model(t), 1, Config{})
	for _, path := range []string{"/v1/chat/completions", "/v1/completions"} {
		body := `{"messages":[{"role":"user","content":"Once"}],"prompt":"Once","temperature":1,"seed":3,"max_tokens":40,` +
			`"grammar":"root ::= (\"yes\" | \"no\") \" \" [0-9]{2}"}`
		resp, e := post(t, ts.URL+path, body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %+v", path, resp.StatusCode, e)
		}
		var out struct {
			Choices []struct {
				Text    string                   `json:"text"`
				Message struct{ Content string } `json:"message"`
			} `json:"choices"`
		}
		json.Unmarshal(e.raw, &out)
		text := out.Choices[0].Text + out.Choices[0].Message.Content
		if len(text) != 5 || !(strings.HasPrefix(text, "yes ") || strings.HasPrefix(text, "no ")) {
			t.Errorf("%s: %q does not follow the grammar", path, text)
		}
	}
}

// TestToolChoiceGrammar: "required" and a named tool_choice become a
// grammar of one call whose arguments follow the tool's parameters.
func TestToolChoiceGrammar(t *testing.T) {
	body := `{"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"$ref":"#/$defs/city"}},"required":["city"],"$defs":{"city":{"type":"string","maxLength":10}}}}},` +
		`{"type":"function","function":{"name":"now"}}],"tool_choice":%s}`
	for _, tc := range []struct {
		choice      string
		good, wrong []string
	}{
		{`"required"`, []string{`{"name":"get_weather","arguments":{"city":"Oslo"}}`, `{"name": "now", "arguments": {}}`},
			[]string{`{"name":"other","arguments":{}}`, `{"name":"get_weather","arguments":{}}`, `Sure!`}},
		{`{"type":"function","function":{"name":"now"}}`, []string{`{"name":"now","arguments":{"x":1}}`},
			[]string{`{"name":"get_weather","arguments":{"city":"Oslo"}}`}},
	} {
		var r chatRequest
		if err := json.Unmarshal([]byte(fmt.Sprintf(body, tc.choice)), &r); err != nil {
			t.Fatal(err)
		}
		var pr problems
		checkTools(&r, &pr)
		constrainChat(&r, &pr)
		if len(pr) > 0 {
			t.Fatalf("%s: %v", tc.choice, pr)
		}
		g, err := grammar.Parse(r.grammar)
		if err != nil {
			t.Fatal(err)
		}
		m := g.NewMatcher()
		for _, s := range tc.good {
			if st, ok := m.Advance(m.Start(), []byte(s)); !ok || !st.Complete() {
				t.Errorf("%s: %s refused", tc.choice, s)
			}
			if calls, _ := parseToolCalls(s, r.Tools); len(calls) != 1 {
				t.Errorf("%s: %s is not parsed as a call", tc.choice, s)
			}
		}
		for _, s := range tc.wrong {
			if st, ok := m.Advance(m.Start(), []byte(s)); ok && st.Complete() {
				t.Errorf("%s: %s accepted", tc.choice, s)
			}
		}
	}
}

// TestRandomSchemas is the check: 200 random JSON Schemas (nested
// objects, arrays, enums, required fields, numbers, strings with length
// limits) each yield JSON that an independent validator accepts, sampled
// from the demo model at temperature 1. Sizes are bounded so that every
// output fits the demo model's context.
func TestRandomSchemas(t *testing.T) {
	if testing.Short() {
		t.Skip("200 generations")
	}
	ts, _ := newTestServer(t, model(t), 4, Config{})
	rng := rand.New(rand.NewPCG(13, 0))
	const n = 200
	schemas := make([]string, n)
	for i := range schemas {
		schemas[i] = randomSchema(rng)
	}
	start := time.Now()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i, schema := range schemas {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			sch := validator(t, schema)
			body := fmt.Sprintf(`{"messages":[{"role":"user","content":"JSON"}],"temperature":1,"seed":%d,"max_tokens":400,`+
				`"response_format":{"type":"json_schema","json_schema":{"name":"s","schema":%s}}}`, i, schema)
			resp, err := http.Post(ts.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 200 {
				t.Errorf("schema %d %s: %d %s", i, schema, resp.StatusCode, raw)
				return
			}
			var out chatResponse
			json.Unmarshal(raw, &out)
			text, finish := *out.Choices[0].Message.Content, *out.Choices[0].FinishReason
			if i < 3 {
				t.Logf("schema %d %s\n→ %s", i, schema, text)
			}
			if err := validate(sch, text); err != nil || finish != "stop" {
				t.Errorf("schema %d %s:\n%q (finish %s): %v", i, schema, text, finish, err)
			}
		}()
	}
	wg.Wait()
	t.Logf("%d schemas in %v", n, time.Since(start))
}

// randomSchema draws a schema of bounded output size.
func randomSchema(rng *rand.Rand) string {
	defs := `"$defs":{"tag":{"type":"string","minLength":1,"maxLength":4}}`
	s := randomNode(rng, 0)
	return s[:len(s)-1] + "," + defs + "}"
}

func randomNode(rng *rand.Rand, depth int) string {
	kinds := []string{"string", "integer", "number", "boolean", "null", "enum", "ref", "anyOf"}
	if depth < 2 {
		kinds = append(kinds, "object", "object", "array")
	}
	if depth == 0 {
		kinds = []string{"object", "array"}
	}
	switch k := kinds[rng.IntN(len(kinds))]; k {
	case "string":
		lo := rng.IntN(3)
		return fmt.Sprintf(`{"type":"string","minLength":%d,"maxLength":%d}`, lo, lo+rng.IntN(6))
	case "enum":
		return `{"enum":["red","green",7,null]}`
	case "ref":
		return `{"$ref":"#/$defs/tag"}`
	case "anyOf":
		return `{"anyOf":[{"type":"integer"},{"type":"string","maxLength":3},{"type":"null"}]}`
	case "object":
		names := []string{"id", "name", "kind", "size", "tags"}
		rng.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
		props, req := []string{}, []string{}
		for _, name := range names[:1+rng.IntN(3)] {
			props = append(props, fmt.Sprintf(`%q:%s`, name, randomNode(rng, depth+1)))
			if rng.IntN(2) == 0 {
				req = append(req, fmt.Sprintf("%q", name))
			}
		}
		return fmt.Sprintf(`{"type":"object","properties":{%s},"required":[%s],"additionalProperties":false}`, strings.Join(props, ","), strings.Join(req, ","))
	case "array":
		lo := rng.IntN(2)
		return fmt.Sprintf(`{"type":"array","items":%s,"minItems":%d,"maxItems":%d}`, randomNode(rng, depth+1), lo, lo+rng.IntN(3))
	default:
		return fmt.Sprintf(`{"type":%q}`, k)
	}
}
