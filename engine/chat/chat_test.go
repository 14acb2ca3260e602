package chat

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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
