package grammar

import "testing"

// FuzzParse feeds grammars (request bodies carry them) to Parse, and
// whatever parses to a matcher for a few bytes: no input may panic or
// loop, and a state that claims completeness must have a parse left.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`root ::= "a" | [b-d]+ x?` + "\nx ::= (\"e\" | .){1,3}",
		JSONObject,
		`root ::= [^"\\]* "日" # c`,
		`root ::= ("(" root ")")*`,
		`root ::= a` + "\na ::= b\nb ::= \"\" | a",
		`root ::= "\x41\u00e9\U0001F600"{0,2000}`,
	} {
		f.Add(s, []byte(`{"a": "日本", [1]}`))
	}
	f.Fuzz(func(t *testing.T, src string, input []byte) {
		g, err := Parse(src)
		if err != nil {
			return
		}
		m := g.NewMatcher()
		st := m.Start()
		for _, b := range input[:min(len(input), 64)] {
			next, ok := m.AdvanceByte(st, b)
			if !ok {
				break
			}
			st = next
			if st.Complete() && st.Dead() {
				t.Fatalf("complete with no parse left")
			}
		}
	})
}
