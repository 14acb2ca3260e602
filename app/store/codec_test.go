package store

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestExportImportJSONKeepsBranches(t *testing.T) {
	c, ids := chat(t)
	c.System = "sys"
	c.Add(ids[1], Message{Role: RoleUser, Content: "other"})
	c.Select(ids[2])
	b, err := ExportJSON(c)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ImportJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID == c.ID {
		t.Error("import reused the id; importing twice would overwrite")
	}
	got.ID = c.ID
	if !reflect.DeepEqual(got, c) {
		t.Errorf("import changed the conversation\n got %+v\nwant %+v", got, c)
	}
}

func TestImportOpenAIMessages(t *testing.T) {
	for _, in := range []string{
		`{"model":"x","messages":[{"role":"system","content":"S"},{"role":"user","content":"hi"},{"role":"assistant","content":"yo"}]}`,
		`[{"role":"system","content":"S"},{"role":"user","content":"hi"},{"role":"assistant","content":"yo"}]`,
	} {
		c, err := ImportJSON([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if c.System != "S" || !reflect.DeepEqual(contents(c.Path()), []string{"hi", "yo"}) || c.Title != "hi" {
			t.Errorf("import of %s: system %q, path %v", in, c.System, contents(c.Path()))
		}
	}
}

func TestImportRejects(t *testing.T) {
	for _, in := range []string{
		``, `nonsense`, `{"messages":[]}`,
		`{"messages":[{"role":"tool","content":"x"}]}`,
		`{"version":1,"id":"ab","messages":[{"id":"a","parent":"b","role":"user"},{"id":"b","parent":"a","role":"user"}]}`,
		`{"version":1,"id":"ab","messages":[{"id":"a","role":"user"},{"id":"a","role":"user"}]}`,
		`{"version":1,"id":"ab","messages":[{"id":"a","role":"wizard"}]}`,
		`{"version":99,"id":"ab","messages":[]}`,
		`{"version":1,"id":"../../etc","messages":[]}`,
	} {
		if _, err := ImportJSON([]byte(in)); !errors.Is(err, ErrFormat) {
			t.Errorf("ImportJSON(%s) = %v, want ErrFormat", in, err)
		}
	}
}

func TestExportMarkdownShowsBranchShown(t *testing.T) {
	c, ids := chat(t)
	c.System = "line one\nline two"
	c.Set(Message{ID: ids[3], Role: RoleAssistant, Content: "a2", Model: "tiny"})
	c.Add(ids[0], Message{Role: RoleAssistant, Content: "hidden branch"})
	c.Select(ids[1])
	md := ExportMarkdown(c)
	for _, want := range []string{"# q1\n", "> line one\n> line two", "## You\n\nq1\n", "## Assistant (tiny)\n\na2\n"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "hidden branch") {
		t.Error("markdown includes a branch not shown")
	}
}

// FuzzImportJSON: imported files come from anywhere. Import never panics,
// and what it accepts survives an export/import round trip.
func FuzzImportJSON(f *testing.F) {
	c, _ := chat(&testing.T{})
	b, _ := ExportJSON(c)
	f.Add(b)
	f.Add([]byte(`[{"role":"user","content":"hi"}]`))
	f.Add([]byte(`{"version":1,"id":"x","messages":[{"id":"a","role":"user"}],"selected":{"":"zz"}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		c, err := ImportJSON(in)
		if err != nil {
			return
		}
		c.Path()
		out, err := ExportJSON(c)
		if err != nil {
			t.Fatal(err)
		}
		d, err := ImportJSON(out)
		if err != nil {
			t.Fatalf("re-import of an export failed: %v", err)
		}
		if !reflect.DeepEqual(contents(d.Path()), contents(c.Path())) {
			t.Fatalf("round trip changed the path")
		}
	})
}
