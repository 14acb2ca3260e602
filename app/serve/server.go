// Package serve is flowchat's OpenAI-compatible HTTP server: /v1/models,
// /v1/chat/completions, /v1/completions and /v1/embeddings, plus /health
// and Prometheus /metrics. Generation goes through the small Backend
// interface so that the scheduler behind it can change without touching
// the handlers.
package serve

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"strings"
	"time"

	"flowchat/engine"
)

// DefaultMaxBody is the request body limit when Config.MaxBodyBytes is 0:
// far above any prompt that fits a local model's context, far below what
// would hurt the machine.
const DefaultMaxBody = 8 << 20

// Config is what a Server serves and how.
type Config struct {
	Model   *engine.Model // tokenizer, chat template, vocabulary size
	Backend Backend       // runs generations and embeddings
	ModelID string        // the id clients name in "model"
	// APIKey, when set, must come as "Authorization: Bearer KEY" on every
	// route but /health.
	APIKey       string
	MaxBodyBytes int64  // 0 = DefaultMaxBody
	CORSOrigin   string // Access-Control-Allow-Origin; "" = no CORS headers
	Log          *log.Logger
	// EndTexts end a generation like the model's end-of-text token and are
	// never sent (models such as TinyStories spell "<|end_story|>" out of
	// ordinary pieces); ignore_eos turns them off with the token itself.
	EndTexts []string
}

// Server handles the HTTP API. Its methods are safe for concurrent use.
type Server struct {
	cfg     Config
	mux     *http.ServeMux
	metrics *metrics
	created int64 // /v1/models' "created": when the server started
}

// New makes a server over cfg.
func New(cfg Config) *Server {
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBody
	}
	if cfg.Log == nil {
		cfg.Log = log.New(io.Discard, "", 0)
	}
	s := &Server{cfg: cfg, mux: http.NewServeMux(), metrics: newMetrics(), created: time.Now().Unix()}
	s.routes()
	return s
}

func (s *Server) routes() {
	s.handle("GET", "/health", s.health)
	s.handle("GET", "/metrics", s.serveMetrics)
	s.handle("GET", "/v1/models", s.models)
	s.handle("GET", "/v1/models/{id}", s.model)
	s.handle("POST", "/v1/chat/completions", s.chat)
	s.handle("POST", "/v1/completions", s.completions)
	s.handle("POST", "/v1/embeddings", s.embeddings)
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, notFound("unknown_url", "unknown route: %s %s", r.Method, r.URL.Path))
	})
}

// handle registers h for path; other methods get a JSON 405 rather than
// the mux's plain-text one.
func (s *Server) handle(method, path string, h http.HandlerFunc) {
	s.mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		if r.Method != method {
			w.Header().Set("Allow", method)
			writeError(w, &apiError{Status: http.StatusMethodNotAllowed, Type: "invalid_request_error",
				Message: fmt.Sprintf("%s %s is not allowed; use %s", r.Method, r.URL.Path, method)})
			return
		}
		h(w, r)
	})
}

// ServeHTTP applies, in order: panic recovery, metrics, CORS, auth.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	defer s.metrics.request(r, rec)
	defer s.recoverPanic(rec)
	if s.cors(rec, r) {
		return
	}
	if r.URL.Path != "/health" && !s.authorized(r) {
		writeError(rec, withCode(&apiError{Status: http.StatusUnauthorized, Type: "invalid_request_error",
			Message: "missing or incorrect API key: send it as \"Authorization: Bearer KEY\""}, "invalid_api_key"))
		return
	}
	s.mux.ServeHTTP(rec, r)
}

// recoverPanic turns a bug into a 500 for that request instead of taking
// down every stream in flight.
func (s *Server) recoverPanic(w *statusRecorder) {
	if v := recover(); v != nil {
		if v == http.ErrAbortHandler {
			panic(v)
		}
		s.cfg.Log.Printf("panic serving a request: %v", v)
		if !w.wrote {
			writeError(w, serverError(fmt.Errorf("internal error")))
		}
	}
}

// authorized compares keys in constant time so that response timing does
// not reveal how much of a guess was right.
func (s *Server) authorized(r *http.Request) bool {
	if s.cfg.APIKey == "" {
		return true
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(got), []byte(s.cfg.APIKey)) == 1
}

// cors sets the CORS headers for the configured origin and answers
// preflight requests; it reports whether the request was answered.
func (s *Server) cors(w http.ResponseWriter, r *http.Request) bool {
	if s.cfg.CORSOrigin == "" {
		return false
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", s.cfg.CORSOrigin)
	h.Set("Vary", "Origin")
	if r.Method != http.MethodOptions {
		return false
	}
	h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
	h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type")
	w.WriteHeader(http.StatusNoContent)
	return true
}

// readBody reads at most MaxBodyBytes; a larger body is a 413.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, *apiError) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return nil, &apiError{Status: http.StatusRequestEntityTooLarge, Type: "invalid_request_error",
			Message: fmt.Sprintf("the body is larger than the server's limit of %d bytes", tooBig.Limit)}
	case err != nil:
		return nil, badRequest("", "reading the body: %v", err)
	}
	return b, nil
}

// checkModel accepts the served model's id, or none (many local clients
// leave it empty); anything else is a 404 as at OpenAI.
func (s *Server) checkModel(id string) *apiError {
	if id == "" || id == s.cfg.ModelID {
		return nil
	}
	return notFound("model_not_found", "the model %q does not exist; this server serves %q", id, s.cfg.ModelID)
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

type modelEntry struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

func (s *Server) entry() modelEntry {
	return modelEntry{ID: s.cfg.ModelID, Object: "model", Created: s.created, OwnedBy: "flowchat"}
}

func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []modelEntry{s.entry()}})
}

func (s *Server) model(w http.ResponseWriter, r *http.Request) {
	if e := s.checkModel(r.PathValue("id")); e != nil {
		writeError(w, e)
		return
	}
	writeJSON(w, http.StatusOK, s.entry())
}

// statusRecorder remembers the status for metrics and whether anything
// was written; it passes Flush through for SSE.
type statusRecorder struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (r *statusRecorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	r.wrote = true
	return r.ResponseWriter.Write(b)
}

func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
