package grammar

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ErrSchema is wrapped by every error FromJSONSchema returns.
var ErrSchema = errors.New("json schema")

// JSONObject is the grammar of OpenAI's response_format json_object: any
// JSON object.
const JSONObject = `root ::= object` + "\n" + anyValueRules

// The rules every JSON grammar may use. Whitespace is bounded (a space, or
// a newline and at most 20 blanks of indentation, between tokens), so
// output cannot run on in whitespace; numbers are bounded in digits.
const (
	wsRule      = `ws ::= | " " | "\n" [ \t]{0,20}`
	charRule    = `char ::= [^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})`
	integerRule = `integer ::= "-"? ("0" | [1-9] [0-9]{0,15})`
	numberRule  = `number ::= integer ("." [0-9]{1,15})? ([eE] [-+]? [0-9]{1,2})?`
	baseRules   = wsRule + "\n" + charRule + "\n" + integerRule + "\n" + numberRule + "\n" +
		`string ::= "\"" char* "\""` + "\n" + `boolean ::= "true" | "false"` + "\n" + `null ::= "null"` + "\n"
	anyValueRules = baseRules +
		`value ::= object | array | string | number | boolean | null` + "\n" +
		`object ::= "{" ws ( string ws ":" ws value ws ( "," ws string ws ":" ws value ws )* )? "}"` + "\n" +
		`array ::= "[" ws ( value ws ( "," ws value ws )* )? "]"` + "\n"
)

// FromJSONSchema compiles a JSON Schema to a GBNF grammar whose every
// sentence is JSON that validates against the schema. Covered: type
// (one or a list), properties (in the schema's order: required ones, then
// each optional one present or not), required, additionalProperties
// (only the declared properties are generated, which every setting
// allows), items with minItems/maxItems, enum, const, minLength/maxLength,
// integer, number, boolean, null, nullable, anyOf, oneOf (its branches
// must not overlap: output matching two of them fails oneOf), allOf of one
// schema, and $ref to #, #/$defs/… and #/definitions/…. Keywords that
// would let output break the schema (pattern, uniqueItems, prefixItems, a
// multi-schema allOf, numeric bounds) are refused rather than ignored.
func FromJSONSchema(schema []byte) (string, error) {
	c := &converter{refs: map[string]string{}, used: map[string]bool{}}
	if !json.Valid(schema) {
		return "", fmt.Errorf("%w: not valid JSON", ErrSchema)
	}
	json.Unmarshal(schema, &c.root) // nil unless an object: then no $defs to find
	c.rootRaw = schema
	expr, err := c.visit(schema, "root", "")
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "root ::= %s\n", expr)
	for _, r := range c.rules {
		b.WriteString(r)
		b.WriteByte('\n')
	}
	b.WriteString(anyValueRules)
	return b.String(), nil
}

type converter struct {
	root    map[string]json.RawMessage
	rootRaw json.RawMessage
	rules   []string
	used    map[string]bool
	refs    map[string]string // $ref → rule name
	depth   int
}

// node is the part of a schema the converter reads.
type node struct {
	Type                 json.RawMessage   `json:"type"`
	Properties           json.RawMessage   `json:"properties"`
	Required             []string          `json:"required"`
	AdditionalProperties json.RawMessage   `json:"additionalProperties"`
	Items                json.RawMessage   `json:"items"`
	MinItems             *int              `json:"minItems"`
	MaxItems             *int              `json:"maxItems"`
	MinLength            *int              `json:"minLength"`
	MaxLength            *int              `json:"maxLength"`
	Enum                 []json.RawMessage `json:"enum"`
	Const                json.RawMessage   `json:"const"`
	AnyOf                []json.RawMessage `json:"anyOf"`
	OneOf                []json.RawMessage `json:"oneOf"`
	AllOf                []json.RawMessage `json:"allOf"`
	Ref                  string            `json:"$ref"`
	Nullable             bool              `json:"nullable"`

	Pattern     *string         `json:"pattern"`
	UniqueItems bool            `json:"uniqueItems"`
	PrefixItems json.RawMessage `json:"prefixItems"`
	Minimum     json.RawMessage `json:"minimum"`
	Maximum     json.RawMessage `json:"maximum"`
	ExclMinimum json.RawMessage `json:"exclusiveMinimum"`
	ExclMaximum json.RawMessage `json:"exclusiveMaximum"`
	MultipleOf  json.RawMessage `json:"multipleOf"`
}

// maxDepth bounds the nesting of schemas (a $ref cycle is a rule, not
// nesting, so recursive schemas are fine).
const maxDepth = 64

// visit returns a GBNF expression for the values raw allows; path names
// the schema in errors.
func (c *converter) visit(raw json.RawMessage, name, path string) (string, error) {
	if c.depth++; c.depth > maxDepth {
		return "", c.errorf(path, "nested more than %d deep", maxDepth)
	}
	defer func() { c.depth-- }()
	switch t := string(bytes.TrimSpace(raw)); t {
	case "true", "{}":
		return "value", nil
	case "false":
		return "", c.errorf(path, "the schema false allows no value")
	}
	var n node
	if err := json.Unmarshal(raw, &n); err != nil {
		return "", c.errorf(path, "not a schema object: %v", err)
	}
	if err := c.refuse(&n, path); err != nil {
		return "", err
	}
	expr, err := c.visitNode(&n, name, path)
	if err != nil || !n.Nullable {
		return expr, err
	}
	return "(" + expr + " | null)", nil
}

func (c *converter) errorf(path, format string, args ...any) error {
	if path == "" {
		path = "the schema"
	}
	return fmt.Errorf("%w: %s: %s", ErrSchema, path, fmt.Sprintf(format, args...))
}

// refuse names the keywords whose constraints the grammar cannot keep.
func (c *converter) refuse(n *node, path string) error {
	var bad []string
	if n.Pattern != nil {
		bad = append(bad, "pattern")
	}
	if n.UniqueItems {
		bad = append(bad, "uniqueItems")
	}
	for kw, v := range map[string]json.RawMessage{"prefixItems": n.PrefixItems, "minimum": n.Minimum, "maximum": n.Maximum,
		"exclusiveMinimum": n.ExclMinimum, "exclusiveMaximum": n.ExclMaximum, "multipleOf": n.MultipleOf} {
		if v != nil {
			bad = append(bad, kw)
		}
	}
	if len(n.AllOf) > 1 {
		bad = append(bad, "allOf with more than one schema")
	}
	if len(bad) == 0 {
		return nil
	}
	slices.Sort(bad)
	return c.errorf(path, "%s not supported in constrained output", strings.Join(bad, ", "))
}

func (c *converter) visitNode(n *node, name, path string) (string, error) {
	switch {
	case n.Ref != "":
		return c.ref(n.Ref, path)
	case n.Const != nil:
		return literalJSON(n.Const)
	case n.Enum != nil:
		return c.enum(n.Enum, path)
	case n.AnyOf != nil || n.OneOf != nil:
		return c.union(append(n.AnyOf, n.OneOf...), name, path)
	case len(n.AllOf) == 1:
		return c.visit(n.AllOf[0], name, path+"/allOf/0")
	}
	types, err := typesOf(n.Type)
	if err != nil {
		return "", c.errorf(path, "%v", err)
	}
	if len(types) == 0 {
		types = inferTypes(n)
	}
	alts := make([]string, 0, len(types))
	for _, t := range types {
		e, err := c.typed(n, t, name, path)
		if err != nil {
			return "", err
		}
		alts = append(alts, e)
	}
	if len(alts) == 1 {
		return alts[0], nil
	}
	return "(" + strings.Join(alts, " | ") + ")", nil
}

func typesOf(raw json.RawMessage) ([]string, error) {
	if raw == nil {
		return nil, nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil || len(many) == 0 {
		return nil, errors.New("type must be a string or a non-empty list of strings")
	}
	return many, nil
}

// inferTypes reads a schema without "type" from its keywords; a schema
// with none of them allows any value.
func inferTypes(n *node) []string {
	switch {
	case n.Properties != nil || n.Required != nil || n.AdditionalProperties != nil:
		return []string{"object"}
	case n.Items != nil || n.MinItems != nil || n.MaxItems != nil:
		return []string{"array"}
	case n.MinLength != nil || n.MaxLength != nil:
		return []string{"string"}
	}
	return []string{"any"}
}

func (c *converter) typed(n *node, t, name, path string) (string, error) {
	switch t {
	case "any":
		return "value", nil
	case "string":
		return c.str(n, name, path)
	case "integer", "number", "boolean", "null":
		return t, nil
	case "object":
		return c.object(n, name, path)
	case "array":
		return c.array(n, name, path)
	}
	return "", c.errorf(path, "unknown type %q", t)
}

// rule adds name ::= body under a unique name and returns that name.
func (c *converter) rule(name, body string) string {
	base := ruleName(name)
	name = base
	for i := 1; c.used[name] || reserved[name]; i++ {
		name = base + "-" + strconv.Itoa(i)
	}
	c.used[name] = true
	c.rules = append(c.rules, name+" ::= "+body)
	return name
}

var reserved = map[string]bool{"root": true, "ws": true, "char": true, "integer": true, "number": true, "string": true,
	"boolean": true, "null": true, "value": true, "object": true, "array": true}

// ruleName keeps the characters GBNF allows in names.
func ruleName(s string) string {
	b := []byte(s)
	for i, x := range b {
		if !isWordChar(x) || x == '_' {
			b[i] = '-'
		}
	}
	if len(b) == 0 || len(b) > 40 {
		return "r"
	}
	return string(b)
}

func (c *converter) str(n *node, name, path string) (string, error) {
	lo, hi := 0, -1
	if n.MinLength != nil {
		lo = *n.MinLength
	}
	if n.MaxLength != nil {
		hi = *n.MaxLength
	}
	switch {
	case lo < 0 || (hi >= 0 && hi < lo):
		return "", c.errorf(path, "minLength %d and maxLength %d allow no string", lo, hi)
	case lo > maxRepeat || hi > maxRepeat:
		return "", c.errorf(path, "string lengths above %d are not supported", maxRepeat)
	case lo == 0 && hi < 0:
		return "string", nil
	}
	return c.rule(name, `"\"" char`+repeat(lo, hi)+` "\""`), nil
}

// repeat is the GBNF operator for lo to hi (-1: unbounded) occurrences.
func repeat(lo, hi int) string {
	switch {
	case hi < 0:
		return fmt.Sprintf("{%d,}", lo)
	case lo == hi:
		return fmt.Sprintf("{%d}", lo)
	}
	return fmt.Sprintf("{%d,%d}", lo, hi)
}

func (c *converter) array(n *node, name, path string) (string, error) {
	lo, hi := 0, -1
	if n.MinItems != nil {
		lo = *n.MinItems
	}
	if n.MaxItems != nil {
		hi = *n.MaxItems
	}
	if lo < 0 || (hi >= 0 && hi < lo) || lo > maxRepeat || hi > maxRepeat {
		return "", c.errorf(path, "minItems %d and maxItems %d are not a usable range", lo, hi)
	}
	item := "value"
	if n.Items != nil {
		var err error
		if item, err = c.visit(n.Items, name+"-item", path+"/items"); err != nil {
			return "", err
		}
	}
	var body string
	switch {
	case hi == 0:
		body = `"[" ws "]"`
	case lo == 0:
		body = fmt.Sprintf(`"[" ws ( %s ws ( "," ws %s ws )%s )? "]"`, item, item, repeat(0, dec(hi)))
	default:
		body = fmt.Sprintf(`"[" ws %s ws ( "," ws %s ws )%s "]"`, item, item, repeat(lo-1, dec(hi)))
	}
	return c.rule(name, body), nil
}

func dec(hi int) int {
	if hi < 0 {
		return hi
	}
	return hi - 1
}

// object generates the declared properties in the schema's order:
// required ones always, each optional one present or not. With no
// properties declared, any object (its values as additionalProperties
// says, when that is a schema).
func (c *converter) object(n *node, name, path string) (string, error) {
	keys, props, err := orderedProps(n.Properties)
	if err != nil {
		return "", c.errorf(path, "properties: %v", err)
	}
	for _, r := range n.Required {
		if _, ok := props[r]; !ok {
			keys, props[r] = append(keys, r), json.RawMessage("true")
		}
	}
	if len(keys) == 0 {
		return c.freeObject(n, name, path)
	}
	required := map[string]bool{}
	for _, r := range n.Required {
		required[r] = true
	}
	var req, opt []string
	for _, k := range keys {
		kv, err := c.member(k, props[k], name, path)
		if err != nil {
			return "", err
		}
		if required[k] {
			req = append(req, kv)
		} else {
			opt = append(opt, kv)
		}
	}
	return c.rule(name, `"{" ws `+c.members(req, opt, name)+` "}"`), nil
}

// member is one "key": value pair, with the whitespace after it.
func (c *converter) member(key string, schema json.RawMessage, name, path string) (string, error) {
	v, err := c.visit(schema, name+"-"+key, path+"/properties/"+key)
	if err != nil {
		return "", err
	}
	k, _ := json.Marshal(key)
	lit, _ := literalJSON(k)
	return c.rule(name+"-"+key+"-kv", lit+` ws ":" ws `+v+" ws"), nil
}

// members joins the required pairs with commas, then the optional ones:
// after a required pair each is `("," ws kv)?`; with none required, the
// first present optional pair needs no comma, so every choice of first
// pair is its own alternative.
func (c *converter) members(req, opt []string, name string) string {
	if len(req) > 0 {
		parts := []string{req[0]}
		for _, r := range req[1:] {
			parts = append(parts, `"," ws `+r)
		}
		for _, o := range opt {
			parts = append(parts, `( "," ws `+o+` )?`)
		}
		return strings.Join(parts, " ")
	}
	alts := make([]string, len(opt))
	for i, o := range opt {
		parts := []string{o}
		for _, rest := range opt[i+1:] {
			parts = append(parts, `( "," ws `+rest+` )?`)
		}
		alts[i] = strings.Join(parts, " ")
	}
	return "( " + c.rule(name+"-rest", strings.Join(alts, " | ")) + " )?"
}

func (c *converter) freeObject(n *node, name, path string) (string, error) {
	ap := string(bytes.TrimSpace(n.AdditionalProperties))
	switch ap {
	case "", "true", "{}":
		return "object", nil
	case "false":
		return `"{" ws "}"`, nil
	}
	v, err := c.visit(n.AdditionalProperties, name+"-value", path+"/additionalProperties")
	if err != nil {
		return "", err
	}
	kv := c.rule(name+"-kv", `string ws ":" ws `+v+" ws")
	return c.rule(name, fmt.Sprintf(`"{" ws ( %s ( "," ws %s )* )? "}"`, kv, kv)), nil
}

// orderedProps reads "properties" keeping the order of its keys.
func orderedProps(raw json.RawMessage) ([]string, map[string]json.RawMessage, error) {
	props := map[string]json.RawMessage{}
	if raw == nil {
		return nil, props, nil
	}
	if err := json.Unmarshal(raw, &props); err != nil {
		return nil, nil, err
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	var keys []string
	if _, err := d.Token(); err != nil {
		return nil, nil, err
	}
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return nil, nil, err
		}
		var skip json.RawMessage
		if err := d.Decode(&skip); err != nil {
			return nil, nil, err
		}
		if k := tok.(string); !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys, props, nil
}

func (c *converter) enum(vals []json.RawMessage, path string) (string, error) {
	if len(vals) == 0 {
		return "", c.errorf(path, "an empty enum allows no value")
	}
	alts := make([]string, len(vals))
	for i, v := range vals {
		var err error
		if alts[i], err = literalJSON(v); err != nil {
			return "", c.errorf(path, "enum[%d]: %v", i, err)
		}
	}
	return "(" + strings.Join(alts, " | ") + ")", nil
}

func (c *converter) union(schemas []json.RawMessage, name, path string) (string, error) {
	alts := make([]string, len(schemas))
	for i, s := range schemas {
		var err error
		if alts[i], err = c.visit(s, fmt.Sprintf("%s-%d", name, i), fmt.Sprintf("%s/anyOf/%d", path, i)); err != nil {
			return "", err
		}
	}
	if len(alts) == 0 {
		return "", c.errorf(path, "anyOf/oneOf needs at least one schema")
	}
	return "(" + strings.Join(alts, " | ") + ")", nil
}

// ref resolves a local reference to a rule of its own (made once, so
// recursive schemas become recursive rules).
func (c *converter) ref(ref, path string) (string, error) {
	if name, ok := c.refs[ref]; ok {
		return name, nil
	}
	var target json.RawMessage
	switch {
	case ref == "#":
		target = c.rootRaw
	case strings.HasPrefix(ref, "#/$defs/"), strings.HasPrefix(ref, "#/definitions/"):
		section, key, _ := strings.Cut(ref[2:], "/")
		var defs map[string]json.RawMessage
		if raw, ok := c.root[section]; !ok || json.Unmarshal(raw, &defs) != nil || defs[unescapePointer(key)] == nil {
			return "", c.errorf(path, "$ref %q names no definition", ref)
		}
		target = defs[unescapePointer(key)]
	default:
		return "", c.errorf(path, "$ref %q is not local (#, #/$defs/… or #/definitions/…)", ref)
	}
	name := ruleName("ref-" + ref[strings.LastIndexByte(ref, '/')+1:])
	name = c.rule(name, "") // reserve the name first: the target may refer to itself
	c.refs[ref] = name
	idx := len(c.rules) - 1
	body, err := c.visit(target, name+"-body", ref)
	if err != nil {
		return "", err
	}
	c.rules[idx] = name + " ::= " + body
	return name, nil
}

func unescapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}

// literalJSON is a GBNF string literal of v's compact JSON text.
func literalJSON(v json.RawMessage) (string, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range buf.String() {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String(), nil
}
