package docmap_test

import (
	"bufio"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPackageMapNamesEveryPackage fails for each package directory of the
// module that the first column of a table under docs/README.md's
// "Packages" heading does not name, and for each path named there that
// does not exist.
func TestPackageMapNamesEveryPackage(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("../../..")
	require.NoError(t, err)
	named := mapped(t, filepath.Join(root, "docs", "README.md"))
	pkgs := packageDirs(t, root)
	assert.Greater(t, len(pkgs), 30, "the walk found the module's packages")
	for _, dir := range pkgs {
		if !named[dir] {
			t.Errorf("package %s is not in docs/README.md's package map: add a row to its floor's table, from its package doc comment", dir)
		}
	}
	for name := range named {
		if _, err := os.Stat(filepath.Join(root, name)); err != nil {
			t.Errorf("docs/README.md's package map names %s, which does not exist", name)
		}
	}
}

// packageDirs returns the module's directories, relative to root ("." for
// root itself), that hold a Go file other than a test. It leaves out
// testdata, hidden directories, the Python and interop trees, and nested
// modules (a directory with its own go.mod).
func packageDirs(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p == root {
				return nil
			}
			if strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "python" || name == "interop" {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return err
		}
		if rel = filepath.ToSlash(rel); !slices.Contains(out, rel) {
			out = append(out, rel)
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

// firstCell matches a table row's first cell and captures it.
var firstCell = regexp.MustCompile(`^\|\s*([^|]+?)\s*\|`)

// codeSpan matches one `...` span.
var codeSpan = regexp.MustCompile("`([^`]+)`")

// mapped returns the paths named in code spans in the first column of the
// tables under the page's "## Packages" heading, without a trailing slash.
func mapped(t *testing.T, page string) map[string]bool {
	t.Helper()
	f, err := os.Open(page)
	require.NoError(t, err)
	defer f.Close()
	named := map[string]bool{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			in = line == "## Packages"
			continue
		}
		m := firstCell.FindStringSubmatch(line)
		if !in || m == nil {
			continue
		}
		for _, span := range codeSpan.FindAllStringSubmatch(m[1], -1) {
			named[strings.TrimSuffix(span[1], "/")] = true
		}
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, named, "%s has a Packages section with tables", page)
	return named
}

// floorOf numbers the floors of docs/README.md's package map, from the
// leaves up; the test-only packages are on none.
var floorOf = map[string]int{"### Leaves": 0, "### Table layer": 1, "### Engine and format adapters": 2, "### Command line": 3}

// TestFloorsImportDownward fails for each import, in a package's non-test
// files, of a package on a higher floor of docs/README.md's package map:
// each floor imports only its own and the floors below it.
func TestFloorsImportDownward(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("../../..")
	require.NoError(t, err)
	floors := mappedFloors(t, filepath.Join(root, "docs", "README.md"))
	require.Len(t, slices.Compact(slices.Sorted(maps.Values(floors))), len(floorOf), "every floor has packages")
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	require.NoError(t, err)
	rel := func(path string) string {
		if path == module {
			return "."
		}
		return strings.TrimPrefix(path, module+"/")
	}
	checked := 0
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		from, ok := floors[rel(f[0])]
		if !ok {
			continue
		}
		checked++
		for _, imp := range f[1:] {
			if to, ok := floors[rel(imp)]; ok && strings.HasPrefix(imp, module) && to > from {
				t.Errorf("%s (floor %d) imports %s (floor %d): move the package, or what it needs, to the right floor", rel(f[0]), from, rel(imp), to)
			}
		}
	}
	assert.Greater(t, checked, 30, "go list named the module's packages")
}

const module = "github.com/geocompact/geocompact"

// mappedFloors returns the floor of every package docs/README.md's
// package map places on one (see floorOf).
func mappedFloors(t *testing.T, page string) map[string]int {
	t.Helper()
	b, err := os.ReadFile(page)
	require.NoError(t, err)
	floors := map[string]int{}
	floor := -1
	for line := range strings.Lines(string(b)) {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "#") {
			f, ok := floorOf[line]
			floor = -1
			if ok {
				floor = f
			}
			continue
		}
		m := firstCell.FindStringSubmatch(line)
		if floor < 0 || m == nil {
			continue
		}
		for _, span := range codeSpan.FindAllStringSubmatch(m[1], -1) {
			floors[strings.TrimSuffix(span[1], "/")] = floor
		}
	}
	return floors
}
