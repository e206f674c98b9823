// Package ggml holds no Go code: its tests check the layering of the C library in src/.
package ggml

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// The C library's dependencies run one way: the CPU backend (src/cpu/) uses the core (src/ and
// src/ops/), never the reverse. These tests read the sources, so they need no cgo. Paths below
// are relative to src/.

// srcRoot is the C library, relative to this directory.
const srcRoot = "src"

// coreAllowed lists, per core file, the CPU-backend names it may use, with the reason. Keep it
// short: a new entry needs a reason a reviewer accepts.
var coreAllowed = map[string]map[string]string{
	// the registry's list of built-in backends (a library lists what it compiles in)
	"ggml-backend-reg.c": {
		"ggml_x_backend_reg_cpu_init":           "built-in CPU backend entry",
		"ggml_backend_cpu_buffer_type":          "built-in CPU backend entry",
		"ggml_x_backend_cpu_repack_buffer_type": "built-in CPU_REPACK entry",
	},
	"ggml-backend-internal.h": {
		"ggml_x_backend_reg_cpu_init": "declares the built-in entry for ggml-backend-reg.c",
	},
}

var (
	cCommentRe   = regexp.MustCompile(`(?s)/\*.*?\*/|//[^\n]*`)
	cStringRe    = regexp.MustCompile(`"(?:[^"\\\n]|\\.)*"`)
	includeRe    = regexp.MustCompile(`(?m)^\s*#\s*include\s+"([^"]+)"`)
	funcAtCol0Re = regexp.MustCompile(`(?m)^(?:GGML_CALL\s+|GGML_API\s+)*(?:const\s+)?(?:struct\s+|enum\s+)?\w+[\s*]+(?:GGML_CALL\s+)?\**(\w+)\s*\(`)
	defineRe     = regexp.MustCompile(`(?m)^\s*#\s*define\s+(\w+)`)
	structRe     = regexp.MustCompile(`(?m)^struct\s+(\w+)\s*\{`)
	identRe      = regexp.MustCompile(`\b[A-Za-z_]\w*\b`)
	cpuPrefixRe  = regexp.MustCompile(`^(ggml_cpu_|ggml_x_cpu_|GGML_CPU_|GGML_X_CPU_)`)
)

// cFiles returns the .c and .h files under dir (relative to this directory), recursively.
func cFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(filepath.Join(srcRoot, dir), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(path, ".c") || strings.HasSuffix(path, ".h")) {
			rel, err := filepath.Rel(srcRoot, path)
			if err != nil {
				return err
			}
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func readSource(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(srcRoot, path))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func coreFiles(t *testing.T) []string {
	var core []string
	for _, f := range cFiles(t, ".") {
		if !strings.HasPrefix(f, "cpu/") {
			core = append(core, f)
		}
	}
	return core
}

// cpuNames returns the names the CPU backend defines or declares with external linkage: its
// non-static functions, the functions, macros and structs of its headers.
func cpuNames(t *testing.T) map[string]string {
	names := map[string]string{}
	for _, f := range cFiles(t, "cpu") {
		src := cCommentRe.ReplaceAllString(readSource(t, f), "")
		for _, m := range funcAtCol0Re.FindAllStringSubmatch(src, -1) {
			if strings.HasPrefix(m[0], "static") || strings.HasPrefix(m[0], "typedef") || strings.HasPrefix(m[0], "return") {
				continue
			}
			names[m[1]] = f
		}
		if strings.HasSuffix(f, ".h") {
			for _, m := range defineRe.FindAllStringSubmatch(src, -1) {
				names[m[1]] = f
			}
			for _, m := range structRe.FindAllStringSubmatch(src, -1) {
				names[m[1]] = f
			}
		}
	}
	// header guards are not API
	for n := range names {
		if strings.HasSuffix(n, "_H") {
			delete(names, n)
		}
	}
	return names
}

// TestCoreIncludesNoCPUHeader: no file outside cpu/ includes a header of cpu/.
func TestCoreIncludesNoCPUHeader(t *testing.T) {
	for _, f := range coreFiles(t) {
		for _, m := range includeRe.FindAllStringSubmatch(readSource(t, f), -1) {
			inc := filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(f), m[1])))
			if strings.HasPrefix(m[1], "cpu/") || strings.HasPrefix(inc, "cpu/") {
				t.Errorf("%s includes %q: the core must not depend on the CPU backend (move the code to cpu/ or the declaration out of cpu/)", f, m[1])
			}
		}
	}
}

// TestCoreUsesNoCPUName: no file outside cpu/ names a function, macro or struct that the CPU
// backend defines, except the entries of coreAllowed.
func TestCoreUsesNoCPUName(t *testing.T) {
	names := cpuNames(t)
	if len(names) < 50 {
		t.Fatalf("found only %d CPU-backend names: the scanner is broken", len(names))
	}
	for _, f := range coreFiles(t) {
		src := cStringRe.ReplaceAllString(cCommentRe.ReplaceAllString(readSource(t, f), ""), `""`)
		seen := map[string]bool{}
		for _, id := range identRe.FindAllString(src, -1) {
			where, isCPU := names[id]
			if !isCPU && cpuPrefixRe.MatchString(id) {
				where, isCPU = "a CPU-backend prefix", true
			}
			if !isCPU || seen[id] {
				continue
			}
			seen[id] = true
			if _, ok := coreAllowed[f][id]; ok {
				continue
			}
			t.Errorf("%s uses %s (from %s): the core must not depend on the CPU backend", f, id, where)
		}
	}
	// stale allowlist entries
	for f, allowed := range coreAllowed {
		src := cCommentRe.ReplaceAllString(readSource(t, f), "")
		for id := range allowed {
			if !regexp.MustCompile(`\b` + id + `\b`).MatchString(src) {
				t.Errorf("coreAllowed: %s no longer uses %s; remove the entry", f, id)
			}
		}
	}
}

// TestIncludeGraph logs which directory includes which (go test -run IncludeGraph -v), the
// direction the tests above enforce.
func TestIncludeGraph(t *testing.T) {
	edges := map[string]int{}
	for _, f := range cFiles(t, ".") {
		from := filepath.Dir(f)
		for _, m := range includeRe.FindAllStringSubmatch(readSource(t, f), -1) {
			inc := m[1]
			var to string
			switch {
			case strings.HasPrefix(inc, "cpu/"), strings.HasPrefix(inc, "../cpu/"):
				to = "cpu"
			case strings.HasPrefix(inc, "ops/"):
				to = "ops"
			case strings.HasPrefix(inc, "../"):
				to = "."
			case strings.Contains(inc, "/"):
				continue
			default:
				if _, err := os.Stat(filepath.Join(srcRoot, from, inc)); err == nil {
					to = from
				} else if _, err := os.Stat(filepath.Join(srcRoot, inc)); err == nil {
					to = "."
				} else {
					to = "include"
				}
			}
			if to != from {
				edges[from+" -> "+to]++
			}
		}
	}
	keys := make([]string, 0, len(edges))
	for k := range edges {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Logf("%-16s %3d includes", k, edges[k])
	}
}
