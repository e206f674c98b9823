package tokenizer

import (
	"fmt"
	"sort"
	"strings"
)

// preType is one BPE pre-tokenizer of llama.cpp (LLAMA_VOCAB_PRE_TYPE_*): the patterns that
// cut text into words, applied one after the other (each cuts the pieces of the previous
// one), and the vocabulary flags llama.cpp sets with it.
type preType struct {
	splits       []splitter
	ignoreMerges bool // a word that is a token is taken whole, without merging
	addBOS       bool // llama.cpp sets add_bos for this type (a file's add_bos_token still wins)
}

var (
	gpt2Pattern    = []splitter{gpt2Split}
	llama3Pattern  = []splitter{llama3Split(3)}
	starcoderSplit = []splitter{searchSplitter(oneOf(classNumberP)), gpt2Split}
)

// preTypes maps every tokenizer.ggml.pre value that llama.cpp c392e5094 (2025-02) accepts
// and this package implements to its pre-tokenizer.
var preTypes = map[string]preType{
	"default": {splits: []splitter{
		searchSplitter(runOf(punctOr("$+<=>^~|"))),
		gpt2Split,
		searchSplitter(runOf(classNumberP)),
		searchSplitter(threeDigits),
	}},
	// Llama 3 and the names llama.cpp treats the same.
	"llama3":    {splits: llama3Pattern, ignoreMerges: true, addBOS: true},
	"llama-v3":  {splits: llama3Pattern, ignoreMerges: true, addBOS: true},
	"llama-bpe": {splits: llama3Pattern, ignoreMerges: true, addBOS: true},
	"falcon3":   {splits: llama3Pattern, ignoreMerges: true, addBOS: true},
	"dbrx":      {splits: llama3Pattern},
	"smaug-bpe": {splits: llama3Pattern},
	"deepseek-llm": {splits: []splitter{
		searchSplitter(oneOf(classCRLF)),
		searchSplitter(spaceThenRun(rangesClass(deepseekLetters))),
		searchSplitter(spaceThenRun(rangesClass("!-/:-~！-／：-～‘-‟　-。"))),
		searchSplitter(trailingSpace),
		searchSplitter(runOf(rangesClass(cjkRanges))),
		searchSplitter(runOf(classNumberP)),
	}},
	"deepseek-coder": {splits: []splitter{
		searchSplitter(oneOf(classCRLF)),
		searchSplitter(spaceThenRun(classLetterP)),
		searchSplitter(spaceThenRun(classPunctP)),
		searchSplitter(runOf(rangesClass(cjkRanges))),
		searchSplitter(oneOf(classNumberP)),
	}},
	"falcon": {splits: []splitter{
		searchSplitter(runOf(punctOr("$+<=>^~|`"))),
		gpt2Split,
		searchSplitter(threeDigits),
	}},
	// GPT-2's pattern alone.
	"gpt-2":        {splits: gpt2Pattern},
	"mpt":          {splits: gpt2Pattern},
	"olmo":         {splits: gpt2Pattern},
	"jais":         {splits: gpt2Pattern},
	"phi-2":        {splits: gpt2Pattern},
	"jina-es":      {splits: gpt2Pattern},
	"jina-de":      {splits: gpt2Pattern},
	"gigachat":     {splits: gpt2Pattern},
	"jina-v1-en":   {splits: gpt2Pattern},
	"jina-v2-es":   {splits: gpt2Pattern},
	"jina-v2-de":   {splits: gpt2Pattern},
	"jina-v2-code": {splits: gpt2Pattern},
	"roberta-bpe":  {splits: gpt2Pattern},
	// Digits one by one, then GPT-2's pattern.
	"starcoder":  {splits: starcoderSplit},
	"refact":     {splits: starcoderSplit},
	"command-r":  {splits: starcoderSplit},
	"smollm":     {splits: starcoderSplit},
	"codeshell":  {splits: starcoderSplit},
	"exaone":     {splits: starcoderSplit},
	"minerva-7b": {splits: starcoderSplit},
	// The Llama 3 pattern with single digits.
	"qwen2":     {splits: []splitter{llama3Split(1)}},
	"stablelm2": {splits: []splitter{llama3Split(1)}},
	"megrez":    {splits: []splitter{llama3Split(1)}},
}

// PreTokenizers returns the tokenizer.ggml.pre values this package supports for BPE
// vocabularies, sorted.
func PreTokenizers() []string {
	names := make([]string, 0, len(preTypes))
	for n := range preTypes {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// lookupPre returns the pre-tokenizer named name, or an error that names it and lists the
// supported ones.
func lookupPre(name string) (preType, error) {
	if p, ok := preTypes[name]; ok {
		return p, nil
	}
	names := PreTokenizers()
	return preType{}, fmt.Errorf("tokenizer: unknown BPE pre-tokenizer %q (tokenizer.ggml.pre): supported are %s", name, strings.Join(names, ", "))
}

// cjkRanges is the class [一-龥ࠀ-一가-퟿] of the DeepSeek patterns.
const cjkRanges = "一-龥ࠀ-一가-퟿"

// deepseekLetters is the letter class of the deepseek-llm pattern.
const deepseekLetters = "A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-ώᾀ-ᾴᾶ-ᾼιῂ-ῄῆ-ῌῐ-ΐῖ-Ίῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤΩℨK-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃"
