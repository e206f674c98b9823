package grammar

import (
	"errors"
	"testing"
)

func pieceVocab(t *testing.T, pieces ...string) *Vocab {
	t.Helper()
	v, err := NewVocab(len(pieces), func(id int32) []byte { return []byte(pieces[id]) }, 0)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func allowedPieces(t *testing.T, c *Constraint, pieces []string) []string {
	t.Helper()
	a := make([]bool, len(pieces))
	if err := c.Mask(a); err != nil {
		t.Fatal(err)
	}
	var out []string
	for i, ok := range a {
		if ok != c.Allows(int32(i)) {
			t.Fatalf("Mask and Allows disagree on %q", pieces[i])
		}
		if ok {
			out = append(out, pieces[i])
		}
	}
	return out
}

// A character split over two tokens: the first half is allowed when some character of the
// grammar starts with it, and the second must complete one the grammar allows.
func TestSplitUTF8Tokens(t *testing.T) {
	pieces := []string{"", "\xc3", "\xa9", "\xa8", "é", "e", "\xe6\x97", "\xa5", "\xff", "\xc0\x80"}
	v := pieceVocab(t, pieces...)
	c, _ := NewConstraint(MustParse(`root ::= "é" | "日"`), v, Options{})
	got := allowedPieces(t, c, pieces)
	if want := []string{"\xc3", "é", "\xe6\x97"}; !equalStrings(got, want) {
		t.Fatalf("at start: %q, want %q", got, want)
	}
	if err := c.Accept(1); err != nil { // \xc3
		t.Fatal(err)
	}
	if got := allowedPieces(t, c, pieces); !equalStrings(got, []string{"\xa9"}) {
		t.Fatalf("after \\xc3: %q", got)
	}
	if c.Complete() || c.Allows(0) {
		t.Fatal("complete in the middle of a character")
	}
	if err := c.Accept(3); !errors.Is(err, ErrRejected) { // \xa8 makes è
		t.Fatalf("è accepted: %v", err)
	}
	if err := c.Accept(2); err != nil {
		t.Fatal(err)
	}
	if got := allowedPieces(t, c, pieces); !equalStrings(got, []string{""}) {
		t.Fatalf("after é: %q, want only the end token", got)
	}
	if err := c.Accept(0); err != nil {
		t.Fatal(err)
	}
	if got := allowedPieces(t, c, pieces); len(got) != 0 {
		t.Fatalf("after the end: %q", got)
	}
	if err := c.Accept(5); !errors.Is(err, ErrFinished) {
		t.Fatalf("accept after the end: %v", err)
	}
	if err := c.Reset(); err != nil || !c.Allows(4) {
		t.Fatal("Reset did not return to the start", err)
	}
}

func TestEndTokenOnlyWhenComplete(t *testing.T) {
	pieces := []string{"</s>", "a", "b"}
	v := pieceVocab(t, pieces...)
	c, _ := NewConstraint(MustParse(`root ::= "a"+ "b"?`), v, Options{})
	if c.Allows(0) {
		t.Fatal("end allowed before any a")
	}
	if err := c.Accept(0); !errors.Is(err, ErrRejected) {
		t.Fatal("end accepted before complete")
	}
	_ = c.Accept(1)
	if !c.Allows(0) || !c.Allows(1) || !c.Allows(2) {
		t.Fatal("after a: end, a and b must be allowed")
	}
	_ = c.Accept(2)
	if got := allowedPieces(t, c, pieces); !equalStrings(got, []string{"</s>"}) {
		t.Fatalf("after ab: %q", got)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
