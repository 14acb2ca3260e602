package chat

import (
	"fmt"
	"strings"

	"github.com/nikolalohinski/gonja/v2/builtins"
	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/nodes"
	"github.com/nikolalohinski/gonja/v2/parser"
	"github.com/nikolalohinski/gonja/v2/tokens"
)

// Tags. gonja's if, for, macro, raw, break and continue are used as they
// are (their fields are exported, so the rewriter reaches their
// expressions). set, filter and with are re-implemented here because
// gonja keeps their expressions in unexported fields; generation comes from
// the AssistantTracker extension that transformers also loads. Tags jinja2 cannot
// run without a loader or an extension that Hugging Face does not enable
// (include, import, from, extends, block, call, do, trans, autoescape) are
// left out, so templates using them fail at Parse.

func tagSet() *exec.ControlStructureSet {
	set := exec.NewControlStructureSet(map[string]parser.ControlStructureParser{
		"set":    parseSet,
		"filter": parseFilterBlock,
		"with":   parseWith,
		// transformers' AssistantTracker extension; rendering the body is
		// all it does unless assistant masks are requested.
		"generation": parseGeneration,
	})
	for _, name := range []string{"if", "for", "macro", "raw", "break", "continue"} {
		p, ok := builtins.ControlStructures.Get(name)
		if !ok {
			panic("gonja lacks the " + name + " tag")
		}
		if err := set.Register(name, p); err != nil {
			panic(err)
		}
	}
	return set
}

// setStmt is {% set target = expr [if cond [else alt]] %} or the block form
// {% set target %}...{% endset %}. Targets are names, name tuples, or a
// namespace attribute (ns.attr).
type setStmt struct {
	loc     *tokens.Token
	targets []nodes.Expression
	expr    nodes.Expression
	cond    nodes.Expression
	alt     nodes.Expression
	body    *nodes.Wrapper
}

func (s *setStmt) Position() *tokens.Token { return s.loc }
func (s *setStmt) String() string          { return "set" }

func parseSet(p *parser.Parser, args *parser.Parser) (nodes.ControlStructure, error) {
	s := &setStmt{loc: p.Current()}
	for {
		t, err := args.ParseVariableOrLiteral()
		if err != nil {
			return nil, err
		}
		if !validTarget(t) {
			return nil, args.Error("can't assign to this expression", args.Current())
		}
		s.targets = append(s.targets, t)
		if args.Match(tokens.Comma) == nil {
			break
		}
	}
	if args.Match(tokens.Assign) == nil {
		return s, parseSetBlock(p, args, s)
	}
	var err error
	if s.expr, err = parseTupleExpr(args); err != nil {
		return nil, err
	}
	if s.cond, s.alt, err = args.ParseCondition(); err != nil {
		return nil, err
	}
	if !args.End() {
		return nil, args.Error("Malformed 'set' tag args.", args.Current())
	}
	return s, nil
}

// parseTupleExpr parses "a" or an unparenthesised tuple "a, b, ...".
func parseTupleExpr(args *parser.Parser) (nodes.Expression, error) {
	first, err := args.ParseExpression()
	if err != nil || args.Current(tokens.Comma) == nil {
		return first, err
	}
	tuple := &nodes.Tuple{Location: first.Position(), Val: []nodes.Expression{first}}
	for args.Match(tokens.Comma) != nil && !args.End() && args.CurrentName("if") == nil {
		e, err := args.ParseExpression()
		if err != nil {
			return nil, err
		}
		tuple.Val = append(tuple.Val, e)
	}
	return tuple, nil
}

func validTarget(t nodes.Expression) bool {
	switch n := t.(type) {
	case *nodes.Name:
		return true
	case *nodes.GetAttribute:
		_, ok := n.Node.(*nodes.Name)
		return ok && n.Attribute != ""
	}
	return false
}

func parseSetBlock(p *parser.Parser, args *parser.Parser, s *setStmt) error {
	if !args.End() || len(s.targets) != 1 {
		return args.Error("Expected '=' or end of tag for block-set.", args.Current())
	}
	body, end, err := p.WrapUntil("endset")
	if err != nil {
		return err
	}
	if !end.End() {
		return end.Error("endset takes no arguments", nil)
	}
	s.body = body
	return nil
}

func (s *setStmt) Execute(r *exec.Renderer, _ *nodes.ControlStructureBlock) error {
	v, err := s.value(r)
	if err != nil {
		return err
	}
	if len(s.targets) == 1 {
		return assign(r, s.targets[0], v)
	}
	items, err := iterate(v)
	if err == nil && len(items) != len(s.targets) {
		err = valueError("not enough values to unpack (expected %d, got %d)", len(s.targets), len(items))
	}
	if err != nil {
		return failRender(r, err)
	}
	for i, t := range s.targets {
		if err := assign(r, t, items[i]); err != nil {
			return err
		}
	}
	return nil
}

// value evaluates the right-hand side; a false condition without else
// yields Undefined, as in jinja2.
func (s *setStmt) value(r *exec.Renderer) (any, error) {
	if s.body != nil {
		return renderBody(r, s.body)
	}
	expr := s.expr
	if s.cond != nil {
		c := r.Eval(s.cond)
		if c.IsError() {
			return nil, c
		}
		if !truth(norm(c)) {
			if s.alt == nil {
				return newUndefined("UndefinedError", "the inline if-expression evaluated to false and no else section was defined."), nil
			}
			expr = s.alt
		}
	}
	v := r.Eval(expr)
	if v.IsError() {
		return nil, v
	}
	return norm(v), nil
}

func renderBody(r *exec.Renderer, body *nodes.Wrapper) (string, error) {
	var buf strings.Builder
	sub := r.Inherit()
	sub.Output = &buf
	if err := sub.ExecuteWrapper(body); err != nil {
		return "", err
	}
	return buf.String(), nil
}

func assign(r *exec.Renderer, target nodes.Expression, v any) error {
	switch t := target.(type) {
	case *nodes.Name:
		r.Environment.Context.Set(t.Name.Val, v)
		return nil
	case *nodes.GetAttribute:
		obj := r.Eval(t.Node)
		if obj.IsError() {
			return obj
		}
		ns, ok := norm(obj).(*namespace)
		if !ok {
			return failRender(r, &Error{Kind: "TemplateRuntimeError", Msg: "cannot assign attribute on non-namespace object"})
		}
		dictSet(ns.attrs, t.Attribute, v)
		return nil
	}
	return fmt.Errorf("cannot assign to %s", target)
}

// failRender records err as the render's error for code outside filters.
func failRender(r *exec.Renderer, err error) error {
	st := stateOf(r.Evaluator())
	return st.fail(asError(err))
}

// filterBlock is {% filter name(args) | ... %}...{% endfilter %}.
type filterBlock struct {
	loc   *tokens.Token
	body  *nodes.Wrapper
	chain []*nodes.FilterCall
}

func (f *filterBlock) Position() *tokens.Token { return f.loc }
func (f *filterBlock) String() string          { return "filter" }

func parseFilterBlock(p *parser.Parser, args *parser.Parser) (nodes.ControlStructure, error) {
	f := &filterBlock{loc: p.Current()}
	for !args.End() {
		fc, err := args.ParseFilter()
		if err != nil {
			return nil, err
		}
		f.chain = append(f.chain, fc)
		if args.Match(tokens.Pipe) == nil {
			break
		}
	}
	if len(f.chain) == 0 || !args.End() {
		return nil, args.Error("Malformed filter-tag args.", args.Current())
	}
	body, end, err := p.WrapUntil("endfilter")
	if err != nil {
		return nil, err
	}
	if !end.End() {
		return nil, end.Error("endfilter takes no arguments", nil)
	}
	f.body = body
	return f, nil
}

func (f *filterBlock) Execute(r *exec.Renderer, _ *nodes.ControlStructureBlock) error {
	s, err := renderBody(r, f.body)
	if err != nil {
		return err
	}
	v := exec.AsValue(s)
	e := r.Evaluator()
	for _, fc := range f.chain {
		if v = e.ExecuteFilter(fc, v); v.IsError() {
			return v
		}
	}
	_, err = r.Output.Write([]byte(pyStr(norm(v))))
	return err
}

// withBlock is {% with a = x, b = y %}...{% endwith %}.
type withBlock struct {
	loc   *tokens.Token
	names []string
	exprs []nodes.Expression
	body  *nodes.Wrapper
}

func (w *withBlock) Position() *tokens.Token { return w.loc }
func (w *withBlock) String() string          { return "with" }

func parseWith(p *parser.Parser, args *parser.Parser) (nodes.ControlStructure, error) {
	w := &withBlock{loc: p.Current()}
	for !args.End() {
		name := args.Match(tokens.Name)
		if name == nil || args.Match(tokens.Assign) == nil {
			return nil, args.Error("Expected 'name = expression'.", args.Current())
		}
		expr, err := args.ParseExpression()
		if err != nil {
			return nil, err
		}
		w.names, w.exprs = append(w.names, name.Val), append(w.exprs, expr)
		if args.Match(tokens.Comma) == nil {
			break
		}
	}
	if !args.End() {
		return nil, args.Error("Malformed with-tag args.", args.Current())
	}
	body, end, err := p.WrapUntil("endwith")
	if err != nil {
		return nil, err
	}
	if !end.End() {
		return nil, end.Error("endwith takes no arguments", nil)
	}
	w.body = body
	return w, nil
}

func (w *withBlock) Execute(r *exec.Renderer, _ *nodes.ControlStructureBlock) error {
	sub := r.Inherit()
	for i, name := range w.names {
		v := r.Eval(w.exprs[i])
		if v.IsError() {
			return v
		}
		sub.Environment.Context.Set(name, norm(v))
	}
	return sub.ExecuteWrapper(w.body)
}

// generationBlock is {% generation %}...{% endgeneration %}.
type generationBlock struct {
	loc  *tokens.Token
	body *nodes.Wrapper
}

func (g *generationBlock) Position() *tokens.Token { return g.loc }
func (g *generationBlock) String() string          { return "generation" }

func parseGeneration(p *parser.Parser, args *parser.Parser) (nodes.ControlStructure, error) {
	if !args.End() {
		return nil, args.Error("generation takes no arguments", args.Current())
	}
	body, end, err := p.WrapUntil("endgeneration")
	if err != nil {
		return nil, err
	}
	if !end.End() {
		return nil, end.Error("endgeneration takes no arguments", nil)
	}
	return &generationBlock{loc: p.Current(), body: body}, nil
}

func (g *generationBlock) Execute(r *exec.Renderer, _ *nodes.ControlStructureBlock) error {
	return r.ExecuteWrapper(g.body)
}
