package refcmp

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// synthetic returns a reference of 2 prompt rows and 2 generated tokens over a 30-token
// vocabulary, and a candidate identical to it.
func synthetic() (*Ref, [][]float32) {
	r := &Ref{Tokens: []int32{1, 5}, Generated: []int32{7, 9}, NVocab: 30, ModelDesc: "llama ?B F16", full: map[int][]float32{}}
	var rows [][]float32
	for row := 0; row < 4; row++ {
		v := make([]float32, 30)
		for i := range v {
			v[i] = float32((i*7+row*3)%30) / 3
		}
		best := []int32{5, 7, 9, 3}[row] // generated[j] is the argmax of row P-1+j
		v[best] = 20
		if row == 2 {
			v[4] = 19.99 // a near tie with the best
		}
		top := make([][2]float64, 0, 20)
		for i := 0; i < 20; i++ {
			top = append(top, [2]float64{float64(i), float64(v[i])})
		}
		r.Rows = append(r.Rows, Row{Argmax: best, Top: top})
		if row < 3 {
			r.full[row] = v
		}
		rows = append(rows, append([]float32(nil), v...))
	}
	return r, rows
}

func TestCompareRules(t *testing.T) {
	p := Profiles["float"]
	r, rows := synthetic()
	assert.Equal(t, "float", r.Class())
	rep := Compare(r, r.Tokens, r.Generated, rows, p)
	assert.True(t, rep.Pass(), rep.String())
	assert.Equal(t, 2, rep.CommonPrefix)
	assert.Equal(t, 0.0, rep.NMSEMax)
	assert.Equal(t, 3, rep.NMSERows, "rows with full reference logits among the comparable ones")

	// a small perturbation stays within the float thresholds, a large one does not
	small := [][]float32{append([]float32(nil), rows[0]...), rows[1], rows[2], rows[3]}
	small[0][3] += 1e-4
	assert.True(t, Compare(r, r.Tokens, r.Generated, small, p).Pass())
	big := [][]float32{append([]float32(nil), rows[0]...), rows[1], rows[2], rows[3]}
	big[0][3] += 1
	rep = Compare(r, r.Tokens, r.Generated, big, p)
	assert.False(t, rep.Pass())
	assert.Contains(t, rep.String(), "nmse_max")

	// different prompt tokens
	rep = Compare(r, []int32{1, 6}, r.Generated, rows, p)
	assert.Contains(t, rep.String(), "prompt tokens differ")

	// greedy divergence: at a near tie it passes, otherwise it fails
	rep = Compare(r, r.Tokens, []int32{7, 4}, rows[:3], p)
	assert.Equal(t, 1, rep.CommonPrefix)
	assert.InDelta(t, 0.01, rep.DivergenceGap, 1e-5)
	assert.True(t, rep.Pass(), rep.String())
	rep = Compare(r, r.Tokens, []int32{3, 9}, rows[:2], p)
	assert.False(t, rep.Pass())
	assert.Contains(t, rep.String(), "greedy diverges at step 0")

	assert.Equal(t, "quant", (&Ref{ModelDesc: "llama ?B Q4_0"}).Class())
	assert.Equal(t, int32(1), Argmax([]float32{0, 2, 2, 1}), "lowest id on ties")
}
