package ui

import (
	"testing"
	"time"
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
