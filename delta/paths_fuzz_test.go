package delta

import (
	"path"
	"strings"
	"testing"
)

// fuzzRoots are the tables the path fuzz target resolves paths in.
var fuzzRoots = []Root{{Dir: "/data/T"}, {Bucket: "lake", Dir: "wh/T"}, {Dir: "/"}, {Bucket: "lake"}}

var pathSeeds = []string{
	"part=1/f.parquet", "part=a%20b/f%2541.parquet", "ts=10:00/f.parquet",
	"file:///data/T/part=1/f.parquet", "file:/data/T/f.parquet", "file://localhost/data/T/f.parquet",
	"/data/T/./sub/../f.parquet", "../../etc/passwd", "%2e%2e%2f%2e%2e%2fetc%2fpasswd", "%2Fetc%2Fpasswd",
	"file:///data/T/../U/f.parquet", "s3://lake/wh/T/f%20g.parquet", "s3a://lake/wh/T/f.parquet",
	"s3://other/wh/T/f.parquet", "s3://lake/wh/T/../../f.parquet", "abfss://c@a.dfs.core.windows.net/T/f.parquet",
	"file%3A%2Fetc%2Fpasswd", "", ".", "%", "file://host/x", "x:y.parquet", "deletion_vector_0.bin",
}

// checkCanonical checks Canonical's promises for one path in one root:
// a path inside is clean, relative, below the root once joined to it, and
// the same file when encoded again or given as an absolute URI; a path
// outside is absolute.
func checkCanonical(t *testing.T, root Root, raw string) {
	got, inside, err := root.Canonical(raw)
	if err != nil {
		return
	}
	if !inside {
		if !strings.HasPrefix(got, "/") && !strings.Contains(got, "://") {
			t.Fatalf("%+v: %q is outside as %q, which is not absolute", root, raw, got)
		}
		return
	}
	if got == "" || path.IsAbs(got) || path.Clean(got) != got || got == ".." || strings.HasPrefix(got, "../") {
		t.Fatalf("%+v: %q is inside as %q, which is not a clean relative path", root, raw, got)
	}
	if base := "/" + strings.Trim(root.Dir, "/"); !strings.HasPrefix(path.Join(base, got), strings.TrimSuffix(base, "/")+"/") {
		t.Fatalf("%+v: %q as %q leaves the root", root, raw, got)
	}
	for _, again := range []string{EncodePath(got), root.URI(got)} {
		p, in, err := root.Canonical(again)
		if err != nil || !in || p != got {
			t.Fatalf("%+v: %q is %q, but its form %q is %q, %v, %v", root, raw, got, again, p, in, err)
		}
	}
}

func FuzzCanonicalPath(f *testing.F) {
	for _, s := range pathSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		for _, root := range fuzzRoots {
			checkCanonical(t, root, raw)
		}
	})
}

func FuzzParseActions(f *testing.F) {
	f.Add([]byte(`{"add":{"path":"file:///data/T/part=1/f%20g.parquet","partitionValues":{"part":"1"},"size":10,"modificationTime":1,"dataChange":true}}`))
	f.Add([]byte(`{"remove":{"path":"../../x","deletionTimestamp":1,"dataChange":true,"deletionVector":{"storageType":"p","pathOrInlineDv":"file:///data/U/dv.bin","sizeInBytes":4,"cardinality":1}}}`))
	f.Add([]byte(`{"add":{"path":"a","deletionVector":{"storageType":"u","pathOrInlineDv":"../..^-aqEH.-t@S}K{vb[*k^","sizeInBytes":1,"cardinality":1}}}` + "\n" +
		`{"commitInfo":{"operation":"WRITE"}}` + "\n\n" + `{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}`))
	f.Add([]byte(`{"sidecar":{"path":"%2e%2e%2fx.parquet"}}`))
	f.Add([]byte("not json\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		acts, err := ParseActions(b)
		if err != nil {
			return
		}
		for _, a := range acts {
			var raws []string
			var dv *DeletionVector
			switch {
			case a.Add != nil:
				raws, dv = append(raws, a.Add.Path), a.Add.DeletionVector
			case a.Remove != nil:
				raws, dv = append(raws, a.Remove.Path), a.Remove.DeletionVector
			}
			for _, root := range fuzzRoots {
				for _, raw := range raws {
					checkCanonical(t, root, raw)
				}
				if dv == nil {
					continue
				}
				if p, inside, err := dv.Path(root); err == nil && inside && (path.IsAbs(p) || strings.HasPrefix(p, "../") || p == "..") {
					t.Fatalf("%+v: deletion vector %+v is inside as %q", root, dv, p)
				}
			}
		}
		r := newReplay(fuzzRoots[0])
		_ = r.apply(acts, true) // refusing is fine; panics are not
	})
}
