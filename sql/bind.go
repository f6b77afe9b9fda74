package sql

import (
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/geocompact/geocompact/cluster"
)

// Call is one statement bound to its procedure: the arguments checked,
// typed and named as the procedure takes them. Fields a procedure does not
// take stay zero.
type Call struct {
	// Statement is the statement as written.
	Statement Statement
	// Procedure is the procedure's canonical name, e.g. RewriteDataFiles.
	Procedure string
	// Catalog is the statement's catalog, "" for the current one.
	Catalog string
	// Table is the table argument, "ns.t" (back-quotes removed).
	Table string

	// Strategy is rewrite_data_files' strategy, "binpack", "sort" or ""
	// (binpack, or sort when a sort order is given).
	Strategy string
	// SortOrder is rewrite_data_files' sort_order: "col ASC NULLS FIRST,
	// …", "zorder(a, b)" or geocompact's "hilbert(a, b)".
	SortOrder string
	// Options are rewrite_data_files' options by Iceberg's names.
	Options map[string]string
	// Where is rewrite_data_files' where in the where language
	// (table/where), translated from Spark's literal rules; SparkWhere is
	// the argument as written.
	Where, SparkWhere string

	// OlderThan is expire_snapshots' and remove_orphan_files' older_than;
	// zero means the procedure's default.
	OlderThan time.Time
	// RetainLast is expire_snapshots' retain_last; 0 means the default.
	RetainLast int
	// DryRun is remove_orphan_files' dry_run, and geocompact's own
	// dry_run of expire_snapshots.
	DryRun bool
	// Location is remove_orphan_files' location; "" means the table's.
	Location string
	// TargetManifestSizeBytes is rewrite_manifests'
	// target_manifest_size_bytes; 0 means the table's property.
	TargetManifestSizeBytes int64

	// Ignored names the arguments given that change nothing here, with why.
	Ignored []string
}

// Bind checks st against its procedure's signature and returns the typed
// call. src is the script st was parsed from, for error positions. An
// unknown procedure or argument is refused by name, with the closest known
// one; a Spark argument geocompact does not support is refused with why.
// Errors are *Error; a VACUUM, OPTIMIZE or ALTER TABLE statement, which
// names no procedure, is one.
func Bind(st Statement, src string) (Call, error) {
	switch cmd := st.Command(); cmd {
	case CommandAlter:
		return Call{}, newError(src, st.Pos, cmd+" is not a procedure call: it takes no binding")
	case CommandVacuum, CommandOptimize, CommandReorg:
		return Call{}, newError(src, st.Pos, cmd+" is a Delta Lake statement, not a procedure call: it takes no binding")
	}
	proc, sig, err := lookupProcedure(st, src)
	if err != nil {
		return Call{}, err
	}
	vals, err := matchArgs(proc, sig, st, src)
	if err != nil {
		return Call{}, err
	}
	c := Call{Statement: st, Procedure: proc, Catalog: st.Catalog}
	for _, p := range sig {
		if _, ok := vals[p.name]; ok && p.ignored != "" {
			c.Ignored = append(c.Ignored, p.name+": "+p.ignored)
		}
	}
	b := binder{c: &c, vals: vals, src: src}
	b.table()
	switch proc {
	case RewriteDataFiles:
		b.rewrite()
	case ExpireSnapshots, RemoveOrphanFiles:
		b.retention()
	case RewriteManifests:
		b.int64("target_manifest_size_bytes", &c.TargetManifestSizeBytes, 1)
	case RewritePositionDeleteFiles:
		b.optionsWhere()
	}
	if b.err != nil {
		return Call{}, b.err
	}
	return c, nil
}

// binder fills a Call from matched argument values, keeping the first error.
type binder struct {
	c    *Call
	vals map[string]Value
	src  string
	err  error
}

func (b *binder) fail(name string, format string, args ...any) {
	if b.err == nil {
		b.err = newError(b.src, b.vals[name].Pos, fmt.Sprintf("%s: argument %s: ", b.c.Procedure, name)+fmt.Sprintf(format, args...))
	}
}

func (b *binder) table() {
	parts, err := multipart(b.vals["table"].Text)
	if err != nil {
		b.fail("table", "%s", err)
		return
	}
	if len(parts) < 2 {
		b.fail("table", "%q: want a namespace and a name, as in 'db.sample'", b.vals["table"].Text)
		return
	}
	b.c.Table = strings.Join(parts, ".")
}

func (b *binder) rewrite() {
	c := b.c
	c.Strategy = strings.ToLower(b.vals["strategy"].Text)
	c.SortOrder = strings.TrimSpace(b.vals["sort_order"].Text)
	switch _, given := b.vals["sort_order"]; {
	case c.Strategy != "" && c.Strategy != "binpack" && c.Strategy != "sort":
		b.fail("strategy", "%q: want binpack or sort", b.vals["strategy"].Text)
	case c.Strategy == "binpack" && given:
		b.fail("sort_order", "strategy binpack takes no sort order: use strategy => 'sort', or leave sort_order out")
	case given && c.SortOrder == "":
		b.fail("sort_order", "empty: leave it out for the table's own sort order")
	case c.SortOrder != "":
		if _, err := cluster.ParseOrder(c.SortOrder); err != nil {
			b.fail("sort_order", "%s", err)
		}
	}
	b.optionsWhere()
}

// optionsWhere binds the options map and the where predicate.
func (b *binder) optionsWhere() {
	c := b.c
	if v, ok := b.vals["options"]; ok {
		c.Options, _ = stringMap(v) // checked by matchArgs
	}
	if v, ok := b.vals["where"]; ok {
		w, err := WhereText(v.Text)
		if err != nil {
			b.fail("where", "%s", err)
		}
		c.Where, c.SparkWhere = w, v.Text
	}
}

func (b *binder) retention() {
	c := b.c
	if v, ok := b.vals["older_than"]; ok {
		c.OlderThan = v.Time
		if v.Kind == KindString {
			c.OlderThan, _ = ParseTimestamp(v.Text) // checked by matchArgs
		}
	}
	var n, pool int64
	b.int64("retain_last", &n, 1)
	b.int64("max_concurrent_deletes", &pool, 1) // checked as Spark does, then ignored
	c.RetainLast = int(n)
	c.DryRun = b.vals["dry_run"].Bool
	if v, ok := b.vals["location"]; ok {
		c.Location = strings.TrimSpace(v.Text)
		if c.Location == "" {
			b.fail("location", "empty: leave it out for the table location")
		}
	}
}

// int64 stores the integer argument name, if given, after checking it is
// at least minVal.
func (b *binder) int64(name string, dst *int64, minVal int64) {
	v, ok := b.vals[name]
	if !ok {
		return
	}
	n, _ := intValue(v.Text, 64) // checked by matchArgs
	if n < minVal {
		b.fail(name, "%d: want at least %d", n, minVal)
		return
	}
	*dst = n
}

// intValue reads an integer literal, with an optional Spark suffix (L, S,
// Y), that fits in bits.
func intValue(text string, bits int) (int64, error) {
	s := strings.TrimRight(text, "LlSsYy")
	n, err := strconv.ParseInt(s, 10, bits)
	if err == nil {
		return n, nil
	}
	if _, ok := new(big.Int).SetString(s, 10); ok {
		return 0, fmt.Errorf("%s is out of range for a %d-bit integer", text, bits)
	}
	return 0, fmt.Errorf("want an integer, got %s", text)
}

// stringMap turns a map literal into strings, as Spark casts
// map<string, int> to map<string, string>. A key given twice is an error,
// as in Spark.
func stringMap(v Value) (map[string]string, error) {
	m := make(map[string]string, len(v.Items)/2)
	for i := 0; i+1 < len(v.Items); i += 2 {
		k, err := scalarText(v.Items[i])
		if err != nil {
			return nil, fmt.Errorf("map key %d: %w", i/2+1, err)
		}
		val, err := scalarText(v.Items[i+1])
		if err != nil {
			return nil, fmt.Errorf("map value of %q: %w", k, err)
		}
		if _, dup := m[k]; dup {
			return nil, fmt.Errorf("map key %q is given twice", k)
		}
		m[k] = val
	}
	return m, nil
}

func scalarText(v Value) (string, error) {
	switch v.Kind {
	case KindString:
		return v.Text, nil
	case KindNumber:
		return strings.TrimRight(v.Text, "LlSsYyDdFfBb"), nil
	case KindBool:
		return strconv.FormatBool(v.Bool), nil
	}
	return "", fmt.Errorf("want a string, got %s", v.Kind)
}

// multipart splits a Spark multi-part name, a.b or `a`.`b.c`, into its
// parts. A part holding a dot cannot be named by the catalog layer and is
// refused.
func multipart(s string) ([]string, error) {
	var parts []string
	var cur strings.Builder
	quoted := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '`' && quoted && i+1 < len(s) && s[i+1] == '`':
			cur.WriteByte('`')
			i++
		case c == '`':
			quoted = !quoted
		case c == '.' && !quoted:
			parts = append(parts, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	if quoted {
		return nil, fmt.Errorf("%q: unterminated back-quote", s)
	}
	parts = append(parts, strings.TrimSpace(cur.String()))
	if slices.Contains(parts, "") {
		return nil, fmt.Errorf("%q has an empty part: want 'db.table'", s)
	}
	if slices.ContainsFunc(parts, func(p string) bool { return strings.Contains(p, ".") }) {
		return nil, fmt.Errorf("%q: a name holding a dot is not supported", s)
	}
	return parts, nil
}
