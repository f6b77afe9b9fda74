package delta

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"strings"
)

// errPath marks a file path in the log that names no file this package can
// resolve: a malformed escape, a file: URI on another host, the table root
// itself.
var errPath = errors.New("delta: invalid file path")

// Root is where a table lives: the reference its log's relative paths are
// resolved against, and the bound of what a vacuum may delete.
type Root struct {
	// Bucket is the S3 bucket of an S3 table, "" for a local one.
	Bucket string
	// Dir is the table directory: for a local table an absolute,
	// slash-separated, clean path; for an S3 table the key prefix, without
	// slashes at either end ("" for the bucket's root).
	Dir string
}

// Canonical returns the one form in which this package compares, reads and
// deletes the file a log path names (an add or remove path, or a 'p'
// deletion vector path), and whether the file is inside the table.
//
// The log stores paths as URIs, percent-encoded: relative to the table
// root ("part=1/f%20g.parquet"), or absolute, as shallow clones and some
// writers store them ("file:///abs/T/f.parquet", "file:/abs/T/f.parquet",
// "/abs/T/f.parquet", "s3://bucket/T/f.parquet"). Canonical decodes the
// path exactly once and cleans it; a path inside the table comes out
// relative to its root, so "f.parquet", "file:///abs/T/f.parquet" and
// "/abs/T/./f.parquet" are one file, the one a listing of the table names
// "f.parquet". A relative path never leaves the table: ".." and "%2e%2e%2f"
// stop at the root, as on a file system's "/". A path outside the table
// (another directory, bucket or store) comes out absolute ("/abs/U/f",
// "s3://bucket/U/f", "abfss://…") and inside is false: such a file is read
// but never deleted.
func (r Root) Canonical(raw string) (p string, inside bool, err error) {
	scheme, rest := cutScheme(raw)
	switch scheme {
	case "":
		d, err := unescapePath(raw)
		if err != nil {
			return "", false, err
		}
		if strings.HasPrefix(raw, "/") {
			return r.local(raw, path.Clean(d))
		}
		return relativePath(raw, d)
	case "file":
		return r.fileURI(raw, rest)
	case "s3", "s3a":
		return r.s3URI(raw, rest)
	}
	d, err := unescapePath(raw)
	if err != nil {
		return "", false, err
	}
	return d, false, nil
}

// URI is the absolute URI of rel, a canonical (decoded) table-relative
// path, encoded as a log stores it: file:///abs/T/rel or s3://bucket/T/rel.
func (r Root) URI(rel string) string {
	if r.Bucket != "" {
		key := strings.TrimPrefix(r.Dir+"/"+rel, "/")
		return "s3://" + r.Bucket + "/" + EncodePath(key)
	}
	return "file://" + EncodePath(strings.TrimSuffix(r.Dir, "/")+"/"+rel)
}

// cutScheme returns the lower-cased scheme of a URI with an authority
// ("s3://…", "abfss://…") or of a file: URI ("file:/abs"), and the rest
// after the colon. Anything else is a path: a relative path may hold a
// colon ("ts=10:00/f.parquet"), and the scheme is read before decoding, so
// an encoded "%3A" never makes one.
func cutScheme(raw string) (scheme, rest string) {
	i := strings.IndexByte(raw, ':')
	if i <= 0 {
		return "", ""
	}
	for j, c := range raw[:i] {
		alpha := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !alpha && (j == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return "", ""
		}
	}
	s, rest := strings.ToLower(raw[:i]), raw[i+1:]
	if s != "file" && !strings.HasPrefix(rest, "//") {
		return "", ""
	}
	return s, rest
}

func unescapePath(raw string) (string, error) {
	d, err := url.PathUnescape(raw)
	if err != nil {
		return "", fmt.Errorf("%w %q: %w", errPath, raw, err)
	}
	return d, nil
}

// relativePath cleans the decoded relative path d inside the root.
func relativePath(raw, d string) (string, bool, error) {
	rel := strings.TrimPrefix(path.Clean("/"+d), "/")
	switch {
	case rel == "":
		return "", false, fmt.Errorf("%w %q: names the table root, not a file", errPath, raw)
	case strings.HasPrefix(strings.ToLower(rel), "file:"):
		// Decoded from "file%3A…": the storage would read it as a URI.
		return "", false, fmt.Errorf("%w %q: a relative path that decodes to a file: URI", errPath, raw)
	}
	return rel, true, nil
}

// fileURI resolves a file: URI ("file:/abs", "file:///abs",
// "file://localhost/abs"); rest follows "file:".
func (r Root) fileURI(raw, rest string) (string, bool, error) {
	p := rest
	if after, ok := strings.CutPrefix(rest, "//"); ok {
		host := after
		if i := strings.IndexByte(after, '/'); i >= 0 {
			host, p = after[:i], after[i:]
		} else {
			p = ""
		}
		if host != "" && !strings.EqualFold(host, "localhost") {
			return "", false, fmt.Errorf("%w %q: a file: URI on host %q, not a local file", errPath, raw, host)
		}
	}
	if !strings.HasPrefix(p, "/") {
		return "", false, fmt.Errorf("%w %q: a file: URI without an absolute path", errPath, raw)
	}
	d, err := unescapePath(p)
	if err != nil {
		return "", false, err
	}
	return r.local(raw, path.Clean(d))
}

// local places the clean absolute local path p: relative when it is
// inside a local table's directory.
func (r Root) local(raw, p string) (string, bool, error) {
	if r.Bucket == "" {
		if rel, ok := under(r.Dir, p); ok {
			return relativePath(raw, rel)
		}
	}
	return p, false, nil
}

// s3URI resolves an s3:// or s3a:// URI; rest follows the colon.
func (r Root) s3URI(raw, rest string) (string, bool, error) {
	bucket, key, _ := strings.Cut(strings.TrimPrefix(rest, "//"), "/")
	if bucket == "" {
		return "", false, fmt.Errorf("%w %q: an S3 URI without a bucket", errPath, raw)
	}
	d, err := unescapePath(key)
	if err != nil {
		return "", false, err
	}
	key = strings.TrimPrefix(path.Clean("/"+d), "/")
	if bucket == r.Bucket {
		if rel, ok := under(r.Dir, "/"+key); ok {
			return relativePath(raw, rel)
		}
	}
	return "s3://" + bucket + "/" + key, false, nil
}

// under returns p relative to dir when p, a clean absolute path, is dir
// ("": the table root) or below it; dir is absolute or an S3 prefix
// without slashes.
func under(dir, p string) (string, bool) {
	base := "/" + strings.Trim(dir, "/")
	if p == base {
		return "", true
	}
	if base != "/" {
		base += "/"
	}
	return strings.CutPrefix(p, base)
}

// linkResolver finds, for a local path outside the table by its text,
// the table-relative path it reaches through symbolic links: a table
// opened through a link to its directory while its log names the real
// directory, or the other way round. A vacuum keeps such a file too.
type linkResolver struct {
	real string            // the table directory, links resolved; "" when not local or unresolvable
	dirs map[string]string // directory -> resolved directory ("" when unresolvable)
}

func newLinkResolver(root Root) *linkResolver {
	lr := &linkResolver{dirs: map[string]string{}}
	if root.Bucket == "" {
		if real, err := filepath.EvalSymlinks(filepath.FromSlash(root.Dir)); err == nil {
			lr.real = filepath.ToSlash(real)
		}
	}
	return lr
}

// rel returns the table-relative path the canonical path p reaches through
// links, when p is an absolute local path outside the table by its text.
func (lr *linkResolver) rel(p string, inside bool) (string, bool) {
	if inside || lr.real == "" || !strings.HasPrefix(p, "/") {
		return "", false
	}
	dir, name := path.Split(p)
	real, ok := lr.dirs[dir]
	if !ok {
		if r, err := filepath.EvalSymlinks(filepath.FromSlash(dir)); err == nil {
			real = filepath.ToSlash(r)
		}
		lr.dirs[dir] = real
	}
	if real == "" {
		return "", false
	}
	rel, ok := under(lr.real, path.Join(real, name))
	return rel, ok && rel != ""
}
