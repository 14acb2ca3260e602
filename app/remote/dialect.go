package remote

import (
	"context"
	"fmt"
	"strings"
)

// Dialect is a server's flavour of the OpenAI API: which extra sampling
// fields it takes and which endpoints it has.
type Dialect string

// Dialects.
const (
	Generic  Dialect = "openai"    // the standard fields only
	VLLM     Dialect = "vllm"      // vLLM (its extra parameters)
	LlamaCpp Dialect = "llama.cpp" // llama.cpp's llama-server
	Ollama   Dialect = "ollama"    // Ollama, through its native /api/chat
	Flowchat Dialect = "flowchat"  // flowchat serve: every flowchat parameter
)

// Dialects lists them for choosers; "" (detect) is not among them.
var Dialects = []Dialect{Generic, VLLM, LlamaCpp, Ollama, Flowchat}

// ParseDialect accepts a dialect's name and a few aliases; "" and "auto"
// mean detect.
func ParseDialect(s string) (Dialect, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "auto":
		return "", nil
	case "openai", "generic":
		return Generic, nil
	case "vllm":
		return VLLM, nil
	case "llama.cpp", "llamacpp", "llama-server", "llama-cpp":
		return LlamaCpp, nil
	case "ollama":
		return Ollama, nil
	case "flowchat":
		return Flowchat, nil
	}
	return "", fmt.Errorf("unknown server dialect %q: want auto, openai, vllm, llama.cpp, ollama or flowchat", s)
}

// Model is one entry of /v1/models.
type Model struct {
	ID      string `json:"id"`
	OwnedBy string `json:"owned_by"`
	// MaxModelLen is vLLM's context length; 0 when the server does not say.
	MaxModelLen int `json:"max_model_len"`
}

// Models lists the models the server offers.
func (c *Client) Models(ctx context.Context) ([]Model, error) {
	var v struct {
		Object string  `json:"object"`
		Data   []Model `json:"data"`
	}
	if err := c.getJSON(ctx, "/v1/models", &v); err != nil {
		return nil, err
	}
	if v.Data == nil {
		return nil, &Error{Kind: ErrNotOpenAI, Host: c.Host(), Detail: "/v1/models has no \"data\" list"}
	}
	return v.Data, nil
}

// ownerDialects are the owned_by values servers put in /v1/models.
var ownerDialects = map[string]Dialect{"vllm": VLLM, "llamacpp": LlamaCpp, "flowchat": Flowchat}

// Detect finds the server's dialect from its answers: /v1/models' owned_by
// (vLLM says "vllm", llama-server "llamacpp", flowchat "flowchat"), then
// llama-server's /props, then Ollama's /api/version; a server that
// answers none of them is Generic. A dialect set by hand is kept.
func (c *Client) Detect(ctx context.Context) (Dialect, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.Dialect != "" {
		return c.Dialect, nil
	}
	models, err := c.Models(ctx)
	if err != nil {
		return "", err
	}
	d := c.probe(ctx, models)
	c.Dialect = d
	return d, nil
}

func (c *Client) probe(ctx context.Context, models []Model) Dialect {
	for _, m := range models {
		if d, ok := ownerDialects[strings.ToLower(m.OwnedBy)]; ok {
			return d
		}
	}
	var props struct {
		Default map[string]any `json:"default_generation_settings"`
	}
	if c.getJSON(ctx, "/props", &props) == nil && props.Default != nil {
		return LlamaCpp
	}
	var ver struct {
		Version string `json:"version"`
	}
	if c.getJSON(ctx, "/api/version", &ver) == nil && ver.Version != "" {
		return Ollama
	}
	return Generic
}

// CheckModel returns ErrUnknownModel, with the models on offer, when the
// server does not list name. Servers that serve one model whatever the
// request names (llama-server) list it too, so the check is safe.
func (c *Client) CheckModel(ctx context.Context, name string) error {
	models, err := c.Models(ctx)
	if err != nil {
		return err
	}
	ids := make([]string, len(models))
	for i, m := range models {
		if m.ID == name {
			return nil
		}
		ids[i] = m.ID
	}
	return &Error{Kind: ErrUnknownModel, Host: c.Host(),
		Detail: fmt.Sprintf("%q is not among %s", name, strings.Join(ids, ", "))}
}
