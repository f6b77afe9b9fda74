package table

import (
	"context"
	"fmt"
	"net/url"
	"strings"
)

// GateError is a commit the gate refused: the files about to be added do
// not hold the rows the operation read (Kind "rows"), or one of them lies
// where the table's readers would not find it or outside the table (Kind
// "place"). Nothing was committed; the operation deletes what it wrote.
type GateError struct {
	// Op is the operation (ingest, rewrite, generate); Table its table.
	Op, Table string
	// Kind is "rows" or "place".
	Kind string
	// Group names the group or batch whose rows differ, when there are
	// several.
	Group string
	// Want is the rows read (less deletes applied); Got the rows of
	// Files files about to be added.
	Want, Got int64
	Files     int
	// Path is the refused path; Location the table's location (or the
	// roots it may write under, joined); Reason why the path is refused
	// when it is not merely outside.
	Path, Location, Reason string
}

func (e *GateError) Error() string {
	if e.Kind == GateRows {
		what := e.Op
		if e.Table != "" {
			what += " of " + e.Table
		}
		if e.Group != "" {
			what += " (" + e.Group + ")"
		}
		return fmt.Sprintf("commit gate: %s wrote %d rows in %d files, read %d: nothing committed", what, e.Got, e.Files, e.Want)
	}
	if e.Reason != "" {
		return fmt.Sprintf("commit gate: %q is not a valid path under the table location %s: %s", e.Path, e.Location, e.Reason)
	}
	return fmt.Sprintf("commit gate: %s lies outside the table location %s", e.Path, e.Location)
}

// The kinds of GateError.
const (
	GateRows  = "rows"
	GatePlace = "place"
)

// PathStyle is how a format's log names its files, which decides what a
// valid reference is.
type PathStyle int

const (
	// AbsolutePaths is Iceberg's: every file is an absolute URI or path.
	AbsolutePaths PathStyle = iota
	// RelativePaths is Delta's: a file is an RFC 3986 relative reference
	// to the table root, percent-encoded, or an absolute URI under it.
	RelativePaths
)

// GateFile is one file a commit is about to add.
type GateFile struct {
	Path    string
	Records int64
}

// GateGroup is one group (or batch) of a commit: the rows it read, the
// deletes it applied taken away, and the files it is about to add.
type GateGroup struct {
	Name  string
	Read  int64
	Files []GateFile
}

// Gate is what every commit passes before the table takes it: the rows
// each group read are the rows of the files it adds, and every file lies
// canonically under one of Roots (the table's location, an Iceberg
// table's write.data.path), valid for Style. It exists so that one check,
// not one per writer, stands between a wrong write and a commit.
type Gate struct {
	Op, Table string
	Style     PathStyle
	Roots     []string
}

// Check returns a *GateError for the first group whose files' rows
// differ from the rows it read, or the first file not in its place; nil
// when the commit may go on.
func (g Gate) Check(groups []GateGroup) error {
	for _, gr := range groups {
		var got int64
		for _, f := range gr.Files {
			got += f.Records
		}
		if got != gr.Read {
			name := ""
			if len(groups) > 1 {
				name = gr.Name
			}
			return &GateError{Op: g.Op, Table: g.Table, Kind: GateRows, Group: name, Want: gr.Read, Got: got, Files: len(gr.Files)}
		}
	}
	for _, gr := range groups {
		for _, f := range gr.Files {
			if err := g.Place(f.Path); err != nil {
				return err
			}
		}
	}
	return nil
}

// Place returns a *GateError when p is not a valid reference, for the
// table's readers, to a file under one of the gate's roots; nil when it
// is. No reading of p may hold an empty, "." or ".." segment or a
// backslash, so no reader resolves it outside the root. An Iceberg path
// is read literally, as Java, Spark, PyIceberg, DuckDB and this program
// read it: Iceberg names a partition directory by its value form-encoded
// ("region=a%2Fb" is one directory), so its escapes are part of the name.
// A Delta path is a URI reference, read percent-decoded once as Delta
// readers do, and is checked both ways.
func (g Gate) Place(p string) error {
	loc := strings.Join(g.Roots, ", ")
	refuse := func(reason string) error {
		return &GateError{Op: g.Op, Table: g.Table, Kind: GatePlace, Path: p, Location: loc, Reason: reason}
	}
	if len(g.Roots) == 0 {
		return refuse("the table has no location")
	}
	if strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\\' }) {
		return refuse("it holds a backslash or a control character")
	}
	if g.Style == RelativePaths && !hasScheme(p) {
		if strings.HasPrefix(p, "/") {
			return refuse("a Delta path is relative to the table root or an absolute URI")
		}
		if i := strings.IndexFunc(p, func(r rune) bool { return !pchar(r) }); i >= 0 {
			return refuse(fmt.Sprintf("%q is not percent-encoded, as a Delta path must be", p[i:i+1]))
		}
		return segmentsUnder(p, true, refuse)
	}
	if !hasScheme(p) && !strings.HasPrefix(p, "/") {
		return refuse("it is not an absolute path or URI")
	}
	np := normalFile(p)
	for _, root := range g.Roots {
		r := strings.TrimRight(normalFile(root), "/")
		if rest, ok := strings.CutPrefix(np, r+"/"); ok && r != "" {
			return segmentsUnder(rest, g.Style == RelativePaths, refuse)
		}
	}
	return &GateError{Op: g.Op, Table: g.Table, Kind: GatePlace, Path: p, Location: loc}
}

// segmentsUnder checks rest, a path below a root, literally and, when
// decoded is set, percent-decoded once.
func segmentsUnder(rest string, decoded bool, refuse func(string) error) error {
	if err := segmentsOK(rest); err != "" {
		return refuse(err)
	}
	if !decoded {
		return nil
	}
	dec, err := url.PathUnescape(rest)
	if err != nil {
		return refuse("it holds an invalid percent-escape")
	}
	if strings.ContainsFunc(dec, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\\' }) {
		return refuse("decoded, it holds a backslash or a control character")
	}
	if err := segmentsOK(dec); err != "" {
		return refuse(fmt.Sprintf("decoded (as Delta readers read it) to %q, %s", dec, err))
	}
	return nil
}

// segmentsOK returns why rest is not a canonical relative path, or "".
func segmentsOK(rest string) string {
	if rest == "" {
		return "it names the root itself"
	}
	for s := range strings.SplitSeq(rest, "/") {
		switch s {
		case "":
			return "it holds an empty segment (//)"
		case ".", "..":
			return fmt.Sprintf("it holds a %q segment", s)
		}
	}
	return ""
}

// hasScheme reports whether p starts with a URI scheme ("file:", "s3:").
func hasScheme(p string) bool {
	i := strings.IndexByte(p, ':')
	if i < 1 {
		return false
	}
	for j, r := range p[:i] {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || j > 0 && (r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.')
		if !ok {
			return false
		}
	}
	return true
}

// pchar reports whether r may stand unencoded in a Delta relative path:
// RFC 3986's pchar less ':' (java.net.URI refuses it in a first segment
// and Delta writers encode it), plus '/' and '%' of escapes.
func pchar(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return true
	}
	return strings.ContainsRune("-._~!$&'()*+,;=@/%", r)
}

// normalFile spells a local file URI as its path, so that file:///w/t,
// file:/w/t and /w/t compare equal.
func normalFile(p string) string {
	if rest, ok := strings.CutPrefix(p, "file://"); ok && strings.HasPrefix(rest, "/") {
		return rest
	}
	if rest, ok := strings.CutPrefix(p, "file:"); ok && strings.HasPrefix(rest, "/") && !strings.HasPrefix(rest, "//") {
		return rest
	}
	return p
}

type scopeKey struct{}

// WithWriteScope returns ctx under which the FileIOs geocompact wraps
// refuse to create a file that is not under one of roots (see
// CheckWrite): a path that would leave the table fails before anything
// is written, not only at the commit gate.
func WithWriteScope(ctx context.Context, roots ...string) context.Context {
	return context.WithValue(ctx, scopeKey{}, roots)
}

// WriteScope returns the roots of ctx's write scope, nil when it has
// none.
func WriteScope(ctx context.Context) []string {
	r, _ := ctx.Value(scopeKey{}).([]string)
	return r
}

// CheckWrite returns a *GateError when roots is set and p, an absolute
// path or URI about to be created, is not a canonical path under one of
// them; nil otherwise.
func CheckWrite(roots []string, p string) error {
	if roots == nil {
		return nil
	}
	return Gate{Op: "write", Roots: roots}.Place(p)
}

// GateFiles returns files, an Iceberg commit's data files, as the gate
// checks them.
func GateFiles[F interface {
	FilePath() string
	Count() int64
}](files []F) []GateFile {
	out := make([]GateFile, len(files))
	for i, f := range files {
		out[i] = GateFile{Path: f.FilePath(), Records: f.Count()}
	}
	return out
}

// CheckReplacements is the gate of a rewrite's commit: each group's new
// files hold the rows it read, and each lies in its place. path gives the
// reference the commit records for a file (an Iceberg data file's
// location, a Delta add's path).
func (g Gate) CheckReplacements(groups []Replacement, path func(OutFile) string) error {
	gs := make([]GateGroup, len(groups))
	for i, r := range groups {
		gs[i] = GateGroup{Name: fmt.Sprintf("group %d", i+1), Read: r.Read}
		for _, o := range r.New {
			gs[i].Files = append(gs[i].Files, GateFile{Path: path(o), Records: o.Records})
		}
	}
	return g.Check(gs)
}

// IcebergRoots are the roots an Iceberg table's files may lie under: its
// location, and its write.data.path when the table sets one (the owner
// asked for data files there).
func IcebergRoots(location string, props map[string]string) []string {
	roots := []string{location}
	if p := props["write.data.path"]; p != "" {
		roots = append(roots, p)
	}
	return roots
}
