package localpath_test

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/internal/localpath"
)

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		local      bool
	}{
		{"/a/b%2Fc", "/a/b%2Fc", true},
		{"file:///a/b%2Fc", "/a/b%2Fc", true},
		{"file://localhost/a/x%20y", "/a/x%20y", true},
		{"file:/a/q?x#y", "/a/q?x#y", true},
		{"file://host/a", "", false},
		{"s3://bucket/a", "", false},
		{"part:2026/x", "part:2026/x", true},
	} {
		got, ok := localpath.Split(tc.name)
		assert.Equal(t, tc.local, ok, tc.name)
		if ok {
			assert.Equal(t, tc.want, got, tc.name)
		}
	}
}

// TestLocate maps partition directories literally, and to the decoded
// name only where earlier versions wrote it and the decoding is safe.
func TestLocate(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"region=Zürich", "region=a/b", "with space", "OUT"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "region=both%41"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "region=bothA"), 0o755))
	for _, tc := range []struct{ uri, want string }{
		{"region=new%2Fvalue/f", "region=new%2Fvalue/f"}, // nothing there: literal
		{"region=Z%C3%BCrich/f", "region=Zürich/f"},      // written decoded before
		{"region=a%2Fb/f", "region=a/b/f"},               // written decoded before, two names
		{"with%20space/f", "with space/f"},               // a warehouse iceberg-go escaped
		{"region=both%41/f", "region=both%41/f"},         // both exist: literal
		{"x%2F..%2F..%2FOUT/f", "x%2F..%2F..%2FOUT/f"},   // never decoded
		{"%2E%2E/OUT/f", "%2E%2E/OUT/f"},                 // never decoded
		{"region=%zz/f", "region=%zz/f"},                 // not an escape
		{"region=a+b/f", "region=a+b/f"},                 // form-encoded space stays
	} {
		got, ok := localpath.Locate("file://" + filepath.ToSlash(dir) + "/" + tc.uri)
		require.True(t, ok)
		assert.Equal(t, filepath.Join(dir, filepath.FromSlash(tc.want)), got, tc.uri)
	}
}

func TestCheckNames(t *testing.T) {
	require.NoError(t, localpath.CheckNames("/a/region="+strings.Repeat("x", 248)))
	err := localpath.CheckNames("/a/region=" + strings.Repeat("%2F", 90) + "/f")
	require.ErrorIs(t, err, localpath.ErrNameTooLong)
	assert.Contains(t, err.Error(), `partition value "`+strings.Repeat("/", 90)+`"`)
}

// FuzzPartitionPath checks, for any partition value, that the directory
// Iceberg names for it ("region=" and the value form-encoded) maps to one
// name in the data directory, and that its decoded reading, when Locate
// may use it, stays below the data directory.
func FuzzPartitionPath(f *testing.F) {
	for _, s := range []string{"a/b", "x/../../../OUT", "..", ".", "%", "%2F", ":", "+", "a b", "Zürich", "", "null", "a\x00b", `a\b`, "/", "//"} {
		f.Add(s)
	}
	data := filepath.Join(f.TempDir(), "t", "data")
	f.Fuzz(func(t *testing.T, value string) {
		seg := "region=" + url.QueryEscape(value)
		got, ok := localpath.Locate("file://" + filepath.ToSlash(data) + "/" + seg + "/f.parquet")
		if !ok {
			t.Fatalf("%q: not local", value)
		}
		if want := filepath.Join(data, seg, "f.parquet"); got != want || filepath.Dir(filepath.Dir(got)) != data {
			t.Fatalf("%q: located at %s, want %s", value, got, want)
		}
		if d, ok := localpath.SafeDecode(seg); ok {
			p := filepath.Join(data, filepath.FromSlash(d))
			if !strings.HasPrefix(p, data+string(filepath.Separator)) || p != data+string(filepath.Separator)+filepath.FromSlash(d) {
				t.Fatalf("%q: decoded %q leaves %s", value, d, data)
			}
		}
	})
}
