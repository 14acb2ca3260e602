package stoptext

import (
	"strings"
	"testing"
)

func TestMatcher(t *testing.T) {
	cases := []struct {
		stops  []string
		pieces []string
		want   []string // what each add returns, then flush
		hit    bool
	}{
		{[]string{"END"}, []string{"ab", "cE", "N", "D", "zz"}, []string{"ab", "c", "", "", "", ""}, true},
		{[]string{"END"}, []string{"ab", "cE", "N", "x"}, []string{"ab", "c", "", "ENx", ""}, false},
		{[]string{"END"}, []string{"aEN"}, []string{"a", "EN"}, false},
		{[]string{"xy", "ab"}, []string{"zzab", "q"}, []string{"zz", "", ""}, true},
		{[]string{"aab"}, []string{"a", "a", "a", "b"}, []string{"", "", "a", "", ""}, true},
		{[]string{"é!"}, []string{"café", "!"}, []string{"caf", "", ""}, true},
		{nil, []string{"x", "y"}, []string{"x", "y", ""}, false},
	}
	for _, tc := range cases {
		s := Matcher{Stops: tc.stops}
		var got []string
		for _, p := range tc.pieces {
			got = append(got, s.Add(p))
		}
		got = append(got, s.Flush())
		if strings.Join(got, "|") != strings.Join(tc.want, "|") || s.hit != tc.hit {
			t.Errorf("stops %q pieces %q: got %q hit %v, want %q hit %v", tc.stops, tc.pieces, got, s.hit, tc.want, tc.hit)
		}
	}
}
