package sql

import (
	"fmt"
	"slices"
	"strings"

	"github.com/geocompact/geocompact/internal/suggest"
)

// The procedures geocompact runs, by Iceberg's names.
const (
	RewriteDataFiles  = "rewrite_data_files"
	ExpireSnapshots   = "expire_snapshots"
	RemoveOrphanFiles = "remove_orphan_files"
	RewriteManifests  = "rewrite_manifests"
	// RewritePositionDeleteFiles merges small position delete files.
	RewritePositionDeleteFiles = "rewrite_position_delete_files"
)

// Procedures lists the procedures Bind accepts.
func Procedures() []string {
	return []string{RewriteDataFiles, ExpireSnapshots, RemoveOrphanFiles, RewriteManifests, RewritePositionDeleteFiles}
}

// otherProcedures are Iceberg's other Spark procedures: a CALL of one is
// refused as a procedure geocompact does not run, not as a typo.
var otherProcedures = []string{"rollback_to_snapshot", "rollback_to_timestamp", "set_current_snapshot",
	"cherrypick_snapshot", "publish_changes", "fast_forward",
	"rewrite_table_path", "snapshot", "migrate", "add_files", "register_table", "ancestors_of",
	"create_changelog_view", "compute_table_stats", "compute_partition_stats"}

type argType int

const (
	tString argType = iota
	tTimestamp
	tInt
	tLong
	tBool
	tStringMap
	tArray
)

var typeNames = map[argType]string{tString: "a string", tTimestamp: "a timestamp (TIMESTAMP '2026-01-02 00:00:00')",
	tInt: "an integer", tLong: "an integer", tBool: "TRUE or FALSE", tStringMap: "a map('key', 'value', …)", tArray: "an array(…)"}

// param is one argument of a procedure, in Spark's positional order.
type param struct {
	name     string
	typ      argType
	required bool
	// named: not in Spark's positional order (geocompact's own, or at a
	// position that differs between Iceberg versions).
	named bool
	// ignored says why an accepted argument changes nothing here.
	ignored string
	// refused says why a Spark argument is not supported.
	refused string
}

const (
	ignoredPool   = "accepted and ignored: geocompact deletes through its own worker pool"
	ignoredStream = "accepted and ignored: results are never collected on a Spark driver"
)

var signatures = map[string][]param{
	RewritePositionDeleteFiles: {
		{name: "table", typ: tString, required: true},
		{name: "options", typ: tStringMap},
		{name: "where", typ: tString},
	},
	RewriteDataFiles: {
		{name: "table", typ: tString, required: true},
		{name: "strategy", typ: tString},
		{name: "sort_order", typ: tString},
		{name: "options", typ: tStringMap},
		{name: "where", typ: tString},
	},
	ExpireSnapshots: {
		{name: "table", typ: tString, required: true},
		{name: "older_than", typ: tTimestamp},
		{name: "retain_last", typ: tInt},
		{name: "max_concurrent_deletes", typ: tInt, ignored: ignoredPool},
		{name: "stream_results", typ: tBool, ignored: ignoredStream},
		{name: "snapshot_ids", typ: tArray, refused: "geocompact expires by older_than and retain_last, not by snapshot id"},
		{name: "clean_expired_metadata", typ: tBool, refused: "unused schemas and partition specs are kept"},
		{name: "dry_run", typ: tBool, named: true},
	},
	RemoveOrphanFiles: {
		{name: "table", typ: tString, required: true},
		{name: "older_than", typ: tTimestamp},
		{name: "location", typ: tString},
		{name: "dry_run", typ: tBool},
		{name: "max_concurrent_deletes", typ: tInt, ignored: ignoredPool},
		{name: "file_list_view", typ: tString, refused: "there are no Spark views; geocompact lists the location itself"},
		{name: "equal_schemes", typ: tStringMap, refused: "files are compared with the table location's own scheme"},
		{name: "equal_authorities", typ: tStringMap, refused: "files are compared with the table location's own authority"},
		{name: "prefix_mismatch_mode", typ: tString, refused: "a file outside the table location is never deleted"},
		{name: "location_conflict_mode", typ: tString, refused: "a file outside the table location is never deleted"},
		{name: "prefix_listing", typ: tBool, ignored: "accepted and ignored: geocompact lists the location recursively either way"},
		{name: "stream_results", typ: tBool, ignored: ignoredStream},
	},
	RewriteManifests: {
		{name: "table", typ: tString, required: true},
		{name: "use_caching", typ: tBool, ignored: "accepted and ignored: there is no Spark cache"},
		{name: "spec_id", typ: tInt, refused: "geocompact merges the manifests of every partition spec together"},
		{name: "target_manifest_size_bytes", typ: tLong, named: true},
		{name: "sort_by", typ: tArray, named: true, refused: "manifests are clustered by iceberg-go's own order"},
	},
}

// positional returns the parameters that may be passed by position.
func positional(params []param) []param {
	return slices.DeleteFunc(slices.Clone(params), func(p param) bool { return p.named })
}

func paramNames(params []param) []string {
	out := make([]string, len(params))
	for i, p := range params {
		out[i] = p.name
	}
	return out
}

// lookupProcedure returns the canonical name and signature of name, or an
// error that says why it is refused.
func lookupProcedure(st Statement, src string) (string, []param, error) {
	name := strings.ToLower(st.Procedure)
	if sig, ok := signatures[name]; ok {
		return name, sig, nil
	}
	if slices.Contains(otherProcedures, name) {
		return "", nil, newError(src, st.Pos, fmt.Sprintf("procedure system.%s is Iceberg's, but geocompact does not run it; it runs %s",
			name, strings.Join(Procedures(), ", ")))
	}
	return "", nil, newError(src, st.Pos, fmt.Sprintf("unknown procedure system.%s (geocompact runs %s)%s",
		st.Procedure, strings.Join(Procedures(), ", "), suggest.Hint(name, Procedures())))
}

// matchArgs pairs each argument of st with its parameter.
func matchArgs(proc string, sig []param, st Statement, src string) (map[string]Value, error) {
	vals := map[string]Value{}
	pos := positional(sig)
	for i, a := range st.Args {
		var p param
		if a.Name == "" {
			if i >= len(pos) {
				return nil, newError(src, a.Pos, fmt.Sprintf("%s takes at most %d positional arguments (%s); name the others, as in name => value",
					proc, len(pos), strings.Join(paramNames(pos), ", ")))
			}
			p = pos[i]
		} else {
			j := slices.IndexFunc(sig, func(p param) bool { return strings.EqualFold(p.name, a.Name) })
			if j < 0 {
				return nil, newError(src, a.Pos, fmt.Sprintf("%s has no argument %s (its arguments are %s)%s",
					proc, a.Name, strings.Join(paramNames(sig), ", "), suggest.Hint(strings.ToLower(a.Name), paramNames(sig))))
			}
			p = sig[j]
		}
		if p.refused != "" {
			return nil, newError(src, a.Pos, fmt.Sprintf("%s: argument %s is not supported: %s", proc, p.name, p.refused))
		}
		if err := checkType(p, a.Value); err != nil {
			return nil, newError(src, a.Value.Pos, fmt.Sprintf("%s: argument %s: %s", proc, p.name, err))
		}
		vals[p.name] = a.Value
	}
	for _, p := range sig {
		if _, ok := vals[p.name]; p.required && !ok {
			return nil, newError(src, st.Pos, fmt.Sprintf("%s: argument %s is required, as in %s(%s => 'db.t')", proc, p.name, proc, p.name))
		}
	}
	return vals, nil
}

// checkType checks that v can be passed as p, with Spark's implicit casts
// from a string to a timestamp and from numbers and booleans to map
// strings.
func checkType(p param, v Value) error {
	ok := false
	switch p.typ {
	case tString:
		ok = v.Kind == KindString
	case tTimestamp:
		if v.Kind == KindString {
			_, err := ParseTimestamp(v.Text)
			return err
		}
		ok = v.Kind == KindTimestamp
	case tInt, tLong:
		if v.Kind == KindNumber {
			bits := 32
			if p.typ == tLong {
				bits = 64
			}
			_, err := intValue(v.Text, bits)
			return err
		}
	case tBool:
		ok = v.Kind == KindBool
	case tStringMap:
		if v.Kind == KindMap {
			_, err := stringMap(v)
			return err
		}
	case tArray:
		ok = v.Kind == KindArray
	}
	if !ok {
		return fmt.Errorf("want %s, got %s", typeNames[p.typ], v.Kind)
	}
	return nil
}
