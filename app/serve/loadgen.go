package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// LoadSpec is a load to drive against any OpenAI-compatible server
// (flowchat serve, llama-server, vLLM): Clients streams at once, each
// sending greedy /v1/completions requests of MaxTokens tokens, end of
// generation ignored, until Requests have been sent in all.
type LoadSpec struct {
	URL       string // the server's base URL, without /v1
	Model     string
	APIKey    string
	Clients   int
	Requests  int
	MaxTokens int
	Prompts   []string // request i sends Prompts[i % len]
}

// LoadReport is what a load measured. Durations are sorted.
type LoadReport struct {
	Completed, Refused int // streams that ended with a finish reason; 429/503 answers
	Errors             []error
	Tokens             int // generated tokens, from each stream's usage (else its text chunks)
	Wall               time.Duration
	TTFT               []time.Duration // request sent → first text, per completed stream
	ITL                []time.Duration // between consecutive text chunks of a stream
}

// TokensPerSecond is the aggregate generation throughput.
func (r LoadReport) TokensPerSecond() float64 { return float64(r.Tokens) / r.Wall.Seconds() }

// Percentile is the p-th percentile (0 ≤ p ≤ 100) of sorted durations, by
// the nearest rank; 0 for none.
func Percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	i := int(p/100*float64(len(d))+0.5) - 1
	return d[min(max(i, 0), len(d)-1)]
}

func (r LoadReport) String() string {
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
	return fmt.Sprintf("%d completed, %d refused, %d errors in %.2f s: %d tokens, %.1f tokens/s; TTFT p50 %s p99 %s; ITL p50 %s p99 %s",
		r.Completed, r.Refused, len(r.Errors), r.Wall.Seconds(), r.Tokens, r.TokensPerSecond(),
		ms(Percentile(r.TTFT, 50)), ms(Percentile(r.TTFT, 99)), ms(Percentile(r.ITL, 50)), ms(Percentile(r.ITL, 99)))
}

// RunLoad drives spec's load and measures it.
func RunLoad(ctx context.Context, spec LoadSpec) LoadReport {
	if spec.Clients < 1 || spec.Requests < 1 || len(spec.Prompts) == 0 {
		return LoadReport{Errors: []error{fmt.Errorf("serve: a load needs clients, requests and prompts")}}
	}
	// A connection per request: llama-server closes idle keep-alive
	// connections, and a POST on one it just closed fails (Go retries
	// only idempotent requests).
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	next := make(chan int, spec.Requests)
	for i := range spec.Requests {
		next <- i
	}
	close(next)
	var mu sync.Mutex
	var rep LoadReport
	start := time.Now()
	var wg sync.WaitGroup
	for range spec.Clients {
		wg.Go(func() {
			for i := range next {
				s := streamLoad(ctx, hc, spec, spec.Prompts[i%len(spec.Prompts)])
				mu.Lock()
				rep.add(s)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	rep.Wall = time.Since(start)
	slices.Sort(rep.TTFT)
	slices.Sort(rep.ITL)
	return rep
}

// loadStream is one request's outcome.
type loadStream struct {
	refused bool
	err     error
	tokens  int
	ttft    time.Duration
	gaps    []time.Duration
}

func (r *LoadReport) add(s loadStream) {
	switch {
	case s.err != nil:
		r.Errors = append(r.Errors, s.err)
	case s.refused:
		r.Refused++
	default:
		r.Completed++
		r.Tokens += s.tokens
		r.TTFT = append(r.TTFT, s.ttft)
		r.ITL = append(r.ITL, s.gaps...)
	}
}

// loadChunk is the part of a streamed completion chunk a load reads.
type loadChunk struct {
	Choices []struct {
		Text         string  `json:"text"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

func streamLoad(ctx context.Context, hc *http.Client, spec LoadSpec, prompt string) loadStream {
	body, _ := json.Marshal(map[string]any{"model": spec.Model, "prompt": prompt, "max_tokens": spec.MaxTokens,
		"temperature": 0, "stream": true, "ignore_eos": true, "stream_options": map[string]any{"include_usage": true}})
	req, err := http.NewRequestWithContext(ctx, "POST", strings.TrimSuffix(spec.URL, "/")+"/v1/completions", bytes.NewReader(body))
	if err != nil {
		return loadStream{err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	if spec.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+spec.APIKey)
	}
	sent := time.Now()
	resp, err := hc.Do(req)
	if err != nil {
		return loadStream{err: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		io.Copy(io.Discard, resp.Body)
		return loadStream{refused: true}
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return loadStream{err: fmt.Errorf("status %d: %s", resp.StatusCode, b)}
	}
	return readLoadStream(resp.Body, sent)
}

// readLoadStream times the text chunks of an SSE stream until [DONE].
func readLoadStream(r io.Reader, sent time.Time) loadStream {
	var s loadStream
	var last time.Time
	chunks, usage, finished := 0, -1, false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if data == "[DONE]" {
			break
		}
		var c loadChunk
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			return loadStream{err: fmt.Errorf("chunk %q: %v", data, err)}
		}
		now := time.Now()
		if c.Usage != nil {
			usage = c.Usage.CompletionTokens
		}
		for _, ch := range c.Choices {
			finished = finished || ch.FinishReason != nil
			if ch.Text == "" {
				continue
			}
			if chunks == 0 {
				s.ttft = now.Sub(sent)
			} else {
				s.gaps = append(s.gaps, now.Sub(last))
			}
			last = now
			chunks++
		}
	}
	if err := sc.Err(); err != nil {
		return loadStream{err: err}
	}
	if !finished || chunks == 0 {
		return loadStream{err: fmt.Errorf("the stream ended without text and a finish reason")}
	}
	s.tokens = chunks
	if usage >= 0 {
		s.tokens = usage
	}
	return s
}
