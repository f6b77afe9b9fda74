package delta

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"
)

// VersionExistsError reports that another writer committed Version first.
// Nothing was written; the caller may check for conflicts and retry on the
// next version.
type VersionExistsError struct {
	Version int64
}

func (e *VersionExistsError) Error() string {
	return fmt.Sprintf("delta: version %d was committed concurrently", e.Version)
}

// ConflictError reports a concurrent commit that invalidates ours: it removed
// or changed a file we replace, or changed the protocol or metadata. Retrying
// the same actions would be wrong; the operation must be planned again.
type ConflictError struct {
	Version int64 // the winning commit
	Path    string
	Reason  string
}

func (e *ConflictError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("delta: concurrent commit %d conflicts: %s", e.Version, e.Reason)
	}
	return fmt.Sprintf("delta: concurrent commit %d conflicts on %s: %s", e.Version, e.Path, e.Reason)
}

// Commit writes actions as version, atomically and only if no such version
// exists (put-if-absent). It returns *VersionExistsError when it lost the
// race: when the version exists and holds other actions than these. A
// put that finds the version holding exactly these bytes committed them
// (a store's client retrying a put whose reply was lost meets its own
// object); one whose version cannot be read back returns an error that
// is neither (its outcome is unknown).
func Commit(ctx context.Context, t *Table, version int64, actions []Action) error {
	if version < 0 {
		return fmt.Errorf("commit: negative version %d", version)
	}
	b, err := EncodeActions(actions)
	if err != nil {
		return fmt.Errorf("commit version %d: %w", version, err)
	}
	if err := t.Store.PutIfAbsent(ctx, CommitPath(version), b); err != nil {
		if !errors.Is(err, ErrExist) {
			return fmt.Errorf("commit version %d: %w", version, err)
		}
		got, rerr := readAll(ctx, t.Store, CommitPath(version))
		switch {
		case rerr != nil:
			return fmt.Errorf("commit version %d: the version exists and cannot be read to tell whose it is: %w", version, rerr)
		case !bytes.Equal(got, b):
			return &VersionExistsError{Version: version}
		}
	}
	return nil
}

// NewCommitInfo returns a commitInfo action for an operation, stamped now.
func NewCommitInfo(operation string, params map[string]any, readVersion int64, metrics map[string]any) Action {
	rv := readVersion
	blind := false
	return Action{CommitInfo: &CommitInfo{
		Timestamp: time.Now().UnixMilli(), Operation: operation, OperationParameters: params,
		ReadVersion: &rv, IsBlindAppend: &blind, OperationMetrics: metrics, EngineInfo: "geocompact",
	}}
}

// checkRewriteConflicts checks the commits after readVersion (up to and
// including through) against a data-preserving rewrite that removes the
// logical files in removed. A concurrent commit conflicts when it removes one
// of them, changes its deletion vector (a new add of the same path), or
// changes the protocol or metadata. Appends of new files do not conflict.
// Paths are compared in their canonical form (Root.Canonical), so a file
// is the same file whether a commit names it by a relative path or by an
// absolute URI.
func checkRewriteConflicts(ctx context.Context, t *Table, readVersion, through int64, removed []*Remove) error {
	root := t.Store.TableRoot()
	paths := make(map[string]bool, len(removed))
	for _, r := range removed {
		p, _, err := root.Canonical(r.Path)
		if err != nil {
			return err
		}
		paths[p] = true
	}
	for v := readVersion + 1; v <= through; v++ {
		b, err := readAll(ctx, t.Store, CommitPath(v))
		if err != nil {
			return fmt.Errorf("check conflicts: %w", err)
		}
		acts, err := ParseActions(b)
		if err != nil {
			return &LogError{Version: v, Reason: err.Error()}
		}
		if err := conflictIn(root, v, acts, paths); err != nil {
			return err
		}
	}
	return nil
}

// conflictIn finds the first action of version v that conflicts with a
// rewrite of paths (canonical in root). A path that does not resolve is
// compared as it stands, decoded.
func conflictIn(root Root, v int64, acts []Action, paths map[string]bool) error {
	canonical := func(raw string) string {
		if p, _, err := root.Canonical(raw); err == nil {
			return p
		}
		p, _ := decodePath(raw)
		return p
	}
	for _, a := range acts {
		switch {
		case a.Protocol != nil:
			return &ConflictError{Version: v, Reason: "the protocol changed"}
		case a.MetaData != nil:
			return &ConflictError{Version: v, Reason: "the table metadata changed"}
		case a.Remove != nil:
			if p := canonical(a.Remove.Path); paths[p] {
				return &ConflictError{Version: v, Path: p, Reason: "the file was removed"}
			}
		case a.Add != nil:
			if p := canonical(a.Add.Path); paths[p] {
				return &ConflictError{Version: v, Path: p, Reason: "the file's deletion vector changed"}
			}
		}
	}
	return nil
}

// CommitRewrite commits a data-preserving rewrite planned on readVersion. On
// losing a race it checks every commit since readVersion, up to the latest,
// with checkRewriteConflicts and, when none conflicts, retries after the
// latest; it puts at most maxAttempts times. It returns the committed
// version.
func CommitRewrite(ctx context.Context, t *Table, readVersion int64, actions []Action, maxAttempts int) (int64, error) {
	var removed []*Remove
	for _, a := range actions {
		if a.Remove != nil {
			removed = append(removed, a.Remove)
		}
	}
	v := readVersion + 1
	for attempt := 0; attempt < max(maxAttempts, 1); attempt++ {
		err := Commit(ctx, t, v, actions)
		var ve *VersionExistsError
		if !errors.As(err, &ve) {
			return v, err
		}
		ll, err := listLog(ctx, t.Store)
		if err != nil {
			return 0, fmt.Errorf("commit rewrite: %w", err)
		}
		latest, _ := ll.latestCommit()
		latest = max(latest, v)
		if err := checkRewriteConflicts(ctx, t, v-1, latest, removed); err != nil {
			return 0, err
		}
		v = latest + 1
	}
	return 0, fmt.Errorf("commit rewrite: gave up after %d attempts: %w", maxAttempts, &VersionExistsError{Version: v - 1})
}
