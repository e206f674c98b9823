package ggml

// Types of the optimizer API shared by the cgo build (optimizer.go) and the !cgo stubs.

import "fmt"

// OptimizerType selects the optimization method (enum ggml_opt_type).
type OptimizerType int

// The optimization methods.
const (
	Adam  OptimizerType = 0 // Adam / AdamW
	LBFGS OptimizerType = 1 // L-BFGS with a backtracking line search
)

// String returns "adam" or "lbfgs".
func (t OptimizerType) String() string {
	switch t {
	case Adam:
		return "adam"
	case LBFGS:
		return "lbfgs"
	}
	return fmt.Sprintf("OptimizerType(%d)", int(t))
}

// LineSearch selects the stopping condition of the L-BFGS line search (enum ggml_linesearch).
type LineSearch int

// The line search conditions.
const (
	LineSearchArmijo      LineSearch = 0 // sufficient decrease
	LineSearchWolfe       LineSearch = 1 // + curvature (the default)
	LineSearchStrongWolfe LineSearch = 2 // + |curvature|
)

// OptResult is how an optimization ended (enum ggml_opt_result).
type OptResult int

// The results. OptOK: converged; OptDidNotConverge: the iteration limit was reached;
// OptCancel: the callback cancelled; the LineSearch* results: L-BFGS stopped because its line
// search did (the params are left at the last accepted point).
const (
	OptOK                       OptResult = 0
	OptDidNotConverge           OptResult = 1
	OptNoContext                OptResult = 2
	OptInvalidWolfe             OptResult = 3
	OptFail                     OptResult = 4
	OptCancel                   OptResult = 5
	LineSearchFail              OptResult = -128
	LineSearchMinimumStep       OptResult = -127
	LineSearchMaximumStep       OptResult = -126
	LineSearchMaximumIterations OptResult = -125
	LineSearchInvalidParameters OptResult = -124
)

var optResultNames = map[OptResult]string{
	OptOK: "ok", OptDidNotConverge: "did not converge", OptNoContext: "no context", OptInvalidWolfe: "invalid wolfe",
	OptFail: "fail", OptCancel: "cancelled", LineSearchFail: "line search failed",
	LineSearchMinimumStep: "line search: minimum step", LineSearchMaximumStep: "line search: maximum step",
	LineSearchMaximumIterations: "line search: maximum iterations",
	LineSearchInvalidParameters: "line search: invalid parameters",
}

// String describes the result.
func (r OptResult) String() string {
	if s, ok := optResultNames[r]; ok {
		return s
	}
	return fmt.Sprintf("OptResult(%d)", int(r))
}

// AdamParams are the Adam settings (the adam part of struct ggml_opt_params).
type AdamParams struct {
	Iterations   int     // n_iter: iterations per Minimize call
	Sched        float32 // schedule multiplier of the learning rate (the callback may change it)
	Decay        float32 // AdamW weight decay (0: none)
	DecayMinDims int     // decay only params with at least this many dimensions
	Alpha        float32 // learning rate
	Beta1, Beta2 float32
	Eps          float32 // for numerical stability
	EpsF         float32 // stop when the relative change of f is below this
	EpsG         float32 // (unused by the reference method, kept for the struct)
	GradClip     float32 // clip the gradient to this norm (0: no clipping)
}

// LBFGSParams are the L-BFGS settings (the lbfgs part of struct ggml_opt_params).
type LBFGSParams struct {
	M             int     // correction pairs kept
	Iterations    int     // n_iter
	MaxLineSearch int     // function evaluations per line search
	Eps           float32 // stop when |g| / max(1, |x|) is below this
	FTol          float32 // sufficient decrease of the line search
	Wolfe         float32 // curvature condition, in (FTol, 1)
	MinStep       float32
	MaxStep       float32
	LineSearch    LineSearch
}

// OptimizerParams configures an Optimizer (struct ggml_opt_params). Start from
// DefaultOptimizerParams.
type OptimizerParams struct {
	Type                 OptimizerType
	GraphSize            int // node capacity of the graphs Minimize builds
	Threads              int // compute threads
	Past                 int // with Past > 0: stop when f changed by less than Delta (relative) over Past iterations
	Delta                float32
	MaxNoImprovement     int  // stop after this many iterations without a new best f (0: never)
	GradientAccumulation int  // gradient evaluations averaged per update
	PrintForwardGraph    bool // print the graphs to stdout at the end (never to files)
	PrintBackwardGraph   bool
	Adam                 AdamParams
	LBFGS                LBFGSParams
}

// DefaultOptimizerParams returns the reference defaults of the method (ggml_opt_default_params):
// Adam: alpha 1e-3, beta 0.9/0.999, eps 1e-8, 10000 iterations, decay 0 from 2 dims, no
// clipping, stop after 100 iterations without improvement; L-BFGS: m 6, 100 iterations, 20
// evaluations per line search, Wolfe line search (ftol 1e-4, wolfe 0.9); one thread. Unlike the
// reference it does not print the graphs. Only the method's own part (Adam or LBFGS) is set.
func DefaultOptimizerParams(t OptimizerType) OptimizerParams {
	p := OptimizerParams{Type: t, GraphSize: 2048, Threads: 1, Past: 0, Delta: 1e-5, GradientAccumulation: 1}
	switch t {
	case Adam:
		p.MaxNoImprovement = 100
		p.Adam = AdamParams{
			Iterations: 10000, Sched: 1, Decay: 0, DecayMinDims: 2, Alpha: 0.001, Beta1: 0.9, Beta2: 0.999,
			Eps: 1e-8, EpsF: 1e-5, EpsG: 1e-3, GradClip: 0,
		}
	case LBFGS:
		p.LBFGS = LBFGSParams{
			M: 6, Iterations: 100, MaxLineSearch: 20, Eps: 1e-5, FTol: 1e-4, Wolfe: 0.9, MinStep: 1e-20, MaxStep: 1e20,
			LineSearch: LineSearchWolfe,
		}
	}
	return p
}

// validate panics with a *Error naming what to fix.
func (p OptimizerParams) validate(op string) {
	bad := func(msg string) { panic(&Error{Op: op, Msg: msg}) }
	switch {
	case p.Type != Adam && p.Type != LBFGS:
		bad(fmt.Sprintf("unknown optimizer type %d: use Adam or LBFGS", int(p.Type)))
	case p.GraphSize <= 0:
		bad("GraphSize must be > 0 (DefaultOptimizerParams sets 2048)")
	case p.Threads < 1:
		bad("Threads must be >= 1")
	case p.Past < 0 || p.MaxNoImprovement < 0 || p.GradientAccumulation < 0:
		bad("Past, MaxNoImprovement and GradientAccumulation must be >= 0")
	case p.Type == Adam && (p.Adam.Iterations < 0 || p.Adam.Alpha <= 0 || p.Adam.Beta1 < 0 || p.Adam.Beta1 >= 1 ||
		p.Adam.Beta2 < 0 || p.Adam.Beta2 >= 1 || p.Adam.Eps <= 0 || p.Adam.GradClip < 0):
		bad("Adam needs Iterations >= 0, Alpha > 0, Beta1 and Beta2 in [0, 1), Eps > 0 and GradClip >= 0")
	case p.Type == LBFGS && (p.LBFGS.M < 1 || p.LBFGS.Iterations < 0 || p.LBFGS.MaxLineSearch < 1):
		bad("L-BFGS needs M >= 1, Iterations >= 0 and MaxLineSearch >= 1")
	case p.Type == LBFGS && p.LBFGS.LineSearch != LineSearchArmijo && (p.LBFGS.Wolfe <= p.LBFGS.FTol || p.LBFGS.Wolfe >= 1):
		bad(fmt.Sprintf("L-BFGS Wolfe (%g) must lie in (FTol, 1) = (%g, 1)", p.LBFGS.Wolfe, p.LBFGS.FTol))
	}
}

// OptimizerState is what the callback sees before every gradient evaluation.
type OptimizerState struct {
	Iter       int     // iterations done so far (over all Minimize calls)
	AccumStep  int     // gradient accumulation step of this evaluation (0..GradientAccumulation-1)
	Sched      float32 // the current learning-rate multiplier (Adam; 0 for L-BFGS)
	LossBefore float32 // f when the current Minimize call started
	LossAfter  float32 // f after the last update
}

// OptimizerCallback is called before every gradient evaluation, on the goroutine that called
// Minimize. It returns the schedule multiplier to use (return s.Sched to keep it) and whether to
// cancel; a panic cancels and Minimize returns it as an error.
type OptimizerCallback func(s OptimizerState) (sched float32, cancel bool)
