package delta

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"time"
)

// VersionInfo is one version of a table's log as its history shows it.
type VersionInfo struct {
	Version int64
	// Timestamp is when the version was committed: the commitInfo's
	// inCommitTimestamp, else its timestamp, else the commit file's
	// modification time.
	Timestamp time.Time
	// Info is the version's commitInfo; nil when the writer recorded none.
	Info *CommitInfo
}

// History returns the versions whose commit files are still in the log,
// oldest first. Versions before the log was cleaned up survive only in a
// checkpoint, without provenance, and are left out. It reads each commit
// file's commitInfo line and nothing else, and does not replay the log, so
// it works on tables this package cannot otherwise read.
func (t *Table) History(ctx context.Context) ([]VersionInfo, error) {
	files, err := t.Store.List(ctx, LogDir, false)
	if err != nil {
		return nil, fmt.Errorf("list log: %w", err)
	}
	var out []VersionInfo
	for _, f := range files {
		m := commitRe.FindStringSubmatch(path.Base(f.Path))
		if m == nil {
			continue
		}
		b, err := readAll(ctx, t.Store, f.Path)
		if err != nil {
			return nil, fmt.Errorf("read commit %s: %w", f.Path, err)
		}
		c := VersionInfo{Version: atoi64(m[1]), Timestamp: f.ModTime}
		if c.Info, err = commitInfoOf(b); err != nil {
			return nil, &LogError{Version: c.Version, Reason: err.Error()}
		}
		if ci := c.Info; ci != nil && ci.InCommitTimestamp != nil {
			c.Timestamp = time.UnixMilli(*ci.InCommitTimestamp)
		} else if ci != nil && ci.Timestamp != 0 {
			c.Timestamp = time.UnixMilli(ci.Timestamp)
		}
		c.Timestamp = c.Timestamp.UTC()
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, ErrNotATable
	}
	slices.SortFunc(out, func(a, b VersionInfo) int { return cmp.Compare(a.Version, b.Version) })
	return out, nil
}

// commitInfoOf returns the commitInfo action of a commit file, or nil. Only
// lines that mention commitInfo are decoded.
func commitInfoOf(b []byte) (*CommitInfo, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<30)
	for line := 1; sc.Scan(); line++ {
		raw := sc.Bytes()
		if !bytes.Contains(raw, []byte(`"commitInfo"`)) {
			continue
		}
		var a struct {
			CommitInfo *CommitInfo `json:"commitInfo"`
		}
		if err := json.Unmarshal(raw, &a); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if a.CommitInfo != nil {
			return a.CommitInfo, nil
		}
	}
	return nil, sc.Err()
}
