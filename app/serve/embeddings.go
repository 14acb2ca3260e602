package serve

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"math"
	"net/http"

	"flowchat/engine"
)

type embeddingData struct {
	Object    string `json:"object"`
	Index     int    `json:"index"`
	Embedding any    `json:"embedding"` // []float32 or a base64 string
}

func (s *Server) embeddings(w http.ResponseWriter, r *http.Request) {
	body, e := s.readBody(w, r)
	if e != nil {
		writeError(w, e)
		return
	}
	var req embeddingRequest
	if e := s.checkEmbedding(body, &req); e != nil {
		writeError(w, e)
		return
	}
	resp := struct {
		Object string          `json:"object"`
		Data   []embeddingData `json:"data"`
		Model  string          `json:"model"`
		Usage  usage           `json:"usage"`
	}{Object: "list", Data: []embeddingData{}, Model: s.cfg.ModelID}
	for i, text := range req.Input {
		v, n, err := s.cfg.Backend.Embed(r.Context(), text)
		if err != nil {
			writeError(w, embedError(err))
			return
		}
		resp.Data = append(resp.Data, embeddingData{Object: "embedding", Index: i, Embedding: encodeVector(normalize(v), req.EncodingFormat)})
		resp.Usage.PromptTokens += n
	}
	resp.Usage.TotalTokens = resp.Usage.PromptTokens
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) checkEmbedding(body []byte, req *embeddingRequest) *apiError {
	if e := decodeJSON(body, req); e != nil {
		return e
	}
	var pr problems
	if len(req.Input) == 0 {
		pr.add("input", "input is required")
	}
	if len(req.Input) > maxPrompts {
		pr.add("input", "input has %d entries; at most %d are allowed", len(req.Input), maxPrompts)
	}
	for i, t := range req.Input {
		if t == "" {
			pr.add("input", "input[%d] is empty", i)
		}
	}
	if f := req.EncodingFormat; f != "" && f != "float" && f != "base64" {
		pr.add("encoding_format", "encoding_format = %q must be float or base64", f)
	}
	if req.Dimensions != nil {
		pr.add("dimensions", "dimensions is not supported: the model's embedding size is fixed")
	}
	if e := pr.err(); e != nil {
		return e
	}
	return s.checkModel(req.Model)
}

func embedError(err error) *apiError {
	if errors.Is(err, engine.ErrNotEncoder) {
		return badRequest("model", "%v", err)
	}
	if errors.Is(err, engine.ErrContextFull) {
		return withCode(badRequest("input", "%v", err), "context_length_exceeded")
	}
	return runError(err)
}

// normalize scales v to unit length, as OpenAI's embeddings are, so that
// a dot product is the cosine similarity.
func normalize(v []float32) []float32 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	if sum == 0 {
		return out
	}
	inv := 1 / math.Sqrt(sum)
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out
}

// encodeVector gives base64 as OpenAI does: little-endian float32s.
func encodeVector(v []float32, format string) any {
	if format != "base64" {
		return v
	}
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return base64.StdEncoding.EncodeToString(b)
}
