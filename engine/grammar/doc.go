// Package grammar constrains generation to a formal language: llama.cpp's
// GBNF grammars (Parse), JSON Schemas compiled to GBNF (FromJSONSchema),
// and a Matcher that follows the bytes of generated tokens through the
// grammar, carrying incomplete UTF-8 across tokens.
//
// GBNF as llama.cpp's grammar-parser.cpp reads it:
//
//	root  ::= "{" ws pair ("," ws pair)* "}"   # rules; the start rule is root
//	pair  ::= key ":" ws [0-9]+                 # char classes, ranges
//	key   ::= "\"" [^"\\\x00-\x1f]{1,16} "\""   # negation, escapes, {m,n}
//	ws    ::= [ \t\n]?                          # * + ? {m} {m,} {m,n}, groups, .
//
// A rule ends at the end of its line, except inside parentheses and after
// "|". Left recursion (a rule reaching itself before consuming a
// character, directly, through other rules or through a repetition of
// something that can be empty) is an error, as it would make matching
// loop.
//
// Matching is llama.cpp's pushdown scheme: the state is the set of stacks
// of grammar positions still alive (the top of each is a character class
// to match next), and a code point replaces each stack by the stacks that
// follow it. Bounds keep hostile grammars from exhausting memory: rules
// are capped by maxElems, repetitions by maxRepeat, live stacks by
// maxStacks (beyond it the extra ambiguous parses are dropped, never the
// only one).
//
// Why hand-written: there is no maintained Go implementation of GBNF or of
// JSON-Schema-to-grammar (the Go ecosystem's options are cgo bindings to
// llama.cpp, which engine/ may not use, and Rust's llguidance behind FFI).
// The format is small and the matcher is the part that must be fast, so it
// is ours, fuzzed (FuzzParse) and tested against the JSON Schema validator
// github.com/santhosh-tekuri/jsonschema in app/serve.
package grammar
