package chat

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/nikolalohinski/gonja/v2/exec"
)

// htmlEscape is markupsafe.escape on a plain string.
func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "'", "&#39;", `"`, "&#34;").Replace(s)
}

// percentFormat is Python's printf-style "format % args" (str.__mod__ and
// the format filter). args is a tuple of positional values, a dict for
// %(name)s fields, or a single value.
func percentFormat(format string, self, args any) (any, error) {
	f := &percent{src: format, args: []any{args}}
	if t, ok := args.(pyTuple); ok {
		f.args = t
	}
	if d, ok := args.(*exec.Dict); ok {
		f.dict = d
	}
	_, f.escape = self.(markup)
	s, err := f.run()
	if err != nil {
		return nil, err
	}
	if f.escape {
		return markup(s), nil
	}
	return s, nil
}

type percent struct {
	src    string
	args   []any
	dict   *exec.Dict // for %(name)s fields
	next   int
	escape bool // Markup % args escapes the arguments
	out    strings.Builder
}

func (f *percent) run() (string, error) {
	s := f.src
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			f.out.WriteByte(s[i])
			continue
		}
		n, err := f.field(s[i+1:])
		if err != nil {
			return "", err
		}
		i += n
		if f.out.Len() > maxStringBytes {
			return "", errTooLong
		}
	}
	if f.dict == nil && f.next < len(f.args) {
		return "", typeError("not all arguments converted during string formatting")
	}
	return f.out.String(), nil
}

// field formats one conversion; spec is the text after '%'. It returns how
// many bytes of spec it consumed.
func (f *percent) field(spec string) (int, error) {
	i, key := 0, ""
	if strings.HasPrefix(spec, "(") {
		end := strings.IndexByte(spec, ')')
		if end < 0 {
			return 0, valueError("incomplete format key")
		}
		key, i = spec[1:end], end+1
	}
	start := i
	for i < len(spec) && strings.IndexByte("-+ 0#", spec[i]) >= 0 {
		i++
	}
	for i < len(spec) && (spec[i] >= '0' && spec[i] <= '9' || spec[i] == '.') {
		i++
	}
	if i >= len(spec) {
		return 0, valueError("incomplete format")
	}
	flags, verb := spec[start:i], spec[i]
	if verb == '%' {
		f.out.WriteByte('%')
		return i + 1, nil
	}
	v, err := f.arg(key)
	if err != nil {
		return 0, err
	}
	s, err := convert(verb, flags, v)
	if err != nil {
		return 0, err
	}
	if f.escape && (verb == 's' || verb == 'r' || verb == 'a') {
		if _, ok := v.(markup); !ok {
			s = htmlEscape(s)
		}
	}
	f.out.WriteString(s)
	return i + 1, nil
}

func (f *percent) arg(key string) (any, error) {
	if key != "" {
		if f.dict == nil {
			return nil, typeError("format requires a mapping")
		}
		v, ok := dictGet(f.dict, key)
		if !ok {
			return nil, &Error{Kind: "KeyError", Msg: pyStrRepr(key)}
		}
		return v, nil
	}
	if f.next >= len(f.args) {
		return nil, typeError("not enough arguments for format string")
	}
	f.next++
	return f.args[f.next-1], nil
}

// convert applies one conversion: flags are Python's (and Go's) "-+ 0#",
// width and precision.
func convert(verb byte, flags string, v any) (string, error) {
	switch verb {
	case 's':
		return fmt.Sprintf("%"+flags+"s", pyStr(v)), nil
	case 'r', 'a':
		return fmt.Sprintf("%"+flags+"s", pyRepr(v)), nil
	case 'c':
		return convertChar(flags, v)
	}
	i, fl, isF, ok := asNumber(v)
	if !ok {
		return "", typeError("%%%c format: a real number is required, not %s", verb, pyTypeName(v))
	}
	switch verb {
	case 'd', 'i', 'u':
		if isF {
			i = int(fl)
		}
		return fmt.Sprintf("%"+flags+"d", i), nil
	case 'x', 'X', 'o':
		if isF {
			return "", typeError("%%%c format: an integer is required, not float", verb)
		}
		return fmt.Sprintf("%"+flags+string(verb), i), nil
	case 'e', 'E', 'f', 'F', 'g', 'G':
		if !strings.Contains(flags, ".") {
			flags += ".6"
		}
		if math.IsInf(fl, 0) || math.IsNaN(fl) {
			return fmt.Sprintf("%"+strings.Split(flags, ".")[0]+"s", floatRepr(fl)), nil
		}
		return fmt.Sprintf("%"+flags+string(verb), fl), nil
	}
	return "", valueError("unsupported format character '%c'", verb)
}

func convertChar(flags string, v any) (string, error) {
	if s, ok := asString(v); ok && runeLen(s) == 1 {
		return fmt.Sprintf("%"+flags+"s", s), nil
	}
	if n, ok := v.(int); ok && n >= 0 && n <= 0x10ffff {
		return fmt.Sprintf("%"+flags+"s", string(rune(n))), nil
	}
	return "", typeError("%%c requires an int or a unicode character, not %s", pyTypeName(v))
}

// strftime is Python's time.strftime on Linux (glibc), including the
// %-d style flags that drop zero padding.
func strftime(format string, t time.Time) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] != '%' || i+1 >= len(format) {
			b.WriteByte(format[i])
			continue
		}
		i++
		pad := true
		if format[i] == '-' && i+1 < len(format) {
			pad = false
			i++
		}
		if s, ok := strftimeField(format[i], t, pad); ok {
			b.WriteString(s)
		} else {
			b.WriteByte('%')
			b.WriteByte(format[i])
		}
	}
	return b.String()
}

func strftimeField(c byte, t time.Time, pad bool) (string, bool) {
	num := func(n, width int) string {
		if !pad {
			return strconv.Itoa(n)
		}
		return fmt.Sprintf("%0*d", width, n)
	}
	hour12 := t.Hour() % 12
	if hour12 == 0 {
		hour12 = 12
	}
	switch c {
	case 'a':
		return t.Format("Mon"), true
	case 'A':
		return t.Format("Monday"), true
	case 'b', 'h':
		return t.Format("Jan"), true
	case 'B':
		return t.Format("January"), true
	case 'c':
		return t.Format("Mon Jan _2 15:04:05 2006"), true
	case 'd':
		return num(t.Day(), 2), true
	case 'e':
		return fmt.Sprintf("%2d", t.Day()), true
	case 'f':
		return fmt.Sprintf("%06d", t.Nanosecond()/1000), true
	case 'H':
		return num(t.Hour(), 2), true
	case 'I':
		return num(hour12, 2), true
	case 'j':
		return num(t.YearDay(), 3), true
	case 'm':
		return num(int(t.Month()), 2), true
	case 'M':
		return num(t.Minute(), 2), true
	case 'p':
		return t.Format("PM"), true
	case 'S':
		return num(t.Second(), 2), true
	case 'w':
		return strconv.Itoa(int(t.Weekday())), true
	case 'x':
		return t.Format("01/02/06"), true
	case 'X':
		return t.Format("15:04:05"), true
	case 'y':
		return num(t.Year()%100, 2), true
	case 'Y':
		return strconv.Itoa(t.Year()), true
	case 'z':
		return t.Format("-0700"), true
	case 'Z':
		return t.Format("MST"), true
	case '%':
		return "%", true
	}
	return "", false
}
