package ggml

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// The op families of doc/op-families.md: every op family has one file-name stem in every layer
// (ops/<stem>.c, cpu/ops-<stem>.c, cuda/<stem>.cu, metal/<stem>.metal). These tests read that
// page and the sources, so the page and the tree cannot drift apart: a new file in a checked
// folder needs a row (or an exception with its reason), a new op a census line. No cgo needed.
// Paths below are relative to the repository root.

const (
	repoRoot    = ".."
	familiesDoc = "doc/op-families.md"
)

// the folders the rule covers, with the file name a family's stem gives in each
var familyLayers = []struct {
	name    string // column of the Families table
	dir     string // folder, relative to the repository root
	glob    string // files of the folder the rule covers
	prefix  string // file name = prefix + stem [+ "-" + part] + ext
	ext     string
	oneFile bool // exactly one file per family (no <stem>-<part> files)
}{
	{"ops/", "ggml/src/ops", "*.c", "", ".c", true},
	{"cpu/", "ggml/src/cpu", "ops-*.c", "ops-", ".c", true},
	{"cuda/", "cuda", "*.cu", "", ".cu", false},
	{"metal/", "metal", "*.metal", "", ".metal", false},
}

var (
	stemRe     = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	backtickRe = regexp.MustCompile("`([^`]+)`")
	opWordRe   = regexp.MustCompile(`\b[A-Z][A-Z0-9_]*[A-Z0-9]\b`)
)

type opFamily struct {
	stem  string
	files map[string][]string // layer name -> file names
}

type censusRow struct {
	family   string // "" for an op without a family
	cuda     bool
	metal    bool
	autodiff []string // sorted base names of the files holding its gradient
}

type familyPage struct {
	families   map[string]*opFamily
	exceptions map[string]string // repository path -> reason
	noFamily   map[string]bool   // ops listed under "Ops without a family"
	census     map[string]censusRow
}

// tableRows returns the cells of the table rows of a section (header and separator skipped).
func tableRows(section string) [][]string {
	var rows [][]string
	header := true
	for _, line := range strings.Split(section, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			header = true
			continue
		}
		if header || strings.HasPrefix(line, "|---") {
			header = false
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		rows = append(rows, cells)
	}
	return rows
}

func backticked(cell string) []string {
	var out []string
	for _, m := range backtickRe.FindAllStringSubmatch(cell, -1) {
		out = append(out, m[1])
	}
	return out
}

func readRepoFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, path))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// parseFamilyPage reads doc/op-families.md.
func parseFamilyPage(t *testing.T) *familyPage {
	t.Helper()
	sections := map[string]string{}
	for _, s := range strings.Split(readRepoFile(t, familiesDoc), "\n## ")[1:] {
		title, body, _ := strings.Cut(s, "\n")
		sections[strings.TrimSpace(title)] = body
	}
	for _, name := range []string{"Families", "Exceptions", "Ops without a family", "Census"} {
		if _, ok := sections[name]; !ok {
			t.Fatalf("%s: no section %q", familiesDoc, name)
		}
	}
	p := &familyPage{
		families:   map[string]*opFamily{},
		exceptions: map[string]string{},
		noFamily:   map[string]bool{},
		census:     map[string]censusRow{},
	}
	for _, row := range tableRows(sections["Families"]) {
		if len(row) != 2+len(familyLayers) {
			t.Fatalf("%s: Families row %q: want %d cells", familiesDoc, row, 2+len(familyLayers))
		}
		names := backticked(row[0])
		if len(names) != 1 {
			t.Fatalf("%s: Families row %q: the first cell must be one `stem`", familiesDoc, row)
		}
		f := &opFamily{stem: names[0], files: map[string][]string{}}
		if p.families[f.stem] != nil {
			t.Errorf("%s: family %q listed twice", familiesDoc, f.stem)
		}
		for i, layer := range familyLayers {
			f.files[layer.name] = backticked(row[1+i])
		}
		p.families[f.stem] = f
	}
	for _, row := range tableRows(sections["Exceptions"]) {
		paths := backticked(row[0])
		if len(paths) != 1 || len(row) < 2 || strings.TrimSpace(row[1]) == "" {
			t.Fatalf("%s: Exceptions row %q: want `path` | reason", familiesDoc, row)
		}
		p.exceptions[paths[0]] = row[1]
	}
	for _, row := range tableRows(sections["Ops without a family"]) {
		for _, op := range opWordRe.FindAllString(row[0], -1) {
			p.noFamily[op] = true
		}
	}
	for _, row := range tableRows(sections["Census"]) {
		if len(row) != 5 {
			t.Fatalf("%s: Census row %q: want op | family | CUDA | Metal | autodiff", familiesDoc, row)
		}
		ops := backticked(row[0])
		if len(ops) != 1 {
			t.Fatalf("%s: Census row %q: the first cell must be one `OP`", familiesDoc, row)
		}
		if _, dup := p.census[ops[0]]; dup {
			t.Errorf("%s: census lists %s twice", familiesDoc, ops[0])
		}
		r := censusRow{cuda: row[2] == "yes", metal: row[3] == "yes", autodiff: backticked(row[4])}
		if fam := backticked(row[1]); len(fam) == 1 {
			r.family = fam[0]
		}
		sort.Strings(r.autodiff)
		p.census[ops[0]] = r
	}
	if len(p.families) < 10 || len(p.census) < 50 {
		t.Fatalf("%s: parsed %d families and %d census rows: the parser or the page is broken",
			familiesDoc, len(p.families), len(p.census))
	}
	return p
}

// TestFamiliesFilesFollowStems: each family's files exist and are named by its stem.
func TestFamiliesFilesFollowStems(t *testing.T) {
	p := parseFamilyPage(t)
	for _, f := range p.families {
		if !stemRe.MatchString(f.stem) {
			t.Errorf("family %q: a stem is lower-case words joined by '-'", f.stem)
		}
		for _, layer := range familyLayers {
			files := f.files[layer.name]
			if layer.oneFile && len(files) != 1 {
				t.Errorf("family %q: want exactly one %s file (%s), have %q", f.stem, layer.name,
					layer.prefix+f.stem+layer.ext, files)
			}
			for _, name := range files {
				base := layer.prefix + f.stem
				rest, isExt := strings.CutSuffix(name, layer.ext)
				part, isPart := strings.CutPrefix(rest, base+"-")
				switch {
				case isExt && rest == base:
				case !isExt || !isPart || !stemRe.MatchString(part):
					t.Errorf("family %q: %s/%s is not named by the stem (want %s%s)", f.stem, layer.dir, name, base, layer.ext)
				case layer.oneFile:
					t.Errorf("family %q: %s/%s: a family has one %s file, %s%s", f.stem, layer.dir, name, layer.name, base, layer.ext)
				case p.families[f.stem+"-"+part] != nil:
					t.Errorf("family %q: %s/%s looks like a file of family %q", f.stem, layer.dir, name, f.stem+"-"+part)
				}
				if _, err := os.Stat(filepath.Join(repoRoot, layer.dir, name)); err != nil {
					t.Errorf("family %q: %s/%s is listed in %s but missing", f.stem, layer.dir, name, familiesDoc)
				}
			}
		}
	}
	for path := range p.exceptions {
		if _, err := os.Stat(filepath.Join(repoRoot, path)); err != nil {
			t.Errorf("exception %s is listed in %s but missing", path, familiesDoc)
		}
	}
}

// TestFamiliesCoverEveryFile: no file of a checked folder is outside the tables.
func TestFamiliesCoverEveryFile(t *testing.T) {
	p := parseFamilyPage(t)
	listed := map[string]bool{}
	for _, f := range p.families {
		for _, layer := range familyLayers {
			for _, name := range f.files[layer.name] {
				listed[layer.dir+"/"+name] = true
			}
		}
	}
	for _, layer := range familyLayers {
		matches, err := filepath.Glob(filepath.Join(repoRoot, layer.dir, layer.glob))
		if err != nil {
			t.Fatal(err)
		}
		if len(matches) == 0 {
			t.Fatalf("no %s in %s: wrong working directory?", layer.glob, layer.dir)
		}
		for _, m := range matches {
			path := layer.dir + "/" + filepath.Base(m)
			if !listed[path] && p.exceptions[path] == "" {
				t.Errorf("%s belongs to no op family: name it <stem>%s after its family and add it to %s "+
					"(or list it under Exceptions with the reason)", path, layer.ext, familiesDoc)
			}
		}
	}
}

// enumOps returns the names of enum ggml_op (without GGML_OP_), NONE and COUNT aside.
func enumOps(t *testing.T) []string {
	h := readRepoFile(t, "ggml/include/ggml.h")
	m := regexp.MustCompile(`(?s)enum ggml_op \{(.*?)\};`).FindStringSubmatch(h)
	if m == nil {
		t.Fatal("ggml.h: enum ggml_op not found")
	}
	var ops []string
	for _, o := range regexp.MustCompile(`GGML_OP_([A-Z0-9_]+)`).FindAllStringSubmatch(cCommentRe.ReplaceAllString(m[1], ""), -1) {
		if o[1] != "NONE" && o[1] != "COUNT" {
			ops = append(ops, o[1])
		}
	}
	return ops
}

// cBlock returns the text from start to the first line that is a lone "}" (the end of the function).
func cBlock(t *testing.T, path, start string) string {
	src := readRepoFile(t, path)
	i := strings.Index(src, start)
	if i < 0 {
		t.Fatalf("%s: %q not found", path, start)
	}
	j := strings.Index(src[i:], "\n}\n")
	if j < 0 {
		t.Fatalf("%s: end of %q not found", path, start)
	}
	return cCommentRe.ReplaceAllString(src[i:i+j], "")
}

func caseLabels(src string) map[string]bool {
	out := map[string]bool{}
	for _, m := range regexp.MustCompile(`case\s+GGML_OP_([A-Z0-9_]+)\s*:`).FindAllStringSubmatch(src, -1) {
		out[m[1]] = true
	}
	return out
}

// TestFamiliesCensus: every op has a census line; its family's files hold its constructor,
// CPU kernel and CUDA entry point; the CUDA, Metal and autodiff columns match the sources.
func TestFamiliesCensus(t *testing.T) {
	p := parseFamilyPage(t)
	ops := enumOps(t)
	inEnum := map[string]bool{}
	for _, op := range ops {
		inEnum[op] = true
	}
	for op := range p.census {
		if !inEnum[op] {
			t.Errorf("%s: census op %s is not in enum ggml_op", familiesDoc, op)
		}
	}

	// where the constructors (GGML_OP_X in ops/*.c) and CPU descriptors are
	ctorFiles := map[string][]string{}
	opsC, _ := filepath.Glob(filepath.Join(repoRoot, "ggml/src/ops/*.c"))
	for _, f := range opsC {
		src := cCommentRe.ReplaceAllString(readRepoFile(t, "ggml/src/ops/"+filepath.Base(f)), "")
		for _, op := range ops {
			if regexp.MustCompile(`\bGGML_OP_` + op + `\b`).MatchString(src) {
				ctorFiles[op] = append(ctorFiles[op], filepath.Base(f))
			}
		}
	}
	cpuDesc := map[string]string{}
	cpuC, _ := filepath.Glob(filepath.Join(repoRoot, "ggml/src/cpu/*.c"))
	descRe := regexp.MustCompile(`(?m)^const struct ggml_cpu_op ggml_cpu_op_(\w+)\s*=`)
	for _, f := range cpuC {
		for _, m := range descRe.FindAllStringSubmatch(readRepoFile(t, "ggml/src/cpu/"+filepath.Base(f)), -1) {
			cpuDesc[m[1]] = filepath.Base(f)
		}
	}

	// CUDA: the op -> entry point table, and the file defining each entry point
	lookup := cBlock(t, "cuda/backend.cu", "cu_op_lookup(enum ggml_op op) {")
	cudaEntry := map[string]string{}
	var pending []string
	for _, line := range strings.Split(lookup, "\n") {
		for _, m := range regexp.MustCompile(`case\s+GGML_OP_([A-Z0-9_]+)\s*:`).FindAllStringSubmatch(line, -1) {
			pending = append(pending, m[1])
		}
		if m := regexp.MustCompile(`return\s*\{\s*ggml_cu_(\w+)_supported\s*,\s*ggml_cu_(\w+)\s*\}`).FindStringSubmatch(line); m != nil {
			if m[1] != m[2] {
				t.Errorf("cu_op_lookup: ggml_cu_%s_supported paired with ggml_cu_%s", m[1], m[2])
			}
			for _, op := range pending {
				cudaEntry[op] = m[2]
			}
			pending = nil
		}
	}
	cudaDef := map[string]string{}
	cus, _ := filepath.Glob(filepath.Join(repoRoot, "cuda/*.cu"))
	for _, f := range cus {
		for _, m := range regexp.MustCompile(`(?m)^bool ggml_cu_(\w+)\(ggml_cu_ctx`).FindAllStringSubmatch(readRepoFile(t, "cuda/"+filepath.Base(f)), -1) {
			cudaDef[m[1]] = filepath.Base(f)
		}
	}
	metalOps := caseLabels(cBlock(t, "metal/ggml-metal-ops.m", "bool ggml_metal_supports_op("))
	autodiff := map[string][]string{}
	for _, f := range []string{"autodiff.c", "autodiff-extra.c"} {
		for op := range caseLabels(cCommentRe.ReplaceAllString(readRepoFile(t, "ggml/src/"+f), "")) {
			autodiff[op] = append(autodiff[op], f)
		}
	}

	for _, op := range ops {
		r, ok := p.census[op]
		if !ok {
			t.Errorf("%s: op %s has no census line (add it, with its family)", familiesDoc, op)
			continue
		}
		if r.family == "" {
			if !p.noFamily[op] {
				t.Errorf("%s: op %s has no family and is not under \"Ops without a family\"", familiesDoc, op)
			}
			if files := ctorFiles[op]; len(files) > 0 {
				t.Errorf("op %s has a constructor in ops/%s: give it a family in %s", op, strings.Join(files, ", "), familiesDoc)
			}
		} else if f := p.families[r.family]; f == nil {
			t.Errorf("%s: op %s: unknown family %q", familiesDoc, op, r.family)
		} else {
			if p.noFamily[op] {
				t.Errorf("%s: op %s has family %q and is also under \"Ops without a family\"", familiesDoc, op, r.family)
			}
			want := r.family + ".c"
			if files := ctorFiles[op]; len(files) > 0 && !containsString(files, want) {
				t.Errorf("op %s (family %s): constructor in ops/%s, want ops/%s", op, r.family, strings.Join(files, ", "), want)
			}
			if got := cpuDesc[strings.ToLower(op)]; got != "" && got != "ops-"+want {
				t.Errorf("op %s (family %s): CPU kernel ggml_cpu_op_%s in cpu/%s, want cpu/ops-%s", op, r.family, strings.ToLower(op), got, want)
			}
			if e, ok := cudaEntry[op]; ok && !containsString(f.files["cuda/"], cudaDef[e]) {
				t.Errorf("op %s (family %s): CUDA entry point ggml_cu_%s is in cuda/%s, not a file of the family %q",
					op, r.family, e, cudaDef[e], f.files["cuda/"])
			}
		}
		if _, has := cudaEntry[op]; has != r.cuda {
			t.Errorf("%s: op %s: census says CUDA %v, cu_op_lookup says %v", familiesDoc, op, r.cuda, has)
		}
		if metalOps[op] != r.metal {
			t.Errorf("%s: op %s: census says Metal %v, ggml_metal_supports_op says %v", familiesDoc, op, r.metal, metalOps[op])
		}
		got := append([]string(nil), autodiff[op]...)
		sort.Strings(got)
		if strings.Join(got, ",") != strings.Join(r.autodiff, ",") {
			t.Errorf("%s: op %s: census says autodiff in %q, the sources have it in %q", familiesDoc, op, r.autodiff, got)
		}
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
