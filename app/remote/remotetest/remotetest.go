// Package remotetest runs stand-ins for the inference servers package
// remote talks to, on loopback, for tests: vLLM's OpenAI-compatible
// server, llama.cpp's llama-server, Ollama, a generic OpenAI server and
// flowchat serve. Each answers the endpoints and shapes its published
// API documentation describes (vLLM's "OpenAI-Compatible Server" page,
// llama.cpp's tools/server/README.md, Ollama's docs/api.md), refuses
// request fields that server does not define (so a test sees a field sent
// to the wrong dialect), records every request body, and can be told to
// fail the ways real servers do.
package remotetest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"time"
)

// Kind is which server a Server stands in for.
type Kind string

// Kinds of stand-in.
const (
	VLLM     Kind = "vllm"
	LlamaCpp Kind = "llama.cpp"
	Ollama   Kind = "ollama"
	OpenAI   Kind = "openai"
	Flowchat Kind = "flowchat"
)

// Server is one stand-in. Set its fields before the first request.
type Server struct {
	*httptest.Server
	Kind   Kind
	Models []string // served model IDs
	// Reply is streamed one piece per event; Generate, when set, replaces
	// it, streaming what it produces for the request body.
	Reply    []string
	Generate func(body map[string]any, emit func(string))
	APIKey   string // when set, requests need "Authorization: Bearer APIKey"
	// RateLimit answers that many requests with 429 and Retry-After first.
	RateLimit  int
	RetryAfter string
	// CutAfter, when > 0, drops the connection after that many pieces.
	CutAfter int
	// Stall makes chat requests wait for the client to give up.
	Stall bool
	// Delay is the pause before each piece of Reply.
	Delay time.Duration
	// Logprobs makes chat streams carry top_logprobs when asked for.
	Logprobs bool

	mu       sync.Mutex
	requests []Request
}

// Request is a request the stand-in received.
type Request struct {
	Method, Path string
	Auth         string
	Body         map[string]any
}

// New starts a stand-in of kind k serving models (one default when none).
func New(k Kind, models ...string) *Server {
	if len(models) == 0 {
		models = []string{"test-model"}
	}
	s := &Server{Kind: k, Models: models, Reply: []string{"Hello", ", ", "world", "!"}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Requests returns what was received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// LastBody is the body of the last generation request (chat or
// completion), or nil.
func (s *Server) LastBody() map[string]any {
	rs := s.Requests()
	for i := len(rs) - 1; i >= 0; i-- {
		if rs[i].Method == http.MethodPost {
			return rs[i].Body
		}
	}
	return nil
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if r.Method == http.MethodPost {
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			s.fail(w, 400, "invalid JSON body: "+err.Error())
			return
		}
	}
	s.mu.Lock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Auth: r.Header.Get("Authorization"), Body: body})
	limited := s.RateLimit > 0
	if limited {
		s.RateLimit--
	}
	s.mu.Unlock()
	if s.APIKey != "" && r.Header.Get("Authorization") != "Bearer "+s.APIKey {
		s.fail(w, 401, "Invalid API Key")
		return
	}
	if limited {
		if s.RetryAfter != "" {
			w.Header().Set("Retry-After", s.RetryAfter)
		}
		s.fail(w, 429, "Too many requests")
		return
	}
	s.route(w, r, body)
}

func (s *Server) route(w http.ResponseWriter, r *http.Request, body map[string]any) {
	switch {
	case r.Method == "GET" && r.URL.Path == "/v1/models":
		s.models(w)
	case r.Method == "GET" && r.URL.Path == "/props" && s.Kind == LlamaCpp:
		writeJSON(w, 200, map[string]any{"default_generation_settings": map[string]any{"n_ctx": 4096,
			"params": map[string]any{"temperature": 0.8, "top_k": 40}}, "total_slots": 1,
			"model_path": s.Models[0], "chat_template": "", "build_info": "b4748-stand-in"})
	case r.Method == "GET" && r.URL.Path == "/version" && s.Kind == VLLM:
		writeJSON(w, 200, map[string]any{"version": "0.8.5"})
	case r.Method == "GET" && r.URL.Path == "/api/version" && s.Kind == Ollama:
		writeJSON(w, 200, map[string]any{"version": "0.6.2"})
	case r.Method == "POST" && r.URL.Path == "/api/chat" && s.Kind == Ollama:
		s.ollama(w, r, body, true)
	case r.Method == "POST" && r.URL.Path == "/api/generate" && s.Kind == Ollama:
		s.ollama(w, r, body, false)
	case r.Method == "POST" && r.URL.Path == "/v1/chat/completions":
		s.openAI(w, r, body, true)
	case r.Method == "POST" && r.URL.Path == "/v1/completions":
		s.openAI(w, r, body, false)
	default:
		// Go's and most servers' plain 404.
		http.NotFound(w, r)
	}
}

// owner is what /v1/models says in owned_by.
func (s *Server) owner() string {
	switch s.Kind {
	case VLLM:
		return "vllm"
	case LlamaCpp:
		return "llamacpp"
	case Ollama:
		return "library"
	case Flowchat:
		return "flowchat"
	}
	return "system"
}

func (s *Server) models(w http.ResponseWriter) {
	var data []map[string]any
	for _, id := range s.Models {
		m := map[string]any{"id": id, "object": "model", "created": 1700000000, "owned_by": s.owner()}
		if s.Kind == VLLM {
			m["root"], m["parent"], m["max_model_len"] = id, nil, 8192
		}
		data = append(data, m)
	}
	writeJSON(w, 200, map[string]any{"object": "list", "data": data})
}

// fail writes an error in the server's own shape.
func (s *Server) fail(w http.ResponseWriter, code int, msg string) {
	switch s.Kind {
	case Ollama:
		writeJSON(w, code, map[string]any{"error": msg})
	case VLLM:
		writeJSON(w, code, map[string]any{"object": "error", "message": msg, "type": http.StatusText(code), "code": code})
	default:
		writeJSON(w, code, map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "code": code}})
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// check refuses unknown fields and unknown models; it reports whether
// the request may go on.
func (s *Server) check(w http.ResponseWriter, body map[string]any, known []string) bool {
	for k := range body {
		if !slices.Contains(known, k) {
			s.fail(w, 400, fmt.Sprintf("%s does not take the field %q", s.Kind, k))
			return false
		}
	}
	if m, _ := body["model"].(string); !slices.Contains(s.Models, m) {
		switch s.Kind {
		case Ollama:
			s.fail(w, 404, fmt.Sprintf("model %q not found, try pulling it first", m))
		case VLLM:
			s.fail(w, 404, fmt.Sprintf("The model `%s` does not exist.", m))
		default:
			s.fail(w, 404, fmt.Sprintf("The model `%s` does not exist", m))
		}
		return false
	}
	return true
}

// pieces produces the reply, honouring Stall.
func (s *Server) pieces(r *http.Request, body map[string]any, emit func(string) bool) {
	if s.Stall {
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
		return
	}
	if s.Generate != nil {
		stop := false
		s.Generate(body, func(p string) {
			if !stop {
				stop = !emit(p)
			}
		})
		return
	}
	for _, p := range s.Reply {
		select {
		case <-r.Context().Done():
			return
		case <-time.After(s.Delay):
		}
		if !emit(p) {
			return
		}
	}
}

// cut drops the connection without ending the response.
func cut(w http.ResponseWriter) {
	if h, ok := w.(http.Hijacker); ok {
		if c, _, err := h.Hijack(); err == nil {
			c.Close()
		}
	}
}

// Known request fields, per each server's documentation.
var (
	openAIFields = []string{"model", "messages", "prompt", "stream", "stream_options", "temperature", "top_p",
		"presence_penalty", "frequency_penalty", "seed", "max_tokens", "max_completion_tokens", "logit_bias",
		"logprobs", "top_logprobs", "stop", "n", "user"}
	vllmExtra  = []string{"top_k", "min_p", "repetition_penalty", "length_penalty", "min_tokens", "ignore_eos", "stop_token_ids", "skip_special_tokens"}
	llamaExtra = []string{"top_k", "min_p", "typical_p", "min_keep", "mirostat", "mirostat_tau", "mirostat_eta",
		"repeat_penalty", "repeat_last_n", "dry_multiplier", "dry_base", "dry_allowed_length", "dry_penalty_last_n",
		"dry_sequence_breakers", "xtc_probability", "xtc_threshold", "samplers", "n_probs", "n_predict", "cache_prompt", "ignore_eos"}
	flowchatExtra = append(slices.Clone(llamaExtra), "tfs_z", "decoding", "fsd_alpha", "fsd_k", "fsd_n", "fsd_beta", "fsd_random_steps")
	ollamaFields  = []string{"model", "messages", "prompt", "raw", "stream", "options", "format", "keep_alive", "tools", "think", "logprobs", "top_logprobs", "system", "template"}
	// OllamaOptions are the "options" keys of Ollama's docs/api.md
	// example and modelfile.md.
	OllamaOptions = []string{"num_keep", "seed", "num_predict", "top_k", "top_p", "min_p", "typical_p",
		"repeat_last_n", "temperature", "repeat_penalty", "presence_penalty", "frequency_penalty", "mirostat",
		"mirostat_tau", "mirostat_eta", "penalize_newline", "stop", "numa", "num_ctx", "num_batch", "num_gpu",
		"main_gpu", "use_mmap", "num_thread"}
)

func (s *Server) known() []string {
	switch s.Kind {
	case VLLM:
		return append(slices.Clone(openAIFields), vllmExtra...)
	case LlamaCpp:
		return append(slices.Clone(openAIFields), llamaExtra...)
	case Flowchat:
		return append(slices.Clone(openAIFields), flowchatExtra...)
	}
	return openAIFields
}

// openAI streams a chat.completion.chunk (or text_completion) event
// stream, as vLLM and llama-server send it: a first chunk with the role,
// one per piece, one with finish_reason, a usage chunk when
// stream_options.include_usage is set, then [DONE].
func (s *Server) openAI(w http.ResponseWriter, r *http.Request, body map[string]any, isChat bool) {
	if !s.check(w, body, s.known()) {
		return
	}
	if stream, _ := body["stream"].(bool); !stream {
		s.fail(w, 400, "the stand-in only streams")
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	fl := w.(http.Flusher)
	event := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		fl.Flush()
	}
	choice := func(text string, finish any) map[string]any {
		if isChat {
			return map[string]any{"index": 0, "delta": map[string]any{"content": text}, "logprobs": nil, "finish_reason": finish}
		}
		return map[string]any{"index": 0, "text": text, "logprobs": nil, "finish_reason": finish}
	}
	object := map[bool]string{true: "chat.completion.chunk", false: "text_completion"}[isChat]
	frame := func(c map[string]any) map[string]any {
		return map[string]any{"id": "cmpl-1", "object": object, "created": 1700000000, "model": body["model"], "choices": []any{c}}
	}
	if isChat {
		event(frame(map[string]any{"index": 0, "delta": map[string]any{"role": "assistant", "content": ""}, "finish_reason": nil}))
	}
	n := 0
	top, _ := body["top_logprobs"].(float64)
	s.pieces(r, body, func(p string) bool {
		if s.CutAfter > 0 && n == s.CutAfter {
			cut(w)
			return false
		}
		c := choice(p, nil)
		if s.Logprobs && isChat && top > 0 {
			c["logprobs"] = map[string]any{"content": []any{tokenLogprobs(p, int(top))}}
		}
		event(frame(c))
		n++
		return true
	})
	if s.CutAfter > 0 && n >= s.CutAfter || r.Context().Err() != nil {
		return
	}
	event(frame(choice("", "stop")))
	if so, _ := body["stream_options"].(map[string]any); so["include_usage"] == true {
		event(map[string]any{"id": "cmpl-1", "object": object, "model": body["model"], "choices": []any{},
			"usage": map[string]any{"prompt_tokens": 7, "completion_tokens": n, "total_tokens": 7 + n}})
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	fl.Flush()
}

// tokenLogprobs is OpenAI's logprobs entry for a token: the token, then
// its alternatives.
func tokenLogprobs(tok string, top int) map[string]any {
	alts := []any{map[string]any{"token": tok, "logprob": -0.1, "bytes": []byte(tok)}}
	for i := 1; i < top; i++ {
		alt := strings.Repeat("~", i)
		alts = append(alts, map[string]any{"token": alt, "logprob": -2.0 - float64(i), "bytes": []byte(alt)})
	}
	return map[string]any{"token": tok, "logprob": -0.1, "bytes": []byte(tok), "top_logprobs": alts}
}

// ollama streams Ollama's native JSON lines: one object per piece with
// "done": false, then a last with done_reason and the counts.
func (s *Server) ollama(w http.ResponseWriter, r *http.Request, body map[string]any, isChat bool) {
	if !s.check(w, body, ollamaFields) {
		return
	}
	opts, _ := body["options"].(map[string]any)
	for k := range opts {
		if !slices.Contains(OllamaOptions, k) {
			s.fail(w, 400, fmt.Sprintf("unknown option %q", k))
			return
		}
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	fl := w.(http.Flusher)
	line := func(text string, done bool) map[string]any {
		l := map[string]any{"model": body["model"], "created_at": "2025-01-01T00:00:00Z", "done": done}
		if isChat {
			l["message"] = map[string]any{"role": "assistant", "content": text}
		} else {
			l["response"] = text
		}
		return l
	}
	enc := json.NewEncoder(w)
	n := 0
	s.pieces(r, body, func(p string) bool {
		if s.CutAfter > 0 && n == s.CutAfter {
			cut(w)
			return false
		}
		enc.Encode(line(p, false))
		fl.Flush()
		n++
		return true
	})
	if s.CutAfter > 0 && n >= s.CutAfter || r.Context().Err() != nil {
		return
	}
	last := line("", true)
	last["done_reason"], last["prompt_eval_count"], last["eval_count"] = "stop", 7, n
	last["total_duration"], last["eval_duration"] = 1000000, 500000
	enc.Encode(last)
	fl.Flush()
}
