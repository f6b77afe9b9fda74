package delta

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// ErrNotATable reports a location without a Delta log.
var ErrNotATable = errors.New("delta: not a Delta table (no _delta_log commits)")

// LogError reports a log that cannot be replayed, such as a gap in versions.
type LogError struct {
	Version int64
	Reason  string
}

func (e *LogError) Error() string {
	return fmt.Sprintf("delta: invalid log at version %d: %s", e.Version, e.Reason)
}

// Table is a Delta table at a location.
type Table struct {
	Store Storage
}

// OpenLocal returns the table at a local directory (or file: URL).
func OpenLocal(location string) (*Table, error) {
	st, err := newLocalStorage(location)
	if err != nil {
		return nil, err
	}
	return &Table{Store: st}, nil
}

// Snapshot is the state of a table at one version.
type Snapshot struct {
	Version    int64
	Protocol   *Protocol
	Metadata   *Metadata
	Schema     *StructType
	CommitInfo *CommitInfo // of the snapshot's own commit, when present
	// Files are the live logical files, in a stable order (by path).
	Files []*Add
	// Tombstones are removes not superseded by a later add; vacuum uses them.
	Tombstones []*Remove
	Txns       map[string]int64
	Domains    map[string]*DomainMetadata
	// CheckpointVersion is the checkpoint replay started from, -1 for none.
	CheckpointVersion int64
}

// Snapshot returns the latest snapshot. It refuses tables this package cannot
// read (checkRead).
func (t *Table) Snapshot(ctx context.Context) (*Snapshot, error) { return t.SnapshotAt(ctx, -1) }

// LatestVersion is the table's latest version, from a listing of its
// log: nothing is read or replayed.
func (t *Table) LatestVersion(ctx context.Context) (int64, error) {
	ll, err := listLog(ctx, t.Store)
	if err != nil {
		return 0, fmt.Errorf("list the log: %w", err)
	}
	return resolveTarget(ll, -1)
}

// SnapshotAt returns the snapshot at version (-1 for latest).
func (t *Table) SnapshotAt(ctx context.Context, version int64) (*Snapshot, error) {
	ll, err := listLog(ctx, t.Store)
	if err != nil {
		return nil, fmt.Errorf("load snapshot: %w", err)
	}
	target, err := resolveTarget(ll, version)
	if err != nil {
		return nil, err
	}
	hint := readLastCheckpoint(ctx, t.Store)
	for _, c := range checkpointCandidates(ll, target, hint) {
		snap, err := t.replayFrom(ctx, ll, &c, target)
		if err == nil {
			return snap, nil
		}
		var le *LogError
		var fe *UnsupportedFeatureError
		var pe *ProtocolVersionError
		if errors.As(err, &le) || errors.As(err, &fe) || errors.As(err, &pe) || ctx.Err() != nil {
			return nil, err
		}
		// An unreadable checkpoint: fall back to an older one or to the log.
	}
	return t.replayFrom(ctx, ll, nil, target)
}

func resolveTarget(ll *logListing, version int64) (int64, error) {
	latest, ok := ll.latestCommit()
	for _, c := range ll.checkpoints {
		if c.Version > latest {
			latest, ok = c.Version, true
		}
	}
	if !ok {
		return 0, ErrNotATable
	}
	if version < 0 {
		return latest, nil
	}
	if version > latest {
		return 0, fmt.Errorf("delta: version %d does not exist, latest is %d", version, latest)
	}
	return version, nil
}

// checkpointCandidates lists complete checkpoints at or below target, newest
// first; at equal versions the one _last_checkpoint names comes first.
func checkpointCandidates(ll *logListing, target int64, hint *LastCheckpoint) []checkpoint {
	var out []checkpoint
	for _, c := range ll.checkpoints {
		if c.Version <= target {
			out = append(out, c)
		}
	}
	matches := func(c checkpoint) bool {
		if hint == nil || hint.Version != c.Version {
			return false
		}
		if hint.Parts != nil {
			return len(c.Files) == *hint.Parts && c.Files[0].Parts == *hint.Parts
		}
		if len(hint.V2Checkpoint) > 0 {
			return c.Files[0].UUID != "" && strings.Contains(string(hint.V2Checkpoint), c.Files[0].UUID)
		}
		return c.Files[0].UUID == "" && c.Files[0].Parts == 0
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Version != out[j].Version {
			return out[i].Version > out[j].Version
		}
		return matches(out[i]) && !matches(out[j])
	})
	return out
}

// replayFrom builds the snapshot at target from checkpoint c (nil: from
// version 0) and the commits after it, which must all be present.
func (t *Table) replayFrom(ctx context.Context, ll *logListing, c *checkpoint, target int64) (*Snapshot, error) {
	r := newReplay(t.Store.TableRoot())
	start := int64(0)
	if c != nil {
		acts, err := readCheckpoint(ctx, t.Store, *c)
		if err != nil {
			return nil, err
		}
		if err := r.apply(acts, false); err != nil {
			return nil, fmt.Errorf("checkpoint %d: %w", c.Version, err)
		}
		start = c.Version + 1
	}
	for v := start; v <= target; v++ {
		name, ok := ll.commits[v]
		if !ok {
			return nil, missingCommit(ll, v, c)
		}
		b, err := readAll(ctx, t.Store, name)
		if err != nil {
			return nil, err
		}
		acts, err := ParseActions(b)
		if err != nil {
			return nil, &LogError{Version: v, Reason: err.Error()}
		}
		if err := r.apply(acts, v == target); err != nil {
			return nil, &LogError{Version: v, Reason: err.Error()}
		}
	}
	return r.snapshot(target, c)
}

func missingCommit(ll *logListing, v int64, c *checkpoint) error {
	if v == 0 && c == nil {
		return &LogError{Version: 0, Reason: "no checkpoint and no commit 0: the log was cleaned up or is incomplete"}
	}
	next := int64(-1)
	for w := range ll.commits {
		if w > v && (next < 0 || w < next) {
			next = w
		}
	}
	return &LogError{Version: v, Reason: fmt.Sprintf("commit missing, versions are not contiguous (next present: %d)", next)}
}

type replay struct {
	root       Root // the table's, which file keys are canonical in
	protocol   *Protocol
	metadata   *Metadata
	commitInfo *CommitInfo
	files      map[FileKey]*Add
	tombstones map[FileKey]*Remove
	txns       map[string]int64
	domains    map[string]*DomainMetadata
}

func newReplay(root Root) *replay {
	return &replay{root: root, files: map[FileKey]*Add{}, tombstones: map[FileKey]*Remove{},
		txns: map[string]int64{}, domains: map[string]*DomainMetadata{}}
}

// apply applies one version's actions in order; last marks the snapshot's
// own commit, whose commitInfo is kept.
func (r *replay) apply(acts []Action, last bool) error {
	for _, a := range acts {
		switch {
		case a.Protocol != nil:
			r.protocol = a.Protocol
		case a.MetaData != nil:
			r.metadata = a.MetaData
		case a.Add != nil:
			k, err := a.Add.Key(r.root)
			if err != nil {
				return err
			}
			r.files[k] = a.Add
			delete(r.tombstones, k)
		case a.Remove != nil:
			k, err := a.Remove.Key(r.root)
			if err != nil {
				return err
			}
			delete(r.files, k)
			r.tombstones[k] = a.Remove
		case a.Txn != nil:
			r.txns[a.Txn.AppID] = a.Txn.Version
		case a.DomainMetadata != nil:
			if a.DomainMetadata.Removed {
				delete(r.domains, a.DomainMetadata.Domain)
			} else {
				r.domains[a.DomainMetadata.Domain] = a.DomainMetadata
			}
		case a.CommitInfo != nil && last:
			r.commitInfo = a.CommitInfo
		}
	}
	return nil
}

func (r *replay) snapshot(version int64, c *checkpoint) (*Snapshot, error) {
	if r.protocol == nil {
		return nil, &LogError{Version: version, Reason: "no protocol action"}
	}
	if r.metadata == nil {
		return nil, &LogError{Version: version, Reason: "no metaData action"}
	}
	if err := checkRead(r.protocol); err != nil {
		return nil, err
	}
	schema, err := r.metadata.Schema()
	if err != nil {
		return nil, &LogError{Version: version, Reason: err.Error()}
	}
	s := &Snapshot{Version: version, Protocol: r.protocol, Metadata: r.metadata, Schema: schema,
		CommitInfo: r.commitInfo, Txns: r.txns, Domains: r.domains, CheckpointVersion: -1}
	if c != nil {
		s.CheckpointVersion = c.Version
	}
	s.Files = byKey(r.files)
	s.Tombstones = byKey(r.tombstones)
	return s, nil
}

// byKey returns the map's values ordered by key.
func byKey[V any](m map[FileKey]V) []V {
	keys := make([]FileKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareKeys)
	out := make([]V, len(keys))
	for i, k := range keys {
		out[i] = m[k]
	}
	return out
}

func compareKeys(a, b FileKey) int {
	if c := strings.Compare(a.Path, b.Path); c != 0 {
		return c
	}
	return strings.Compare(a.DV, b.DV)
}

// Config returns a table property, or def when it is not set.
func (s *Snapshot) Config(key, def string) string {
	if v, ok := s.Metadata.Configuration[key]; ok {
		return v
	}
	return def
}
