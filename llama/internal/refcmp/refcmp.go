// Package refcmp compares a runner's logits and greedy continuation with the llama.cpp
// reference files of shared/models, by the rules of their README and compare.py.
package refcmp

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Profile holds the thresholds of one model class.
type Profile struct {
	NMSEMax, NMSEMean, NMSETop20Max, TieTol float64
}

// Profiles are the thresholds of the README: "float" for F16/F32 weights, "quant" otherwise.
var Profiles = map[string]Profile{
	"float": {NMSEMax: 1e-5, NMSEMean: 3e-6, NMSETop20Max: 1e-6, TieTol: 0.05},
	"quant": {NMSEMax: 3e-3, NMSEMean: 1e-3, NMSETop20Max: 4e-4, TieTol: 0.5},
}

// ArchProfiles are the thresholds of shared/models/arch (llama.cpp c392e5094), by class and
// for gemma2 by its own classes ("gemma2-float", "gemma2-quant").
var ArchProfiles = map[string]Profile{
	"float":        {NMSEMax: 5e-5, NMSEMean: 1e-5, NMSETop20Max: 8e-6, TieTol: 0.05},
	"quant":        {NMSEMax: 1e-2, NMSEMean: 3e-3, NMSETop20Max: 2.5e-3, TieTol: 1.0},
	"gemma2-float": {NMSEMax: 1.5e-4, NMSEMean: 4e-5, NMSETop20Max: 1.5e-5, TieTol: 0.05},
	"gemma2-quant": {NMSEMax: 5e-2, NMSEMean: 2e-2, NMSETop20Max: 5e-3, TieTol: 1.0},
}

// ArchProfile returns the thresholds of a shared/models/arch reference.
func (r *Ref) ArchProfile() Profile {
	if r.Arch == "gemma2" {
		return ArchProfiles["gemma2-"+r.Class()]
	}
	return ArchProfiles[r.Class()]
}

// Row is the reference's description of one logits row.
type Row struct {
	Argmax int32        `json:"argmax"`
	Top    [][2]float64 `json:"top"`
}

// Ref is a reference run ("llama-ref-v1").
type Ref struct {
	Model         string  `json:"model"`
	Arch          string  `json:"arch"`
	ModelDesc     string  `json:"model_desc"`
	Prompt        string  `json:"prompt"`
	Tokens        []int32 `json:"tokens"`
	Generated     []int32 `json:"generated"`
	GeneratedText string  `json:"generated_text"`
	GeneratedHex  string  `json:"generated_text_hex"`
	NVocab        int     `json:"n_vocab"`
	LogitsFile    string  `json:"logits_file"`
	BinRows       []int   `json:"bin_rows"`
	Rows          []Row   `json:"rows"`
	full          map[int][]float32
}

// LoadRef reads a reference JSON and its logits file.
func LoadRef(path string) (*Ref, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Ref
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(path), r.LogitsFile))
	if err != nil {
		return nil, err
	}
	if r.NVocab <= 0 || len(raw)%(4*r.NVocab) != 0 {
		return nil, fmt.Errorf("%s: logits file size %d is not a multiple of n_vocab rows", path, len(raw))
	}
	n := len(raw) / (4 * r.NVocab)
	if r.BinRows == nil {
		for i := 0; i < n; i++ {
			r.BinRows = append(r.BinRows, i)
		}
	}
	if len(r.BinRows) != n {
		return nil, fmt.Errorf("%s: %d rows but bin_rows lists %d", path, n, len(r.BinRows))
	}
	r.full = map[int][]float32{}
	for i, row := range r.BinRows {
		v := make([]float32, r.NVocab)
		for j := range v {
			o := 4 * (i*r.NVocab + j)
			v[j] = math.Float32frombits(uint32(raw[o]) | uint32(raw[o+1])<<8 | uint32(raw[o+2])<<16 | uint32(raw[o+3])<<24)
		}
		r.full[row] = v
	}
	return &r, nil
}

// Class returns the threshold class of the reference's model ("float" or "quant").
func (r *Ref) Class() string {
	d := strings.ToUpper(r.ModelDesc)
	if d == "" {
		d = strings.ToUpper(r.Model)
	}
	for _, s := range []string{" F16", " F32", "-F16", "-F32"} {
		if strings.Contains(d, s) {
			return "float"
		}
	}
	return "quant"
}

// logit returns the reference logit of tok at row r, from the full row or the top 20.
func (r *Ref) logit(row int, tok int32) (float64, bool) {
	if f, ok := r.full[row]; ok {
		return float64(f[tok]), true
	}
	for _, p := range r.Rows[row].Top {
		if int32(p[0]) == tok {
			return p[1], true
		}
	}
	return 0, false
}

// Report is the outcome of a comparison.
type Report struct {
	TokensMatch     bool
	CommonPrefix    int
	NMSERows        int
	NMSEMax         float64
	NMSEMean        float64
	NMSETop20Max    float64
	Top1Agree       int
	Top1Rows        int
	NearTies        int
	Failures        []string
	DivergenceGap   float64
	DivergenceFound bool
}

// Pass reports whether every rule holds.
func (rep *Report) Pass() bool { return len(rep.Failures) == 0 }

// String summarises the report on one line.
func (rep *Report) String() string {
	s := fmt.Sprintf("tokens %v, greedy %d common, NMSE max %.3g mean %.3g (%d rows), top20 max %.3g, top1 %d/%d",
		rep.TokensMatch, rep.CommonPrefix, rep.NMSEMax, rep.NMSEMean, rep.NMSERows, rep.NMSETop20Max, rep.Top1Agree, rep.Top1Rows)
	if !rep.Pass() {
		s += " FAIL: " + strings.Join(rep.Failures, "; ")
	}
	return s
}

// Compare checks a candidate run (prompt tokens, greedy ids, and rows of logits: every prompt
// row then one per generated token) against the reference with profile p.
func Compare(r *Ref, tokens, generated []int32, rows [][]float32, p Profile) *Report {
	rep := &Report{TokensMatch: slices.Equal(tokens, r.Tokens)}
	P := len(r.Tokens)
	k := 0
	for k < min(len(r.Generated), len(generated)) && r.Generated[k] == generated[k] {
		k++
	}
	rep.CommonPrefix = k
	var comp []int
	if rep.TokensMatch {
		for i := 0; i < P+k; i++ {
			comp = append(comp, i)
		}
	}
	var sum float64
	for _, row := range comp {
		if row >= len(rows) {
			continue
		}
		a := rows[row]
		if b, ok := r.full[row]; ok {
			var num, den float64
			for i := range b {
				d := float64(a[i]) - float64(b[i])
				num += d * d
				den += float64(b[i]) * float64(b[i])
			}
			v := num / den
			rep.NMSEMax = max(rep.NMSEMax, v)
			sum += v
			rep.NMSERows++
		}
		var num, den float64
		for _, t := range r.Rows[row].Top {
			d := float64(a[int(t[0])]) - t[1]
			num += d * d
			den += t[1] * t[1]
		}
		rep.NMSETop20Max = max(rep.NMSETop20Max, num/den)
	}
	if rep.NMSERows > 0 {
		rep.NMSEMean = sum / float64(rep.NMSERows)
	}
	if !rep.TokensMatch {
		rep.Failures = append(rep.Failures, "prompt tokens differ")
	}
	if len(comp) == 0 {
		rep.Failures = append(rep.Failures, "no comparable logits rows")
	}
	if rep.NMSETop20Max > p.NMSETop20Max {
		rep.Failures = append(rep.Failures, fmt.Sprintf("nmse_top20_max %.3g > %g", rep.NMSETop20Max, p.NMSETop20Max))
	}
	if rep.NMSERows > 0 && rep.NMSEMax > p.NMSEMax {
		rep.Failures = append(rep.Failures, fmt.Sprintf("nmse_max %.3g > %g", rep.NMSEMax, p.NMSEMax))
	}
	if rep.NMSERows > 0 && rep.NMSEMean > p.NMSEMean {
		rep.Failures = append(rep.Failures, fmt.Sprintf("nmse_mean %.3g > %g", rep.NMSEMean, p.NMSEMean))
	}
	if rep.TokensMatch {
		for row := 0; row < P && row < len(rows); row++ {
			rep.Top1Rows++
			ca := Argmax(rows[row])
			ra := r.Rows[row].Argmax
			if ca == ra {
				rep.Top1Agree++
				continue
			}
			gap := math.Inf(1)
			if lv, ok := r.logit(row, ca); ok {
				rl, _ := r.logit(row, ra)
				gap = rl - lv
			}
			if gap <= p.TieTol {
				rep.NearTies++
			} else {
				rep.Failures = append(rep.Failures, fmt.Sprintf("prompt row %d: top-1 %d, reference %d (gap %.3g)", row, ca, ra, gap))
			}
		}
	}
	if k < len(r.Generated) {
		rep.DivergenceFound = true
		gap := math.Inf(1)
		row := P - 1 + k
		if k < len(generated) && rep.TokensMatch {
			if lv, ok := r.logit(row, generated[k]); ok {
				rl, _ := r.logit(row, r.Generated[k])
				gap = rl - lv
			}
		}
		rep.DivergenceGap = gap
		if gap > p.TieTol {
			rep.Failures = append(rep.Failures, fmt.Sprintf("greedy diverges at step %d (ref gap %.3g > tie_tol)", k, gap))
		}
	}
	return rep
}

// Argmax returns the index of the largest value, the lowest index on ties.
func Argmax(v []float32) int32 {
	best := 0
	for i := 1; i < len(v); i++ {
		if v[i] > v[best] {
			best = i
		}
	}
	return int32(best)
}
