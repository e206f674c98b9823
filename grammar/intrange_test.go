package grammar

import (
	"fmt"
	"strconv"
	"testing"
)

// Every integer near the bounds matches exactly when it is inside them.
func TestIntRangeGrammar(t *testing.T) {
	type bound struct {
		v   int64
		has bool
	}
	for _, r := range []struct{ lo, hi bound }{
		{bound{0, true}, bound{0, false}},
		{bound{1, true}, bound{5, true}},
		{bound{-7, true}, bound{13, true}},
		{bound{-120, true}, bound{-3, true}},
		{bound{17, true}, bound{2345, true}},
		{bound{0, false}, bound{-10, true}},
		{bound{99, true}, bound{1000, true}},
		{bound{250, true}, bound{0, false}},
		{bound{0, false}, bound{0, false}},
	} {
		e, err := intRangeGBNF(r.lo.v, r.lo.has, r.hi.v, r.hi.has)
		if err != nil {
			t.Fatal(err)
		}
		g := MustParse("root ::= " + e)
		for x := int64(-3000); x <= 3000; x++ {
			in := (!r.lo.has || x >= r.lo.v) && (!r.hi.has || x <= r.hi.v)
			if g.Match(strconv.FormatInt(x, 10)) != in {
				t.Fatalf("[%v, %v] (%s): %d matched %v", r.lo, r.hi, e, x, !in)
			}
		}
		for _, bad := range []string{"-0", "00", "01", "+1", "1.0", ""} {
			if g.Match(bad) {
				t.Errorf("%s matches %q", e, bad)
			}
		}
	}
}

func TestIntBoundsFromSchema(t *testing.T) {
	for _, tc := range []struct {
		schema string
		in     []int64
		out    []int64
	}{
		{`{"type": "integer", "minimum": 1, "maximum": 5}`, []int64{1, 3, 5}, []int64{0, 6, -1}},
		{`{"type": "integer", "exclusiveMinimum": 0}`, []int64{1, 100}, []int64{0, -5}},
		{`{"type": "integer", "exclusiveMaximum": 10.5, "minimum": -2.5}`, []int64{-2, 10}, []int64{-3, 11}},
		{`{"type": "integer", "maximum": -1}`, []int64{-1, -999}, []int64{0, 1}},
	} {
		g, err := FromJSONSchema([]byte(tc.schema))
		if err != nil {
			t.Fatalf("%s: %v", tc.schema, err)
		}
		for _, x := range tc.in {
			if !g.Match(fmt.Sprint(x)) {
				t.Errorf("%s rejects %d", tc.schema, x)
			}
		}
		for _, x := range tc.out {
			if g.Match(fmt.Sprint(x)) {
				t.Errorf("%s accepts %d", tc.schema, x)
			}
		}
	}
	if _, err := FromJSONSchema([]byte(`{"type": "number", "minimum": 0}`)); err == nil {
		t.Error("bounds on numbers accepted")
	}
	if _, err := FromJSONSchema([]byte(`{"type": "integer", "minimum": 5, "maximum": 4}`)); err == nil {
		t.Error("empty range accepted")
	}
}
