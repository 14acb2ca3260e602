package chat

import (
	"html"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/nikolalohinski/gonja/v2/exec"
)

// The jinja2 3.1 builtin filters, on the Python object model. They replace
// gonja's own set, whose results differ from Python's (sorted dict keys,
// Go formatting of values, strings iterated as bytes).

func builtinFilters() map[string]pyFilter {
	return map[string]pyFilter{
		"abs": filterAbs, "attr": filterAttr, "batch": filterBatch,
		"capitalize": strFilter("capitalize", pyCapitalize), "center": filterCenter,
		"count": filterLength, "d": filterDefault, "default": filterDefault,
		"dictsort": filterDictsort, "e": filterEscape, "escape": filterEscape,
		"first": filterFirst, "float": filterFloat, "forceescape": filterForceEscape,
		"format": filterFormat, "indent": filterIndent, "int": filterInt,
		"items": filterItems, "join": filterJoin, "last": filterLast,
		"length": filterLength, "list": filterList, "lower": strFilter("lower", strings.ToLower),
		"map": filterMap, "max": aggregate("max", 1), "min": aggregate("min", -1),
		"reject": selectFilter(false, false), "rejectattr": selectFilter(false, true),
		"replace": filterReplace, "reverse": filterReverse, "round": filterRound,
		"safe": filterSafe, "select": selectFilter(true, false),
		"selectattr": selectFilter(true, true), "sort": filterSort,
		"string": filterString, "striptags": filterStriptags, "sum": filterSum,
		"title": strFilter("title", jinjaTitle), "tojson": filterToJSON, "trim": filterTrim,
		"truncate": filterTruncate, "unique": filterUnique,
		"upper": strFilter("upper", strings.ToUpper), "wordcount": filterWordcount,
	}
}

// softStr is jinja2's soft_str: str(x), but Markup stays Markup.
func softStr(x any) any {
	if m, ok := x.(markup); ok {
		return m
	}
	return pyStr(x)
}

func strFilter(fn string, f func(string) string) pyFilter {
	return func(_ cx, in any, args []any, kw map[string]any) (any, error) {
		if _, err := bind(fn, args, kw); err != nil {
			return nil, err
		}
		s := softStr(in)
		return sameKind(s, f(selfStr(s))), nil
	}
}

// jinjaTitle is the title filter (not str.title): words start after
// whitespace, '-', and opening brackets.
var wordBeginning = regexp.MustCompile(`([-\s({\[<]+)`)

func jinjaTitle(s string) string {
	var b strings.Builder
	last := 0
	for _, loc := range wordBeginning.FindAllStringIndex(s, -1) {
		b.WriteString(titleWord(s[last:loc[0]]))
		b.WriteString(s[loc[0]:loc[1]])
		last = loc[1]
	}
	b.WriteString(titleWord(s[last:]))
	return b.String()
}

func titleWord(w string) string {
	if w == "" {
		return w
	}
	r := []rune(w)
	return strings.ToUpper(string(r[0])) + strings.ToLower(string(r[1:]))
}

func filterAbs(_ cx, in any, args []any, kw map[string]any) (any, error) {
	i, f, isF, ok := asNumber(in)
	switch {
	case !ok:
		return nil, typeError("bad operand type for abs(): '%s'", pyTypeName(in))
	case isF:
		return math.Abs(f), nil
	case i < 0:
		return checkedInt("-", 0, i)
	}
	return i, nil
}

// filterAttr looks up a Python attribute only (never an item).
func filterAttr(_ cx, in any, args []any, kw map[string]any) (any, error) {
	a, err := bind("attr", args, kw, p("name", required))
	if err != nil {
		return nil, err
	}
	if u, ok := in.(undefined); ok {
		return nil, u.err()
	}
	name := pyStr(a[0])
	if v, ok := attribute(in, name); ok {
		return v, nil
	}
	return undefinedAttr(in, name), nil
}

func filterBatch(_ cx, in any, args []any, kw map[string]any) (any, error) {
	a, err := bind("batch", args, kw, p("linecount", required), p("fill_with", nil))
	if err != nil {
		return nil, err
	}
	n, err := wantInt("batch", a[0])
	if err != nil {
		return nil, err
	}
	items, err := iterate(in)
	if err != nil {
		return nil, err
	}
	n = max(n, 1)
	var out []any
	for i := 0; i < len(items); i += n {
		row := append([]any{}, items[i:min(i+n, len(items))]...)
		for len(row) < n && a[1] != nil {
			row = append(row, a[1])
		}
		out = append(out, row)
	}
	return &generator{typeName: "generator", items: out}, nil
}

func filterCenter(_ cx, in any, args []any, kw map[string]any) (any, error) {
	a, err := bind("center", args, kw, p("width", 80))
	if err != nil {
		return nil, err
	}
	w, err := wantInt("center", a[0])
	if err != nil {
		return nil, err
	}
	return padStr(pyStr(in), "center", w, " ")
}

func filterLength(_ cx, in any, args []any, kw map[string]any) (any, error) {
	if _, err := bind("length", args, kw); err != nil {
		return nil, err
	}
	return pyLen(in)
}

// pyLen is Python's len(x).
func pyLen(x any) (int, error) {
	switch t := x.(type) {
	case string:
		return runeLen(t), nil
	case markup:
		return runeLen(string(t)), nil
	case []any:
		return len(t), nil
	case pyTuple:
		return len(t), nil
	case *exec.Dict:
		return len(t.Pairs), nil
	case undefined:
		return 0, nil
	}
	return 0, typeError("object of type '%s' has no len()", pyTypeName(x))
}

func filterDefault(_ cx, in any, args []any, kw map[string]any) (any, error) {
	a, err := bind("default", args, kw, p("default_value", ""), p("boolean", false))
	if err != nil {
		return nil, err
	}
	if _, ok := in.(undefined); ok || (truth(a[1]) && !truth(in)) {
		return a[0], nil
	}
	return in, nil
}

func filterDictsort(c cx, in any, args []any, kw map[string]any) (any, error) {
	a, err := bind("dictsort", args, kw, p("case_sensitive", false), p("by", "key"), p("reverse", false))
	if err != nil {
		return nil, err
	}
	pos := map[any]int{"key": 0, "value": 1}
	i, ok := pos[a[1]]
	if !ok {
		return nil, &Error{Kind: "FilterArgumentError", Msg: `You can only sort by either "key" or "value"`}
	}
	d, ok := in.(*exec.Dict)
	if !ok {
		return getattr(c, in, "items") // raises for Undefined, fails like Python otherwise
	}
	items := dictItems(d)
	err = sortBy(items, func(x any) any { return caseKey(x.(pyTuple)[i], truth(a[0])) }, truth(a[2]))
	return items, err
}

// caseKey is jinja2's ignore_case: strings compare lowercased unless
// case_sensitive.
func caseKey(x any, caseSensitive bool) any {
	if s, ok := asString(x); ok && !caseSensitive {
		return strings.ToLower(s)
	}
	return x
}

// sortBy sorts stably by key like sorted(items, key=..., reverse=...).
func sortBy(items []any, key func(any) any, reverse bool) error {
	keys := make([]any, len(items))
	for i, x := range items {
		keys[i] = key(x)
	}
	idx := make([]int, len(items))
	for i := range idx {
		idx[i] = i
	}
	var err error
	sort.SliceStable(idx, func(i, j int) bool {
		a, b := keys[idx[i]], keys[idx[j]]
		if reverse {
			a, b = b, a
		}
		c, e := pyCompare("<", a, b)
		if e != nil && err == nil {
			err = e
		}
		return c < 0
	})
	sorted := make([]any, len(items))
	for i, j := range idx {
		sorted[i] = items[j]
	}
	copy(items, sorted)
	return err
}

func filterEscape(_ cx, in any, args []any, kw map[string]any) (any, error) {
	if m, ok := in.(markup); ok {
		return m, nil
	}
	return markup(htmlEscape(pyStr(in))), nil
}

func filterForceEscape(_ cx, in any, args []any, kw map[string]any) (any, error) {
	return markup(htmlEscape(pyStr(in))), nil
}

func filterSafe(_ cx, in any, args []any, kw map[string]any) (any, error) {
	return markup(pyStr(in)), nil
}

func filterString(_ cx, in any, args []any, kw map[string]any) (any, error) {
	return softStr(in), nil
}

func filterFirst(_ cx, in any, args []any, kw map[string]any) (any, error) {
	if g, ok := in.(*generator); ok {
		if g.used || len(g.items) == 0 {
			g.used = true
			return newUndefined("UndefinedError", "No first item, sequence was empty."), nil
		}
		x := g.items[0]
		g.items = g.items[1:]
		return normAny(x), nil
	}
	items, err := iterate(in)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return newUndefined("UndefinedError", "No first item, sequence was empty."), nil
	}
	return items[0], nil
}

func filterLast(_ cx, in any, args []any, kw map[string]any) (any, error) {
	if _, ok := in.(*generator); ok {
		return nil, typeError("'%s' object is not reversible", pyTypeName(in))
	}
	items, err := iterate(in)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return newUndefined("UndefinedError", "No last item, sequence was empty."), nil
	}
	return items[len(items)-1], nil
}

func filterFloat(_ cx, in any, args []any, kw map[string]any) (any, error) {
	a, err := bind("float", args, kw, p("default", 0.0))
	if err != nil {
		return nil, err
	}
	if u, ok := in.(undefined); ok {
		return nil, u.err()
	}
	if f, ok := pyFloat(in); ok {
		return f, nil
	}
	return a[0], nil
}

// pyFloat is Python's float(x) where it succeeds.
func pyFloat(x any) (float64, bool) {
	if _, f, _, ok := asNumber(x); ok {
		return f, true
	}
	s, ok := asString(x)
	if !ok {
		return 0, false
	}
	s = strings.TrimFunc(s, pyIsSpace)
	if strings.ContainsAny(s, "xXpP_") && !strings.Contains(strings.ToLower(s), "inf") {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil || isRangeErr(err)
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

func filterInt(_ cx, in any, args []any, kw map[string]any) (any, error) {
	a, err := bind("int", args, kw, p("default", 0), p("base", 10))
	if err != nil {
		return nil, err
	}
	if u, ok := in.(undefined); ok {
		return nil, u.err()
	}
	base, err := wantInt("int", a[1])
	if err != nil {
		return nil, err
	}
	if v, ok := pyInt(in, base); ok {
		return v, nil
	}
	return a[0], nil
}

// pyInt is jinja2's int filter conversion: int(x, base), else int(float(x)).
func pyInt(x any, base int) (int, bool) {
	if i, f, isF, ok := asNumber(x); ok {
		if isF {
			if math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 9.2e18 {
				return 0, false
			}
			return int(f), true
		}
		return i, true
	}
	s, ok := asString(x)
	if !ok {
		return 0, false
	}
	t := strings.ReplaceAll(strings.TrimFunc(s, pyIsSpace), "_", "")
	if base == 16 {
		t = strings.TrimPrefix(strings.TrimPrefix(t, "0x"), "0X")
	}
	if v, err := strconv.ParseInt(t, base, 64); err == nil {
		return int(v), true
	}
	if f, ok := pyFloat(s); ok {
		return pyInt(f, 10)
	}
	return 0, false
}

func filterFormat(_ cx, in any, args []any, kw map[string]any) (any, error) {
	if len(args) > 0 && len(kw) > 0 {
		return nil, &Error{Kind: "FilterArgumentError", Msg: "can't handle positional and keyword arguments at the same time"}
	}
	var spec any = pyTuple(args)
	if len(kw) > 0 {
		spec = dictFromMap(kw)
	}
	return percentFormat(selfStr(softStr(in)), softStr(in), spec)
}

func filterIndent(_ cx, in any, args []any, kw map[string]any) (any, error) {
	a, err := bind("indent", args, kw, p("width", 4), p("first", false), p("blank", false))
	if err != nil {
		return nil, err
	}
	ind, ok := asString(a[0])
	if !ok {
		n, err := wantInt("indent", a[0])
		if err != nil {
			return nil, err
		}
		ind = strings.Repeat(" ", min(max(n, 0), 1024))
	}
	out := indentLines(pyStr(in)+"\n", ind, truth(a[2]))
	if truth(a[1]) {
		out = ind + out
	}
	if err := checkLen(out); err != nil {
		return nil, err
	}
	return sameKind(softStr(in), out), nil
}

// indentLines is the body of jinja2's do_indent after its s += "\n" quirk.
func indentLines(s, ind string, blank bool) string {
	lines := splitLines(s, false)
	if blank {
		return strings.Join(lines, "\n"+ind)
	}
	var b strings.Builder
	b.WriteString(lines[0])
	for _, l := range lines[1:] {
		b.WriteString("\n")
		if l != "" {
			b.WriteString(ind)
		}
		b.WriteString(l)
	}
	return b.String()
}

func filterItems(_ cx, in any, args []any, kw map[string]any) (any, error) {
	switch t := in.(type) {
	case undefined:
		return &generator{typeName: "generator"}, nil
	case *exec.Dict:
		return &generator{typeName: "generator", items: dictItems(t)}, nil
	}
	return nil, typeError("Can only get item pairs from a mapping.")
}

func filterJoin(c cx, in any, args []any, kw map[string]any) (any, error) {
	a, err := bind("join", args, kw, p("d", ""), p("attribute", nil))
	if err != nil {
		return nil, err
	}
	items, err := iterate(in)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	for i, x := range items {
		if a[1] != nil {
			if x, err = attrPath(x, a[1], nil); err != nil {
				return nil, err
			}
		}
		if i > 0 {
			b.WriteString(pyStr(a[0]))
		}
		b.WriteString(pyStr(x))
		if b.Len() > maxStringBytes {
			return nil, errTooLong
		}
	}
	return b.String(), nil
}

func filterList(_ cx, in any, args []any, kw map[string]any) (any, error) {
	return iterate(in)
}

// attrPath is jinja2's make_attrgetter: "a.b.0" looked up with getitem, with
// default replacing an Undefined result.
func attrPath(x, path, def any) (any, error) {
	var parts []any
	if s, ok := path.(string); ok {
		for _, part := range strings.Split(s, ".") {
			if n, err := strconv.Atoi(part); err == nil {
				parts = append(parts, n)
			} else {
				parts = append(parts, part)
			}
		}
	} else {
		parts = []any{path}
	}
	var err error
	for _, part := range parts {
		if x, err = getitem(x, part); err != nil {
			return nil, err
		}
	}
	if _, ok := x.(undefined); ok && def != nil {
		return def, nil
	}
	return x, nil
}

func filterMap(c cx, in any, args []any, kw map[string]any) (any, error) {
	var f func(any) (any, error)
	if attr, ok := kw["attribute"]; ok {
		def := kw["default"]
		f = func(x any) (any, error) { return attrPath(x, attr, def) }
	} else {
		if len(args) == 0 {
			return nil, &Error{Kind: "FilterArgumentError", Msg: "map requires a filter argument"}
		}
		name := pyStr(args[0])
		f = func(x any) (any, error) { return c.applyFilter(name, x, args[1:], kw) }
	}
	return mapItems(in, f)
}

// mapItems is the body of map/select: nothing for a falsy input ("if value:").
func mapItems(in any, f func(any) (any, error)) (any, error) {
	g := &generator{typeName: "generator"}
	if !truth(in) {
		return g, nil
	}
	items, err := iterate(in)
	if err != nil {
		return nil, err
	}
	for _, x := range items {
		v, err := f(x)
		if err != nil {
			return nil, err
		}
		g.items = append(g.items, v)
	}
	return g, nil
}

func (c cx) applyFilter(name string, x any, args []any, kw map[string]any) (any, error) {
	if strings.HasPrefix(name, "@") || !c.e.Environment.Filters.Exists(name) {
		return nil, &Error{Kind: "TemplateRuntimeError", Msg: "No filter named " + pyStrRepr(name) + "."}
	}
	return valueResult(c.e.ExecuteFilterByName(name, pyValue(x), varArgs(args, kw)))
}

func (c cx) applyTest(name string, x any, args []any) (bool, error) {
	if !c.e.Environment.Tests.Exists(name) {
		return false, &Error{Kind: "TemplateRuntimeError", Msg: "No test named " + pyStrRepr(name) + "."}
	}
	v, err := valueResult(c.e.ExecuteTestByName(name, pyValue(x), varArgs(args, nil)))
	return truth(v), err
}

func varArgs(args []any, kw map[string]any) *exec.VarArgs {
	va := exec.NewVarArgs()
	for _, a := range args {
		va.Args = append(va.Args, pyValue(a))
	}
	for k, v := range kw {
		va.KwArgs[k] = pyValue(v)
	}
	return va
}

// selectFilter builds select, reject, selectattr and rejectattr.
func selectFilter(keep, byAttr bool) pyFilter {
	return func(c cx, in any, args []any, kw map[string]any) (any, error) {
		var attr any
		if byAttr {
			if len(args) == 0 {
				return nil, typeError("Missing parameter for attribute name")
			}
			attr, args = args[0], args[1:]
		}
		matches := func(x any) (bool, error) {
			if byAttr {
				var err error
				if x, err = attrPath(x, attr, nil); err != nil {
					return false, err
				}
			}
			if len(args) == 0 {
				return truth(x), nil
			}
			return c.applyTest(pyStr(args[0]), x, args[1:])
		}
		g, err := mapItems(in, func(x any) (any, error) { return x, nil })
		if err != nil {
			return nil, err
		}
		gen := g.(*generator)
		kept := gen.items[:0]
		for _, x := range gen.items {
			ok, err := matches(x)
			if err != nil {
				return nil, err
			}
			if ok == keep {
				kept = append(kept, x)
			}
		}
		gen.items = kept
		return gen, nil
	}
}

func aggregate(fn string, sign int) pyFilter {
	return func(_ cx, in any, args []any, kw map[string]any) (any, error) {
		a, err := bind(fn, args, kw, p("case_sensitive", false), p("attribute", nil))
		if err != nil {
			return nil, err
		}
		items, err := iterate(in)
		if err != nil {
			return nil, err
		}
		if len(items) == 0 {
			return newUndefined("UndefinedError", "No aggregated item, sequence was empty."), nil
		}
		best, bestKey := items[0], any(nil)
		for i, x := range items {
			k, err := sortKey(x, a[1], truth(a[0]))
			if err != nil {
				return nil, err
			}
			if i > 0 {
				c, err := pyCompare(">", k, bestKey)
				if err != nil {
					return nil, err
				}
				if c*sign <= 0 {
					continue
				}
			}
			best, bestKey = x, k
		}
		return best, nil
	}
}

// sortKey is the key of sort/unique/min/max: an attribute path, lowercased
// unless case-sensitive.
func sortKey(x, attr any, caseSensitive bool) (any, error) {
	if attr != nil {
		var err error
		if x, err = attrPath(x, attr, nil); err != nil {
			return nil, err
		}
	}
	return caseKey(x, caseSensitive), nil
}

func filterReplace(_ cx, in any, args []any, kw map[string]any) (any, error) {
	a, err := bind("replace", args, kw, p("old", required), p("new", required), p("count", nil))
	if err != nil {
		return nil, err
	}
	return replaceStr(pyStr(in), pyStr(a[0]), pyStr(a[1]), a[2])
}

func filterReverse(_ cx, in any, args []any, kw map[string]any) (any, error) {
	if s, ok := asString(in); ok {
		r := []rune(s)
		for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
			r[i], r[j] = r[j], r[i]
		}
		return sameKind(in, string(r)), nil
	}
	items, err := iterate(in)
	if err != nil {
		return nil, err
	}
	rev := make([]any, len(items))
	for i, x := range items {
		rev[len(items)-1-i] = x
	}
	switch in.(type) {
	case *generator:
		return rev, nil // reversed() fails on generators; jinja falls back to a list
	case *exec.Dict:
		return &generator{typeName: "dict_reversekeyiterator", items: rev}, nil
	}
	return &generator{typeName: "list_reverseiterator", items: rev}, nil
}

func filterRound(_ cx, in any, args []any, kw map[string]any) (any, error) {
	a, err := bind("round", args, kw, p("precision", 0), p("method", "common"))
	if err != nil {
		return nil, err
	}
	prec, err := wantInt("round", a[0])
	if err != nil {
		return nil, err
	}
	i, f, isF, ok := asNumber(in)
	if !ok {
		return nil, typeError("type %s doesn't define __round__ method", pyTypeName(in))
	}
	switch a[1] {
	case "common":
		if !isF {
			return i, nil
		}
		return roundHalfEven(f, prec), nil
	case "ceil", "floor":
		scale := math.Pow(10, float64(prec))
		if a[1] == "ceil" {
			return math.Ceil(f*scale) / scale, nil
		}
		return math.Floor(f*scale) / scale, nil
	}
	return nil, &Error{Kind: "FilterArgumentError", Msg: "method must be common, ceil or floor"}
}

// roundHalfEven is Python's round(float, n): correctly rounded on the exact
// binary value, ties to even.
func roundHalfEven(f float64, prec int) float64 {
	if math.IsInf(f, 0) || math.IsNaN(f) || prec > 300 {
		return f
	}
	if prec >= 0 {
		v, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'f', prec, 64), 64)
		return v
	}
	scale := math.Pow(10, float64(-prec))
	return math.RoundToEven(f/scale) * scale
}

func filterSort(_ cx, in any, args []any, kw map[string]any) (any, error) {
	a, err := bind("sort", args, kw, p("reverse", false), p("case_sensitive", false), p("attribute", nil))
	if err != nil {
		return nil, err
	}
	items, err := iterate(in)
	if err != nil {
		return nil, err
	}
	var keyErr error
	err = sortBy(items, func(x any) any {
		k, err := sortKey(x, a[2], truth(a[1]))
		if err != nil && keyErr == nil {
			keyErr = err
		}
		return k
	}, truth(a[0]))
	if keyErr != nil {
		return nil, keyErr
	}
	return items, err
}

var (
	htmlComment = regexp.MustCompile(`(?s)<!--.*?-->`)
	htmlTag     = regexp.MustCompile(`(?s)<.*?>`)
)

func filterStriptags(_ cx, in any, args []any, kw map[string]any) (any, error) {
	s := htmlTag.ReplaceAllString(htmlComment.ReplaceAllString(pyStr(in), ""), "")
	return html.UnescapeString(strings.Join(splitWhitespace(s, -1, false), " ")), nil
}

func filterSum(_ cx, in any, args []any, kw map[string]any) (any, error) {
	a, err := bind("sum", args, kw, p("attribute", nil), p("start", 0))
	if err != nil {
		return nil, err
	}
	items, err := iterate(in)
	if err != nil {
		return nil, err
	}
	total := a[1]
	for _, x := range items {
		if a[0] != nil {
			if x, err = attrPath(x, a[0], nil); err != nil {
				return nil, err
			}
		}
		if total, err = binop("+", total, x); err != nil {
			return nil, err
		}
	}
	return total, nil
}

func filterTrim(_ cx, in any, args []any, kw map[string]any) (any, error) {
	a, err := bind("trim", args, kw, p("chars", nil))
	if err != nil {
		return nil, err
	}
	return stripStr(softStr(in), a[0], true, true, "strip")
}

func filterTruncate(_ cx, in any, args []any, kw map[string]any) (any, error) {
	a, err := bind("truncate", args, kw, p("length", 255), p("killwords", false), p("end", "..."), p("leeway", 5))
	if err != nil {
		return nil, err
	}
	length, err := wantInt("truncate", a[0])
	if err != nil {
		return nil, err
	}
	leeway, err := wantInt("truncate", a[3])
	if err != nil {
		return nil, err
	}
	s, end := []rune(pyStr(in)), pyStr(a[2])
	if length < runeLen(end) || leeway < 0 {
		return nil, &Error{Kind: "AssertionError", Msg: "expected length >= len(end) and leeway >= 0"}
	}
	if len(s) <= length+leeway {
		return string(s), nil
	}
	cut := string(s[:length-runeLen(end)])
	if !truth(a[1]) {
		if i := strings.LastIndex(cut, " "); i >= 0 {
			cut = cut[:i]
		}
	}
	return cut + end, nil
}

func filterUnique(_ cx, in any, args []any, kw map[string]any) (any, error) {
	a, err := bind("unique", args, kw, p("case_sensitive", false), p("attribute", nil))
	if err != nil {
		return nil, err
	}
	items, err := iterate(in)
	if err != nil {
		return nil, err
	}
	g := &generator{typeName: "generator"}
	var seen []any
	for _, x := range items {
		k, err := sortKey(x, a[1], truth(a[0]))
		if err != nil {
			return nil, err
		}
		if !containsEq(seen, k) {
			seen = append(seen, k)
			g.items = append(g.items, x)
		}
	}
	return g, nil
}

func containsEq(items []any, x any) bool {
	for _, y := range items {
		if pyEq(y, x) {
			return true
		}
	}
	return false
}

func filterWordcount(_ cx, in any, args []any, kw map[string]any) (any, error) {
	n, inWord := 0, false
	for _, r := range pyStr(in) {
		w := r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r)
		if w && !inWord {
			n++
		}
		inWord = w
	}
	return n, nil
}
