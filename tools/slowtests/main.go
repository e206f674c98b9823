// Command slowtests lists the module's slow tests: every top-level Test or Fuzz function whose
// body consults testing.Short(). `make test` runs `go test -short ./...`, where such a test skips
// or shortens itself; `make test-slow` (in CI) runs exactly these tests in full, so a test becomes
// "slow" by asking testing.Short() and needs no list kept anywhere else.
//
//	go run ./tools/slowtests [-root .]
//
// prints one line per package directory: "./dir<TAB>^(TestA|TestB)$".
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	root := flag.String("root", ".", "module root")
	flag.Parse()
	slow, err := find(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "slowtests:", err)
		os.Exit(1)
	}
	dirs := make([]string, 0, len(slow))
	for d := range slow {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		names := slow[d]
		sort.Strings(names)
		fmt.Printf("./%s\t^(%s)$\n", filepath.ToSlash(d), strings.Join(names, "|"))
	}
}

// find maps each package directory (relative to root) to the names of its slow tests.
func find(root string) (map[string][]string, error) {
	slow := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "build" || name == "testdata" || name == "node_modules" ||
				strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || fn.Body == nil {
				continue
			}
			n := fn.Name.Name
			if !strings.HasPrefix(n, "Test") && !strings.HasPrefix(n, "Fuzz") {
				continue
			}
			if asksShort(fn.Body) {
				slow[rel] = append(slow[rel], n)
			}
		}
		return nil
	})
	return slow, err
}

// asksShort reports whether body calls testing.Short().
func asksShort(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return !found
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Short" {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == "testing" {
				found = true
			}
		}
		return !found
	})
	return found
}
