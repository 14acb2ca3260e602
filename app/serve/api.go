package serve

import (
	"bytes"
	"encoding/json"
)

// chatRequest is the body of POST /v1/chat/completions. Pointer fields
// distinguish "absent" from zero. The sampling fields (temperature, top_p,
// seed, penalties, logit_bias and llama-server's extras) are decoded
// separately into sample.Params (see samplingFrom).
type chatRequest struct {
	Model               string          `json:"model"`
	Messages            []chatMessage   `json:"messages"`
	Stream              bool            `json:"stream"`
	StreamOptions       *streamOptions  `json:"stream_options"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Stop                stopList        `json:"stop"`
	N                   *int            `json:"n"`
	Logprobs            bool            `json:"logprobs"`
	TopLogprobs         *int            `json:"top_logprobs"`
	User                string          `json:"user"`
	IgnoreEOS           bool            `json:"ignore_eos"` // llama-server's: generate past end-of-generation tokens
	Tools               []toolDef       `json:"tools"`
	ToolChoice          json.RawMessage `json:"tool_choice"`
	ResponseFormat      *responseFormat `json:"response_format"`
	Grammar             string          `json:"grammar"` // also read into sample.Params
	Speculative         *specRequest    `json:"speculative"`

	grammar string // the GBNF that response_format or tool_choice asks for
}

// responseFormat is OpenAI's response_format; llama-server also takes a
// schema beside json_object.
type responseFormat struct {
	Type       string `json:"type"`
	JSONSchema *struct {
		Name   string          `json:"name"`
		Schema json.RawMessage `json:"schema"`
		Strict bool            `json:"strict"`
	} `json:"json_schema"`
	Schema json.RawMessage `json:"schema"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// chatMessage accepts content as a string or as a list of parts, of which
// only text parts are supported.
type chatMessage struct {
	Role    string      `json:"role"`
	Content messageText `json:"content"`
	Name    string      `json:"name,omitempty"`
	// ToolCalls are an assistant message's earlier calls.
	ToolCalls []toolCall `json:"tool_calls,omitempty"`
}

// messageText is a message's content flattened to text; image or audio
// parts leave nonText set so that the request can be refused.
type messageText struct {
	Text    string
	nonText string // type of the first non-text part
}

func (m *messageText) UnmarshalJSON(b []byte) error {
	if isNull(b) {
		return nil
	}
	if err := json.Unmarshal(b, &m.Text); err == nil {
		return nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(b, &parts); err != nil {
		return &fieldError{"messages", "content must be a string or a list of content parts"}
	}
	for _, p := range parts {
		if p.Type != "text" && m.nonText == "" {
			m.nonText = p.Type
		}
		m.Text += p.Text
	}
	return nil
}

// stopList accepts "stop" as one string or a list of strings.
type stopList []string

func (s *stopList) UnmarshalJSON(b []byte) error {
	l, err := stringOrList(b)
	if err != nil {
		return &fieldError{"stop", "stop must be a string or a list of strings"}
	}
	*s = l
	return nil
}

// inputList is embeddings' input: one string or a list of strings.
type inputList []string

func (s *inputList) UnmarshalJSON(b []byte) error {
	l, err := stringOrList(b)
	if err != nil {
		return &fieldError{"input", "input must be a string or a list of strings"}
	}
	*s = l
	return nil
}

func stringOrList(b []byte) ([]string, error) {
	if isNull(b) {
		return nil, nil
	}
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		return []string{one}, nil
	}
	var many []string
	err := json.Unmarshal(b, &many)
	return many, err
}

func isNull(b []byte) bool { return bytes.Equal(bytes.TrimSpace(b), []byte("null")) }

// fieldError is a decoding error that knows which request field it is
// about (encoding/json does not say for errors from UnmarshalJSON).
type fieldError struct{ param, msg string }

func (e *fieldError) Error() string { return e.msg }

// completionRequest is the body of POST /v1/completions.
type completionRequest struct {
	Model         string         `json:"model"`
	Prompt        promptList     `json:"prompt"`
	Stream        bool           `json:"stream"`
	StreamOptions *streamOptions `json:"stream_options"`
	MaxTokens     *int           `json:"max_tokens"`
	Stop          stopList       `json:"stop"`
	N             *int           `json:"n"`
	Echo          bool           `json:"echo"`
	Logprobs      *int           `json:"logprobs"`
	Suffix        *string        `json:"suffix"`
	Speculative   *specRequest   `json:"speculative"`
	IgnoreEOS     bool           `json:"ignore_eos"`
	User          string         `json:"user"`
}

// promptList is a prompt given as a string, a list of strings, a list of
// token ids or a list of such lists; each entry is one prompt.
type promptList struct {
	texts  []string
	tokens [][]int32
}

func (p *promptList) UnmarshalJSON(b []byte) error {
	var one string
	var many []string
	var ids []int32
	var idss [][]int32
	switch {
	case isNull(b):
	case json.Unmarshal(b, &one) == nil:
		p.texts = []string{one}
	case json.Unmarshal(b, &many) == nil:
		p.texts = many
	case json.Unmarshal(b, &ids) == nil:
		p.tokens = [][]int32{ids}
	case json.Unmarshal(b, &idss) == nil:
		p.tokens = idss
	default:
		return &fieldError{"prompt", "prompt must be a string, a list of strings, a list of token ids or a list of such lists"}
	}
	return nil
}

func (p promptList) len() int { return len(p.texts) + len(p.tokens) }

// embeddingRequest is the body of POST /v1/embeddings.
type embeddingRequest struct {
	Model          string    `json:"model"`
	Input          inputList `json:"input"`
	EncodingFormat string    `json:"encoding_format"`
	Dimensions     *int      `json:"dimensions"`
}

// usage counts tokens as OpenAI does; cached prompt tokens are those the
// session's KV cache already held.
type usage struct {
	PromptTokens        int            `json:"prompt_tokens"`
	CompletionTokens    int            `json:"completion_tokens"`
	TotalTokens         int            `json:"total_tokens"`
	PromptTokensDetails *promptDetails `json:"prompt_tokens_details,omitempty"`
}

type promptDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

// tokenLogprob is one generated token's entry in a chat choice's
// logprobs.content.
type tokenLogprob struct {
	Token       string       `json:"token"`
	Logprob     float64      `json:"logprob"`
	Bytes       []int        `json:"bytes"`
	TopLogprobs []topLogprob `json:"top_logprobs"`
}

type topLogprob struct {
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
	Bytes   []int   `json:"bytes"`
}

type chatLogprobs struct {
	Content []tokenLogprob `json:"content"`
	Refusal []tokenLogprob `json:"refusal"`
}

type chatChoice struct {
	Index        int           `json:"index"`
	Message      *outMessage   `json:"message,omitempty"`
	Delta        *outMessage   `json:"delta,omitempty"`
	FinishReason *string       `json:"finish_reason"`
	Logprobs     *chatLogprobs `json:"logprobs"`
}

type outMessage struct {
	Role      string     `json:"role,omitempty"`
	Content   *string    `json:"content,omitempty"`
	ToolCalls []toolCall `json:"tool_calls,omitempty"`
	Refusal   *string    `json:"refusal,omitempty"`
}

type chatResponse struct {
	ID                string       `json:"id"`
	Object            string       `json:"object"`
	Created           int64        `json:"created"`
	Model             string       `json:"model"`
	SystemFingerprint string       `json:"system_fingerprint"`
	Choices           []chatChoice `json:"choices"`
	Usage             *usage       `json:"usage,omitempty"`
	Timings           *timings     `json:"timings,omitempty"`
}

// legacyLogprobs is /v1/completions' logprobs shape.
type legacyLogprobs struct {
	Tokens        []string             `json:"tokens"`
	TokenLogprobs []float64            `json:"token_logprobs"`
	TopLogprobs   []map[string]float64 `json:"top_logprobs"`
	TextOffset    []int                `json:"text_offset"`
}

type completionChoice struct {
	Index        int             `json:"index"`
	Text         string          `json:"text"`
	FinishReason *string         `json:"finish_reason"`
	Logprobs     *legacyLogprobs `json:"logprobs"`
}

// timings is llama-server's per-response report of the prompt's and the
// generation's speed, with the drafted and kept tokens when speculative
// decoding drafted. A response sums its choices; a stream sends each
// choice's own in the chunk that finishes it, as llama-server does.
type timings struct {
	PromptN             int     `json:"prompt_n"`
	PromptMS            float64 `json:"prompt_ms"`
	PromptPerTokenMS    float64 `json:"prompt_per_token_ms"`
	PromptPerSecond     float64 `json:"prompt_per_second"`
	PredictedN          int     `json:"predicted_n"`
	PredictedMS         float64 `json:"predicted_ms"`
	PredictedPerTokenMS float64 `json:"predicted_per_token_ms"`
	PredictedPerSecond  float64 `json:"predicted_per_second"`
	DraftN              int     `json:"draft_n,omitempty"`
	DraftNAccepted      int     `json:"draft_n_accepted,omitempty"`
}

type completionResponse struct {
	ID      string             `json:"id"`
	Object  string             `json:"object"`
	Created int64              `json:"created"`
	Model   string             `json:"model"`
	Choices []completionChoice `json:"choices"`
	Usage   *usage             `json:"usage,omitempty"`
	Timings *timings           `json:"timings,omitempty"`
}
