package main

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// keptPrefixes are package names that begin messages and that userMessage
// keeps, each with why.
var keptPrefixes = map[string]string{
	"geocompact": "the binary's own name begins each line it prints",
	"zstdcodec":  "only a panic message, never an error, begins with it",
	"remedy":     "only a panic message, never an error, begins with it",
}

// TestPackagePrefixesAreDropped reads the string literals of every package
// of the module the binary links, and checks that userMessage drops each
// package-name prefix they begin with ("engine: bad option"): a new
// package whose errors carry its name fails here until packagePrefixes
// (or keptPrefixes) names it.
func TestPackagePrefixesAreDropped(t *testing.T) {
	names := modulePackageNames(t)
	found := map[string]string{} // prefix -> first place
	for _, pkg := range binaryPackages(t) {
		for _, file := range pkg.files {
			for name, pos := range literalPrefixes(t, filepath.Join(pkg.dir, file), names) {
				if _, ok := found[name]; !ok {
					found[name] = pos
				}
			}
		}
	}
	require.Contains(t, found, "engine", "the source was read")
	for name, pos := range found {
		if why, ok := keptPrefixes[name]; ok {
			t.Logf("%s: kept: %s", name, why)
			continue
		}
		msg := userMessage(errors.New("open t: " + name + ": bad thing"))
		assert.Equal(t, "open t: bad thing", msg, "%s begins a message with %q: add it to packagePrefixes", pos, name+": ")
	}
	for name := range keptPrefixes {
		assert.Contains(t, found, name, "keptPrefixes names %q, which no message begins with", name)
	}
}

// modulePackageNames returns the names of the module's packages.
func modulePackageNames(t testing.TB) map[string]bool {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.Name}}", "github.com/geocompact/geocompact/...").Output()
	require.NoError(t, err)
	names := map[string]bool{}
	for n := range strings.FieldsSeq(string(out)) {
		if n != "main" {
			names[n] = true
		}
	}
	return names
}

type goPackage struct {
	dir   string
	files []string
}

// binaryPackages returns the module's packages this binary links, with
// their non-test Go files.
func binaryPackages(t testing.TB) []goPackage {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f",
		`{{if .Module}}{{if eq .Module.Path "github.com/geocompact/geocompact"}}{{.Dir}}|{{join .GoFiles ","}}{{end}}{{end}}`, ".").Output()
	require.NoError(t, err)
	var pkgs []goPackage
	for line := range strings.Lines(string(out)) {
		dir, files, ok := strings.Cut(strings.TrimSpace(line), "|")
		if ok && files != "" {
			pkgs = append(pkgs, goPackage{dir: dir, files: strings.Split(files, ",")})
		}
	}
	require.Greater(t, len(pkgs), 20, "go list named the binary's packages")
	return pkgs
}

var leadingName = regexp.MustCompile(`^([a-z][a-z0-9]*): `)

// literalPrefixes returns the package names among names that a string
// literal of file begins with, and where.
func literalPrefixes(t testing.TB, file string, names map[string]bool) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
	require.NoError(t, err)
	found := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		s, err := strconv.Unquote(lit.Value)
		if m := leadingName.FindStringSubmatch(s); err == nil && m != nil && names[m[1]] {
			found[m[1]] = fset.Position(lit.Pos()).String()
		}
		return true
	})
	return found
}
