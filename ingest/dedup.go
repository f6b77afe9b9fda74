package ingest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	format "github.com/geocompact/geocompact/table"
)

// source is one file to ingest with its content digest.
type source = format.Source

// ExpandFiles replaces each directory in paths by the *.parquet files in it,
// sorted, descending into subdirectories only when recursive is set.
func ExpandFiles(paths []string, recursive bool) ([]string, error) {
	var out []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil || !st.IsDir() {
			out = append(out, p)
			continue
		}
		var found []string
		err = filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return err
			case d.IsDir() && q != p && !recursive:
				return filepath.SkipDir
			case !d.IsDir() && strings.HasSuffix(d.Name(), ".parquet"):
				found = append(found, q)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", p, err)
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%w: directory %s holds no *.parquet files (%w)", ErrConfig, p, ErrNoFiles)
		}
		slices.Sort(found)
		out = append(out, found...)
	}
	return out, nil
}

// expandAndDigest expands directories among paths (see ExpandFiles) and
// computes every file's sha256.
func expandAndDigest(paths []string, recursive bool) ([]source, error) {
	files, err := ExpandFiles(paths, recursive)
	if err != nil {
		return nil, err
	}
	return digestFiles(files)
}

// digestFiles computes every file's sha256.
func digestFiles(paths []string) ([]source, error) {
	out := make([]source, 0, len(paths))
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", p, err)
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", p, err)
		}
		out = append(out, source{Path: p, Digest: hex.EncodeToString(h.Sum(nil))})
	}
	return out, nil
}

// dedupBatch drops files whose content appears earlier in the batch.
func dedupBatch(srcs []source) ([]source, []Skipped) {
	first := map[string]string{}
	var keep []source
	var skipped []Skipped
	for _, s := range srcs {
		if prev, ok := first[s.Digest]; ok {
			skipped = append(skipped, Skipped{Source: s, Previous: prev})
			continue
		}
		first[s.Digest] = s.Path
		keep = append(keep, s)
	}
	return keep, skipped
}
