package chat

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/nikolalohinski/gonja/v2/exec"
)

// Python methods of str, dict, list and tuple that templates call, e.g.
// message.content.strip() or tool.items(). Each is bound to its object
// when the attribute is looked up.

type method func(self any, args []any, kw map[string]any) (any, error)

// boundMethod returns obj.name as a callable, or nil if there is none.
func boundMethod(obj any, name string) *pyFunc {
	var m method
	switch obj.(type) {
	case string, markup:
		m = strMethods[name]
	case *exec.Dict:
		m = dictMethods[name]
	case []any:
		m = seqMethods[name]
	case pyTuple:
		if name != "copy" {
			m = seqMethods[name]
		}
	}
	if m == nil {
		return nil
	}
	return &pyFunc{name: name, call: func(st *state, va *exec.VarArgs) (any, error) {
		args, kw := normArgs(va)
		return m(obj, args, kw)
	}}
}

// param is one parameter of a Go-implemented Python function.
type param struct {
	name string
	def  any // required when def == required
}

var required = &struct{ _ byte }{}

func p(name string, def any) param { return param{name, def} }

// bind assigns positional and keyword arguments to params like Python does.
func bind(fn string, args []any, kw map[string]any, params ...param) ([]any, error) {
	if len(args) > len(params) {
		return nil, typeError("%s() takes at most %d arguments (%d given)", fn, len(params), len(args))
	}
	out := make([]any, len(params))
	set := make([]bool, len(params))
	for i, a := range args {
		out[i], set[i] = a, true
	}
	for k, v := range kw {
		i := paramIndex(params, k)
		if i < 0 {
			return nil, typeError("%s() got an unexpected keyword argument %s", fn, pyStrRepr(k))
		}
		if set[i] {
			return nil, typeError("%s() got multiple values for argument %s", fn, pyStrRepr(k))
		}
		out[i], set[i] = v, true
	}
	for i, pr := range params {
		if set[i] {
			continue
		}
		if pr.def == required {
			return nil, typeError("%s() missing required argument %s", fn, pyStrRepr(pr.name))
		}
		out[i] = pr.def
	}
	return out, nil
}

func paramIndex(params []param, name string) int {
	for i, pr := range params {
		if pr.name == name {
			return i
		}
	}
	return -1
}

func wantStr(fn string, x any) (string, error) {
	if s, ok := asString(x); ok {
		return s, nil
	}
	return "", typeError("%s() argument must be str, not %s", fn, pyTypeName(x))
}

func wantInt(fn string, x any) (int, error) {
	if n, ok := repeatCount(x); ok {
		return n, nil
	}
	return 0, typeError("'%s' object cannot be interpreted as an integer", pyTypeName(x))
}

// sameKind returns s as Markup when self is Markup (Markup methods keep it).
func sameKind(self any, s string) any {
	if _, ok := self.(markup); ok {
		return markup(s)
	}
	return s
}

func selfStr(self any) string {
	s, _ := asString(self)
	return s
}

// pyIsSpace is str.isspace for one character.
func pyIsSpace(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) }

var strMethods = map[string]method{
	"strip":        stripMethod("strip", true, true),
	"lstrip":       stripMethod("lstrip", true, false),
	"rstrip":       stripMethod("rstrip", false, true),
	"split":        splitMethod("split", false),
	"rsplit":       splitMethod("rsplit", true),
	"splitlines":   strSplitlines,
	"startswith":   affixMethod("startswith", strings.HasPrefix),
	"endswith":     affixMethod("endswith", strings.HasSuffix),
	"upper":        caseMethod("upper", strings.ToUpper),
	"lower":        caseMethod("lower", strings.ToLower),
	"casefold":     caseMethod("casefold", strings.ToLower),
	"title":        caseMethod("title", pyTitle),
	"capitalize":   caseMethod("capitalize", pyCapitalize),
	"swapcase":     caseMethod("swapcase", swapCase),
	"replace":      strReplace,
	"find":         findMethod("find", false, false),
	"rfind":        findMethod("rfind", true, false),
	"index":        findMethod("index", false, true),
	"rindex":       findMethod("rindex", true, true),
	"count":        strCount,
	"join":         strJoin,
	"center":       padMethod("center"),
	"ljust":        padMethod("ljust"),
	"rjust":        padMethod("rjust"),
	"zfill":        strZfill,
	"partition":    partitionMethod(false),
	"rpartition":   partitionMethod(true),
	"removeprefix": affixRemover("removeprefix", strings.TrimPrefix),
	"removesuffix": affixRemover("removesuffix", strings.TrimSuffix),
	"format":       strFormat,
	"isdigit":      predicate("isdigit", unicode.IsDigit),
	"isdecimal":    predicate("isdecimal", unicode.IsDigit),
	"isnumeric":    predicate("isnumeric", unicode.IsNumber),
	"isalpha":      predicate("isalpha", unicode.IsLetter),
	"isalnum":      predicate("isalnum", func(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }),
	"isspace":      predicate("isspace", pyIsSpace),
	"islower":      casedPredicate("islower", unicode.IsLower, unicode.IsUpper),
	"isupper":      casedPredicate("isupper", unicode.IsUpper, unicode.IsLower),
}

func stripMethod(fn string, left, right bool) method {
	return func(self any, args []any, kw map[string]any) (any, error) {
		a, err := bind(fn, args, kw, p("chars", nil))
		if err != nil {
			return nil, err
		}
		return stripStr(self, a[0], left, right, fn)
	}
}

// stripStr is str.strip/lstrip/rstrip(chars).
func stripStr(self, chars any, left, right bool, fn string) (any, error) {
	cut := pyIsSpace
	if chars != nil {
		set, err := wantStr(fn, chars)
		if err != nil {
			return nil, err
		}
		cut = func(r rune) bool { return strings.ContainsRune(set, r) }
	}
	s := selfStr(self)
	if left {
		s = strings.TrimLeftFunc(s, cut)
	}
	if right {
		s = strings.TrimRightFunc(s, cut)
	}
	return sameKind(self, s), nil
}

func splitMethod(fn string, fromRight bool) method {
	return func(self any, args []any, kw map[string]any) (any, error) {
		a, err := bind(fn, args, kw, p("sep", nil), p("maxsplit", -1))
		if err != nil {
			return nil, err
		}
		n, err := wantInt(fn, a[1])
		if err != nil {
			return nil, err
		}
		var parts []string
		if a[0] == nil {
			parts = splitWhitespace(selfStr(self), n, fromRight)
		} else {
			sep, err := wantStr(fn, a[0])
			if err != nil {
				return nil, err
			}
			if sep == "" {
				return nil, valueError("empty separator")
			}
			parts = splitSep(selfStr(self), sep, n, fromRight)
		}
		out := make([]any, len(parts))
		for i, s := range parts {
			out[i] = sameKind(self, s)
		}
		return out, nil
	}
}

func splitSep(s, sep string, n int, fromRight bool) []string {
	if n < 0 {
		return strings.Split(s, sep)
	}
	if !fromRight {
		return strings.SplitN(s, sep, n+1)
	}
	var parts []string
	for ; n > 0; n-- {
		i := strings.LastIndex(s, sep)
		if i < 0 {
			break
		}
		parts = append([]string{s[i+len(sep):]}, parts...)
		s = s[:i]
	}
	return append([]string{s}, parts...)
}

// splitWhitespace is str.split() / rsplit() without a separator.
func splitWhitespace(s string, n int, fromRight bool) []string {
	if !fromRight {
		var parts []string
		for {
			s = strings.TrimLeftFunc(s, pyIsSpace)
			if s == "" {
				return nonNil(parts)
			}
			if n >= 0 && len(parts) == n {
				return append(parts, s)
			}
			end := strings.IndexFunc(s, pyIsSpace)
			if end < 0 {
				return append(parts, s)
			}
			parts, s = append(parts, s[:end]), s[end:]
		}
	}
	var parts []string
	for {
		s = strings.TrimRightFunc(s, pyIsSpace)
		if s == "" {
			return nonNil(parts)
		}
		if n >= 0 && len(parts) == n {
			return append([]string{s}, parts...)
		}
		start := strings.LastIndexFunc(s, pyIsSpace)
		if start < 0 {
			return append([]string{s}, parts...)
		}
		_, size := utf8.DecodeRuneInString(s[start:])
		parts, s = append([]string{s[start+size:]}, parts...), s[:start]
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// lineBreak reports whether r ends a line for str.splitlines.
func lineBreak(r rune) bool {
	switch r {
	case '\n', '\r', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
		return true
	}
	return false
}

func strSplitlines(self any, args []any, kw map[string]any) (any, error) {
	a, err := bind("splitlines", args, kw, p("keepends", false))
	if err != nil {
		return nil, err
	}
	out := []any{}
	for _, line := range splitLines(selfStr(self), truth(a[0])) {
		out = append(out, sameKind(self, line))
	}
	return out, nil
}

func splitLines(s string, keepEnds bool) []string {
	var lines []string
	for s != "" {
		i := strings.IndexFunc(s, lineBreak)
		if i < 0 {
			lines = append(lines, s)
			break
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		if strings.HasPrefix(s[i:], "\r\n") {
			size = 2
		}
		end := i
		if keepEnds {
			end = i + size
		}
		lines, s = append(lines, s[:end]), s[i+size:]
	}
	return lines
}

// runeRange converts Python start/end code-point indices to a byte range.
func runeRange(s string, start, end any) (int, int, error) {
	n := runeLen(s)
	lo, hi := 0, n
	if start != nil {
		v, err := wantInt("slice", start)
		if err != nil {
			return 0, 0, err
		}
		lo = clampIndex(v, n)
	}
	if end != nil {
		v, err := wantInt("slice", end)
		if err != nil {
			return 0, 0, err
		}
		hi = clampIndex(v, n)
	}
	return byteOffset(s, lo), byteOffset(s, max(lo, hi)), nil
}

func clampIndex(i, n int) int {
	if i < 0 {
		i = max(i+n, 0)
	}
	return min(i, n)
}

func byteOffset(s string, runes int) int {
	for i := range s {
		if runes == 0 {
			return i
		}
		runes--
	}
	return len(s)
}

func affixMethod(fn string, test func(s, affix string) bool) method {
	return func(self any, args []any, kw map[string]any) (any, error) {
		a, err := bind(fn, args, kw, p("prefix", required), p("start", nil), p("end", nil))
		if err != nil {
			return nil, err
		}
		s := selfStr(self)
		lo, hi, err := runeRange(s, a[1], a[2])
		if err != nil {
			return nil, err
		}
		affixes := []any{a[0]}
		if t, ok := a[0].(pyTuple); ok {
			affixes = t
		}
		for _, x := range affixes {
			affix, err := wantStr(fn, x)
			if err != nil {
				return nil, err
			}
			if test(s[lo:hi], affix) {
				return true, nil
			}
		}
		return false, nil
	}
}

func affixRemover(fn string, cut func(s, affix string) string) method {
	return func(self any, args []any, kw map[string]any) (any, error) {
		a, err := bind(fn, args, kw, p("affix", required))
		if err != nil {
			return nil, err
		}
		affix, err := wantStr(fn, a[0])
		if err != nil {
			return nil, err
		}
		return sameKind(self, cut(selfStr(self), affix)), nil
	}
}

func caseMethod(fn string, f func(string) string) method {
	return func(self any, args []any, kw map[string]any) (any, error) {
		if _, err := bind(fn, args, kw); err != nil {
			return nil, err
		}
		return sameKind(self, f(selfStr(self))), nil
	}
}

// pyTitle is str.title: a cased character starts a word unless it follows
// another cased character.
func pyTitle(s string) string {
	var b strings.Builder
	prevCased := false
	for _, r := range s {
		if prevCased {
			b.WriteRune(unicode.ToLower(r))
		} else {
			b.WriteRune(unicode.ToTitle(r))
		}
		prevCased = unicode.IsUpper(r) || unicode.IsLower(r) || unicode.IsTitle(r)
	}
	return b.String()
}

func pyCapitalize(s string) string {
	r, size := utf8.DecodeRuneInString(s)
	if size == 0 {
		return s
	}
	return string(unicode.ToTitle(r)) + strings.ToLower(s[size:])
}

func swapCase(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsUpper(r) {
			return unicode.ToLower(r)
		}
		return unicode.ToUpper(r)
	}, s)
}

func strReplace(self any, args []any, kw map[string]any) (any, error) {
	a, err := bind("replace", args, kw, p("old", required), p("new", required), p("count", -1))
	if err != nil {
		return nil, err
	}
	return replaceStr(self, a[0], a[1], a[2])
}

func replaceStr(self, oldV, newV, countV any) (any, error) {
	old, err := wantStr("replace", oldV)
	if err != nil {
		return nil, err
	}
	repl, err := wantStr("replace", newV)
	if err != nil {
		return nil, err
	}
	n := -1
	if countV != nil {
		if n, err = wantInt("replace", countV); err != nil {
			return nil, err
		}
	}
	s := selfStr(self)
	if old == "" && len(repl)*(runeLen(s)+1) > maxStringBytes || strings.Count(s, old)*len(repl) > maxStringBytes {
		return nil, errTooLong
	}
	return sameKind(self, strings.Replace(s, old, repl, n)), nil
}

func findMethod(fn string, last, raise bool) method {
	return func(self any, args []any, kw map[string]any) (any, error) {
		a, err := bind(fn, args, kw, p("sub", required), p("start", nil), p("end", nil))
		if err != nil {
			return nil, err
		}
		sub, err := wantStr(fn, a[0])
		if err != nil {
			return nil, err
		}
		s := selfStr(self)
		lo, hi, err := runeRange(s, a[1], a[2])
		if err != nil {
			return nil, err
		}
		i := strings.Index(s[lo:hi], sub)
		if last {
			i = strings.LastIndex(s[lo:hi], sub)
		}
		switch {
		case i >= 0:
			return runeLen(s[:lo+i]), nil
		case raise:
			return nil, valueError("substring not found")
		}
		return -1, nil
	}
}

func strCount(self any, args []any, kw map[string]any) (any, error) {
	a, err := bind("count", args, kw, p("sub", required), p("start", nil), p("end", nil))
	if err != nil {
		return nil, err
	}
	sub, err := wantStr("count", a[0])
	if err != nil {
		return nil, err
	}
	s := selfStr(self)
	lo, hi, err := runeRange(s, a[1], a[2])
	if err != nil {
		return nil, err
	}
	if sub == "" {
		return runeLen(s[lo:hi]) + 1, nil
	}
	return strings.Count(s[lo:hi], sub), nil
}

func strJoin(self any, args []any, kw map[string]any) (any, error) {
	a, err := bind("join", args, kw, p("iterable", required))
	if err != nil {
		return nil, err
	}
	items, err := iterate(a[0])
	if err != nil {
		return nil, err
	}
	parts := make([]string, len(items))
	for i, x := range items {
		s, ok := asString(x)
		if !ok {
			return nil, typeError("sequence item %d: expected str instance, %s found", i, pyTypeName(x))
		}
		parts[i] = s
	}
	s := strings.Join(parts, selfStr(self))
	if err := checkLen(s); err != nil {
		return nil, err
	}
	return sameKind(self, s), nil
}

func padMethod(fn string) method {
	return func(self any, args []any, kw map[string]any) (any, error) {
		a, err := bind(fn, args, kw, p("width", required), p("fillchar", " "))
		if err != nil {
			return nil, err
		}
		width, err := wantInt(fn, a[0])
		if err != nil {
			return nil, err
		}
		fill, err := wantStr(fn, a[1])
		if err != nil || runeLen(fill) != 1 {
			return nil, typeError("The fill character must be exactly one character long")
		}
		return padStr(self, fn, width, fill)
	}
}

// padStr is str.center/ljust/rjust; center puts the odd pad on the right
// unless the string length is odd (CPython's rule).
func padStr(self any, fn string, width int, fill string) (any, error) {
	s := selfStr(self)
	pad := width - runeLen(s)
	if pad <= 0 {
		return self, nil
	}
	if pad > maxStringBytes {
		return nil, errTooLong
	}
	left := 0
	switch fn {
	case "rjust":
		left = pad
	case "center":
		left = pad/2 + (pad & width & 1)
	}
	return sameKind(self, strings.Repeat(fill, left)+s+strings.Repeat(fill, pad-left)), nil
}

func strZfill(self any, args []any, kw map[string]any) (any, error) {
	a, err := bind("zfill", args, kw, p("width", required))
	if err != nil {
		return nil, err
	}
	width, err := wantInt("zfill", a[0])
	if err != nil {
		return nil, err
	}
	s := selfStr(self)
	sign := ""
	if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") {
		sign, s = s[:1], s[1:]
	}
	pad := width - runeLen(s) - len(sign)
	if pad <= 0 {
		return self, nil
	}
	if pad > maxStringBytes {
		return nil, errTooLong
	}
	return sameKind(self, sign+strings.Repeat("0", pad)+s), nil
}

func partitionMethod(fromRight bool) method {
	fn := map[bool]string{false: "partition", true: "rpartition"}[fromRight]
	return func(self any, args []any, kw map[string]any) (any, error) {
		a, err := bind(fn, args, kw, p("sep", required))
		if err != nil {
			return nil, err
		}
		sep, err := wantStr(fn, a[0])
		if err != nil {
			return nil, err
		}
		if sep == "" {
			return nil, valueError("empty separator")
		}
		s := selfStr(self)
		i := strings.Index(s, sep)
		if fromRight {
			i = strings.LastIndex(s, sep)
		}
		switch {
		case i >= 0:
			return pyTuple{sameKind(self, s[:i]), sameKind(self, sep), sameKind(self, s[i+len(sep):])}, nil
		case fromRight:
			return pyTuple{sameKind(self, ""), sameKind(self, ""), self}, nil
		}
		return pyTuple{self, sameKind(self, ""), sameKind(self, "")}, nil
	}
}

func predicate(fn string, f func(rune) bool) method {
	return func(self any, args []any, kw map[string]any) (any, error) {
		if _, err := bind(fn, args, kw); err != nil {
			return nil, err
		}
		s := selfStr(self)
		return s != "" && strings.IndexFunc(s, func(r rune) bool { return !f(r) }) < 0, nil
	}
}

// casedPredicate is islower/isupper: at least one cased character and none
// of the opposite case.
func casedPredicate(fn string, is, opposite func(rune) bool) method {
	return func(self any, args []any, kw map[string]any) (any, error) {
		if _, err := bind(fn, args, kw); err != nil {
			return nil, err
		}
		s := selfStr(self)
		return strings.IndexFunc(s, is) >= 0 && strings.IndexFunc(s, opposite) < 0, nil
	}
}

// strFormat is str.format with automatic ({}), numbered ({0}) and named
// ({name}) fields and !s / !r conversions; format specs are not supported.
func strFormat(self any, args []any, kw map[string]any) (any, error) {
	s, next := selfStr(self), 0
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c == '{' || c == '}') && i+1 < len(s) && s[i+1] == c {
			b.WriteByte(c)
			i++
			continue
		}
		if c == '}' {
			return nil, valueError("Single '}' encountered in format string")
		}
		if c != '{' {
			b.WriteByte(c)
			continue
		}
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return nil, valueError("Single '{' encountered in format string")
		}
		v, err := formatField(s[i+1:i+end], args, kw, &next)
		if err != nil {
			return nil, err
		}
		b.WriteString(v)
		i += end
	}
	return sameKind(self, b.String()), nil
}

func formatField(field string, args []any, kw map[string]any, next *int) (string, error) {
	name, conv, _ := strings.Cut(field, "!")
	if strings.ContainsRune(name, ':') || strings.ContainsRune(conv, ':') {
		return "", valueError("format specs are not supported")
	}
	var v any
	switch n, err := fmt.Sscanf(name+"\n", "%d\n", new(int)); {
	case name == "":
		if *next >= len(args) {
			return "", &Error{Kind: "IndexError", Msg: "Replacement index out of range for positional args tuple"}
		}
		v, *next = args[*next], *next+1
	case n == 1 && err == nil:
		var i int
		fmt.Sscanf(name, "%d", &i)
		if i < 0 || i >= len(args) {
			return "", &Error{Kind: "IndexError", Msg: "Replacement index out of range for positional args tuple"}
		}
		v = args[i]
	default:
		x, ok := kw[name]
		if !ok {
			return "", &Error{Kind: "KeyError", Msg: pyStrRepr(name)}
		}
		v = x
	}
	if conv == "r" {
		return pyRepr(v), nil
	}
	return pyStr(v), nil
}

var dictMethods = map[string]method{
	"items":  dictView("items", dictItems),
	"keys":   dictView("keys", dictKeys),
	"values": dictView("values", dictValues),
	"get":    dictGetMethod,
	"copy":   dictCopy,
}

func dictValues(d *exec.Dict) []any {
	out := make([]any, len(d.Pairs))
	for i, p := range d.Pairs {
		out[i] = norm(p.Value)
	}
	return out
}

// dictView returns d.items()/keys()/values() as a list (Python returns a
// view; they iterate, test and count the same).
func dictView(fn string, f func(*exec.Dict) []any) method {
	return func(self any, args []any, kw map[string]any) (any, error) {
		if _, err := bind(fn, args, kw); err != nil {
			return nil, err
		}
		return f(self.(*exec.Dict)), nil
	}
}

func dictGetMethod(self any, args []any, kw map[string]any) (any, error) {
	a, err := bind("get", args, kw, p("key", required), p("default", nil))
	if err != nil {
		return nil, err
	}
	if v, ok := dictGet(self.(*exec.Dict), a[0]); ok {
		return v, nil
	}
	return a[1], nil
}

func dictCopy(self any, args []any, kw map[string]any) (any, error) {
	if _, err := bind("copy", args, kw); err != nil {
		return nil, err
	}
	d := exec.NewDict()
	for _, p := range self.(*exec.Dict).Pairs {
		d.Pairs = append(d.Pairs, &exec.Pair{Key: p.Key, Value: p.Value})
	}
	return d, nil
}

var seqMethods = map[string]method{
	"index": seqIndex,
	"count": seqCount,
	"copy": func(self any, args []any, kw map[string]any) (any, error) {
		if _, err := bind("copy", args, kw); err != nil {
			return nil, err
		}
		items, _ := seqOf(self)
		return append([]any{}, items...), nil
	},
}

func seqIndex(self any, args []any, kw map[string]any) (any, error) {
	a, err := bind("index", args, kw, p("value", required))
	if err != nil {
		return nil, err
	}
	items, _ := seqOf(self)
	for i, x := range items {
		if pyEq(normAny(x), a[0]) {
			return i, nil
		}
	}
	return nil, valueError("%s is not in %s", pyRepr(a[0]), pyTypeName(self))
}

func seqCount(self any, args []any, kw map[string]any) (any, error) {
	a, err := bind("count", args, kw, p("value", required))
	if err != nil {
		return nil, err
	}
	items, _ := seqOf(self)
	n := 0
	for _, x := range items {
		if pyEq(normAny(x), a[0]) {
			n++
		}
	}
	return n, nil
}
