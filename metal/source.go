//go:build metal

package metal

import (
	"embed"
	"io/fs"
	"sort"
	"strings"
)

// The kernel source: common.metal, the argument block shared with the host, then every op
// family in name order (the order metal/emu/emu.mk assembles for C programs).
//
//go:embed *.metal ggml-metal-kargs.h
var sources embed.FS

// Source returns the Metal Shading Language source the backend compiles at initialisation
// (embedded in the binary).
func Source() string {
	var b strings.Builder
	for _, name := range sourceFiles() {
		data, err := sources.ReadFile(name)
		if err != nil {
			panic("metal: embedded source " + name + ": " + err.Error()) // cannot happen: embedded
		}
		b.Write(data)
	}
	return b.String()
}

// sourceFiles lists the embedded files in assembly order.
func sourceFiles() []string {
	entries, _ := fs.ReadDir(sources, ".")
	var families []string
	for _, e := range entries {
		if n := e.Name(); strings.HasSuffix(n, ".metal") && n != "common.metal" {
			families = append(families, n)
		}
	}
	sort.Strings(families)
	return append([]string{"common.metal", "ggml-metal-kargs.h"}, families...)
}
