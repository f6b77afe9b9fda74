package icebergtable

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	format "github.com/geocompact/geocompact/table"
)

// Ingest history. Every ingest commit records what it appended in its
// snapshot summary under SourcesKey: a JSON array of {"sha256": digest of
// the file's bytes, "name": file name cut to maxNameLen bytes}, so that no
// file name, whatever bytes it holds, can add an entry of its own. A file
// whose digest appears in the summaries of the branch head's ancestry (at
// most MaxLookback snapshots back, and only snapshots not yet expired) is
// already ingested. Matching is by content; the name is for the message.
//
// Earlier versions wrote one line per file, "<digest> <name>", which a
// name holding a newline could forge. Such a summary is trusted only when
// every line is a digest and a name and the lines are exactly as many as
// the files the commit recorded (FilesKey); any other summary is not read
// (its files count as not ingested) and a warning says so.
const (
	// SourcesKey is the snapshot summary property holding an ingest
	// commit's sources.
	SourcesKey = "geocompact.ingest.sources"
	// FilesKey is the snapshot summary property holding how many files
	// an ingest commit appended.
	FilesKey = "geocompact.ingest.files"
	// MaxLookback bounds how many ancestor snapshots are searched.
	MaxLookback = 10000
	maxNameLen  = 128
)

// ingested returns the files of srcs the table's history already holds.
// A summary whose sources cannot be read is logged and skipped.
func ingested(meta table.Metadata, srcs []format.Source, log *slog.Logger) []format.Skipped {
	want := map[string]format.Source{}
	for _, s := range srcs {
		want[s.Digest] = s
	}
	var out []format.Skipped
	snap := meta.CurrentSnapshot()
	for i := 0; snap != nil && i < MaxLookback && len(want) > 0; i++ {
		if snap.Summary != nil {
			entries, err := parseSources(snap.Summary.Properties)
			if err != nil {
				log.Warn("ingest history unreadable; its files count as not ingested", "snapshot_id", snap.SnapshotID, "error", err)
			}
			for _, e := range entries {
				if s, ok := want[e.Digest]; ok {
					id := snap.SnapshotID
					out = append(out, format.Skipped{Source: s, Previous: e.Name, Commit: &id})
					delete(want, e.Digest)
				}
			}
		}
		if snap.ParentSnapshotID == nil {
			break
		}
		snap = meta.SnapshotByID(*snap.ParentSnapshotID)
	}
	return out
}

// sourceEntry is one file an ingest commit recorded.
type sourceEntry struct {
	Digest string `json:"sha256"`
	Name   string `json:"name"`
}

// errSources marks ingest history that cannot be read.
var errSources = errors.New("ingest: unreadable sources")

// parseSources reads the SourcesKey entry of a snapshot summary: the JSON
// array, or the older line format when it can be trusted (see SourcesKey).
// No entry gives nothing; one that cannot be read gives an error.
func parseSources(props map[string]string) ([]sourceEntry, error) {
	v, ok := props[SourcesKey]
	if !ok || v == "" {
		return nil, nil
	}
	if strings.HasPrefix(v, "[") {
		var entries []sourceEntry
		if err := json.Unmarshal([]byte(v), &entries); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", errSources, SourcesKey, err)
		}
		for _, e := range entries {
			if !isDigest(e.Digest) {
				return nil, fmt.Errorf("%w: %s: %q is not a sha256 digest", errSources, SourcesKey, truncate(e.Digest))
			}
		}
		return entries, nil
	}
	return parseLegacySources(v, props[FilesKey])
}

// parseLegacySources reads the line format "<digest> <name>" per file,
// trusting it only when the lines are exactly files in number and each is
// a digest and a name: a name holding a newline adds a line.
func parseLegacySources(v, files string) ([]sourceEntry, error) {
	lines := strings.Split(v, "\n")
	if n, err := strconv.Atoi(files); err != nil || n != len(lines) {
		return nil, fmt.Errorf("%w: %s holds %d lines where %s=%q records the files appended", errSources, SourcesKey, len(lines), FilesKey, files)
	}
	entries := make([]sourceEntry, len(lines))
	for i, line := range lines {
		digest, name, ok := strings.Cut(line, " ")
		if !ok || !isDigest(digest) {
			return nil, fmt.Errorf("%w: %s line %d is not \"<sha256> <name>\"", errSources, SourcesKey, i+1)
		}
		entries[i] = sourceEntry{Digest: digest, Name: name}
	}
	return entries, nil
}

// isDigest reports whether s is a hex sha256 as digestFiles writes it.
func isDigest(s string) bool {
	if len(s) != 2*sha256.Size {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}

// truncate shortens s for a message.
func truncate(s string) string {
	if len(s) <= 80 {
		return s
	}
	return s[:80] + "…"
}

// sourcesSummary is the SourcesKey value recording srcs.
func sourcesSummary(srcs []format.Source) string {
	entries := make([]sourceEntry, len(srcs))
	for i, s := range srcs {
		name := filepath.Base(s.Path)
		if len(name) > maxNameLen {
			name = strings.ToValidUTF8(name[:maxNameLen], "")
		}
		entries[i] = sourceEntry{Digest: s.Digest, Name: name}
	}
	b, err := json.Marshal(entries)
	if err != nil {
		panic(err) // strings and digests always encode
	}
	return string(b)
}

// duplicateError reports files a concurrent ingest committed between this
// ingest's read of the table and its commit.
type duplicateError struct{ found []format.Skipped }

func (e *duplicateError) Error() string {
	return fmt.Sprintf("%d file(s) were ingested concurrently", len(e.found))
}

// dedupCatalog checks, right before each commit attempt reaches the
// catalog, that the table's current history holds none of the pending
// files. The commit asserts the branch head it was built on, so a head that
// moves after the check fails the attempt, and the retry checks again: two
// concurrent ingests of one file land it exactly once.
type dedupCatalog struct {
	catalog.Catalog
	pending *[]format.Source
	log     *slog.Logger
}

// LoadTable loads through the wrapped catalog and binds commits to c.
func (c *dedupCatalog) LoadTable(ctx context.Context, ident table.Identifier) (*table.Table, error) {
	t, err := c.Catalog.LoadTable(ctx, ident)
	if err != nil {
		return nil, err
	}
	return table.New(t.Identifier(), t.Metadata(), t.MetadataLocation(), t.FS, c), nil
}

// CommitTable refuses the commit with a *duplicateError when a pending
// file is in the table's history, and forwards it otherwise.
func (c *dedupCatalog) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	if len(*c.pending) > 0 {
		cur, err := c.Catalog.LoadTable(ctx, ident)
		if err != nil && !errors.Is(err, catalog.ErrNoSuchTable) {
			return nil, "", fmt.Errorf("check ingest history: %w", err)
		}
		if err == nil {
			if found := ingested(cur.Metadata(), *c.pending, c.log); len(found) > 0 {
				return nil, "", &duplicateError{found: found}
			}
		}
	}
	return c.Catalog.CommitTable(ctx, ident, reqs, updates)
}
