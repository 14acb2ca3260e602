package ui

import (
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"
)

func TestFormatStats(t *testing.T) {
	tests := []struct {
		st   Stats
		want string
	}{
		// 41 tokens after the first in 2 s of decode.
		{Stats{PromptTokens: 12, GenTokens: 42, TimeToFirstToken: 350 * time.Millisecond, Total: 2350 * time.Millisecond},
			"12 prompt + 42 generated tokens · 20.5 tok/s · first token 350 ms"},
		// One token: no decode interval to measure.
		{Stats{PromptTokens: 3, GenTokens: 1, TimeToFirstToken: 1500 * time.Millisecond, Total: 1500 * time.Millisecond},
			"3 prompt + 1 generated tokens · first token 1.5 s"},
		// Nothing generated (stopped during prefill).
		{Stats{PromptTokens: 900, Total: 4 * time.Second}, "900 prompt + 0 generated tokens"},
		// A follow-up: the prompt's length counts what the cache reused.
		{Stats{PromptTokens: 1, CachedTokens: 16, GenTokens: 1, Total: time.Second}, "17 prompt (16 cached) + 1 generated tokens"},
		// Speculative decoding: what was drafted and kept.
		{Stats{PromptTokens: 5, GenTokens: 1, Total: time.Second, Drafted: 40, DraftAccepted: 30}, "5 prompt + 1 generated tokens · drafted 40, kept 30 (75%)"},
	}
	for _, tt := range tests {
		if got := formatStats(tt.st); got != tt.want {
			t.Errorf("formatStats(%+v) = %q, want %q", tt.st, got, tt.want)
		}
	}
}

func TestGenSpeedNeedsDecodeTime(t *testing.T) {
	if v, ok := genSpeed(Stats{GenTokens: 10, TimeToFirstToken: time.Second, Total: time.Second}); ok {
		t.Errorf("genSpeed with zero decode time = %v, true; want false", v)
	}
}

// TestStatusMessageIsOneLine: an error of several lines is shown on one
// line, no taller than the status bar's other fields, so that it is never
// drawn over them.
func TestStatusMessageIsOneLine(t *testing.T) {
	test.NewApp()
	s := newStatusBar()
	s.SetSpeed("12.5 tok/s")
	s.SetMessage("Search failed: You appear to be offline:\nhuggingface.co cannot be reached.\n\tCheck the network.", true)
	if strings.Contains(s.message.Text, "\n") || s.message.MinSize().Height > s.speed.MinSize().Height {
		t.Errorf("message %q, height %v (speed %v)", s.message.Text, s.message.MinSize().Height, s.speed.MinSize().Height)
	}
	if !strings.Contains(s.message.Text, "offline: huggingface.co cannot be reached. Check") {
		t.Errorf("message %q", s.message.Text)
	}
}
