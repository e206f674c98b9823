package sampling

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

func TestTokenLogprobsMatchFloat64LogSoftmax(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 20; trial++ {
		n := 1 + r.IntN(3000)
		logits := make([]float32, n)
		for i := range logits {
			logits[i] = float32(r.NormFloat64() * 8)
		}
		if n > 3 {
			logits[1] = logits[2] // a tie
		}
		// reference: float64 log-softmax
		var m float64 = math.Inf(-1)
		for _, l := range logits {
			m = math.Max(m, float64(l))
		}
		var sum float64
		for _, l := range logits {
			sum += math.Exp(float64(l) - m)
		}
		ref := func(i int32) float64 { return float64(logits[i]) - m - math.Log(sum) }
		tok := int32(r.IntN(n))
		top := r.IntN(25)
		got := TokenLogprobs(logits, tok, top)
		if got.ID != tok || math.Abs(float64(got.Logprob)-ref(tok)) > 1e-5*math.Max(1, math.Abs(ref(tok))) {
			t.Fatalf("n=%d tok %d: %v, want %v", n, tok, got.Logprob, ref(tok))
		}
		ids := make([]int, n)
		for i := range ids {
			ids[i] = i
		}
		sort.SliceStable(ids, func(a, b int) bool { return logits[ids[a]] > logits[ids[b]] })
		want := min(top, MaxTopLogprobs, n)
		if len(got.Top) != want {
			t.Fatalf("%d top entries, want %d", len(got.Top), want)
		}
		for i, e := range got.Top {
			if e.ID != int32(ids[i]) || math.Abs(float64(e.Logprob)-ref(e.ID)) > 1e-5*math.Max(1, math.Abs(ref(e.ID))) {
				t.Fatalf("top[%d] = %+v, want id %d logprob %v", i, e, ids[i], ref(int32(ids[i])))
			}
		}
	}
}

func TestTokenLogprobsEdgeCases(t *testing.T) {
	got := TokenLogprobs([]float32{0, float32(math.NaN()), 0}, 1, 5)
	if !math.IsInf(float64(got.Logprob), -1) || len(got.Top) != 3 || got.Top[0].ID != 0 || got.Top[1].ID != 2 {
		t.Fatalf("%+v", got)
	}
	if d := float64(got.Top[0].Logprob) - math.Log(0.5); math.Abs(d) > 1e-6 {
		t.Fatalf("%v", got.Top[0].Logprob)
	}
	defer func() {
		if _, ok := recover().(*UsageError); !ok {
			t.Fatal("no UsageError for a token outside the logits")
		}
	}()
	TokenLogprobs([]float32{1}, 1, 0)
}

func TestLogitBias(t *testing.T) {
	logits := []float32{5, 1, 0, -1}
	s, _ := New(GreedyParams())
	if err := s.SetLogitBias(map[int32]float32{0: -100}); err != nil {
		t.Fatal(err)
	}
	if tok := s.Sample(logits); tok != 1 {
		t.Fatalf("banned token 0, got %d", tok)
	}
	if err := s.SetLogitBias(map[int32]float32{3: 100, 99: 5}); err != nil {
		t.Fatal(err)
	}
	if tok := s.Sample(logits); tok != 3 {
		t.Fatalf("forced token 3, got %d", tok)
	}
	p := DefaultParams()
	p.Seed = 4
	s2, _ := New(p)
	s2.SetLogitBias(map[int32]float32{0: -100, 1: -100})
	for i := 0; i < 50; i++ {
		if tok := s2.Sample(logits); tok == 0 || tok == 1 {
			t.Fatalf("a banned token was drawn: %d", tok)
		}
	}
	for _, bad := range []map[int32]float32{{0: 101}, {0: float32(math.NaN())}, {-1: 1}, {0: float32(math.Inf(-1))}} {
		if err := s.SetLogitBias(bad); err == nil {
			t.Fatalf("%v accepted", bad)
		}
	}
	if s.LogitBias()[3] != 100 {
		t.Fatal("a failed SetLogitBias changed the biases")
	}
	s.SetLogitBias(nil)
	if tok := s.Sample(logits); tok != 0 || s.LogitBias() != nil {
		t.Fatalf("after removing the biases: %d", tok)
	}
	if logits[0] != 5 {
		t.Fatal("the logits were modified")
	}
}

func BenchmarkTokenLogprobs(b *testing.B) {
	logits := make([]float32, 32000)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range logits {
		logits[i] = float32(r.NormFloat64() * 4)
	}
	for _, top := range []int{0, 5, 20} {
		b.Run("top"+string(rune('0'+top/10))+string(rune('0'+top%10)), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				TokenLogprobs(logits, 7, top)
			}
		})
	}
}
