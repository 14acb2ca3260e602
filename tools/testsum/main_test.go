package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func stream(events ...event) string {
	var b strings.Builder
	for _, e := range events {
		j, _ := json.Marshal(e)
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

// TestSummary: closing lines and failing tests' output are kept, passing
// tests' output is dropped, skips are listed at the end with their reason.
func TestSummary(t *testing.T) {
	in := stream(
		event{Action: "start", Package: "p/a"},
		event{Action: "output", Package: "p/a", Test: "TestOK", Output: "=== RUN   TestOK\n"},
		event{Action: "output", Package: "p/a", Test: "TestOK", Output: "    a_test.go:3: noise\n"},
		event{Action: "pass", Package: "p/a", Test: "TestOK"},
		event{Action: "output", Package: "p/a", Test: "TestBad", Output: "    a_test.go:9: got 1, want 2\n"},
		event{Action: "output", Package: "p/a", Test: "TestBad", Output: "--- FAIL: TestBad (0.00s)\n"},
		event{Action: "fail", Package: "p/a", Test: "TestBad"},
		event{Action: "output", Package: "p/a", Test: "TestGPU", Output: "=== RUN   TestGPU\n"},
		event{Action: "output", Package: "p/a", Test: "TestGPU", Output: "    a_test.go:20: no GPU\n"},
		event{Action: "output", Package: "p/a", Test: "TestGPU", Output: "--- SKIP: TestGPU (0.00s)\n"},
		event{Action: "skip", Package: "p/a", Test: "TestGPU"},
		event{Action: "output", Package: "p/a", Output: "FAIL\n"},
		event{Action: "output", Package: "p/a", Output: "FAIL\tp/a\t0.1s\n"},
		event{Action: "fail", Package: "p/a"},
		event{Action: "build-output", Package: "p/b", Output: "b.go:1: syntax error\n"},
		event{Action: "output", Package: "p/c", Output: "PASS\n"},
		event{Action: "output", Package: "p/c", Output: "ok  \tp/c\t0.2s\n"},
	) + "a line that is not JSON\n"
	var out strings.Builder
	s := newSummary(&out)
	s.read(strings.NewReader(in))
	s.printSkips()
	want := "    a_test.go:9: got 1, want 2\n--- FAIL: TestBad (0.00s)\n" +
		"FAIL\nFAIL\tp/a\t0.1s\n" +
		"b.go:1: syntax error\n" +
		"ok  \tp/c\t0.2s\n" +
		"a line that is not JSON\n" +
		"\nskipped (1):\n  p/a TestGPU: a_test.go:20: no GPU\n"
	if out.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), want)
	}
}
