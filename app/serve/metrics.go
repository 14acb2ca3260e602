package serve

import (
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"

	"flowchat/engine"
)

// metrics are the server's counters, written out in Prometheus' text
// format by /metrics.
type metrics struct {
	mu         sync.Mutex
	requests   map[requestKey]int64
	prompt     int64 // prompt tokens evaluated
	cached     int64 // prompt tokens reused from a KV cache
	completion int64 // tokens generated
	genTime    time.Duration
	promptTime time.Duration
}

type requestKey struct {
	route string
	code  int
}

func newMetrics() *metrics { return &metrics{requests: map[requestKey]int64{}} }

// request counts a finished request under its route pattern; unmatched
// paths share one label so that scanners cannot grow the label set.
func (m *metrics) request(r *http.Request, w *statusRecorder) {
	route := r.Pattern
	if route == "" || route == "/" {
		route = "other"
	}
	m.mu.Lock()
	m.requests[requestKey{route, w.status}]++
	m.mu.Unlock()
}

// generation adds one completion's token counts and times.
func (m *metrics) generation(st engine.Stats) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.prompt += int64(st.PromptTokens)
	m.cached += int64(st.CachedTokens)
	m.completion += int64(st.GenTokens)
	m.genTime += st.GenTime
	m.promptTime += st.PromptTime
}

func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	s.metrics.write(w, s.cfg.Backend.Load())
}

func (m *metrics) write(w io.Writer, l Load) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.writeRequests(w)
	counter(w, "flowchat_prompt_tokens_total", "Prompt tokens evaluated (not counting cached ones).", float64(m.prompt))
	counter(w, "flowchat_prompt_tokens_cached_total", "Prompt tokens reused from a KV cache.", float64(m.cached))
	counter(w, "flowchat_completion_tokens_total", "Tokens generated.", float64(m.completion))
	counter(w, "flowchat_prompt_seconds_total", "Time spent evaluating prompts.", m.promptTime.Seconds())
	counter(w, "flowchat_generation_seconds_total", "Time spent generating tokens.", m.genTime.Seconds())
	gauge(w, "flowchat_generation_tokens_per_second", "Tokens generated per second of generation time, over the server's life.", tps(m.completion, m.genTime))
	gauge(w, "flowchat_slots", "Sequences that can run at once (--parallel).", float64(l.Slots))
	gauge(w, "flowchat_requests_running", "Sequences generating now.", float64(l.Running))
	gauge(w, "flowchat_requests_queued", "Requests waiting for a free slot.", float64(l.Queued))
	gauge(w, "flowchat_kv_cache_tokens", "Positions held in the paged KV cache.", float64(l.KVTokens))
	gauge(w, "flowchat_kv_blocks_in_use", "KV cache blocks some sequence holds.", float64(l.KVBlocks))
	gauge(w, "flowchat_kv_blocks", "KV cache blocks in all (--kv-budget).", float64(l.KVBlocksTotal))
	counter(w, "flowchat_prefix_cache_hit_blocks_total", "KV blocks requests found in the prefix cache.", float64(l.PrefixHitBlocks))
	counter(w, "flowchat_preemptions_total", "Sequences preempted (recomputed later) because the KV cache was full.", float64(l.Preemptions))
}

func (m *metrics) writeRequests(w io.Writer) {
	keys := make([]requestKey, 0, len(m.requests))
	for k := range m.requests {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].route != keys[j].route {
			return keys[i].route < keys[j].route
		}
		return keys[i].code < keys[j].code
	})
	fmt.Fprintln(w, "# HELP flowchat_requests_total HTTP requests by route and status.")
	fmt.Fprintln(w, "# TYPE flowchat_requests_total counter")
	for _, k := range keys {
		fmt.Fprintf(w, "flowchat_requests_total{route=%s,code=\"%d\"} %d\n", strconv.Quote(k.route), k.code, m.requests[k])
	}
}

func tps(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

func counter(w io.Writer, name, help string, v float64) { metric(w, "counter", name, help, v) }
func gauge(w io.Writer, name, help string, v float64)   { metric(w, "gauge", name, help, v) }

func metric(w io.Writer, typ, name, help string, v float64) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n%s %s\n", name, help, name, typ, name, strconv.FormatFloat(v, 'g', -1, 64))
}
