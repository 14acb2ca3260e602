package ui

import (
	"fmt"
	"strings"
	"time"
)

// genSpeed returns decode speed in tokens per second. The first token is
// paid for by prompt processing, so the rate counts the GenTokens-1 tokens
// produced after it over Total-TimeToFirstToken. It reports false when
// there is too little to measure.
func genSpeed(s Stats) (float64, bool) {
	decode := s.Total - s.TimeToFirstToken
	if s.GenTokens < 2 || decode <= 0 {
		return 0, false
	}
	return float64(s.GenTokens-1) / decode.Seconds(), true
}

// formatStats renders the per-reply stats line, e.g.
// "12 prompt + 40 generated tokens · 21.5 tok/s · first token 350 ms".
func formatStats(s Stats) string {
	// the prompt's length is what was reused from the cache plus what was
	// evaluated: a follow-up reuses most of it
	prompt := fmt.Sprintf("%d prompt", s.PromptTokens+s.CachedTokens)
	if s.CachedTokens > 0 {
		prompt += fmt.Sprintf(" (%d cached)", s.CachedTokens)
	}
	parts := []string{fmt.Sprintf("%s + %d generated tokens", prompt, s.GenTokens)}
	if v, ok := genSpeed(s); ok {
		parts = append(parts, formatTokPerSec(v))
	}
	if s.GenTokens > 0 && s.TimeToFirstToken > 0 {
		parts = append(parts, "first token "+formatDuration(s.TimeToFirstToken))
	}
	if s.Drafted > 0 {
		parts = append(parts, fmt.Sprintf("drafted %d, kept %d (%.0f%%)", s.Drafted, s.DraftAccepted, 100*float64(s.DraftAccepted)/float64(s.Drafted)))
	}
	return strings.Join(parts, " · ")
}

// formatDuration shows milliseconds under a second and seconds above.
func formatDuration(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%d ms", d.Milliseconds())
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

func formatTokPerSec(v float64) string { return fmt.Sprintf("%.1f tok/s", v) }
