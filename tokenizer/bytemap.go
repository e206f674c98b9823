package tokenizer

// byteToRune is the GPT-2 byte-to-unicode table: the printable bytes '!'…'~', '¡'…'¬' and
// '®'…'ÿ' stand for themselves; the other 68 bytes (controls, space, DEL, NBSP, soft
// hyphen), in increasing order, become U+0100, U+0101, … (so a space is "Ġ", U+0120).
var byteToRune [256]rune

// runeToByte inverts byteToRune.
var runeToByte = make(map[rune]byte, 256)

func init() {
	next := rune(256)
	for b := 0; b < 256; b++ {
		if (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			byteToRune[b] = rune(b)
		} else {
			byteToRune[b] = next
			next++
		}
		runeToByte[byteToRune[b]] = byte(b)
	}
}

// appendByteLevel appends the byte-level (GPT-2 alphabet) spelling of s to buf.
func appendByteLevel(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		r := byteToRune[s[i]]
		if r < 0x80 {
			buf = append(buf, byte(r))
		} else {
			buf = append(buf, byte(0xC0|r>>6), byte(0x80|r&0x3F)) // every rune is < 0x800
		}
	}
	return buf
}
