package hub

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// ProgressBar draws download events on a terminal: one line per job,
// redrawn in place with '\r' at most ten times a second, and a line of its
// own for every retry, failure and completion.
type ProgressBar struct {
	w     io.Writer
	mu    sync.Mutex
	last  time.Time
	width int // characters of the bar itself
}

// NewProgressBar draws on w. Use its Event method as ManagerOptions.OnEvent.
func NewProgressBar(w io.Writer) *ProgressBar { return &ProgressBar{w: w, width: 24} }

// Event draws one event.
func (p *ProgressBar) Event(e Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e.State {
	case Running:
		if time.Since(p.last) < 100*time.Millisecond && e.Done != e.Total {
			return
		}
		p.last = time.Now()
		fmt.Fprintf(p.w, "\r\x1b[K%s", p.line(e))
	case Retrying:
		fmt.Fprintf(p.w, "\r\x1b[K%s: %v; retrying in %v (attempt %d)\n", e.Name, e.Err, e.RetryIn.Round(100*time.Millisecond), e.Attempt+1)
	case Verifying:
		fmt.Fprintf(p.w, "\r\x1b[K%s: verifying %s", e.Name, e.File)
	case Done:
		fmt.Fprintf(p.w, "\r\x1b[K%s: done, %s verified\n", e.Name, HumanBytes(uint64(e.Done)))
	case Failed, Paused, Canceled:
		fmt.Fprintf(p.w, "\r\x1b[K%s: %v: %v\n", e.Name, e.State, e.Err)
	}
}

// line is "name  42% [=====>      ] 340.2 MiB / 808.0 MiB  12.5 MiB/s  ETA 37s".
func (p *ProgressBar) line(e Event) string {
	var b strings.Builder
	b.WriteString(e.Name)
	if e.Total > 0 {
		frac := min(float64(e.Done)/float64(e.Total), 1)
		fill := int(frac * float64(p.width))
		bar := strings.Repeat("=", fill) + strings.Repeat(" ", p.width-fill)
		if fill > 0 && fill < p.width {
			bar = bar[:fill-1] + ">" + bar[fill:]
		}
		fmt.Fprintf(&b, " %3.0f%% [%s] %s / %s", 100*frac, bar, HumanBytes(uint64(e.Done)), HumanBytes(uint64(e.Total)))
	} else {
		fmt.Fprintf(&b, " %s", HumanBytes(uint64(e.Done)))
	}
	if e.Speed > 0 {
		fmt.Fprintf(&b, "  %s/s", HumanBytes(uint64(e.Speed)))
	}
	if e.ETA >= 0 {
		fmt.Fprintf(&b, "  ETA %v", e.ETA.Round(time.Second))
	}
	return b.String()
}

// PrintSearch writes search results as a table.
func PrintSearch(w io.Writer, models []ModelSummary) {
	fmt.Fprintf(w, "%-60s %12s %7s  %s\n", "MODEL", "DOWNLOADS", "LIKES", "UPDATED")
	for _, m := range models {
		gated := ""
		if m.Gated() {
			gated = "  (gated: accept the licence on the model page)"
		}
		updated := "-"
		if !m.LastModified.IsZero() {
			updated = m.LastModified.Format("2006-01-02")
		}
		fmt.Fprintf(w, "%-60s %12d %7d  %s%s\n", m.ID, m.Downloads, m.Likes, updated, gated)
	}
}

// PrintFiles writes a repo's downloadable models with their fit verdicts
// (nil verdicts print as "-").
func PrintFiles(w io.Writer, models []RemoteModel, verdicts []*Verdict) {
	fmt.Fprintf(w, "%-10s %-12s %10s  %-14s %s\n", "QUANT", "KIND", "SIZE", "FIT", "FILE")
	for i, m := range models {
		fit := "-"
		if i < len(verdicts) && verdicts[i] != nil {
			fit = verdicts[i].Fit.String()
		}
		first := m.First().Path
		if len(m.Files) > 1 {
			first += fmt.Sprintf(" (+%d parts)", len(m.Files)-1)
		}
		fmt.Fprintf(w, "%-10s %-12s %10s  %-14s %s\n", orName(m.Quant, "-"), m.Kind, HumanBytes(uint64(m.Size)), fit, first)
	}
}
