package remote

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"flowchat/engine/sample"
)

// Message is one chat turn.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Request is one reply to stream: to Messages through the chat
// endpoint, or, when Messages is nil, a continuation of Prompt through
// the text completions endpoint (/v1/completions; Ollama's /api/generate
// in raw mode), with no chat template.
type Request struct {
	Model     string
	Messages  []Message
	Prompt    string
	Sampling  sample.Params
	MaxTokens int // 0 = the server's default
	// IgnoreEOS keeps generating past end-of-generation tokens (vLLM,
	// llama-server and flowchat take it; Dropped says when it is lost).
	IgnoreEOS bool
	// TopLogprobs asks for that many alternatives per token (OpenAI allows
	// up to 20); 0 asks for none.
	TopLogprobs int
}

// Logprob is a token and its log-probability.
type Logprob struct {
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
}

// TokenLogprobs is one generated token with the alternatives the server
// reported, most probable first.
type TokenLogprobs struct {
	Logprob
	Top []Logprob `json:"top_logprobs"`
}

// Piece is one streamed part of a reply.
type Piece struct {
	Text     string
	Logprobs []TokenLogprobs // the tokens of Text, when the server sent them
}

// Result is a whole reply, or as much of it as arrived.
type Result struct {
	Text string
	// FinishReason is the server's: "stop", "length", …; "" when the
	// stream broke off or was cancelled.
	FinishReason string
	PromptTokens int // from the server's usage report; 0 when it sent none
	GenTokens    int
	// Logprobs reports whether any token came with top_logprobs.
	Logprobs bool
	// Dropped are the parameters in use the dialect could not honour.
	Dropped []Unsupported
	Dialect Dialect
	// TimeToFirst runs from the request to the first piece; Total to the
	// end.
	TimeToFirst, Total time.Duration
}

// Chat streams a reply to req, calling onPiece with each piece from the
// calling goroutine. On failure it returns the partial reply in Result
// with the error; cancelling ctx returns what arrived and ctx's error.
func (c *Client) Chat(ctx context.Context, req Request, onPiece func(Piece)) (Result, error) {
	d, err := c.Detect(ctx)
	if err != nil {
		return Result{}, err
	}
	res := Result{Dialect: d, Dropped: Dropped(d, req.Sampling)}
	if req.IgnoreEOS && (d == Generic || d == Ollama) {
		res.Dropped = append(res.Dropped, Unsupported{Param: "ignore_eos", Reason: string(d) + " servers have no ignore_eos"})
	}
	t0 := time.Now()
	path, body := requestBody(d, req)
	r, err := c.do(ctx, http.MethodPost, path, body)
	if err != nil {
		return res, err
	}
	defer r.Close()
	if ct := r.Header.Get("Content-Type"); strings.HasPrefix(ct, "text/html") {
		return res, &Error{Kind: ErrNotOpenAI, Host: c.Host(), Status: r.StatusCode, Detail: path + " answered a web page"}
	}
	emit := func(p Piece) {
		if res.Text == "" && p.Text != "" {
			res.TimeToFirst = time.Since(t0)
		}
		res.Text += p.Text
		res.Logprobs = res.Logprobs || len(p.Logprobs) > 0
		onPiece(p)
	}
	if d == Ollama {
		err = readOllama(ctx, r.body, &res, emit)
	} else {
		err = readSSE(ctx, r.body, &res, emit)
	}
	res.Total = time.Since(t0)
	return res, c.streamError(ctx, r, err)
}

// streamError turns a failure while reading the stream into an Error;
// the caller's cancellation is returned as is.
func (c *Client) streamError(ctx context.Context, r *response, err error) error {
	var e *Error
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.As(err, &e):
		e.Host = c.Host()
		return e
	case errors.Is(err, errNoEnd):
		return &Error{Kind: ErrDisconnected, Host: c.Host(), Detail: "the stream ended without a finish reason"}
	}
	return transportError(c.Host(), err, r.cause())
}

// errNoEnd is a stream that ended cleanly but without its last event.
var errNoEnd = errors.New("stream ended early")

// requestBody is the endpoint and JSON body for req in dialect d.
func requestBody(d Dialect, req Request) (string, map[string]any) {
	switch {
	case d == Ollama && req.Messages == nil:
		b := ollamaBody(req)
		delete(b, "messages")
		b["prompt"], b["raw"] = req.Prompt, true
		return "/api/generate", b
	case d == Ollama:
		return "/api/chat", ollamaBody(req)
	case req.Messages == nil:
		b := chatBody(d, req)
		delete(b, "messages")
		delete(b, "logprobs")
		delete(b, "top_logprobs")
		b["prompt"] = req.Prompt
		return "/v1/completions", b
	}
	return "/v1/chat/completions", chatBody(d, req)
}

func chatBody(d Dialect, req Request) map[string]any {
	f := openAIFields(req.Sampling, req.MaxTokens)
	switch d {
	case VLLM:
		vllmFields(f, req.Sampling)
	case LlamaCpp:
		llamaFields(f, req.Sampling)
	case Flowchat:
		flowchatFields(f, req.Sampling)
	}
	if req.IgnoreEOS && d != Generic {
		f["ignore_eos"] = true
	}
	f["model"] = req.Model
	f["messages"] = req.Messages
	f["stream"] = true
	f["stream_options"] = map[string]any{"include_usage": true}
	if req.TopLogprobs > 0 {
		f["logprobs"] = true
		f["top_logprobs"] = req.TopLogprobs
	}
	return f
}

func ollamaBody(req Request) map[string]any {
	b := map[string]any{"model": req.Model, "messages": req.Messages, "stream": true,
		"options": ollamaOptions(req.Sampling, req.MaxTokens)}
	if req.TopLogprobs > 0 {
		b["logprobs"] = true
		b["top_logprobs"] = req.TopLogprobs
	}
	return b
}

// chunk is one chat.completion.chunk event.
type chunk struct {
	Choices []struct {
		Delta struct {
			Content string `json:"content"`
		} `json:"delta"`
		Text     string `json:"text"` // text completions' chunks
		Logprobs *struct {
			Content []TokenLogprobs `json:"content"`
		} `json:"logprobs"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// readSSE reads a chat completions event stream: "data: {chunk}" events
// until "data: [DONE]". A stream that stops before a finish reason has
// broken off.
func readSSE(ctx context.Context, body io.Reader, res *Result, emit func(Piece)) error {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() && ctx.Err() == nil {
		line := sc.Text()
		data, ok := strings.CutPrefix(line, "data:")
		if !ok {
			if errData, isErr := strings.CutPrefix(line, "error:"); isErr {
				return streamFailure([]byte(errData))
			}
			continue // comments, event names, blank separators
		}
		data = strings.TrimSpace(data)
		if data == "[DONE]" {
			if res.FinishReason == "" {
				res.FinishReason = "stop"
			}
			return nil
		}
		if err := res.addChunk([]byte(data), emit); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return finished(res)
}

func finished(res *Result) error {
	if res.FinishReason == "" {
		return errNoEnd
	}
	return nil
}

func (res *Result) addChunk(data []byte, emit func(Piece)) error {
	var ch chunk
	if err := json.Unmarshal(data, &ch); err != nil {
		return &Error{Kind: ErrNotOpenAI, Detail: "an event of the stream is not JSON: " + clip(string(data))}
	}
	if len(ch.Error) > 0 && string(ch.Error) != "null" {
		return streamFailure(data)
	}
	if ch.Usage != nil {
		res.PromptTokens, res.GenTokens = ch.Usage.PromptTokens, ch.Usage.CompletionTokens
	}
	for _, c := range ch.Choices[:min(len(ch.Choices), 1)] {
		p := Piece{Text: c.Delta.Content + c.Text}
		if c.Logprobs != nil {
			p.Logprobs = c.Logprobs.Content
		}
		if p.Text != "" || len(p.Logprobs) > 0 {
			emit(p)
		}
		if c.FinishReason != nil && *c.FinishReason != "" {
			res.FinishReason = *c.FinishReason
		}
	}
	return nil
}

// streamFailure is an error event in the middle of a stream.
func streamFailure(data []byte) error {
	msg, _ := serverMessage(data)
	return &Error{Kind: ErrServer, Detail: "in the middle of the reply: " + msg}
}

// ollamaLine is one line of Ollama's /api/chat stream.
type ollamaLine struct {
	Message struct {
		Content string `json:"content"`
	} `json:"message"`
	Response        string          `json:"response"` // /api/generate's text
	Done            bool            `json:"done"`
	DoneReason      string          `json:"done_reason"`
	PromptEvalCount int             `json:"prompt_eval_count"`
	EvalCount       int             `json:"eval_count"`
	Logprobs        []TokenLogprobs `json:"logprobs"`
	Error           string          `json:"error"`
}

// readOllama reads Ollama's native stream: one JSON object a line, the
// last with "done": true.
func readOllama(ctx context.Context, body io.Reader, res *Result, emit func(Piece)) error {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() && ctx.Err() == nil {
		if len(strings.TrimSpace(sc.Text())) == 0 {
			continue
		}
		var l ollamaLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return &Error{Kind: ErrNotOpenAI, Detail: "a line of the stream is not JSON: " + clip(sc.Text())}
		}
		if l.Error != "" {
			return &Error{Kind: ErrServer, Detail: "in the middle of the reply: " + l.Error}
		}
		if text := l.Message.Content + l.Response; text != "" || len(l.Logprobs) > 0 {
			emit(Piece{Text: text, Logprobs: l.Logprobs})
		}
		if l.Done {
			res.FinishReason = l.DoneReason
			if res.FinishReason == "" {
				res.FinishReason = "stop"
			}
			res.PromptTokens, res.GenTokens = l.PromptEvalCount, l.EvalCount
			return nil
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return errNoEnd
}
