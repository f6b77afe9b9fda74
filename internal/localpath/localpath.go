// Package localpath maps the file locations of a table (plain paths and
// file: URIs) to the local paths its file IO opens.
//
// Iceberg names a partition directory "field=" + the value escaped as a
// form-encoded query component, so a value "a/b" names the directory
// "region=a%2Fb" and "x/../../OUT" names "region=x%2F..%2F..%2FOUT", one
// segment. Iceberg Java (Hadoop's file systems), PyIceberg and DuckDB take
// a location string literally: the directory on disk is named
// "region=a%2Fb". Decoding the URI instead, as earlier versions did,
// turns that one segment into "region=x/../../OUT" and writes outside the
// table. Locate therefore keeps each segment literal, and decodes a
// segment only to find what earlier versions wrote at the decoded name
// (a table whose warehouse path holds a space, or a partition value
// "Zürich" on disk as "region=Zürich"), and only where the decoding
// cannot leave the directory it is in (no "." or ".." or empty segment
// comes out of it).
package localpath

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// Split returns the path of the local location name as it is spelled,
// and whether name is local at all: a plain path is taken as it is, a
// file: URI (with no host, or localhost) gives the path after its
// authority, undecoded, and any other scheme is not local. A colon is
// valid in a file name, so only "scheme://" makes a URI.
func Split(name string) (string, bool) {
	i := strings.IndexByte(name, ':')
	sep := strings.IndexAny(name, `/\`)
	if filepath.VolumeName(name) != "" || i < 0 || (sep >= 0 && sep < i) {
		return name, true
	}
	if !strings.EqualFold(name[:i], "file") {
		return name, !strings.HasPrefix(name[i+1:], "//")
	}
	rest := name[i+1:]
	if !strings.HasPrefix(rest, "//") {
		return rest, rest != "" // file:/a/b
	}
	rest = rest[2:]
	j := strings.IndexByte(rest, '/')
	host, p := rest, ""
	if j >= 0 {
		host, p = rest[:j], rest[j:]
	}
	if host != "" && !strings.EqualFold(host, "localhost") {
		return "", false
	}
	if filepath.Separator == '\\' && len(p) >= 3 && p[0] == '/' && p[2] == ':' {
		p = p[1:] // file:///C:/x is C:/x
	}
	return p, p != ""
}

// Locate returns the local path the table's file IO opens for name, and
// whether name is local at all (see Split). Each segment of the path is
// taken literally, unless it holds a percent-escape, the literal name does
// not exist in its directory and the decoded one does, and the decoded
// one is a safe path (SafeDecode): then the decoded one is used, as
// earlier versions wrote it. A file created in a new directory so gets
// the literal name, while an existing table keeps its files.
func Locate(name string) (string, bool) {
	p, ok := Split(name)
	if !ok || !strings.Contains(p, "%") {
		return filepath.FromSlash(p), ok
	}
	segs := strings.Split(p, "/")
	cur := segs[0] // "" for an absolute path
	for i, s := range segs[1:] {
		next := join(cur, s, i == 0)
		if strings.Contains(s, "%") && !exists(next) {
			if d, ok := SafeDecode(s); ok && d != s && exists(join(cur, d, i == 0)) {
				next = join(cur, d, i == 0)
			}
		}
		cur = next
	}
	return filepath.FromSlash(cur), true
}

func join(dir, seg string, first bool) string {
	if first && dir == "" {
		return "/" + seg
	}
	return dir + "/" + seg
}

func exists(p string) bool {
	_, err := os.Lstat(filepath.FromSlash(p))
	return err == nil
}

// SafeDecode percent-decodes one path segment, and reports whether the
// result is a relative path that stays in the segment's directory: one
// or more names, none of them empty, "." or "..", with no NUL. A value
// "a/b" escaped as "a%2Fb" decodes to the two names "a/b"; "x%2F..%2FOUT"
// and "%2E%2E" do not decode.
func SafeDecode(seg string) (string, bool) {
	d, err := url.PathUnescape(seg)
	if err != nil || d == "" || strings.ContainsRune(d, 0) {
		return "", false
	}
	parts := strings.Split(d, "/")
	if filepath.Separator != '/' {
		parts = strings.FieldsFunc(d, func(r rune) bool { return r == '/' || r == filepath.Separator })
		if len(parts) != strings.Count(d, "/")+strings.Count(d, string(filepath.Separator))+1 {
			return "", false
		}
	}
	for _, part := range parts {
		if part == "" || part == "." || part == ".." {
			return "", false
		}
	}
	return d, true
}

// MaxName is the longest file name, in bytes, that local file systems
// commonly allow (ext4, XFS, APFS, NTFS in UTF-16 units).
const MaxName = 255

// ErrNameTooLong is a location whose file or directory name is longer
// than MaxName: a partition value whose escaped form is that long cannot
// name its directory.
var ErrNameTooLong = errors.New("localpath: name too long")

// CheckNames returns an error naming the first name of the local path p
// longer than MaxName bytes, and what it decodes to (the partition value
// a "field=value" directory holds).
func CheckNames(p string) error {
	for _, seg := range strings.Split(filepath.ToSlash(p), "/") {
		if len(seg) <= MaxName {
			continue
		}
		value := ""
		if _, v, ok := strings.Cut(seg, "="); ok {
			if d, err := url.QueryUnescape(v); err == nil {
				value = fmt.Sprintf(" (the partition value %q)", d)
			}
		}
		return fmt.Errorf("%w: %q is %d bytes, over the %d a file or directory name may have%s", ErrNameTooLong, seg, len(seg), MaxName, value)
	}
	return nil
}
