package chat

import (
	"fmt"
	"strconv"

	gcs "github.com/nikolalohinski/gonja/v2/builtins/control_structures"
	"github.com/nikolalohinski/gonja/v2/config"
	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/nodes"
	"github.com/nikolalohinski/gonja/v2/tokens"
)

// The rewriter walks gonja's parse tree once, after Parse, and replaces
// every expression whose meaning gonja gets wrong by a call of an internal
// filter (ops.go) that applies Python's rules:
//
//	a + b        ->  a | @binop("+", b)       (also - * / // % ** ~ == != < <= > >=)
//	-a           ->  a | @neg
//	a.b, a[b]    ->  a | @getattr("b"), a | @getitem(b)
//	a[i:j:k]     ->  a | @slice(i, j, k)
//	f(x, k=v)    ->  f | @call(x, k=v)
//	(a, b)       ->  [a, b] | @tuple
//	{k: v}       ->  {k: v} | @dict             (equal keys merge: {1: a, true: b})
//	{{ a }}      ->  {{ a | @str }}
//	for x in a   ->  for x in a | @iter
//	if a / not a ->  if a | @bool / not (a | @bool)
//	a and b      ->  (a | @cond) and b        (same for or)
//
// It also collects the names a template reads, so Render can bind the ones
// nobody set to Undefined (gonja would give None), and rejects unknown
// filters and tests up front, as jinja2's compiler does.

type rewriter struct {
	env      *exec.Environment
	names    map[string]bool
	lits     []string // decoded string literals (literals.go)
	branches []branch // arms of conditionals (conditional.go)
	err      error
}

func (rw *rewriter) fail(err error) {
	if rw.err == nil {
		rw.err = err
	}
}

func (rw *rewriter) nodes(list []nodes.Node) {
	for _, n := range list {
		rw.node(n)
	}
}

func (rw *rewriter) wrapper(w *nodes.Wrapper) {
	if w != nil {
		rw.nodes(w.Nodes)
	}
}

func (rw *rewriter) node(n nodes.Node) {
	switch t := n.(type) {
	case *nodes.Data, *nodes.Comment:
	case *nodes.Output:
		t.Expression = call(rw.expr(t.Expression), fStr)
		if t.Condition != nil {
			t.Condition = call(rw.expr(t.Condition), fBool)
		}
		if t.Alternative != nil {
			t.Alternative = call(rw.expr(t.Alternative), fStr)
		}
	case *nodes.ControlStructureBlock:
		rw.control(t.ControlStructure)
	default:
		rw.fail(fmt.Errorf("unsupported template node %T", n))
	}
}

func (rw *rewriter) control(cs nodes.ControlStructure) {
	switch t := cs.(type) {
	case *gcs.IfControlStructure:
		for i, c := range t.Conditions {
			t.Conditions[i] = call(rw.expr(c), fBool)
		}
		for _, w := range t.Wrappers {
			rw.wrapper(w)
		}
	case *gcs.ForControlStructure:
		t.ObjectEvaluator = call(rw.expr(t.ObjectEvaluator), fIter)
		if t.IfCondition != nil {
			t.IfCondition = call(rw.expr(t.IfCondition), fBool)
		}
		rw.wrapper(t.BodyWrapper)
		rw.wrapper(t.EmptyWrapper)
	case *gcs.MacroControlStructure:
		for _, kw := range t.Kwargs {
			kw.Value = rw.macroDefault(kw)
		}
		rw.wrapper(t.Wrapper)
	case *setStmt:
		for _, target := range t.targets {
			if a, ok := target.(*nodes.GetAttribute); ok {
				rw.expr(a.Node) // records the namespace's name
			}
		}
		t.expr, t.cond, t.alt = rw.expr(t.expr), rw.expr(t.cond), rw.expr(t.alt)
		rw.wrapper(t.body)
	case *filterBlock:
		for _, fc := range t.chain {
			rw.filterCall(fc)
		}
		rw.wrapper(t.body)
	case *withBlock:
		for i, e := range t.exprs {
			t.exprs[i] = rw.expr(e)
		}
		rw.wrapper(t.body)
	case *generationBlock:
		rw.wrapper(t.body)
	case *gcs.RawControlStructure, *gcs.BreakControlStructure,
		*gcs.ContinueControlStructure:
	default:
		rw.fail(fmt.Errorf("unsupported tag %T", cs))
	}
}

// macroDefault rewrites a macro parameter's default. gonja gives a missing
// argument None, made from the parameter's own name token; jinja2 gives an
// Undefined saying the parameter was not provided.
func (rw *rewriter) macroDefault(kw *nodes.Pair) nodes.Expression {
	if none, ok := kw.Value.(*nodes.None); ok {
		if name, ok := kw.Key.(*nodes.String); ok && none.Location == name.Location {
			msg := fmt.Sprintf("parameter %s was not provided", pyStrRepr(name.Val))
			return call(none, fUndef, str(none.Location, msg))
		}
	}
	return rw.expr(kw.Value)
}

// literal returns the decoded text a placeholder stands for.
func (rw *rewriter) literal(s string) string {
	if len(s) > 2 && s[0] == 0 && s[len(s)-1] == 0 {
		if n, err := strconv.Atoi(s[1 : len(s)-1]); err == nil && n < len(rw.lits) {
			return rw.lits[n]
		}
	}
	return s
}

func (rw *rewriter) exprs(list []nodes.Expression) []nodes.Expression {
	for i, e := range list {
		list[i] = rw.expr(e)
	}
	return list
}

func (rw *rewriter) kwargs(m map[string]nodes.Expression) map[string]nodes.Expression {
	for k, e := range m {
		m[k] = rw.expr(e)
	}
	return m
}

func (rw *rewriter) expr(e nodes.Expression) nodes.Expression {
	switch t := e.(type) {
	case nil:
		return nil
	case *nodes.Name:
		if t.Name.Val == "none" { // a literal in jinja2, a name in gonja
			return &nodes.None{Location: t.Name}
		}
		rw.names[t.Name.Val] = true
		return t
	case *nodes.None:
		if t.Location != nil && t.Location.Val == "nil" { // the reverse
			return rw.expr(&nodes.Name{Name: t.Location})
		}
		return t
	case *nodes.String:
		t.Val = rw.literal(t.Val)
		return t
	case *nodes.Integer, *nodes.Float, *nodes.Bool, *nodes.Error:
		return t
	case *nodes.List:
		t.Val = rw.exprs(t.Val)
		return t
	case *nodes.Tuple:
		return call(&nodes.List{Location: t.Location, Val: rw.exprs(t.Val)}, fTuple)
	case *nodes.Dict:
		for _, p := range t.Pairs {
			p.Key, p.Value = rw.expr(p.Key), rw.expr(p.Value)
		}
		return call(t, fDict)
	case *nodes.BinaryExpression:
		return rw.binary(t)
	case *nodes.UnaryExpression:
		if t.Negative {
			return call(rw.expr(t.Term), fNeg)
		}
		return call(rw.expr(t.Term), fPos)
	case *nodes.Negation:
		t.Term = call(rw.expr(t.Term), fBool)
		return t
	case *nodes.FilteredExpression:
		t.Expression = rw.expr(t.Expression)
		for _, fc := range t.Filters {
			rw.filterCall(fc)
		}
		return t
	case *nodes.TestExpression:
		t.Expression = rw.expr(t.Expression)
		rw.testCall(t.Test)
		return t
	}
	return rw.access(e)
}

// access rewrites calls, attribute and item lookups, and slices.
func (rw *rewriter) access(e nodes.Expression) nodes.Expression {
	switch t := e.(type) {
	case *nodes.Call:
		if n, ok := t.Func.(*nodes.Name); ok && n.Name.Val == ifElseName {
			return rw.conditional(t)
		}
		c := call(rw.expr(t.Func), fCall, rw.exprs(t.Args)...)
		last(c).Kwargs = rw.kwargs(t.Kwargs)
		return c
	case *nodes.GetItem:
		return call(rw.expr(t.Node), fGetitem, rw.expr(t.Arg))
	case *nodes.GetAttribute:
		if t.Attribute == "" {
			return call(rw.expr(t.Node), fGetitem, &nodes.Integer{Location: t.Location, Val: t.Index})
		}
		return call(rw.expr(t.Node), fGetattr, str(t.Location, t.Attribute))
	case *nodes.GetSlice:
		bounds := []nodes.Expression{t.Start, t.End, t.Step}
		for i, b := range bounds {
			if b == nil {
				bounds[i] = &nodes.None{Location: t.Location}
			} else {
				bounds[i] = rw.expr(b)
			}
		}
		return call(rw.expr(t.Node), fSlice, bounds...)
	}
	rw.fail(fmt.Errorf("unsupported expression %T", e))
	return e
}

// conditional turns __ifelse__(C, A[, B]) (conditional.go) into
// C | @ifelse(k), with the arms kept aside so that only one is evaluated.
func (rw *rewriter) conditional(t *nodes.Call) nodes.Expression {
	if len(t.Args) < 2 || len(t.Args) > 3 || len(t.Kwargs) > 0 {
		rw.fail(&Error{Kind: "TemplateSyntaxError", Msg: "malformed conditional expression"})
		return t
	}
	b := branch{then: rw.expr(t.Args[1])}
	if len(t.Args) == 3 {
		b.other = rw.expr(t.Args[2])
	}
	rw.branches = append(rw.branches, b)
	return call(rw.expr(t.Args[0]), fIfElse, &nodes.Integer{Location: t.Location, Val: len(rw.branches) - 1})
}

func (rw *rewriter) binary(t *nodes.BinaryExpression) nodes.Expression {
	op := t.Operator.Token.Val
	if op == "and" || op == "or" {
		t.Left, t.Right = call(rw.expr(t.Left), fCond), rw.expr(t.Right)
		return t
	}
	return call(rw.expr(t.Left), fBinop, str(t.Operator.Token, op), rw.expr(t.Right))
}

func (rw *rewriter) filterCall(fc *nodes.FilterCall) {
	if !rw.env.Filters.Exists(fc.Name) || fc.Name[0] == '@' {
		rw.fail(&Error{Kind: "TemplateAssertionError", Msg: fmt.Sprintf("No filter named %s.", pyStrRepr(fc.Name))})
	}
	rw.exprs(fc.Args)
	rw.kwargs(fc.Kwargs)
}

func (rw *rewriter) testCall(tc *nodes.TestCall) {
	if !rw.env.Tests.Exists(tc.Name) {
		rw.fail(&Error{Kind: "TemplateAssertionError", Msg: fmt.Sprintf("No test named %s.", pyStrRepr(tc.Name))})
	}
	rw.exprs(tc.Args)
	rw.kwargs(tc.Kwargs)
}

// call applies internal filter name to e. Chains stay flat: a long a+b+c+...
// becomes one filtered expression rather than a deep tree.
func call(e nodes.Expression, name string, args ...nodes.Expression) nodes.Expression {
	if e == nil {
		return nil
	}
	fc := &nodes.FilterCall{Token: position(e), Name: name, Args: args, Kwargs: map[string]nodes.Expression{}}
	if f, ok := e.(*nodes.FilteredExpression); ok {
		f.Filters = append(f.Filters, fc)
		return f
	}
	return &nodes.FilteredExpression{Expression: e, Filters: []*nodes.FilterCall{fc}}
}

func last(e nodes.Expression) *nodes.FilterCall {
	f := e.(*nodes.FilteredExpression)
	return f.Filters[len(f.Filters)-1]
}

func str(tok *tokens.Token, s string) *nodes.String {
	return &nodes.String{Location: tok, Val: s}
}

// position is a node's token; gonja's error messages dereference it.
func position(e nodes.Expression) *tokens.Token {
	if tok := e.Position(); tok != nil {
		return tok
	}
	return &tokens.Token{Type: tokens.Name, Val: "?"}
}

// checkNesting rejects sources whose brackets or block tags nest deeper than
// maxNesting: gonja's parser recurses on both, and a Go stack overflow
// cannot be recovered.
func checkNesting(src string, cfg *config.Config) error {
	s := tokens.LexAll(src, cfg)
	brackets, blocks := 0, 0
	pendingSet := false // inside a set tag that has shown no '=' yet
	for ; !s.End(); s.Next() {
		switch s.Current().Type {
		case tokens.LeftParenthesis, tokens.LeftBracket, tokens.LeftBrace:
			brackets++
		case tokens.RightParenthesis, tokens.RightBracket, tokens.RightBrace:
			brackets--
		case tokens.Assign:
			pendingSet = false
		case tokens.BlockEnd:
			if pendingSet {
				blocks++ // {% set x %} opens a block that endset closes
			}
			pendingSet = false
		case tokens.BlockBegin:
			name := s.Peek()
			pendingSet = name != nil && name.Type == tokens.Name && name.Val == "set"
			blocks += blockDelta(name)
		}
		if brackets > maxNesting || blocks > maxNesting {
			return &Error{Kind: "TemplateSyntaxError", Msg: fmt.Sprintf("template nests deeper than %d levels", maxNesting)}
		}
	}
	return nil
}

// blockDelta tells whether a tag named by tok opens (+1) or closes (-1) a block.
func blockDelta(tok *tokens.Token) int {
	if tok == nil || tok.Type != tokens.Name {
		return 0
	}
	switch tok.Val {
	case "if", "for", "macro", "filter", "with", "call", "block", "raw", "autoescape", "trans", "generation":
		return 1
	}
	if len(tok.Val) > 3 && tok.Val[:3] == "end" {
		return -1
	}
	return 0
}

// fixLeftStrip compensates a gonja lexer difference. With lstrip_blocks,
// jinja2 strips the blanks before a block or comment tag only when they
// start a line; gonja also strips them when the tag follows another tag on
// the same line ("{{ x }} {% endfor %}" keeps its space in jinja2). Such tags
// get jinja2's own "+" marker ("{%+"), which disables lstrip in both, so
// gonja keeps the blanks. src must already have "\n" line ends.
func fixLeftStrip(src string) string {
	cfg := newConfig()
	cfg.LeftStripBlocks = false
	var at []int
	var prev, before *tokens.Token
	for s := tokens.LexAll(src, cfg); !s.End(); s.Next() {
		tok := s.Current()
		if (tok.Type == tokens.BlockBegin || tok.Type == tokens.CommentBegin) && len(tok.Val) == 2 &&
			prev != nil && prev.Type == tokens.Data && isBlank(prev.Val) && !startsLine(src, before) {
			at = append(at, tok.Pos+2)
		}
		before, prev = prev, tok
	}
	for i := len(at) - 1; i >= 0; i-- {
		src = src[:at[i]] + "+" + src[at[i]:]
	}
	return src
}

func isBlank(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != ' ' && s[i] != '\t' {
			return false
		}
	}
	return s != ""
}

// startsLine reports whether the text after tok begins a line for jinja2:
// at the template start, or after a tag whose newline trim_blocks removed.
func startsLine(src string, tok *tokens.Token) bool {
	if tok == nil {
		return true
	}
	end := tok.Pos + len(tok.Val)
	trims := (tok.Type == tokens.BlockEnd || tok.Type == tokens.CommentEnd) && tok.Val[0] != '+'
	return trims && end < len(src) && src[end] == '\n'
}
