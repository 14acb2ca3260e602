// Package sample turns a step's logits into the next token.
//
// A Sampler holds one sequence's decoding state and runs a fixed sequence
// of plain functions over a candidate buffer sized once for the vocabulary:
//
//	logit_bias → [grammar] → Order (default: penalties, dry, top_k, tfs_z,
//	typical_p, top_p, min_p, xtc, temperature) → dist | mirostat v1/v2
//
// The grammar stage (Params.Grammar, see grammar.go) runs only when the
// token the chain chose without it breaks the grammar: the step is then
// rerun from the same state with the grammar's mask first.
//
// Decoding "greedy" and "fsd" run only logit_bias and the logit-modifying
// stages (penalties, dry) before their deterministic choice; "random-fsd"
// flips a seeded coin between the sampling chain and FSD during its first
// steps. Every random draw comes from one PCG seeded from Params.Seed, so a
// seed reproduces a whole generation.
//
// Usage per sequence:
//
//	s, err := sample.New(params, nVocab, sample.WithVocab(v))
//	for _, t := range prompt { s.Accept(t) }
//	for { tok := s.Sample(logits); s.Accept(tok); ... }
//
// Sample allocates nothing once warm; Explain reports each stage's
// candidates (allocating) without advancing the state.
package sample
