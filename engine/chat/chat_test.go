package chat

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"flowchat/engine/fixtures"
)

// fixedNow is the date the fixtures were rendered with ("22 Nov 2026").
func fixedNow() time.Time { return time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC) }

type fixtureCase struct {
	Template            string    `json:"template"`
	Conversation        string    `json:"conversation"`
	Messages            []Message `json:"messages"`
	AddGenerationPrompt bool      `json:"add_generation_prompt"`
	BOS                 string    `json:"bos_token"`
	EOS                 string    `json:"eos_token"`
	Expected            *string   `json:"expected"`
	ExpectedError       *string   `json:"expected_error"`
}

// TestFixtureTemplates renders the 17 published chat templates for four
// conversations and compares with Python jinja2 3.1.6's output byte for byte.
func TestFixtureTemplates(t *testing.T) {
	path := fixtures.Path(t, "chat_templates/cases.json")
	var file struct {
		Cases []fixtureCase `json:"cases"`
	}
	readJSON(t, path, &file)
	pass := 0
	for _, c := range file.Cases {
		t.Run(c.Template+"/"+c.Conversation, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join(filepath.Dir(path), "templates", c.Template))
			if err != nil {
				t.Fatal(err)
			}
			tpl, err := Parse(string(src))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			got, err := tpl.Render(c.Messages, Options{
				AddGenerationPrompt: c.AddGenerationPrompt, BOS: c.BOS, EOS: c.EOS, Now: fixedNow,
			})
			if checkOutcome(t, got, err, c.Expected, c.ExpectedError) {
				pass++
			}
		})
	}
	t.Logf("%d/%d fixture cases byte-identical to jinja2", pass, len(file.Cases))
}

// checkOutcome compares a render with the expected text or error message.
func checkOutcome(t *testing.T, got string, err error, want, wantErr *string) bool {
	t.Helper()
	switch {
	case wantErr != nil && err == nil:
		t.Errorf("rendered %q, want error %q", got, *wantErr)
	case wantErr != nil && err.Error() != *wantErr:
		t.Errorf("error %q, want %q", err, *wantErr)
	case wantErr == nil && err != nil:
		t.Errorf("error %v, want %q", err, deref(want))
	case wantErr == nil && got != deref(want):
		t.Errorf("got  %q\nwant %q", got, deref(want))
	default:
		return true
	}
	return false
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

type pythonCase struct {
	Name          string                     `json:"name"`
	Template      string                     `json:"template"`
	TemplateFile  string                     `json:"template_file"`
	Context       map[string]json.RawMessage `json:"context"`
	Expected      *string                    `json:"expected"`
	ExpectedError *string                    `json:"expected_error"`
}

// TestPythonDifferential compares renders with Python jinja2's on expression
// probes and on the fixture templates with tool-use and multimodal
// conversations (testdata/python_cases.json, made by
// testdata/gen_python_cases.py). CHAT_EXTRA_CASES names a further case file
// made the same way, e.g. for templates that cannot be committed here.
func TestPythonDifferential(t *testing.T) {
	runPythonCases(t, filepath.Join("testdata", "python_cases.json"))
	if extra := os.Getenv("CHAT_EXTRA_CASES"); extra != "" {
		runPythonCases(t, extra)
	}
}

func runPythonCases(t *testing.T, path string) {
	var file struct {
		Cases []pythonCase `json:"cases"`
	}
	readJSON(t, path, &file)
	pass := 0
	for i, c := range file.Cases {
		t.Run(fmt.Sprintf("%03d_%s", i, c.Name), func(t *testing.T) {
			src := c.Template
			if c.TemplateFile != "" {
				b, err := os.ReadFile(fixtures.Path(t, "chat_templates/templates/"+c.TemplateFile))
				if err != nil {
					t.Fatal(err)
				}
				src = string(b)
			}
			got, err := renderWithContext(src, c.Context)
			if !checkOutcome(t, got, err, c.Expected, c.ExpectedError) {
				if c.TemplateFile == "" && len(src) < 300 {
					t.Logf("template: %s", src)
				}
				return
			}
			pass++
		})
	}
	t.Logf("%s: %d/%d cases identical to jinja2", filepath.Base(path), pass, len(file.Cases))
}

// renderWithContext renders src with every context variable passed as JSON.
func renderWithContext(src string, ctx map[string]json.RawMessage) (string, error) {
	tpl, err := Parse(src)
	if err != nil {
		return "", err
	}
	extra := map[string]any{}
	for k, v := range ctx {
		extra[k] = v
	}
	return tpl.Render(nil, Options{Now: fixedNow, Extra: extra})
}

// TestConcurrentRender renders one template from several goroutines (run
// with -race): Templates are shared by a server's requests.
func TestConcurrentRender(t *testing.T) {
	tpl, err := Parse(`{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}` +
		`{{ m.role }}:{{ m.content | trim }}{% endfor %}{{ ns.n }}{{ tools | tojson }}`)
	if err != nil {
		t.Fatal(err)
	}
	want, err := tpl.Render(fuzzMessages, Options{Extra: map[string]any{"tools": fuzzTools}})
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			for range 50 {
				got, err := tpl.Render(fuzzMessages, Options{Extra: map[string]any{"tools": fuzzTools}})
				if err == nil && got != want {
					err = fmt.Errorf("got %q, want %q", got, want)
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

func TestFallbackIsChatML(t *testing.T) {
	got, err := Fallback().Render([]Message{{"system", "S"}, {"user", "U"}}, Options{AddGenerationPrompt: true})
	if err != nil {
		t.Fatal(err)
	}
	want := "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\n"
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestLimits checks that hostile templates stop with an error.
func TestLimits(t *testing.T) {
	for _, c := range []struct{ src, kind string }{
		{"{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}", "RecursionError"},
		{"{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", "RuntimeError"},
		{"{% set ns = namespace(s='ab') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}", "MemoryError"},
		{"{{ 'x' * 100000000 }}", "MemoryError"},
		{"{% set ns = namespace(l=[1]) %}{% for i in range(40) %}{% set ns.l = ns.l + ns.l %}{% endfor %}", "MemoryError"},
		{"{{ range(1000000) }}", "OverflowError"},
		{strings.Repeat("(", 200) + strings.Repeat(")", 200), ""},
		{"{{ " + strings.Repeat("(", 200) + "1" + strings.Repeat(")", 200) + " }}", "TemplateSyntaxError"},
		{strings.Repeat("{% if true %}", 200) + strings.Repeat("{% endif %}", 200), "TemplateSyntaxError"},
		{"{% include '/etc/passwd' %}", "TemplateSyntaxError"},
	} {
		tpl, err := Parse(c.src)
		if err == nil {
			_, err = tpl.Render(nil, Options{})
		}
		var e *Error
		switch {
		case c.kind == "" && err != nil:
			t.Errorf("%.40q: unexpected error %v", c.src, err)
		case c.kind != "" && (!errors.As(err, &e) || e.Kind != c.kind):
			t.Errorf("%.40q: got %v, want a %s", c.src, err, c.kind)
		}
	}
}

func BenchmarkRenderLlama31Tools(b *testing.B) {
	src, err := os.ReadFile(fixtures.Path(b, "chat_templates/templates/meta-llama-Llama-3.1-8B-Instruct.jinja"))
	if err != nil {
		b.Fatal(err)
	}
	tpl, err := Parse(string(src))
	if err != nil {
		b.Fatal(err)
	}
	opts := Options{AddGenerationPrompt: true, BOS: "<s>", Now: fixedNow, Extra: map[string]any{"tools": fuzzTools}}
	b.ResetTimer()
	for range b.N {
		if _, err := tpl.Render(fuzzMessages, opts); err != nil {
			b.Fatal(err)
		}
	}
}
