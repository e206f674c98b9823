package tokenizer

import (
	"fmt"
	"slices"
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
	noBOS        bool // llama.cpp drops the default BOS id (a file's bos_token_id still wins)
}

var (
	gpt2Pattern    = []splitter{gpt2Split}
	llama3Pattern  = []splitter{llama3Split(3)}
	starcoderSplit = []splitter{searchSplitter(oneOf(classNumberP)), gpt2Split}
	// " ?[^(\s|.,!?…。，、।۔،)]+"
	bloomSplit = []splitter{searchSplitter(spaceCharThenRun(notClass("(|.,!?…。，、।۔،)")))}
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
	"llama3":      {splits: llama3Pattern, ignoreMerges: true, addBOS: true},
	"llama-v3":    {splits: llama3Pattern, ignoreMerges: true, addBOS: true},
	"llama-bpe":   {splits: llama3Pattern, ignoreMerges: true, addBOS: true},
	"falcon3":     {splits: llama3Pattern, ignoreMerges: true, addBOS: true},
	"chatglm-bpe": {splits: llama3Pattern, noBOS: true},
	"dbrx":        {splits: llama3Pattern},
	"tekken":      {splits: []splitter{tekkenSplit}, ignoreMerges: true, addBOS: true},
	"gpt-4o":      {splits: []splitter{gpt4oSplit}},
	"smaug-bpe":   {splits: llama3Pattern},
	"deepseek-llm": {splits: []splitter{
		searchSplitter(oneOf(classCRLF)),
		searchSplitter(spaceThenRun(rangeTable(deepseekLetters))),
		searchSplitter(spaceThenRun(rangesClass("!-/:-~！-／：-～‘-‟　-。"))),
		searchSplitter(trailingSpace),
		searchSplitter(runOf(rangesClass(cjkRanges))),
		searchSplitter(runOf(classNumberP)),
	}},
	"deepseek-v3": {splits: []splitter{
		searchSplitter(runOfAtMost(classNumberP, 3)),
		searchSplitter(runOf(rangesClass("一-龥぀-ゟ゠-ヿ"))),
		searchSplitter(deepseek3Words),
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
	// Words between spaces and sentence punctuation (BLOOM and related).
	"bloom":        {splits: bloomSplit},
	"gpt3-finnish": {splits: bloomSplit},
	"poro-chat":    {splits: bloomSplit},
	"viking":       {splits: append(slices.Clone(bloomSplit), searchSplitter(oneOf(classNumberP)))},
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
	if slices.Contains(unsupportedPre, name) {
		return preType{}, fmt.Errorf("tokenizer: the BPE pre-tokenizer %q (tokenizer.ggml.pre) of llama.cpp is not implemented by this package: supported are %s", name, strings.Join(names, ", "))
	}
	return preType{}, fmt.Errorf("tokenizer: unknown BPE pre-tokenizer %q (tokenizer.ggml.pre): supported are %s", name, strings.Join(names, ", "))
}

// unsupportedPre are the pre-tokenizers llama.cpp c392e5094 knows that this package does
// not implement.
var unsupportedPre = []string{"chameleon"}

// cjkRanges is the class [一-龥ࠀ-一가-퟿] of the DeepSeek patterns.
const cjkRanges = "一-龥ࠀ-一가-퟿"

// deepseekLetters is the letter class of the deepseek-llm pattern
// (\s?[A-Za-zµÀ-ÖØ-öø-ƺ...𞤀-𞥃]+), as code point ranges: written as characters, a few of its
// code points (U+1F7D, U+1FBE, U+1FD3, U+1FDB, U+2126, U+212A) would not survive Unicode
// normalization by an editor.
var deepseekLetters = [][2]rune{
	{0x41, 0x5A}, {0x61, 0x7A}, {0xB5, 0xB5}, {0xC0, 0xD6}, {0xD8, 0xF6}, {0xF8, 0x1BA},
	{0x1BC, 0x1BF}, {0x1C4, 0x293}, {0x295, 0x2AF}, {0x370, 0x373}, {0x376, 0x376}, {0x377, 0x377},
	{0x37B, 0x37D}, {0x37F, 0x37F}, {0x386, 0x386}, {0x388, 0x38A}, {0x38C, 0x38C}, {0x38E, 0x3A1},
	{0x3A3, 0x3F5}, {0x3F7, 0x481}, {0x48A, 0x52F}, {0x531, 0x556}, {0x10A0, 0x10C5}, {0x13A0, 0x13F5},
	{0x13F8, 0x13FD}, {0x1C90, 0x1CBA}, {0x1CBD, 0x1CBF}, {0x1D00, 0x1D2B}, {0x1D6B, 0x1D77}, {0x1D79, 0x1D9A},
	{0x1E00, 0x1F15}, {0x1F18, 0x1F1D}, {0x1F20, 0x1F45}, {0x1F48, 0x1F4D}, {0x1F50, 0x1F57}, {0x1F59, 0x1F59},
	{0x1F5B, 0x1F5B}, {0x1F5D, 0x1F5D}, {0x1F5F, 0x1F7D}, {0x1F80, 0x1FB4}, {0x1FB6, 0x1FBC}, {0x1FBE, 0x1FBE},
	{0x1FC2, 0x1FC4}, {0x1FC6, 0x1FCC}, {0x1FD0, 0x1FD3}, {0x1FD6, 0x1FDB}, {0x1FE0, 0x1FEC}, {0x1FF2, 0x1FF4},
	{0x1FF6, 0x1FFC}, {0x2102, 0x2102}, {0x2107, 0x2107}, {0x210A, 0x2113}, {0x2115, 0x2115}, {0x2119, 0x211D},
	{0x2124, 0x2124}, {0x2126, 0x2126}, {0x2128, 0x2128}, {0x212A, 0x212D}, {0x212F, 0x2134}, {0x2139, 0x2139},
	{0x213C, 0x213F}, {0x2145, 0x2149}, {0x214E, 0x214E}, {0x2183, 0x2183}, {0x2184, 0x2184}, {0x2C00, 0x2C7B},
	{0x2C7E, 0x2CE4}, {0x2CEB, 0x2CEE}, {0x2CF2, 0x2CF2}, {0x2CF3, 0x2CF3}, {0xA640, 0xA66D}, {0xA680, 0xA69B},
	{0xA722, 0xA76F}, {0xA771, 0xA787}, {0xA78B, 0xA78E}, {0xAB70, 0xABBF}, {0xFB00, 0xFB06}, {0xFB13, 0xFB17},
	{0xFF21, 0xFF3A}, {0xFF41, 0xFF5A}, {0x10400, 0x1044F}, {0x104B0, 0x104D3}, {0x104D8, 0x104FB}, {0x10C80, 0x10CB2},
	{0x10CC0, 0x10CF2}, {0x118A0, 0x118DF}, {0x1E900, 0x1E943},
}
