package serve

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// apiError is an error in OpenAI's shape; SDKs read message, type, param
// and code from it.
type apiError struct {
	Status  int     `json:"-"`
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

func (e *apiError) Error() string { return e.Message }

// badRequest is a 400 naming the offending field (param may be "").
func badRequest(param, format string, args ...any) *apiError {
	e := &apiError{Status: http.StatusBadRequest, Message: fmt.Sprintf(format, args...), Type: "invalid_request_error"}
	if param != "" {
		e.Param = &param
	}
	return e
}

func withCode(e *apiError, code string) *apiError {
	e.Code = &code
	return e
}

func notFound(code, format string, args ...any) *apiError {
	return withCode(&apiError{Status: http.StatusNotFound, Message: fmt.Sprintf(format, args...), Type: "invalid_request_error"}, code)
}

func serverError(err error) *apiError {
	return &apiError{Status: http.StatusInternalServerError, Message: err.Error(), Type: "server_error"}
}

// writeError sends e as {"error": {...}}. A 503 carries Retry-After so
// that clients back off instead of hammering a full queue.
func writeError(w http.ResponseWriter, e *apiError) {
	if e.Status == http.StatusServiceUnavailable || e.Status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds))
	}
	writeJSON(w, e.Status, struct {
		Error *apiError `json:"error"`
	}{e})
}

// retryAfterSeconds is what a client is told to wait when the queue is full.
const retryAfterSeconds = 1

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
