package grammar

import (
	"errors"
	"strings"
	"testing"
)

// accepts runs s through g from the start and reports whether it is a
// whole sentence, and whether it is at least a live prefix.
func accepts(t *testing.T, g *Grammar, s string) (complete, prefix bool) {
	t.Helper()
	m := g.NewMatcher()
	st, ok := m.Advance(m.Start(), []byte(s))
	return ok && st.Complete(), ok
}

func mustParse(t *testing.T, src string) *Grammar {
	t.Helper()
	g, err := Parse(src)
	if err != nil {
		t.Fatalf("Parse(%q): %v", src, err)
	}
	return g
}

// TestSentences is a table of grammars, each with inputs it must accept
// whole, accept only as a prefix, and reject.
func TestSentences(t *testing.T) {
	for _, tc := range []struct {
		name, src            string
		whole, prefix, wrong []string
	}{
		{"literal", `root ::= "ab" "c"`, []string{"abc"}, []string{"", "a", "ab"}, []string{"abcd", "b", "abd"}},
		{"alternatives", "root ::= \"cat\" | \"dog\" |\n  \"bird\"", []string{"cat", "dog", "bird"}, []string{"bi"}, []string{"cow"}},
		{"class ranges", `root ::= [a-cx0-9]+`, []string{"a", "cx09", "b2"}, []string{""}, []string{"d", "a-"}},
		{"negated class", `root ::= "\"" [^"\\]* "\""`, []string{`""`, `"héllo"`}, []string{`"ab`}, []string{`"a"b`, `"\`}},
		{"star plus optional", `root ::= "a"* "b"+ "c"?`, []string{"b", "aabbb", "abc"}, []string{"aa", ""}, []string{"ac", "abcc"}},
		{"counted", `root ::= "x"{2,3} "y"{1} "z"{2,}`, []string{"xxyzz", "xxxyzzzz"}, []string{"xx", "xxyz"}, []string{"xy", "xxxxy", "xxyyzz"}},
		{"group repeat", `root ::= ("ab" | "c"){1,2} "."`, []string{"ab.", "cab.", "cc."}, []string{"a", "abc"}, []string{".", "ccc."}},
		{"literal repeated whole", `root ::= "ab"*`, []string{"", "abab"}, []string{"aba"}, []string{"b", "aa"}},
		{"refs and comments", "# a comment\nroot ::= greet ws name # trailing\ngreet ::= \"hi\"\nws ::= [ \\t]\nname ::= [A-Z] [a-z]*\n", []string{"hi Bo", "hi\tX"}, []string{"hi "}, []string{"hiBo", "hi bo"}},
		{"escapes", `root ::= "\x41\u00e9\n\t\\\"" [\x30-\x39]`, []string{"Aé\n\t\\\"5"}, nil, []string{"Ae"}},
		{"any char", `root ::= . .`, []string{"ab", "日本"}, []string{"€"}, []string{"abc"}},
		{"multibyte class", `root ::= [α-ω]+`, []string{"αβγ"}, []string{"\xce"}, []string{"a", "\xe6"}},
		{"nested recursion", "root ::= \"(\" root \")\" | \"x\"", []string{"x", "((x))"}, []string{"((", "((x)"}, []string{"()", "(x))"}},
		{"empty alternative", "root ::= \"a\" rest\nrest ::= \"b\" rest |", []string{"a", "abbb"}, nil, []string{"ba"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := mustParse(t, tc.src)
			for _, s := range tc.whole {
				if c, _ := accepts(t, g, s); !c {
					t.Errorf("%q not accepted as a sentence", s)
				}
			}
			for _, s := range tc.prefix {
				if c, p := accepts(t, g, s); c || !p {
					t.Errorf("%q: complete %v prefix %v, want a prefix only", s, c, p)
				}
			}
			for _, s := range tc.wrong {
				if _, p := accepts(t, g, s); p {
					t.Errorf("%q accepted as a prefix", s)
				}
			}
		})
	}
}

// TestUTF8AcrossTokens feeds a code point byte by byte, as byte-fallback
// tokens (<0xE6><0x97><0xA5>) deliver it: the partial sequence survives
// only while some parse can take a code point that starts with it.
func TestUTF8AcrossTokens(t *testing.T) {
	g := mustParse(t, `root ::= "日" "x"`)
	m := g.NewMatcher()
	st := m.Start()
	for i, b := range []byte("日") {
		var ok bool
		if st, ok = m.AdvanceByte(st, b); !ok {
			t.Fatalf("byte %d (%#x) of 日 rejected", i, b)
		}
		if i < 2 && st.Complete() {
			t.Fatalf("complete in the middle of a code point")
		}
	}
	if _, ok := m.Advance(mustParse(t, `root ::= "{"`).NewMatcher().Start(), []byte{0xf0}); ok {
		t.Errorf("a 4-byte lead (U+10000 and above) was taken where only { may come")
	}
	if _, ok := m.AdvanceByte(m.Start(), 0xe7); ok { // 日 is E6 97 A5; E7 starts U+7000..U+7FFF
		t.Errorf("lead byte of a code point the grammar cannot take was accepted")
	}
	for _, bad := range [][]byte{{0x80}, {0xc0, 0x80}, {0xff}, {0xe6, 'x'}, {0xf0}, {0xe0, 0x81}, {0xf4, 0x90}, {0xed, 0xa0, 0x80}} {
		if _, ok := m.Advance(m.Start(), bad); ok {
			t.Errorf("invalid UTF-8 % x accepted", bad)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{`root ::= "a`, "unterminated string"},
		{`root ::= [a-`, "unterminated character class"},
		{`root ::= foo`, `rule "foo" is used but never defined`},
		{`start ::= "a"`, "no root rule"},
		{"root ::= \"a\"\nroot ::= \"b\"", "defined twice"},
		{`root ::= root "a" | "b"`, "left-recursive"},
		{"root ::= x \"a\"\nx ::= y\ny ::= root | \"\"", "left-recursive"},
		{`root ::= ("" | "a")* "b"`, "left-recursive"},
		{`root ::= * "a"`, "nothing before it to repeat"},
		{`root ::= "a"{3,2}`, "maximum below its minimum"},
		{`root ::= "a"{99999}`, "repetition count"},
		{`root ::= "` + strings.Repeat("a", 600) + `"{2000}`, "more than"},
		{`root ::= "\q"`, `unknown escape \q`},
		{`root ::= ("a"`, "expecting )"},
		{`root ::= "a" )`, "end of the line"},
		{`root = "a"`, "expecting ::="},
		{"root ::= \"\xff\"", "invalid UTF-8"},
	} {
		_, err := Parse(tc.src)
		if err == nil || !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want an ErrSyntax containing %q", tc.src, err, tc.want)
		}
	}
}
