package train

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
)

// EvalPoint is a held-out loss measured during training.
type EvalPoint struct {
	Step int     `json:"step"`
	Loss float64 `json:"loss"`
}

// LossCurve is what WriteLossSVG draws: the training loss of every step, optionally the
// held-out losses and a horizontal reference line (such as the uniform baseline ln(n_vocab)).
type LossCurve struct {
	Title     string
	Train     []float32
	Eval      []EvalPoint
	Reference float64 // drawn when > 0
	RefLabel  string
	Steps     int // the x-axis extent, e.g. the run's total steps (0: the steps drawn)
}

// svg plot geometry
const (
	svgW, svgH                        = 800, 480
	svgLeft, svgRight, svgTop, svgBot = 70, 20, 40, 50
)

// WriteLossSVG draws the loss curve as a standalone SVG image: the raw training loss (light),
// its exponential moving average, the held-out points and the reference line, with labelled
// axes.
func WriteLossSVG(w io.Writer, c LossCurve) error {
	bw := bufio.NewWriter(w)
	p := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }
	n := len(c.Train)
	lo, hi := math.Inf(1), math.Inf(-1)
	see := func(v float64) {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	for _, v := range c.Train {
		see(float64(v))
	}
	for _, e := range c.Eval {
		see(e.Loss)
	}
	if c.Reference > 0 {
		see(c.Reference)
	}
	if math.IsInf(lo, 0) {
		lo, hi = 0, 1
	}
	lo = math.Max(0, math.Floor(lo))
	hi = math.Ceil(hi)
	if hi <= lo {
		hi = lo + 1
	}
	maxX := max(n, c.Steps, 1)
	for _, e := range c.Eval {
		maxX = max(maxX, e.Step)
	}
	pw, ph := float64(svgW-svgLeft-svgRight), float64(svgH-svgTop-svgBot)
	x := func(step float64) float64 { return svgLeft + step/float64(maxX)*pw }
	y := func(v float64) float64 { return svgTop + (hi-v)/(hi-lo)*ph }

	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", svgW, svgH, svgW, svgH)
	p(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	title := c.Title
	if title == "" {
		title = "training loss"
	}
	p(`<text x="%d" y="24" font-size="16">%s</text>`+"\n", svgLeft, xmlEscape(title))
	// grid and axes
	for i := 0; i <= 5; i++ {
		v := lo + (hi-lo)*float64(i)/5
		p(`<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>`+"\n", svgLeft, y(v), svgW-svgRight, y(v))
		p(`<text x="%d" y="%.1f" text-anchor="end">%.2f</text>`+"\n", svgLeft-6, y(v)+4, v)
		s := float64(maxX) * float64(i) / 5
		p(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`+"\n", x(s), svgTop, x(s), svgH-svgBot)
		p(`<text x="%.1f" y="%d" text-anchor="middle">%d</text>`+"\n", x(s), svgH-svgBot+16, int(s))
	}
	p(`<rect x="%d" y="%d" width="%.0f" height="%.0f" fill="none" stroke="black"/>`+"\n", svgLeft, svgTop, pw, ph)
	p(`<text x="%.1f" y="%d" text-anchor="middle">step</text>`+"\n", svgLeft+pw/2, svgH-12)
	p(`<text x="16" y="%.1f" text-anchor="middle" transform="rotate(-90 16 %.1f)">loss (nats/token)</text>`+"\n", svgTop+ph/2, svgTop+ph/2)
	if c.Reference > 0 {
		p(`<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#999" stroke-dasharray="6 4"/>`+"\n", svgLeft, y(c.Reference), svgW-svgRight, y(c.Reference))
		p(`<text x="%d" y="%.1f" text-anchor="end" fill="#666">%s</text>`+"\n", svgW-svgRight-4, y(c.Reference)-4, xmlEscape(c.RefLabel))
	}
	// raw loss, then its moving average
	polyline := func(vals []float64, style string) {
		if len(vals) == 0 {
			return
		}
		var b strings.Builder
		stride := max(1, len(vals)/1600)
		for i := 0; i < len(vals); i += stride {
			fmt.Fprintf(&b, "%.1f,%.1f ", x(float64(i+1)), y(vals[i]))
		}
		p(`<polyline fill="none" %s points="%s"/>`+"\n", style, strings.TrimSpace(b.String()))
	}
	raw := make([]float64, n)
	ema := make([]float64, n)
	var a float64
	for i, v := range c.Train {
		raw[i] = float64(v)
		if i == 0 {
			a = raw[i]
		} else {
			a = 0.95*a + 0.05*raw[i]
		}
		ema[i] = a
	}
	polyline(raw, `stroke="#9ecae1" stroke-width="1"`)
	polyline(ema, `stroke="#08519c" stroke-width="2"`)
	for _, e := range c.Eval {
		p(`<circle cx="%.1f" cy="%.1f" r="4" fill="#e6550d"/>`+"\n", x(float64(e.Step)), y(e.Loss))
	}
	// legend
	ly := svgTop + 16
	p(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#08519c" stroke-width="2"/><text x="%d" y="%d">train (moving average)</text>`+"\n",
		svgW-svgRight-200, ly, svgW-svgRight-176, ly, svgW-svgRight-170, ly+4)
	if len(c.Eval) > 0 {
		p(`<circle cx="%d" cy="%d" r="4" fill="#e6550d"/><text x="%d" y="%d">held out</text>`+"\n",
			svgW-svgRight-188, ly+18, svgW-svgRight-170, ly+22)
	}
	p("</svg>\n")
	return bw.Flush()
}

// WriteLossSVGFile writes the loss curve to path (through a temporary file).
func WriteLossSVGFile(path string, c LossCurve) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if err := WriteLossSVG(f, c); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// xmlEscape escapes text for an SVG text node.
func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
