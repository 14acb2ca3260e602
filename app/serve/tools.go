package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"flowchat/engine/chat"
)

// Tool calling: the request's tools are handed to the model's own chat
// template (the "tools" variable, as Hugging Face templates expect), and
// the model's answer is searched for calls in the common formats.
// tool_choice "required" or a named function is enforced by a grammar
// (structured.go): the answer is then one call as a bare JSON object,
// {"name": …, "arguments": {…}}, whose arguments follow the tool's
// parameters schema.

// toolCall is one call in a response's message.tool_calls.
type toolCall struct {
	Index    *int     `json:"index,omitempty"` // streaming deltas only
	ID       string   `json:"id"`
	Type     string   `json:"type"`
	Function toolFunc `json:"function"`
}

type toolFunc struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"` // a JSON object, as a string
}

// checkTools validates tools and tool_choice.
func checkTools(r *chatRequest, pr *problems) {
	for i, t := range r.Tools {
		if t.Type != "function" || t.Function.Name == "" {
			pr.add(fmt.Sprintf("tools[%d]", i), "tools[%d] must be {\"type\":\"function\",\"function\":{\"name\":…}}", i)
		}
	}
	switch c := r.toolChoice(); c {
	case "", "auto", "none":
	case "required":
		if len(r.Tools) == 0 {
			pr.add("tool_choice", "tool_choice \"required\" needs tools")
		}
	default:
		if _, ok := r.namedTool(); !ok {
			pr.add("tool_choice", "tool_choice %s must be \"auto\", \"none\", \"required\" or {\"type\":\"function\",\"function\":{\"name\":…}} naming one of the tools", c)
		}
	}
}

// namedTool is the tool a tool_choice object names, when it names one of
// the request's tools.
func (r *chatRequest) namedTool() (toolDef, bool) {
	var choice struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if json.Unmarshal(r.ToolChoice, &choice) != nil || choice.Type != "function" {
		return toolDef{}, false
	}
	for _, t := range r.Tools {
		if t.Function.Name == choice.Function.Name {
			return t, true
		}
	}
	return toolDef{}, false
}

// toolChoice is tool_choice as a plain string, or the raw JSON of an
// object choice.
func (r *chatRequest) toolChoice() string {
	if len(r.ToolChoice) == 0 || isNull(r.ToolChoice) {
		return ""
	}
	var s string
	if json.Unmarshal(r.ToolChoice, &s) == nil {
		return s
	}
	return string(r.ToolChoice)
}

// useTools reports whether the tools go to the template and the answer is
// parsed for calls.
func (r *chatRequest) useTools() bool { return len(r.Tools) > 0 && r.toolChoice() != "none" }

// toolVar is the template's "tools" variable: the tool list as sent,
// objects keeping their key order.
func toolVar(tools []toolDef) []json.RawMessage {
	out := make([]json.RawMessage, len(tools))
	for i, t := range tools {
		out[i] = t.raw
	}
	return out
}

// assistantText renders an assistant message's earlier tool calls as the
// Hermes <tool_call> blocks that Qwen-style templates would have written,
// since engine/chat.Message carries text only.
func assistantText(m chatMessage) string {
	var b strings.Builder
	b.WriteString(m.Content.Text)
	for _, c := range m.ToolCalls {
		args := strings.TrimSpace(c.Function.Arguments)
		if args == "" {
			args = "{}"
		}
		fmt.Fprintf(&b, "\n<tool_call>\n{\"name\": %q, \"arguments\": %s}\n</tool_call>", c.Function.Name, args)
	}
	return b.String()
}

var (
	hermesCall = regexp.MustCompile(`(?s)<tool_call>\s*(\{.*?\})\s*</tool_call>`)
	mistralTag = "[TOOL_CALLS]"
)

// parsedCall is a call as models write it: arguments (Hermes, Mistral) or
// parameters (Llama 3.x).
type parsedCall struct {
	Name       string          `json:"name"`
	Arguments  json.RawMessage `json:"arguments"`
	Parameters json.RawMessage `json:"parameters"`
}

// parseToolCalls finds calls in text in the Hermes/Qwen, Mistral or
// Llama 3.x JSON formats and returns them with the text outside them;
// names must be among the request's tools.
func parseToolCalls(text string, tools []toolDef) (calls []toolCall, rest string) {
	known := map[string]bool{}
	for _, t := range tools {
		known[t.Function.Name] = true
	}
	var found []parsedCall
	switch {
	case hermesCall.MatchString(text):
		for _, m := range hermesCall.FindAllStringSubmatch(text, -1) {
			found = appendCall(found, m[1])
		}
		rest = hermesCall.ReplaceAllString(text, "")
	case strings.Contains(text, mistralTag):
		before, after, _ := strings.Cut(text, mistralTag)
		json.Unmarshal([]byte(strings.TrimSpace(after)), &found)
		rest = before
	default:
		found = appendCall(found, strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(text), "<|python_tag|>")))
	}
	for _, f := range found {
		if !known[f.Name] {
			return nil, text // not a call to one of ours: leave the text alone
		}
		calls = append(calls, toolCall{ID: newID("call_"), Type: "function", Function: toolFunc{Name: f.Name, Arguments: argsOf(f)}})
	}
	if len(calls) == 0 {
		return nil, text
	}
	return calls, strings.TrimSpace(rest)
}

func appendCall(found []parsedCall, s string) []parsedCall {
	var c parsedCall
	if json.Unmarshal([]byte(s), &c) == nil && c.Name != "" {
		found = append(found, c)
	}
	return found
}

// argsOf gives the arguments as the JSON-object string OpenAI sends.
func argsOf(c parsedCall) string {
	a := c.Arguments
	if len(a) == 0 {
		a = c.Parameters
	}
	var s string
	if json.Unmarshal(a, &s) == nil {
		return s // already a string, as some models write it
	}
	var buf bytes.Buffer
	if len(a) == 0 || json.Compact(&buf, a) != nil {
		return "{}"
	}
	return buf.String()
}

// renderWithTools renders msgs with the template's "tools" variable set.
// A model without a template cannot be told about tools.
func (s *Server) renderWithTools(msgs []chat.Message, tools []toolDef) (string, *apiError) {
	m := s.cfg.Model
	if m.Template == nil {
		return "", badRequest("tools", "this model has no chat template, so it cannot be given tools")
	}
	opt := chat.Options{AddGenerationPrompt: true, Extra: map[string]any{"tools": toolVar(tools)}}
	if id := m.Tok.BOS(); id >= 0 {
		opt.BOS = m.Tok.Token(id)
	}
	if id := m.Tok.EOS(); id >= 0 {
		opt.EOS = m.Tok.Token(id)
	}
	text, err := m.Template.Render(msgs, opt)
	if err != nil {
		return "", badRequest("tools", "the model's chat template cannot render these tools: %v", err)
	}
	return text, nil
}

// toolDef is one entry of the request's tools, with its raw JSON kept for
// the template.
type toolDef struct {
	Type     string `json:"type"`
	Function struct {
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
	} `json:"function"`
	raw json.RawMessage
}

func (t *toolDef) UnmarshalJSON(b []byte) error {
	type plain toolDef
	if err := json.Unmarshal(b, (*plain)(t)); err != nil {
		return &fieldError{"tools", "each tool must be an object {\"type\":\"function\",\"function\":{…}}"}
	}
	t.raw = append(json.RawMessage(nil), b...)
	return nil
}
