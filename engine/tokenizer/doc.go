// Package tokenizer encodes text to token ids and back exactly as llama.cpp
// b4748 does (llama_tokenize, llama_token_to_piece, llama_detokenize), from a
// GGUF file's tokenizer.ggml.* metadata or a plain Vocab.
//
// Models: SentencePiece BPE ("llama"), byte-level BPE ("gpt2") with the
// pre-tokenizer named by tokenizer.ggml.pre, WordPiece ("bert") and unigram
// ("t5"). Special tokens written in the text are matched as whole tokens the
// way llama.cpp's tokenizer_st_partition does.
//
// Pre-tokenizer regexes: the GPT-2 and LLaMA-3 expressions (the common ones)
// are hand-coded splitters ported from llama.cpp's unicode.cpp, because
// llama.cpp itself uses hand-coded splitters for exactly these two and the
// ports reproduce its corner cases. Every other expression runs through
// github.com/dlclark/regexp2, a backtracking engine with lookahead (Go's
// regexp has none, and \s+(?!\S) needs it), on the same inputs llama.cpp
// gives std::regex: code points above 127 collapsed to one stand-in per
// Unicode category when the expression uses \p{..}, and \s limited to ASCII
// whitespace as in the C locale. Backtracking and ordered alternation then
// give the same leftmost-first matches as std::regex's ECMAScript grammar.
//
// Unicode categories come from Go's unicode tables; llama.cpp's generated
// tables may differ for code points assigned in later Unicode versions.
package tokenizer
