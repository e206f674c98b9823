// Package cli gives the module's commands one command-line convention, that of llama.cpp's
// tools, which their users already type:
//
//   - a flag may have several names, short and long (-t, --threads); one dash or two both work;
//   - -h, -help and --help print the usage on standard output and the command exits 0 without
//     running (Parse returns ErrHelp);
//   - defaults print as they were typed (0.8, not 0.800000011920929);
//   - a mistake prints what went wrong and the usage on standard error (Parse returns
//     ErrUsage).
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ErrHelp is returned by Parse after printing the usage for -h/--help: exit 0.
var ErrHelp = flag.ErrHelp

// ErrUsage is returned by Parse for a command line it could not parse; the message and the
// usage were printed on the error output: exit 2.
var ErrUsage = errors.New("usage error")

// FlagSet is a set of flags with several names each.
type FlagSet struct {
	fs       *flag.FlagSet
	title    string // e.g. "ggml-llama generate"
	synopsis string // e.g. "-m MODEL.gguf -p PROMPT"
	extra    string // text printed after the flags
	entries  []*entry
	byName   map[string]*entry
	stdout   io.Writer
	stderr   io.Writer
}

type entry struct {
	names []string // in the order given, e.g. t, threads
	arg   string   // the argument's placeholder, e.g. N; "" for a bool flag
	usage string
	value flag.Value
	def   string
}

// New returns an empty flag set for the command title (e.g. "ggml-train") with the given
// synopsis, printed as "usage: title synopsis".
func New(title, synopsis string) *FlagSet {
	f := &FlagSet{title: title, synopsis: synopsis, byName: map[string]*entry{}, stdout: os.Stdout, stderr: os.Stderr}
	f.fs = flag.NewFlagSet(title, flag.ContinueOnError)
	f.fs.SetOutput(io.Discard) // messages are printed by Parse
	f.fs.Usage = func() {}
	return f
}

// SetOutput sets where help (stdout) and errors with the usage (stderr) are printed.
func (f *FlagSet) SetOutput(stdout, stderr io.Writer) {
	f.stdout, f.stderr = stdout, stderr
}

// SetExtra sets text printed after the list of flags (examples, notes).
func (f *FlagSet) SetExtra(text string) { f.extra = text }

// Var defines a flag with the comma-separated names (e.g. "t,threads"), the placeholder arg of
// its argument (e.g. "N") and usage. Its default is the value's String at the time of the call.
func (f *FlagSet) Var(v flag.Value, names, arg, usage string) {
	e := &entry{arg: arg, usage: usage, value: v, def: v.String()}
	for _, n := range strings.Split(names, ",") {
		n = strings.TrimLeft(strings.TrimSpace(n), "-")
		if n == "" {
			continue
		}
		if _, dup := f.byName[n]; dup {
			panic(fmt.Sprintf("cli: flag %q defined twice in %s", n, f.title))
		}
		e.names = append(e.names, n)
		f.byName[n] = e
		f.fs.Var(v, n, usage)
	}
	if len(e.names) == 0 {
		panic("cli: a flag without a name in " + f.title)
	}
	f.entries = append(f.entries, e)
}

// String defines a string flag.
func (f *FlagSet) String(p *string, names, arg string, def string, usage string) {
	*p = def
	f.Var((*stringValue)(p), names, arg, usage)
}

// Int defines an int flag.
func (f *FlagSet) Int(p *int, names, arg string, def int, usage string) {
	*p = def
	f.Var((*intValue)(p), names, arg, usage)
}

// Int64 defines an int64 flag.
func (f *FlagSet) Int64(p *int64, names, arg string, def int64, usage string) {
	*p = def
	f.Var((*int64Value)(p), names, arg, usage)
}

// Uint64 defines a uint64 flag.
func (f *FlagSet) Uint64(p *uint64, names, arg string, def uint64, usage string) {
	*p = def
	f.Var((*uint64Value)(p), names, arg, usage)
}

// Float32 defines a float32 flag; its default prints as typed (0.8).
func (f *FlagSet) Float32(p *float32, names, arg string, def float32, usage string) {
	*p = def
	f.Var((*float32Value)(p), names, arg, usage)
}

// Float64 defines a float64 flag.
func (f *FlagSet) Float64(p *float64, names, arg string, def float64, usage string) {
	*p = def
	f.Var((*float64Value)(p), names, arg, usage)
}

// Bool defines a bool flag (given alone: true; -x=false turns it off).
func (f *FlagSet) Bool(p *bool, names string, def bool, usage string) {
	*p = def
	f.Var((*boolValue)(p), names, "", usage)
}

// Duration defines a time.Duration flag (e.g. 30m, 1h30m).
func (f *FlagSet) Duration(p *time.Duration, names, arg string, def time.Duration, usage string) {
	*p = def
	f.Var((*durationValue)(p), names, arg, usage)
}

// Parse parses args. It returns ErrHelp after printing the usage on stdout for -h/--help,
// ErrUsage after printing the problem and the usage on stderr, and nil otherwise. Positional
// arguments are refused unless allowArgs; Args returns them.
func (f *FlagSet) Parse(args []string, allowArgs bool) error {
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-h" || a == "-help" || a == "--help" || a == "--h" {
			f.PrintUsage(f.stdout)
			return ErrHelp
		}
	}
	if err := f.fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			f.PrintUsage(f.stdout)
			return ErrHelp
		}
		fmt.Fprintf(f.stderr, "%s: %v\n\n", f.title, err)
		f.PrintUsage(f.stderr)
		return ErrUsage
	}
	if !allowArgs && f.fs.NArg() > 0 {
		fmt.Fprintf(f.stderr, "%s: unexpected argument %q\n\n", f.title, f.fs.Arg(0))
		f.PrintUsage(f.stderr)
		return ErrUsage
	}
	return nil
}

// Args returns the positional arguments left after Parse.
func (f *FlagSet) Args() []string { return f.fs.Args() }

// Changed reports whether the flag named name (any of its names) was set on the command line.
func (f *FlagSet) Changed(name string) bool {
	e := f.byName[strings.TrimLeft(name, "-")]
	if e == nil {
		return false
	}
	set := false
	f.fs.Visit(func(fl *flag.Flag) {
		for _, n := range e.names {
			set = set || fl.Name == n
		}
	})
	return set
}

// PrintUsage writes the usage: the synopsis, then every flag with its names, argument,
// description and default.
func (f *FlagSet) PrintUsage(w io.Writer) {
	fmt.Fprintf(w, "usage: %s %s\n\nflags (one or two dashes):\n", f.title, f.synopsis)
	type line struct{ head, text string }
	var lines []line
	width := 0
	for _, e := range f.entries {
		var names []string
		for _, n := range e.names {
			if len(n) == 1 {
				names = append(names, "-"+n)
			} else {
				names = append(names, "--"+n)
			}
		}
		head := "  " + strings.Join(names, ", ")
		if e.arg != "" {
			head += " " + e.arg
		}
		text := e.usage
		if e.def != "" && e.def != "0" && e.def != "false" && e.def != "0s" {
			if _, isString := e.value.(*stringValue); isString {
				text += fmt.Sprintf(" (default %q)", e.def)
			} else {
				text += " (default " + e.def + ")"
			}
		}
		lines = append(lines, line{head, text})
		width = max(width, len(head))
	}
	width = min(width, 30)
	for _, l := range lines {
		if len(l.head) > width {
			fmt.Fprintf(w, "%s\n%s  %s\n", l.head, strings.Repeat(" ", width), l.text)
		} else {
			fmt.Fprintf(w, "%-*s  %s\n", width, l.head, l.text)
		}
	}
	if f.extra != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimRight(f.extra, "\n"))
	}
}

// Names returns every flag name, sorted (for tests).
func (f *FlagSet) Names() []string {
	var out []string
	for n := range f.byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

type stringValue string

func (v *stringValue) Set(s string) error { *v = stringValue(s); return nil }
func (v *stringValue) String() string     { return string(*v) }

type intValue int

func (v *intValue) Set(s string) error {
	n, err := strconv.ParseInt(s, 0, strconv.IntSize)
	if err != nil {
		return numError(s, "an integer")
	}
	*v = intValue(n)
	return nil
}
func (v *intValue) String() string { return strconv.Itoa(int(*v)) }

type int64Value int64

func (v *int64Value) Set(s string) error {
	n, err := strconv.ParseInt(s, 0, 64)
	if err != nil {
		return numError(s, "an integer")
	}
	*v = int64Value(n)
	return nil
}
func (v *int64Value) String() string { return strconv.FormatInt(int64(*v), 10) }

type uint64Value uint64

func (v *uint64Value) Set(s string) error {
	n, err := strconv.ParseUint(s, 0, 64)
	if err != nil {
		return numError(s, "a non-negative integer")
	}
	*v = uint64Value(n)
	return nil
}
func (v *uint64Value) String() string { return strconv.FormatUint(uint64(*v), 10) }

type float32Value float32

func (v *float32Value) Set(s string) error {
	x, err := strconv.ParseFloat(s, 32)
	if err != nil {
		return numError(s, "a number")
	}
	*v = float32Value(x)
	return nil
}
func (v *float32Value) String() string { return strconv.FormatFloat(float64(*v), 'g', -1, 32) }

type float64Value float64

func (v *float64Value) Set(s string) error {
	x, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return numError(s, "a number")
	}
	*v = float64Value(x)
	return nil
}
func (v *float64Value) String() string { return strconv.FormatFloat(float64(*v), 'g', -1, 64) }

type boolValue bool

func (v *boolValue) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return numError(s, "true or false")
	}
	*v = boolValue(b)
	return nil
}
func (v *boolValue) String() string   { return strconv.FormatBool(bool(*v)) }
func (v *boolValue) IsBoolFlag() bool { return true }

type durationValue time.Duration

func (v *durationValue) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return numError(s, "a duration such as 90s, 30m or 1h30m")
	}
	*v = durationValue(d)
	return nil
}
func (v *durationValue) String() string { return time.Duration(*v).String() }

func numError(s, want string) error {
	return fmt.Errorf("%q is not %s", s, want)
}

// Wrap gives a flag set defined with the standard flag package the conventions of this
// package: aliases lists groups of names that mean the same flag (e.g. {"t", "threads"}); for
// each group, the first name that fs defines gets the others as aliases, unless fs defines them
// too. Help, errors and the usage then work as for New. Defaults print as typed: a float flag
// holding a float32 value prints as the float32 (0.8).
func Wrap(fs *flag.FlagSet, title, synopsis string, aliases [][]string) *FlagSet {
	f := &FlagSet{fs: fs, title: title, synopsis: synopsis, byName: map[string]*entry{}, stdout: os.Stdout, stderr: os.Stderr}
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	for _, group := range aliases {
		var primary *flag.Flag
		for _, n := range group {
			if primary = fs.Lookup(n); primary != nil {
				break
			}
		}
		if primary == nil {
			continue
		}
		for _, n := range group {
			if fs.Lookup(n) == nil {
				fs.Var(primary.Value, n, primary.Usage)
			}
		}
	}
	byValue := map[flag.Value]*entry{}
	fs.VisitAll(func(fl *flag.Flag) {
		if e, ok := byValue[fl.Value]; ok {
			e.names = append(e.names, fl.Name)
			f.byName[fl.Name] = e
			return
		}
		arg, usage := flag.UnquoteUsage(fl)
		e := &entry{names: []string{fl.Name}, arg: placeholder(arg), usage: usage, value: fl.Value, def: typedDefault(fl.DefValue)}
		byValue[fl.Value] = e
		f.byName[fl.Name] = e
		f.entries = append(f.entries, e)
	})
	for _, e := range f.entries {
		sort.SliceStable(e.names, func(i, j int) bool { return len(e.names[i]) < len(e.names[j]) })
	}
	return f
}

// placeholder turns flag.UnquoteUsage's argument name into the usage's placeholder.
func placeholder(arg string) string {
	switch arg {
	case "":
		return ""
	case "int", "uint":
		return "N"
	case "float":
		return "X"
	case "string":
		return "TEXT"
	case "duration":
		return "D"
	case "value":
		return "V"
	}
	return arg
}

// typedDefault prints a float default that holds a float32 value as the float32 (0.8, not
// 0.800000011920929).
func typedDefault(def string) string {
	x, err := strconv.ParseFloat(def, 64)
	if err != nil || !strings.ContainsAny(def, ".eE") {
		return def
	}
	if float64(float32(x)) == x {
		return strconv.FormatFloat(x, 'g', -1, 32)
	}
	return def
}
