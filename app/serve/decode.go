package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"flowchat/engine/sample"
)

// Limits on request fields, as OpenAI sets them where it has the field.
const (
	maxStops       = 4
	maxN           = 16
	maxTopLogprobs = 20
	maxPrompts     = 64
)

// problems collects every bad field of a request so that one 400 names
// them all.
type problems []fieldError

func (p *problems) add(param, format string, args ...any) {
	*p = append(*p, fieldError{param, fmt.Sprintf(format, args...)})
}

// err is nil when there were none; otherwise a 400 whose param is the
// first bad field and whose message lists every one.
func (p problems) err() *apiError {
	if len(p) == 0 {
		return nil
	}
	msgs := make([]string, len(p))
	for i, f := range p {
		msgs[i] = f.msg
	}
	return badRequest(p[0].param, "%s", strings.Join(msgs, "; "))
}

// decodeJSON unmarshals body into v, turning decoding errors into 400s that
// name the field.
func decodeJSON(body []byte, v any) *apiError {
	err := json.Unmarshal(body, v)
	if err == nil {
		return nil
	}
	var fe *fieldError
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &fe):
		return badRequest(fe.param, "%s", fe.msg)
	case errors.As(err, &te):
		f := strings.TrimPrefix(te.Field, "Params.") // samplingBody's embedded struct
		return badRequest(f, "%s has the wrong type: got JSON %s, want %s", fieldName(f), te.Value, jsonKind(te.Type))
	case errors.As(err, &se):
		return badRequest("", "the body is not valid JSON: %v (at byte %d)", err, se.Offset)
	}
	return badRequest("", "the body is not valid JSON: %v", err)
}

// jsonKind names a Go type as the JSON a client should send.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a non-negative integer"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return t.String()
}

func fieldName(f string) string {
	if f == "" {
		return "the body"
	}
	return f
}

// samplingBody reads sample.Params from a request: the OpenAI fields and
// llama-server's extra sampler fields share their names with Params' JSON
// tags. Seed and logit_bias are shadowed because OpenAI's forms (signed
// seed, string token keys) differ from Params'.
type samplingBody struct {
	sample.Params
	Seed      *int64             `json:"seed"`
	LogitBias map[string]float64 `json:"logit_bias"`
}

// samplingFrom decodes body's sampling fields over llama-server's defaults
// (fields left out keep them) and validates them against a vocabulary of
// nVocab tokens.
func samplingFrom(body []byte, nVocab int, pr *problems) (sample.Params, *apiError) {
	sb := samplingBody{Params: sample.DefaultParams()}
	if e := decodeJSON(body, &sb); e != nil {
		return sb.Params, e
	}
	p := sb.Params
	if sb.Seed != nil {
		p.Seed = uint64(*sb.Seed)
	}
	p.LogitBias = logitBias(sb.LogitBias, nVocab, pr)
	if p.Temperature == 0 && p.Decoding == sample.DecodingSample {
		// OpenAI's temperature 0 means deterministic: take the argmax,
		// exactly as `flowchat run --greedy` does.
		p.Decoding = sample.DecodingGreedy
	}
	if err := p.Validate(); err != nil {
		for _, e := range splitJoined(err) {
			msg := strings.TrimPrefix(e.Error(), sample.ErrInvalidParams.Error()+": ")
			pr.add(paramOf(msg), "%s", msg)
		}
	}
	return p, nil
}

// logitBias converts OpenAI's {"token id": bias} with biases in
// [-100, 100]; -100 bans a token as OpenAI documents.
func logitBias(in map[string]float64, nVocab int, pr *problems) map[int32]float32 {
	if len(in) == 0 {
		return nil
	}
	out := make(map[int32]float32, len(in))
	for k, v := range in {
		id, err := strconv.ParseInt(k, 10, 32)
		switch {
		case err != nil || id < 0 || id >= int64(nVocab):
			pr.add("logit_bias", "logit_bias key %q is not a token id in [0, %d)", k, nVocab)
		case math.IsNaN(v) || v < -100 || v > 100:
			pr.add("logit_bias", "logit_bias[%s] = %g outside [-100, 100]", k, v)
		case v == -100:
			out[int32(id)] = float32(math.Inf(-1))
		default:
			out[int32(id)] = float32(v)
		}
	}
	return out
}

func splitJoined(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// paramOf takes the field name that sample's messages start with
// ("top_p = 2 outside (0, 1]").
func paramOf(msg string) string {
	name, _, _ := strings.Cut(msg, " ")
	return strings.TrimSuffix(name, ":")
}

// checkCommon validates the fields chat and completions share.
func checkCommon(pr *problems, n, maxTokens *int, stop []string) {
	if n != nil && (*n < 1 || *n > maxN) {
		pr.add("n", "n = %d outside [1, %d]", *n, maxN)
	}
	if maxTokens != nil && *maxTokens < 1 {
		pr.add("max_tokens", "max_tokens = %d must be at least 1", *maxTokens)
	}
	if len(stop) > maxStops {
		pr.add("stop", "stop has %d strings; at most %d are allowed", len(stop), maxStops)
	}
	for i, s := range stop {
		if s == "" {
			pr.add("stop", "stop[%d] is empty", i)
		}
	}
}

var chatRoles = map[string]bool{"system": true, "developer": true, "user": true, "assistant": true, "tool": true}

// checkChat validates a chat request beyond what decoding checked.
func checkChat(r *chatRequest, pr *problems) {
	maxTokens := r.MaxCompletionTokens
	if maxTokens == nil {
		maxTokens = r.MaxTokens
	}
	checkCommon(pr, r.N, maxTokens, r.Stop)
	if len(r.Messages) == 0 {
		pr.add("messages", "messages must have at least one message")
	}
	for i, m := range r.Messages {
		if !chatRoles[m.Role] {
			pr.add(fmt.Sprintf("messages[%d].role", i), "messages[%d].role = %q must be system, developer, user, assistant or tool", i, m.Role)
		}
		if m.Content.nonText != "" {
			pr.add(fmt.Sprintf("messages[%d].content", i), "messages[%d].content has a %q part; only text is supported", i, m.Content.nonText)
		}
	}
	if r.TopLogprobs != nil && (*r.TopLogprobs < 0 || *r.TopLogprobs > maxTopLogprobs) {
		pr.add("top_logprobs", "top_logprobs = %d outside [0, %d]", *r.TopLogprobs, maxTopLogprobs)
	}
	if r.TopLogprobs != nil && *r.TopLogprobs > 0 && !r.Logprobs {
		pr.add("top_logprobs", "top_logprobs needs logprobs: true")
	}
	checkTools(r, pr)
	constrainChat(r, pr)
}

// checkCompletion validates a completions request.
func checkCompletion(r *completionRequest, pr *problems) {
	checkCommon(pr, r.N, r.MaxTokens, r.Stop)
	if r.Prompt.len() == 0 {
		pr.add("prompt", "prompt is required")
	}
	if r.Prompt.len() > maxPrompts {
		pr.add("prompt", "prompt has %d entries; at most %d are allowed", r.Prompt.len(), maxPrompts)
	}
	if r.Logprobs != nil && (*r.Logprobs < 0 || *r.Logprobs > 5) {
		pr.add("logprobs", "logprobs = %d outside [0, 5]", *r.Logprobs)
	}
}

// decodeRequest decodes body into req, validates it with check and reads
// its sampling fields: one 400 names every bad field found.
func decodeRequest(body []byte, req any, check func(*problems), nVocab int) (sample.Params, *apiError) {
	if e := decodeJSON(body, req); e != nil {
		return sample.Params{}, e
	}
	var pr problems
	check(&pr)
	p, e := samplingFrom(body, nVocab, &pr)
	if e != nil {
		return p, e
	}
	return p, pr.err()
}
