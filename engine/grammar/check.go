package grammar

import "fmt"

// finish checks the parsed rules (every reference defined, a root, no
// left recursion) and lays them out as a Grammar.
func (p *parser) finish() (*Grammar, error) {
	for id, ok := range p.defined {
		if !ok {
			return nil, fmt.Errorf("%w: rule %q is used but never defined", ErrSyntax, p.names[id])
		}
	}
	root, ok := p.ids["root"]
	if !ok {
		return nil, fmt.Errorf("%w: no root rule", ErrSyntax)
	}
	g := &Grammar{ranges: p.ranges, names: p.names, root: root, alts: make([][]int32, len(p.rules))}
	for id, body := range p.rules {
		g.alts[id] = append(g.alts[id], int32(len(g.elems)))
		for _, e := range body {
			if e.kind == eAlt {
				g.elems = append(g.elems, elem{kind: eEnd})
				g.alts[id] = append(g.alts[id], int32(len(g.elems)))
				continue
			}
			g.elems = append(g.elems, e)
		}
		g.elems = append(g.elems, elem{kind: eEnd})
	}
	if r := g.leftRecursive(); r >= 0 {
		return nil, fmt.Errorf("%w: rule %q is left-recursive (it can reach itself before matching a character, possibly through a repetition of something that can be empty)", ErrSyntax, g.names[r])
	}
	return g, nil
}

// nullable reports, per rule, whether it can match the empty string.
func (g *Grammar) nullable() []bool {
	null := make([]bool, len(g.alts))
	for changed := true; changed; {
		changed = false
		for r, starts := range g.alts {
			if null[r] {
				continue
			}
			for _, a := range starts {
				if g.altNullable(a, null) {
					null[r], changed = true, true
					break
				}
			}
		}
	}
	return null
}

func (g *Grammar) altNullable(a int32, null []bool) bool {
	for i := a; g.elems[i].kind != eEnd; i++ {
		if e := g.elems[i]; e.kind == eChar || !null[e.ref] {
			return false
		}
	}
	return true
}

// leftRecursive returns a rule on a cycle of leftmost references (those
// reachable before any character is matched), or -1.
func (g *Grammar) leftRecursive() int32 {
	null := g.nullable()
	const (
		white = iota
		grey
		black
	)
	color := make([]uint8, len(g.alts))
	var visit func(r int32) int32
	visit = func(r int32) int32 {
		color[r] = grey
		for _, a := range g.alts[r] {
			for i := a; g.elems[i].kind == eRef; i++ {
				next := g.elems[i].ref
				switch color[next] {
				case grey:
					return next
				case white:
					if bad := visit(next); bad >= 0 {
						return bad
					}
				}
				if !null[next] {
					break
				}
			}
		}
		color[r] = black
		return -1
	}
	for r := range g.alts {
		if color[r] == white {
			if bad := visit(int32(r)); bad >= 0 {
				return bad
			}
		}
	}
	return -1
}
