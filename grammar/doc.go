// Package grammar constrains generated text to a grammar written in llama.cpp's GBNF, and
// converts JSON Schemas to such grammars.
//
// # The language
//
// A grammar is a list of rules "name ::= alternatives"; the rule root is the start symbol.
// Names are letters, digits, '-' and '_'. An alternative is a sequence of items separated
// by '|'; items are "literals" (with the escapes \n \r \t \\ \" \[ \] \- \xHH \uHHHH
// \UHHHHHHHH), character classes [a-z0-9_] and negated ones [^"\\], '.' (any character),
// rule names, and groups ( ... ). Any item may be followed by *, +, ?, {m}, {m,}, {,n} or
// {m,n}. Comments run from # to the end of the line. Matching is over Unicode code points;
// the grammar text is UTF-8. A rule may span lines: it ends where the next "name ::="
// begins (llama.cpp ends a rule at a newline outside parentheses unless the line ends in a
// way that continues it; every grammar llama.cpp accepts is read the same here).
// Left recursion (a rule that can reach itself before matching a character) is rejected
// by Parse with the cycle named, since a top-down matcher would loop. Errors are
// *ParseError values with the line and column.
//
// # Matching
//
// A Matcher keeps the set of parse stacks (llama.cpp's pushdown approach): each stack
// lists what remains to be matched, with a character class on top. Stacks are interned
// linked lists, so equal stacks are one id and a set never holds duplicates, and the
// stacks that follow a matched class are cached per stack. Input arrives as bytes; a
// UTF-8 character split across tokens is kept as a partial state that already filters the
// stacks by the range of code points it can still become. Options bound the number of
// stacks (ErrTooManyStacks for very ambiguous grammars) and the cache memory.
//
// # Tokens
//
// A Vocab holds every token's bytes in a byte trie, built once per vocabulary from a
// function token → bytes and the end-of-generation tokens; it serves any number of
// sequences. A Constraint (one per sequence) answers, as llama.cpp does, which tokens may
// come next: a token whose bytes can continue a parse (it may end inside a UTF-8
// character), never a token with no bytes (control tokens), and an end-of-generation
// token only when the grammar is complete. Mask walks the trie, pruning a prefix (and all
// the tokens below it) at the first byte the grammar rejects; Allows checks a single
// token. Constraint implements sampling.Constraint, so a sampling.Sampler can use it.
//
// Per-token cost with the 32,000-token LLaMA vocabulary and the JSON grammar, on the
// shared 2-core development VM (best of runs; up to 2× more when the VM is busy; see
// bench_test.go and sampling's BenchmarkGrammarOverhead32k): Allows of one token 13–40 ns;
// Accept of a 9-byte token 0.6 µs; Mask where few tokens fit (after "{", inside a number)
// 2.7–4.3 µs, about 0.1 ns per vocabulary entry; Mask inside a string, where 31,731
// tokens fit, 1.1–1.3 ms, 33–42 ns per entry. Mask interns the stack sets it meets and
// caches their transitions per byte, so states that recur (a string's body) cost a table
// lookup per trie node. Building the Vocab takes about 30 ms, once per model.
//
// # JSON
//
// JSONGrammar and JSON() give any JSON value, JSONObjectGrammar and JSONObject() any JSON
// object ("JSON mode"). JSONSchemaGBNF and FromJSONSchema convert a JSON Schema; see
// JSONSchemaGBNF for the supported keywords. Whitespace policy of all of them, where JSON
// allows whitespace: nothing, one space, or one newline followed by up to 20 spaces or tabs
// (llama.cpp's policy too): pretty-printed output fits, but a model cannot loop on
// whitespace, nor spend its token budget on blank lines.
package grammar
