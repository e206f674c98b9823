package tokenizer

// The two pre-tokenizer patterns that most BPE vocabularies use, written out by hand (one
// pass, no backtracking). Both cut a piece [lo, hi) of a preText completely: every code
// point lands in exactly one piece.

// gpt2Split cuts by the GPT-2 pattern
//
//	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)
//
// with the alternatives tried in order at each position and whatever no alternative matches
// (a lone whitespace character before a non-space) a piece of its own.
func gpt2Split(p *preText, lo, hi int, out []int32) []int32 {
	cp, fl := p.cpts, p.flags
	flagAt := func(i int) uint16 {
		if i < hi {
			return fl[i]
		}
		return 0
	}
	for pos := lo; pos < hi; {
		if end := contractionAt(p, pos, hi, false); end > 0 {
			out = append(out, int32(end))
			pos = end
			continue
		}
		// " ?" + a run of letters, of numbers, or of other non-space characters.
		j := pos
		if cp[pos] == ' ' && pos+1 < hi {
			j++
		}
		f := fl[j]
		if kind := f & (flagLetter | flagNumber | flagWhitespace); j < hi && kind != flagWhitespace {
			k := j + 1
			for k < hi && flagAt(k)&(flagLetter|flagNumber|flagWhitespace) == kind {
				k++
			}
			out = append(out, int32(k))
			pos = k
			continue
		}
		// Whitespace: a run followed by something keeps its last character for the next
		// piece (\s+(?!\S)); a single character stands alone.
		k := pos
		for k < hi && fl[k]&flagWhitespace != 0 {
			k++
		}
		switch {
		case k == pos:
			k = pos + 1
		case k-pos > 1 && k < hi:
			k--
		}
		out = append(out, int32(k))
		pos = k
	}
	return out
}

// llama3Split returns the splitter of the Llama 3 pattern
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,D}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// with D = maxDigits (3 for llama-bpe; 1 for qwen2, whose pattern has \p{N}).
func llama3Split(maxDigits int) splitter {
	return func(p *preText, lo, hi int, out []int32) []int32 {
		cp, fl := p.cpts, p.flags
		isCRLF := func(i int) bool { return i < hi && (cp[i] == '\r' || cp[i] == '\n') }
		is := func(i int, flag uint16) bool { return i < hi && fl[i]&flag != 0 }
		for pos := lo; pos < hi; {
			if end := contractionAt(p, pos, hi, true); end > 0 {
				out = append(out, int32(end))
				pos = end
				continue
			}
			// [^\r\n\p{L}\p{N}]?\p{L}+
			if !isCRLF(pos) && !is(pos, flagNumber) && (is(pos, flagLetter) || is(pos+1, flagLetter)) {
				k := pos + 1
				for is(k, flagLetter) {
					k++
				}
				out = append(out, int32(k))
				pos = k
				continue
			}
			// \p{N}{1,D}
			if is(pos, flagNumber) {
				k := pos
				for k < hi && k-pos < maxDigits && is(k, flagNumber) {
					k++
				}
				out = append(out, int32(k))
				pos = k
				continue
			}
			// " ?[^\s\p{L}\p{N}]+[\r\n]*"
			j := pos
			if cp[pos] == ' ' {
				j++
			}
			if j < hi && fl[j]&(flagWhitespace|flagLetter|flagNumber) == 0 {
				k := j + 1
				for k < hi && fl[k]&(flagWhitespace|flagLetter|flagNumber) == 0 {
					k++
				}
				for isCRLF(k) {
					k++
				}
				out = append(out, int32(k))
				pos = k
				continue
			}
			// \s*[\r\n]+ | \s+(?!\S) | \s+
			k, lastCRLF := pos, -1
			for is(k, flagWhitespace) {
				if isCRLF(k) {
					lastCRLF = k + 1
				}
				k++
			}
			switch {
			case lastCRLF > 0:
				k = lastCRLF
			case k == pos:
				k = pos + 1
			case k-pos > 1 && k < hi:
				k--
			}
			out = append(out, int32(k))
			pos = k
		}
		return out
	}
}

// contractionAt returns the end of the English contraction ('s 't 're 've 'm 'll 'd) at
// pos, or 0; anyCase also accepts upper-case letters.
func contractionAt(p *preText, pos, hi int, anyCase bool) int {
	cp := p.cpts
	if cp[pos] != '\'' || pos+1 >= hi {
		return 0
	}
	low := func(c rune) rune {
		if anyCase && c >= 'A' && c <= 'Z' {
			return c + 'a' - 'A'
		}
		return c
	}
	switch low(cp[pos+1]) {
	case 's', 't', 'm', 'd':
		return pos + 2
	case 'r', 'v':
		if pos+2 < hi && low(cp[pos+2]) == 'e' {
			return pos + 3
		}
	case 'l':
		if pos+2 < hi && low(cp[pos+2]) == 'l' {
			return pos + 3
		}
	}
	return 0
}

// tekkenSplit cuts by the pattern of Mistral's tekken tokenizer (as llama.cpp rewrites it)
//
//	[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// where a non-ASCII letter counts as both upper and lower case (llama.cpp matches the
// pattern on text whose non-ASCII letters are all one placeholder).
func tekkenSplit(p *preText, lo, hi int, out []int32) []int32 {
	return casedSplit(p, lo, hi, out, false, 1)
}

// gpt4oSplit cuts by the GPT-4o pattern: tekken's, with an optional English contraction
// ((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?) after each run of letters and
// numbers in runs of up to three (\p{N}{1,3}).
func gpt4oSplit(p *preText, lo, hi int, out []int32) []int32 {
	return casedSplit(p, lo, hi, out, true, 3)
}

// casedSplit is tekkenSplit and gpt4oSplit: contractions says whether a contraction may
// follow the letters, maxDigits how many numbers make one piece.
func casedSplit(p *preText, lo, hi int, out []int32, contractions bool, maxDigits int) []int32 {
	cp, fl := p.cpts, p.flags
	is := func(i int, flag uint16) bool { return i < hi && fl[i]&flag != 0 }
	isCRLF := func(i int) bool { return i < hi && (cp[i] == '\r' || cp[i] == '\n') }
	notLower := func(i int) bool { return is(i, flagLetter) && !(cp[i] >= 'a' && cp[i] <= 'z') }
	notUpper := func(i int) bool { return is(i, flagLetter) && !(cp[i] >= 'A' && cp[i] <= 'Z') }
	letters := func(pos int) int {
		starts := []int{pos}
		if pos < hi && !isCRLF(pos) && !is(pos, flagLetter|flagNumber) {
			starts = []int{pos + 1, pos} // the optional prefix, taken first
		}
		for _, s := range starts { // upper* lower+, giving back uppers as needed
			e := s
			for notLower(e) {
				e++
			}
			for k := e; k >= s; k-- {
				if notUpper(k) {
					for notUpper(k) {
						k++
					}
					return k
				}
			}
		}
		for _, s := range starts { // upper+ lower*
			if notLower(s) {
				e := s
				for notLower(e) {
					e++
				}
				for notUpper(e) {
					e++
				}
				return e
			}
		}
		return 0
	}
	for pos := lo; pos < hi; {
		k := letters(pos)
		switch {
		case k > 0:
			if contractions && k < hi {
				if end := contractionAt(p, k, hi, true); end > 0 {
					k = end
				}
			}
		case is(pos, flagNumber):
			k = pos + 1
			for k < hi && k-pos < maxDigits && is(k, flagNumber) {
				k++
			}
		default:
			j := pos
			if cp[pos] == ' ' {
				j++
			}
			if j < hi && fl[j]&(flagWhitespace|flagLetter|flagNumber) == 0 {
				k = j + 1
				for k < hi && fl[k]&(flagWhitespace|flagLetter|flagNumber) == 0 {
					k++
				}
				for isCRLF(k) || k < hi && cp[k] == '/' {
					k++
				}
				break
			}
			k = pos
			lastCRLF := -1
			for is(k, flagWhitespace) {
				if isCRLF(k) {
					lastCRLF = k + 1
				}
				k++
			}
			switch {
			case lastCRLF > 0:
				k = lastCRLF
			case k == pos:
				k = pos + 1
			case k-pos > 1 && k < hi:
				k--
			}
		}
		out = append(out, int32(k))
		pos = k
	}
	return out
}
