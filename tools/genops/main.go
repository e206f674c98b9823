// Command genops generates ops_gen.go: one Context method per graph-operation constructor of
// ggml/include/ggml.h, each with a small C shim that captures the C library's error message in
// the same C call (see ggml_go.h).
//
// It then writes stubs_nocgo.go, the declarations of a build without cgo: every exported name
// of the package's cgo files, with bodies that report ErrNoCgo (see stubs.go).
//
// Usage (from the repository root; `go generate .` runs it):
//
//	go run ./tools/genops [-header ggml/include/ggml.h] [-out ops_gen.go] [-stubs stubs_nocgo.go]
//
// Constructors that need a hand-written wrapper (tensor creation, mul_mat_id, custom ops with Go
// callbacks) are skipped; see the skip table below.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// skip lists the constructors wrapped by hand (or by custom.go) and why.
var skip = map[string]string{
	"ggml_new_tensor":          "tensor.go",
	"ggml_new_tensor_1d":       "tensor.go",
	"ggml_new_tensor_2d":       "tensor.go",
	"ggml_new_tensor_3d":       "tensor.go",
	"ggml_new_tensor_4d":       "tensor.go",
	"ggml_new_i32":             "tensor.go",
	"ggml_new_f32":             "tensor.go",
	"ggml_view_tensor":         "tensor.go",
	"ggml_get_tensor":          "context.go",
	"ggml_mul_mat_id":          "ops.go (array operand)",
	"ggml_map_custom1":         "custom.go (Go callbacks)",
	"ggml_map_custom1_inplace": "custom.go (Go callbacks)",
	"ggml_map_custom2":         "custom.go (Go callbacks)",
	"ggml_map_custom2_inplace": "custom.go (Go callbacks)",
	"ggml_map_custom3":         "custom.go (Go callbacks)",
	"ggml_map_custom3_inplace": "custom.go (Go callbacks)",
	// training: forward ops wrapped in autodiff.go, backward-only ops that BuildBackward creates
	"ggml_cross_entropy_loss":      "autodiff.go",
	"ggml_flash_attn":              "autodiff.go",
	"ggml_cross_entropy_loss_back": "backward-only (BuildBackward)",
	"ggml_flash_attn_back":         "backward-only (BuildBackward)",
	"ggml_x_attn_masked":           "attn_masked.go (extension)",
	"ggml_x_attn_masked_vrows":     "attn_masked.go (extension)",
	"ggml_repeat_back":             "backward-only (BuildBackward)",
	"ggml_silu_back":               "backward-only (BuildBackward)",
	"ggml_rms_norm_back":           "backward-only (BuildBackward)",
	"ggml_get_rows_back":           "backward-only (BuildBackward)",
	"ggml_soft_max_back":           "backward-only (BuildBackward)",
	"ggml_soft_max_back_inplace":   "backward-only (BuildBackward)",
	"ggml_rope_back":               "backward-only (BuildBackward)",
	"ggml_x_rope_ext":              "rope_ext.go (optional operand, parameter struct)",
}

// optional lists tensor operands that may be nil.
var optional = map[string]bool{
	"ggml_soft_max_ext.mask": true,
}

// docs gives the one-line description of each base op (without _inplace).
var docs = map[string]string{
	"dup":                  "returns a copy of a",
	"add":                  "returns a + b, with b broadcast over a (b's extents divide a's)",
	"add_cast":             "returns a + b stored as the given type",
	"add1":                 "returns a + b, where b is a one-element tensor",
	"acc":                  "returns a copy of a where the strided window (nb1, nb2, nb3, offset bytes) of a has b added",
	"sub":                  "returns a - b, with b broadcast over a",
	"mul":                  "returns a * b element-wise, with b broadcast over a",
	"div":                  "returns a / b element-wise, with b broadcast over a",
	"sqr":                  "returns a squared element-wise",
	"sqrt":                 "returns the element-wise square root of a",
	"log":                  "returns the element-wise natural logarithm of a",
	"sum":                  "returns the sum of all elements of a as a one-element tensor",
	"sum_rows":             "returns the sum of each row: [n0,n1,n2,n3] -> [1,n1,n2,n3]",
	"mean":                 "returns the mean of each row: [n0,n1,n2,n3] -> [1,n1,n2,n3]",
	"argmax":               "returns the index of the largest element of each row of the matrix a (I32)",
	"repeat":               "returns a tiled to the shape of b (each extent of b a multiple of a's)",
	"concat":               "returns a and b joined along dimension 2",
	"abs":                  "returns |a| element-wise",
	"sgn":                  "returns the sign of a (-1, 0 or 1) element-wise",
	"neg":                  "returns -a",
	"step":                 "returns 1 where a > 0 and 0 elsewhere",
	"tanh":                 "returns tanh(a) element-wise",
	"elu":                  "returns the ELU of a (x for x > 0, exp(x)-1 otherwise)",
	"relu":                 "returns max(a, 0) element-wise",
	"leaky_relu":           "returns a where a > 0 and slope*a elsewhere",
	"gelu":                 "returns the GELU of a (tanh approximation)",
	"gelu_quick":           "returns the quick GELU of a, x*sigmoid(1.702x)",
	"silu":                 "returns the SiLU of a, x*sigmoid(x)",
	"norm":                 "normalises each row of a to zero mean and unit variance (eps added to the variance)",
	"rms_norm":             "divides each row of a by its root mean square (eps added to the mean square)",
	"group_norm":           "normalises a over groups of channels (dimension 2 split into nGroups groups)",
	"mul_mat":              "returns the matrix product: result[i1][i0] = dot(row i0 of a, row i1 of b); a is [K,M,..], b is [K,N,..], the result [M,N,..] F32; a's dimensions 2-3 broadcast over b's",
	"out_prod":             "returns the outer products of a [M,K] and b [N,K] summed over K: [M,N]",
	"scale":                "returns a * s",
	"set":                  "returns a copy of a whose strided window (nb1, nb2, nb3, offset bytes) is overwritten by b",
	"set_1d":               "returns a copy of a with b written at byte offset offset",
	"set_2d":               "returns a copy of a whose 2-D window (row stride nb1, offset bytes) is overwritten by b",
	"cpy":                  "copies a into b's memory, converting the type; the result is a view of b",
	"cast":                 "returns a converted to the given type",
	"cont":                 "returns a dense copy of a",
	"cont_1d":              "returns a dense copy of a with the given shape (same element count)",
	"cont_2d":              "returns a dense copy of a with the given shape (same element count)",
	"cont_3d":              "returns a dense copy of a with the given shape (same element count)",
	"cont_4d":              "returns a dense copy of a with the given shape (same element count)",
	"reshape":              "returns a view of the contiguous a with b's shape",
	"reshape_1d":           "returns a view of the contiguous a with the given shape",
	"reshape_2d":           "returns a view of the contiguous a with the given shape",
	"reshape_3d":           "returns a view of the contiguous a with the given shape",
	"reshape_4d":           "returns a view of the contiguous a with the given shape",
	"view_1d":              "returns a view of ne0 elements of a starting at byte offset offset",
	"view_2d":              "returns a strided view of a (row stride nb1, start at byte offset offset)",
	"view_3d":              "returns a strided view of a (strides nb1, nb2, start at byte offset offset)",
	"view_4d":              "returns a strided view of a (strides nb1, nb2, nb3, start at byte offset offset)",
	"permute":              "returns a view of a whose dimension i becomes dimension axis_i",
	"transpose":            "returns a view of a with dimensions 0 and 1 swapped",
	"get_rows":             "gathers the rows of a selected by the I32 indices in b",
	"diag":                 "returns the diagonal matrix whose diagonal is the row a",
	"diag_mask_inf":        "sets the elements above the diagonal shifted by nPast (column > nPast + row) to -Inf",
	"diag_mask_zero":       "sets the elements above the diagonal shifted by nPast (column > nPast + row) to 0",
	"soft_max":             "returns the softmax of each row of a",
	"soft_max_ext":         "returns softmax(a*scale + mask) per row; mask (may be nil) is broadcast over the rows",
	"rope":                 "applies rotary position embedding to a; b holds one I32 position per a.ne[2]; mode 0 rotates adjacent pairs, mode 2 (NeoX) pairs i and i+nDims/2",
	"rope_custom":          "is Rope with frequency scaling and YaRN parameters",
	"alibi":                "adds the ALiBi attention bias to a",
	"clamp":                "clamps a to [min, max]",
	"im2col":               "unfolds the image b for a convolution with the kernel a (1-D or, with is2D, 2-D)",
	"conv_1d":              "returns the 1-D convolution of b with the kernel a (stride s0, padding p0, dilation d0)",
	"conv_1d_ph":           "is Conv1D with padding half the kernel size",
	"conv_transpose_1d":    "returns the 1-D transposed convolution of b with the kernel a",
	"conv_2d":              "returns the 2-D convolution of b with the kernel a",
	"conv_2d_sk_p0":        "is Conv2D with stride equal to the kernel size and no padding",
	"conv_2d_s1_ph":        "is Conv2D with stride 1 and padding half the kernel size",
	"conv_transpose_2d_p0": "returns the 2-D transposed convolution of b with the kernel a, without padding",
	"pool_1d":              "pools a along dimension 0 (kernel k0, stride s0, padding p0)",
	"pool_2d":              "pools a along dimensions 0 and 1",
	"upscale":              "enlarges dimensions 0 and 1 of a by scaleFactor (nearest neighbour)",
	"pad":                  "appends p_i zeros at the end of each dimension i of a",
	"argsort":              "returns the indices that sort each row of a (I32)",
	"top_k":                "returns the indices of the k largest elements of each row of a (I32)",
	"unary":                "applies the unary function op to a",
}

// special Go names for tokens of C names.
var tokenNames = map[string]string{
	"1d": "1D", "2d": "2D", "3d": "3D", "4d": "4D", "rms": "RMS", "id": "ID", "im2col": "Im2Col",
	"ph": "PH", "sk": "SK", "p0": "P0", "s1": "S1", "add1": "Add1",
}

func goName(cname string) string {
	var b strings.Builder
	for _, tok := range strings.Split(strings.TrimPrefix(cname, "ggml_"), "_") {
		if s, ok := tokenNames[tok]; ok {
			b.WriteString(s)
			continue
		}
		b.WriteString(strings.ToUpper(tok[:1]) + tok[1:])
	}
	return b.String()
}

// goParamName converts a C parameter name to Go (n_past -> nPast, type -> typ).
func goParamName(c string) string {
	switch c {
	case "type":
		return "typ"
	case "min":
		return "lo"
	case "max":
		return "hi"
	}
	parts := strings.Split(c, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

type param struct {
	cname, goName string
	ctype         string // C type as written
	gotype        string // Go type
	kind          string // tensor, int64, size, int, float, bool, type, pool, sort, unary
}

type op struct {
	cname  string
	goName string
	params []param
}

var declRE = regexp.MustCompile(`(?s)GGML_API struct ggml_tensor\s*\*\s*(ggml_\w+)\(\s*struct ggml_context\s*\*\s*ctx\s*,([^;]*?)\);`)

func parseParam(fn, s string) (param, error) {
	s = strings.Join(strings.Fields(s), " ")
	m := regexp.MustCompile(`^(.*?)(\w+)$`).FindStringSubmatch(s)
	if m == nil {
		return param{}, fmt.Errorf("%s: cannot parse parameter %q", fn, s)
	}
	ctype, name := strings.TrimSpace(m[1]), m[2]
	p := param{cname: name, goName: goParamName(name), ctype: ctype}
	switch ctype {
	case "struct ggml_tensor *":
		p.gotype, p.kind = "*Tensor", "tensor"
	case "int64_t":
		p.gotype, p.kind = "int64", "int64"
	case "size_t":
		p.gotype, p.kind = "uint64", "size"
	case "int":
		p.gotype, p.kind = "int", "int"
	case "float":
		p.gotype, p.kind = "float32", "float"
	case "bool":
		p.gotype, p.kind = "bool", "bool"
	case "enum ggml_type":
		p.gotype, p.kind = "Type", "type"
	case "enum ggml_op_pool":
		p.gotype, p.kind = "PoolOp", "pool"
	case "enum ggml_sort_order":
		p.gotype, p.kind = "SortOrder", "sort"
	case "enum ggml_unary_op":
		p.gotype, p.kind = "UnaryOp", "unary"
	default:
		return param{}, fmt.Errorf("%s: unsupported parameter type %q", fn, ctype)
	}
	return p, nil
}

func parse(header string) ([]op, error) {
	var ops []op
	for _, m := range declRE.FindAllStringSubmatch(header, -1) {
		name := m[1]
		if _, ok := skip[name]; ok {
			continue
		}
		args := regexp.MustCompile(`//[^\n]*`).ReplaceAllString(m[2], "")
		o := op{cname: name, goName: goName(name)}
		for _, a := range strings.Split(args, ",") {
			p, err := parseParam(name, a)
			if err != nil {
				return nil, err
			}
			o.params = append(o.params, p)
		}
		ops = append(ops, o)
	}
	return ops, nil
}

func cArg(p param) string {
	switch p.kind {
	case "tensor":
		return "struct ggml_tensor * " + p.cname
	default:
		return p.ctype + " " + p.cname
	}
}

func goArg(o op, p param) string {
	switch p.kind {
	case "tensor":
		if optional[o.cname+"."+p.cname] {
			return p.goName + ".optPtr(opName)"
		}
		return p.goName + ".cptr(opName)"
	case "int64":
		return "C.int64_t(" + p.goName + ")"
	case "size":
		return "C.size_t(" + p.goName + ")"
	case "int":
		return "cInt(opName, \"" + p.goName + "\", " + p.goName + ")"
	case "float":
		return "C.float(" + p.goName + ")"
	case "bool":
		return "C.bool(" + p.goName + ")"
	case "type":
		return "C.enum_ggml_type(" + p.goName + ")"
	case "pool":
		return "C.enum_ggml_op_pool(" + p.goName + ")"
	case "sort":
		return "C.enum_ggml_sort_order(" + p.goName + ")"
	case "unary":
		return "C.enum_ggml_unary_op(" + p.goName + ")"
	}
	panic(p.kind)
}

// describe builds the Go expression of the operands string for error messages.
func describeExpr(o op, params []param) string {
	var names, tensors []string
	var scalars []string
	for _, p := range params {
		if p.kind == "tensor" {
			names = append(names, `"`+p.goName+`"`)
			tensors = append(tensors, p.goName)
			continue
		}
		scalars = append(scalars, p.goName)
	}
	expr := fmt.Sprintf("describeOperands([]string{%s}, []*Tensor{%s})", strings.Join(names, ", "), strings.Join(tensors, ", "))
	if len(scalars) > 0 {
		var fmtParts []string
		for _, s := range scalars {
			fmtParts = append(fmtParts, s+"=%v")
		}
		expr = fmt.Sprintf("joinDesc(%s, fmt.Sprintf(%q, %s))", expr, strings.Join(fmtParts, ", "), strings.Join(scalars, ", "))
	}
	return expr
}

func docFor(o op, goParams []param) string {
	base := strings.TrimPrefix(o.cname, "ggml_")
	inplace := strings.HasSuffix(base, "_inplace")
	base = strings.TrimSuffix(base, "_inplace")
	d, ok := docs[base]
	if !ok {
		d = "records the " + base + " operation"
	}
	var b strings.Builder
	if inplace {
		fmt.Fprintf(&b, "// %s is %s computed in a's memory: the result is a view of a (%s).\n", o.goName, goName("ggml_"+base), o.cname)
		return b.String()
	}
	fmt.Fprintf(&b, "// %s %s (%s).\n", o.goName, d, o.cname)
	return b.String()
}

func generate(ops []op) ([]byte, error) {
	var c, g bytes.Buffer
	for _, o := range ops {
		var cargs, cnames []string
		for _, p := range o.params {
			cargs = append(cargs, cArg(p))
			cnames = append(cnames, p.cname)
		}
		fmt.Fprintf(&c, "static ggo_pres ggo_%s(struct ggml_context * ctx, %s) { GGO_PCALL(%s(ctx, %s)); }\n",
			o.cname, strings.Join(cargs, ", "), o.cname, strings.Join(cnames, ", "))

		// leaky_relu's bool inplace becomes two methods
		variants := []struct {
			name    string
			fixed   map[string]string
			comment string
		}{{name: o.goName}}
		if o.cname == "ggml_leaky_relu" {
			variants = []struct {
				name    string
				fixed   map[string]string
				comment string
			}{
				{name: "LeakyRelu", fixed: map[string]string{"inplace": "C.bool(false)"}, comment: "// LeakyRelu returns a where a > 0 and negativeSlope*a elsewhere (ggml_leaky_relu).\n"},
				{name: "LeakyReluInplace", fixed: map[string]string{"inplace": "C.bool(true)"}, comment: "// LeakyReluInplace is LeakyRelu computed in a's memory: the result is a view of a (ggml_leaky_relu).\n"},
			}
		}
		for _, v := range variants {
			var goParams []param
			for _, p := range o.params {
				if _, ok := v.fixed[p.cname]; ok {
					continue
				}
				goParams = append(goParams, p)
			}
			if v.comment != "" {
				g.WriteString(v.comment)
			} else {
				g.WriteString(docFor(o, goParams))
			}
			var sig []string
			for _, p := range goParams {
				sig = append(sig, p.goName+" "+p.gotype)
			}
			fmt.Fprintf(&g, "func (ctx *Context) %s(%s) *Tensor {\n", v.name, strings.Join(sig, ", "))
			fmt.Fprintf(&g, "\tconst opName = %q\n", v.name)
			var args []string
			for _, p := range o.params {
				if f, ok := v.fixed[p.cname]; ok {
					args = append(args, f)
					continue
				}
				args = append(args, goArg(o, p))
			}
			g.WriteString("\tc := ctx.enter(opName)\n\tdefer ctx.busy.leave()\n")
			fmt.Fprintf(&g, "\tr := C.ggo_%s(c, %s)\n", o.cname, strings.Join(args, ", "))
			fmt.Fprintf(&g, "\treturn ctx.opResult(opName, r, func() string { return %s })\n", describeExpr(o, goParams))
			g.WriteString("}\n\n")
		}
	}
	var out bytes.Buffer
	out.WriteString("// Code generated by tools/genops from ggml/include/ggml.h; DO NOT EDIT.\n\n")
	out.WriteString("//go:build cgo\n\n")
	out.WriteString("package ggml\n\n")
	out.WriteString("/*\n#include \"ggml_go.h\"\n\n")
	out.Write(c.Bytes())
	out.WriteString("*/\nimport \"C\"\n\nimport \"fmt\"\n\n")
	out.WriteString("var _ = fmt.Sprintf\n\n")
	out.Write(g.Bytes())
	return format.Source(out.Bytes())
}

func main() {
	header := flag.String("header", "ggml/include/ggml.h", "the C header to read")
	outPath := flag.String("out", "ops_gen.go", "the Go file to write")
	list := flag.Bool("list", false, "print the C constructors and their Go names instead")
	stubs := flag.String("stubs", "stubs_nocgo.go", "the stubs file of builds without cgo, written next to -out (\"\": none)")
	stubsOnly := flag.String("stubs-only", "", "only (re)write the stubs file of the package in this directory (for the module's other cgo packages)")
	flag.Parse()
	if *stubsOnly != "" {
		if err := writeStubs(*stubsOnly, *stubs); err != nil {
			fmt.Fprintln(os.Stderr, "genops:", err)
			os.Exit(1)
		}
		fmt.Printf("genops: stubs of the build without cgo -> %s\n", filepath.Join(*stubsOnly, *stubs))
		return
	}
	src, err := os.ReadFile(*header)
	if err != nil {
		fmt.Fprintln(os.Stderr, "genops:", err)
		os.Exit(1)
	}
	ops, err := parse(string(src))
	if err != nil {
		fmt.Fprintln(os.Stderr, "genops:", err)
		os.Exit(1)
	}
	if *list {
		sort.Slice(ops, func(i, j int) bool { return ops[i].cname < ops[j].cname })
		for _, o := range ops {
			fmt.Printf("%-28s %s\n", o.cname, o.goName)
		}
		return
	}
	code, err := generate(ops)
	if err != nil {
		fmt.Fprintln(os.Stderr, "genops: formatting:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*outPath, code, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "genops:", err)
		os.Exit(1)
	}
	fmt.Printf("genops: %d constructors -> %s\n", len(ops), *outPath)
	if *stubs != "" {
		if err := writeStubs(filepath.Dir(*outPath), *stubs); err != nil {
			fmt.Fprintln(os.Stderr, "genops:", err)
			os.Exit(1)
		}
		fmt.Printf("genops: stubs of the build without cgo -> %s\n", filepath.Join(filepath.Dir(*outPath), *stubs))
	}
}
