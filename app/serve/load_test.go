package serve

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestLoad64Streams: 64 streaming clients at once on 4 slots with room
// for 32 in the queue. Every request must either stream to [DONE] with a
// finish reason or be refused cleanly with 503 and Retry-After, within a
// bounded time.
func TestLoad64Streams(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	m := model(t)
	b := NewModelBackend(m, 4, testCtx, 32)
	ts, _ := newTestServer(t, m, 4, Config{Backend: b})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	outcomes := make([]streamOutcome, 64)
	start := time.Now()
	for i := range outcomes {
		wg.Go(func() { outcomes[i] = streamOnce(ctx, ts.URL, i) })
	}
	wg.Wait()
	wall := time.Since(start)
	var ttft []time.Duration
	done, busy, tokens := 0, 0, 0
	for i, o := range outcomes {
		switch {
		case o.err != nil:
			t.Errorf("client %d: %v", i, o.err)
		case o.status == 503:
			busy++
		default:
			done++
			tokens += o.chunks
			ttft = append(ttft, o.ttft)
		}
	}
	if done == 0 {
		t.Fatal("no request completed")
	}
	slices.Sort(ttft)
	t.Logf("%d completed, %d refused (503) in %v; %d content chunks, %.0f chunks/s; TTFT p50 %v p99 %v",
		done, busy, wall.Round(time.Millisecond), tokens, float64(tokens)/wall.Seconds(), ttft[len(ttft)/2], ttft[len(ttft)*99/100])
	if l := b.Load(); l.Running != 0 || l.Queued != 0 {
		t.Errorf("after the load: %+v", l)
	}
}

type streamOutcome struct {
	status int
	chunks int
	ttft   time.Duration
	err    error
}

func streamOnce(ctx context.Context, base string, i int) (o streamOutcome) {
	body := fmt.Sprintf(`{"messages":[{"role":"user","content":"Once upon a time %d"}],"stream":true,"max_tokens":24,"temperature":1,"seed":%d}`, i, i)
	req, _ := http.NewRequestWithContext(ctx, "POST", base+"/v1/chat/completions", strings.NewReader(body))
	t0 := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return streamOutcome{err: err}
	}
	defer resp.Body.Close()
	o.status = resp.StatusCode
	if resp.StatusCode == 503 {
		if resp.Header.Get("Retry-After") == "" {
			o.err = fmt.Errorf("503 without Retry-After")
		}
		return o
	}
	if resp.StatusCode != 200 {
		return streamOutcome{err: fmt.Errorf("status %d", resp.StatusCode)}
	}
	sc := bufio.NewScanner(resp.Body)
	last, finished := "", false
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, `"content":"`) && !strings.Contains(line, `"content":""`) {
			if o.chunks == 0 {
				o.ttft = time.Since(t0)
			}
			o.chunks++
		}
		finished = finished || strings.Contains(line, `"finish_reason":"`)
		if line != "" {
			last = line
		}
	}
	if last != "data: [DONE]" || !finished {
		o.err = fmt.Errorf("stream ended with %q (finish reason seen: %v)", last, finished)
	}
	return o
}
