// Command testsum runs go test with -json and prints what a person reads
// of it: go test's closing line per package (ok / FAIL / no test files),
// the whole output of each failing test, and at the end every skipped test
// with its reason. It exits with go test's status, so CI still reads pass
// or fail from it.
//
//	go run ./tools/testsum [go test flags] [packages]
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// event is one line of go test -json (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

func main() {
	goTool := os.Getenv("GO") // the Makefile's $(GO)
	if goTool == "" {
		goTool = "go"
	}
	cmd := exec.Command(goTool, append([]string{"test", "-json"}, os.Args[1:]...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsum:", err)
		os.Exit(2)
	}
	s := newSummary(os.Stdout)
	s.read(out)
	err = cmd.Wait()
	s.printSkips()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			os.Exit(ee.ExitCode())
		}
		fmt.Fprintln(os.Stderr, "testsum:", err)
		os.Exit(2)
	}
}

type summary struct {
	w      io.Writer
	output map[string][]string // test output so far, by package + " " + test
	skips  []string            // "pkg TestX: reason"
}

func newSummary(w io.Writer) *summary { return &summary{w: w, output: map[string][]string{}} }

// read consumes go test -json; lines that are not JSON (build errors from
// an older go) are passed through.
func (s *summary) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		e, ok := parseEvent(line)
		if !ok {
			fmt.Fprintln(s.w, line)
			continue
		}
		s.event(e)
	}
}

func (s *summary) event(e event) {
	key := e.Package + " " + e.Test
	switch {
	case e.Action == "build-output":
		fmt.Fprint(s.w, e.Output)
	case e.Action == "output" && e.Test != "":
		s.output[key] = append(s.output[key], e.Output)
	case e.Action == "output":
		// the package's own lines: keep go test's closing line (ok, FAIL,
		// no test files) and anything a failing TestMain printed
		if o := strings.TrimSpace(e.Output); o != "PASS" && o != "" && !strings.HasPrefix(o, "=== ") {
			fmt.Fprint(s.w, e.Output)
		}
	case e.Action == "fail" && e.Test != "":
		fmt.Fprint(s.w, strings.Join(s.output[key], ""))
		delete(s.output, key)
	case e.Action == "skip" && e.Test != "":
		s.skips = append(s.skips, fmt.Sprintf("%s %s: %s", e.Package, e.Test, skipReason(s.output[key])))
		delete(s.output, key)
	case e.Action == "pass" && e.Test != "":
		delete(s.output, key)
	}
}

// skipReason is what the test logged before skipping (t.Skip's message).
func skipReason(lines []string) string {
	var why []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		why = append(why, t)
	}
	if len(why) == 0 {
		return "(no reason given)"
	}
	return strings.Join(why, " / ")
}

func (s *summary) printSkips() {
	if len(s.skips) == 0 {
		return
	}
	fmt.Fprintf(s.w, "\nskipped (%d):\n", len(s.skips))
	for _, l := range s.skips {
		fmt.Fprintln(s.w, "  "+l)
	}
}
