package serve

import (
	"encoding/json"
	"fmt"

	"flowchat/engine/grammar"
)

// Structured output: response_format (json_object, json_schema),
// llama-server's grammar field, and tool_choice "required" or a named
// function all become a GBNF grammar in sample.Params.Grammar, which the
// sampler's grammar stage enforces token by token. At most one of them
// may constrain a request.

// constrainChat sets r.grammar from response_format or tool_choice.
func constrainChat(r *chatRequest, pr *problems) {
	var param, src string
	var err error
	if f := r.ResponseFormat; f != nil && f.Type != "" && f.Type != "text" {
		param = "response_format"
		if src, err = formatGrammar(f); err != nil {
			pr.add(param, "response_format: %v", err)
			return
		}
	}
	if c := r.toolChoice(); c == "required" || (c != "" && c != "auto" && c != "none") {
		if param != "" {
			pr.add("tool_choice", "tool_choice %s cannot be combined with response_format", c)
			return
		}
		param = "tool_choice"
		if src, err = toolGrammar(r); err != nil {
			pr.add("tools", "tools: %v", err)
			return
		}
	}
	if param == "" {
		return
	}
	if r.Grammar != "" {
		pr.add("grammar", "grammar cannot be combined with %s", param)
		return
	}
	if _, err := grammar.Parse(src); err != nil {
		pr.add(param, "%s: the grammar made from it does not parse: %v", param, err)
		return
	}
	r.grammar = src
}

// formatGrammar is the grammar of a response_format.
func formatGrammar(f *responseFormat) (string, error) {
	switch f.Type {
	case "json_object":
		if len(f.Schema) > 0 {
			return grammar.FromJSONSchema(f.Schema)
		}
		return grammar.JSONObject, nil
	case "json_schema":
		if f.JSONSchema == nil || len(f.JSONSchema.Schema) == 0 || isNull(f.JSONSchema.Schema) {
			return "", fmt.Errorf("json_schema.schema is required")
		}
		return grammar.FromJSONSchema(f.JSONSchema.Schema)
	}
	return "", fmt.Errorf("type %q must be text, json_object or json_schema", f.Type)
}

// toolGrammar allows one call, as a bare JSON object, of the named tool or
// (for "required") of any of them. Each tool's $defs/definitions are
// lifted to the top of the combined schema, where its local $refs point.
func toolGrammar(r *chatRequest) (string, error) {
	tools := r.Tools
	if t, ok := r.namedTool(); ok {
		tools = []toolDef{t}
	}
	var alts []any
	defs := map[string]json.RawMessage{}
	definitions := map[string]json.RawMessage{}
	for _, t := range tools {
		params := t.Function.Parameters
		if len(params) == 0 || isNull(params) {
			params = json.RawMessage(`{"type":"object"}`)
		}
		var lifted struct {
			Defs        map[string]json.RawMessage `json:"$defs"`
			Definitions map[string]json.RawMessage `json:"definitions"`
		}
		json.Unmarshal(params, &lifted)
		for k, v := range lifted.Defs {
			defs[k] = v
		}
		for k, v := range lifted.Definitions {
			definitions[k] = v
		}
		alts = append(alts, map[string]any{
			"type":       "object",
			"properties": orderedObject{{"name", map[string]any{"const": t.Function.Name}}, {"arguments", params}},
			"required":   []string{"name", "arguments"},
		})
	}
	schema, err := json.Marshal(map[string]any{"anyOf": alts, "$defs": defs, "definitions": definitions})
	if err != nil {
		return "", err
	}
	return grammar.FromJSONSchema(schema)
}

// orderedObject marshals as a JSON object with its keys in order.
type orderedObject []struct {
	k string
	v any
}

func (o orderedObject) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, kv := range o {
		if i > 0 {
			b = append(b, ',')
		}
		k, _ := json.Marshal(kv.k)
		v, err := json.Marshal(kv.v)
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, k...), ':'), v...)
	}
	return append(b, '}'), nil
}
