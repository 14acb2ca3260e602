package chat

import (
	"encoding/json"
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
