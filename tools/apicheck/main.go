// Command apicheck keeps the Go package and the C API in step.
//
// It parses the public headers in ggml/include with modernc.org/cc/v4 and lists every function
// they declare. Each must be referenced from the Go code of the module (as C.name, or as the
// shim C.ggo_name) or be listed in the allowlist with a reason. It also parses
// ggml/src/ggml-backend-impl.h and checks that every field of the buffer-type and buffer vtables has a GGML_CALL trampoline in csrc/
// (named ggml_go_buft_<field> and ggml_go_buffer_<field>).
//
// Usage (from the repository root):
//
//	go run ./tools/apicheck [-root .] [-allow tools/apicheck/allowlist.txt] [-multiplatform] [-v]
//
// It prints "wrapped N of M" and exits with status 1 on any unlisted, unwrapped function, any
// stale allowlist entry, or any missing trampoline.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"

	"modernc.org/cc/v4"
)

func main() {
	root := flag.String("root", ".", "repository root")
	allowPath := flag.String("allow", "tools/apicheck/allowlist.txt", "allowlist file (name, then the reason)")
	multiplatform := flag.Bool("multiplatform", false, "parse with GGML_MULTIPLATFORM defined (GGML_CALL = ms_abi)")
	verbose := flag.Bool("v", false, "list every function and where it is wrapped")
	flag.Parse()

	problems, err := run(*root, *allowPath, *multiplatform, *verbose)
	if err != nil {
		fmt.Fprintln(os.Stderr, "apicheck:", err)
		os.Exit(2)
	}
	if problems > 0 {
		fmt.Fprintf(os.Stderr, "apicheck: %d problem(s)\n", problems)
		os.Exit(1)
	}
}

func run(root, allowPath string, multiplatform, verbose bool) (int, error) {
	headers, err := filepath.Glob(filepath.Join(root, "ggml", "include", "*.h"))
	if err != nil || len(headers) == 0 {
		return 0, fmt.Errorf("no public headers in %s/ggml/include", root)
	}
	sort.Strings(headers)
	var src strings.Builder
	if multiplatform {
		src.WriteString("#define GGML_MULTIPLATFORM 1\n")
	}
	for _, h := range headers {
		fmt.Fprintf(&src, "#include %q\n", filepath.Base(h))
	}
	src.WriteString("#include \"ggml-backend-impl.h\"\n")

	ast, err := parse(root, src.String())
	if err != nil {
		return 0, err
	}
	funcs := publicFunctions(ast, filepath.Join(root, "ggml", "include"))
	vtables := structFields(ast, "ggml_backend_buffer_type_i", "ggml_backend_buffer_i")

	allow, err := readAllowlist(filepath.Join(root, allowPath))
	if err != nil {
		return 0, err
	}
	refs, err := goReferences(root)
	if err != nil {
		return 0, err
	}
	trampolines, err := ggmlCallFunctions(filepath.Join(root, "csrc"))
	if err != nil {
		return 0, err
	}

	problems := 0
	wrapped := 0
	for _, f := range funcs {
		_, listed := allow[f]
		where, ok := refs[f]
		switch {
		case ok && listed:
			fmt.Printf("stale allowlist entry: %s is wrapped (%s)\n", f, where)
			problems++
		case ok:
			wrapped++
			if verbose {
				fmt.Printf("wrapped   %-48s %s\n", f, where)
			}
		case listed:
			if verbose {
				fmt.Printf("allowed   %-48s %s\n", f, allow[f])
			}
		default:
			fmt.Printf("unwrapped: %s is neither referenced from Go nor in %s\n", f, allowPath)
			problems++
		}
	}
	declared := map[string]bool{}
	for _, f := range funcs {
		declared[f] = true
	}
	for name := range allow {
		if !declared[name] {
			fmt.Printf("stale allowlist entry: %s is not declared in ggml/include\n", name)
			problems++
		}
	}
	for _, vt := range []struct{ strct, prefix string }{
		{"ggml_backend_buffer_type_i", "ggml_go_buft_"},
		{"ggml_backend_buffer_i", "ggml_go_buffer_"},
	} {
		fields := vtables[vt.strct]
		if len(fields) == 0 {
			fmt.Printf("vtable struct %s not found in ggml-backend-impl.h\n", vt.strct)
			problems++
		}
		for _, field := range fields {
			if !trampolines[vt.prefix+field] {
				fmt.Printf("missing trampoline: %s.%s needs a GGML_CALL function %s%s in csrc/\n", vt.strct, field, vt.prefix, field)
				problems++
			}
		}
	}
	fmt.Printf("wrapped %d of %d\n", wrapped, len(funcs))
	return problems, nil
}

func parse(root, source string) (*cc.AST, error) {
	cfg, err := cc.NewConfig(runtime.GOOS, runtime.GOARCH)
	if err != nil {
		return nil, err
	}
	cfg.IncludePaths = append(cfg.IncludePaths, filepath.Join(root, "ggml", "include"), filepath.Join(root, "ggml", "src"))
	return cc.Translate(cfg, []cc.Source{
		{Name: "<predefined>", Value: cfg.Predefined},
		{Name: "<builtin>", Value: cc.Builtin},
		{Name: "apicheck.c", Value: source},
	})
}

// publicFunctions returns the names of the functions declared (not defined inline) in files
// under dir.
func publicFunctions(ast *cc.AST, dir string) []string {
	absDir, _ := filepath.Abs(dir)
	seen := map[string]bool{}
	var names []string
	for l := ast.TranslationUnit; l != nil; l = l.TranslationUnit {
		ed := l.ExternalDeclaration
		if ed == nil || ed.Case != cc.ExternalDeclarationDecl || ed.Declaration == nil {
			continue
		}
		for idl := ed.Declaration.InitDeclaratorList; idl != nil; idl = idl.InitDeclaratorList {
			if idl.InitDeclarator == nil || idl.InitDeclarator.Declarator == nil {
				continue
			}
			d := idl.InitDeclarator.Declarator
			if d.Type() == nil || d.Type().Kind() != cc.Function || d.IsStatic() {
				continue
			}
			file, _ := filepath.Abs(d.Position().Filename)
			if filepath.Dir(file) != absDir || seen[d.Name()] {
				continue
			}
			seen[d.Name()] = true
			names = append(names, d.Name())
		}
	}
	sort.Strings(names)
	return names
}

// structFields returns the field names of the named structs.
func structFields(ast *cc.AST, names ...string) map[string][]string {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	out := map[string][]string{}
	for l := ast.TranslationUnit; l != nil; l = l.TranslationUnit {
		ed := l.ExternalDeclaration
		if ed == nil || ed.Case != cc.ExternalDeclarationDecl || ed.Declaration == nil {
			continue
		}
		for ds := ed.Declaration.DeclarationSpecifiers; ds != nil; ds = ds.DeclarationSpecifiers {
			ts := ds.TypeSpecifier
			if ts == nil || ts.StructOrUnionSpecifier == nil {
				continue
			}
			sus := ts.StructOrUnionSpecifier
			tag := sus.Token.SrcStr()
			if !want[tag] || sus.Case != cc.StructOrUnionSpecifierDef {
				continue
			}
			st, ok := sus.Type().(*cc.StructType)
			if !ok {
				continue
			}
			for i := 0; i < st.NumFields(); i++ {
				out[tag] = append(out[tag], st.FieldByIndex(i).Name())
			}
		}
	}
	return out
}

func readAllowlist(path string) (map[string]string, error) {
	allow := map[string]string{}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return allow, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		name, reason, _ := strings.Cut(text, " ")
		reason = strings.TrimSpace(reason)
		if reason == "" {
			return nil, fmt.Errorf("%s:%d: %s has no reason", path, line, name)
		}
		allow[name] = reason
	}
	return allow, sc.Err()
}

var cRef = regexp.MustCompile(`\bC\.([A-Za-z_][A-Za-z0-9_]*)`)

// goReferences maps each C identifier referenced as C.name in the module's Go files to the
// first file that references it. A reference to a shim C.ggo_name counts as one to name (the
// shims of ggml_go.h and the preambles are named after the function they wrap). Test files
// count too: they exercise the binding.
func goReferences(root string) (map[string]string, error) {
	refs := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "vendor" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for _, m := range cRef.FindAllStringSubmatch(string(data), -1) {
			// a shim ggo_X (ggml_go.h convention) wraps the C function X
			name := strings.TrimPrefix(m[1], "ggo_")
			if _, ok := refs[name]; !ok {
				refs[name] = rel
			}
		}
		return nil
	})
	return refs, err
}

var ggmlCallFunc = regexp.MustCompile(`GGML_CALL\s+(?:static\s+)?(?:(?:const|struct|enum|unsigned)\s+)*[A-Za-z_][A-Za-z0-9_]*[\s\*]+([A-Za-z_][A-Za-z0-9_]*)\s*\(`)

// ggmlCallFunctions returns the names of the functions marked GGML_CALL in the C files of dir.
func ggmlCallFunctions(dir string) (map[string]bool, error) {
	out := map[string]bool{}
	files, err := filepath.Glob(filepath.Join(dir, "*.[ch]"))
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, m := range ggmlCallFunc.FindAllStringSubmatch(string(data), -1) {
			out[m[1]] = true
		}
	}
	return out, nil
}
