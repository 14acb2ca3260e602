package grammar

import (
	"errors"
	"strings"
	"testing"
)

func schemaGrammar(t *testing.T, schema string) *Grammar {
	t.Helper()
	src, err := FromJSONSchema([]byte(schema))
	if err != nil {
		t.Fatalf("FromJSONSchema(%s): %v", schema, err)
	}
	g, err := Parse(src)
	if err != nil {
		t.Fatalf("the grammar of %s does not parse: %v\n%s", schema, err, src)
	}
	return g
}

// TestSchemaSentences checks, per schema, JSON texts the grammar must
// accept whole and texts it must reject (as whole sentences).
func TestSchemaSentences(t *testing.T) {
	for _, tc := range []struct {
		schema      string
		good, wrong []string
	}{
		{`{"type":"object","properties":{"name":{"type":"string","minLength":1,"maxLength":3},"age":{"type":"integer"}},"required":["name"],"additionalProperties":false}`,
			[]string{`{"name":"Bo"}`, `{"name":"Bob", "age":42}`, "{\n  \"name\": \"x\",\n  \"age\": -7\n}"},
			[]string{`{}`, `{"age":1}`, `{"name":""}`, `{"name":"Bobby"}`, `{"name":"Bo","age":1.5}`, `{"age":1,"name":"Bo"}`, `{"name":"Bo","x":1}`}},
		{`{"properties":{"a":{"type":"boolean"},"b":{"type":"null"},"c":{"const":"k"}}}`,
			[]string{`{}`, `{"a":true}`, `{"b":null}`, `{"a":false,"c":"k"}`, `{"a":true,"b":null,"c":"k"}`},
			[]string{`{,"b":null}`, `{"c":"j"}`, `{"b":null,"a":true}`}},
		{`{"type":"array","items":{"enum":["x",1,null,{"k":[true]}]},"minItems":1,"maxItems":2}`,
			[]string{`["x"]`, `[1, null]`, `[{"k":[true]}]`},
			[]string{`[]`, `["x",1,1]`, `["y"]`, `[{"k": [true]}]`}},
		{`{"type":"array","maxItems":0}`, []string{`[]`, `[ ]`}, []string{`[1]`}},
		{`{"type":"number"}`, []string{`0`, `-1.25`, `3e10`, `12E-2`}, []string{`01`, `1.`, `.5`, `+1`, `1e`}},
		{`{"type":["string","null"],"maxLength":2}`, []string{`null`, `"ab"`, `"\u00e9\n"`}, []string{`"abc"`, `1`}},
		{`{"anyOf":[{"type":"integer"},{"type":"object","properties":{"n":{"$ref":"#/$defs/node"}}}],"$defs":{"node":{"type":"object","properties":{"next":{"$ref":"#/$defs/node"}},"required":["next"]}}}`,
			[]string{`5`, `{}`},
			[]string{`{"n":{}}`, `"5"`}},
		{`{"$defs":{"list":{"type":"object","properties":{"v":{"type":"integer"},"next":{"$ref":"#/$defs/list"}},"required":["v"]}},"$ref":"#/$defs/list"}`,
			[]string{`{"v":1}`, `{"v":1,"next":{"v":2,"next":{"v":3}}}`},
			[]string{`{"v":1,"next":{}}`}},
		{`{"type":"object","additionalProperties":{"type":"integer"}}`, []string{`{}`, `{"a":1,"b":2}`}, []string{`{"a":"x"}`}},
		{`{"type":"object","definitions":{"p":{"type":"string","maxLength":1}},"properties":{"x":{"$ref":"#/definitions/p"}},"required":["x"]}`,
			[]string{`{"x":"a"}`}, []string{`{"x":"ab"}`}},
	} {
		g := schemaGrammar(t, tc.schema)
		for _, s := range tc.good {
			if c, _ := accepts(t, g, s); !c {
				t.Errorf("schema %s: %q rejected", tc.schema, s)
			}
		}
		for _, s := range tc.wrong {
			if c, _ := accepts(t, g, s); c {
				t.Errorf("schema %s: %q accepted", tc.schema, s)
			}
		}
	}
}

func TestJSONObjectGrammar(t *testing.T) {
	g := mustParse(t, JSONObject)
	for _, s := range []string{`{}`, `{"a": [1, {"b": null}], "c": "d\"e"}`} {
		if c, _ := accepts(t, g, s); !c {
			t.Errorf("%q rejected", s)
		}
	}
	for _, s := range []string{`[]`, `"x"`, `{"a"}`, `{} `} {
		if c, _ := accepts(t, g, s); c {
			t.Errorf("%q accepted", s)
		}
	}
}

func TestSchemaErrors(t *testing.T) {
	for _, tc := range []struct{ schema, want string }{
		{`{"type":"string","pattern":"^a"}`, "pattern not supported"},
		{`{"type":"integer","minimum":3}`, "minimum not supported"},
		{`{"type":"array","uniqueItems":true}`, "uniqueItems"},
		{`{"type":"wat"}`, `unknown type "wat"`},
		{`{"$ref":"https://example.com/s.json"}`, "not local"},
		{`{"$ref":"#/$defs/missing"}`, "names no definition"},
		{`{"type":"string","minLength":5,"maxLength":2}`, "allow no string"},
		{`{"enum":[]}`, "empty enum"},
		{`false`, "allows no value"},
		{`[1]`, "json schema"},
		{`{"properties":{"a":{"type":"integer","multipleOf":2}}}`, "/properties/a: multipleOf"},
	} {
		_, err := FromJSONSchema([]byte(tc.schema))
		if err == nil || !errors.Is(err, ErrSchema) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("FromJSONSchema(%s) = %v, want an ErrSchema containing %q", tc.schema, err, tc.want)
		}
	}
}
