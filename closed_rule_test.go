package ggml

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestErrorMethodsReportClosed keeps a rule of the package true: an exported function with an
// error result that reaches an object through its panicking accessor (cptr) starts with
// `defer errOnClosed(&err)`, so that a closed object is reported through the error result
// instead of a panic.
func TestErrorMethodsReportClosed(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "stubs_nocgo.go" {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil || !fd.Name.IsExported() || !returnsError(fd) || !callsCptr(fd.Body) {
				continue
			}
			checked++
			if !defersErrOnClosed(fd.Body) {
				t.Errorf("%s: %s has an error result and calls cptr: start it with `defer errOnClosed(&err)` (name the results)",
					fset.Position(fd.Pos()), fd.Name.Name)
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d functions checked: the rule's scan is broken", checked)
	}
}

func returnsError(fd *ast.FuncDecl) bool {
	if fd.Type.Results == nil {
		return false
	}
	for _, r := range fd.Type.Results.List {
		if id, ok := r.Type.(*ast.Ident); ok && id.Name == "error" {
			return true
		}
	}
	return false
}

func callsCptr(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if _, ok := n.(*ast.FuncLit); ok {
			return false // a closure's panics are not the method's
		}
		if ce, ok := n.(*ast.CallExpr); ok {
			if se, ok := ce.Fun.(*ast.SelectorExpr); ok && se.Sel.Name == "cptr" {
				found = true
			}
		}
		return !found
	})
	return found
}

func defersErrOnClosed(body *ast.BlockStmt) bool {
	if len(body.List) == 0 {
		return false
	}
	ds, ok := body.List[0].(*ast.DeferStmt)
	if !ok {
		return false
	}
	id, ok := ds.Call.Fun.(*ast.Ident)
	return ok && id.Name == "errOnClosed"
}
