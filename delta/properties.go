package delta

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Table properties (metaData.configuration keys) whose values this package
// checks and which SetProperties may change: they tune writers, statistics
// and retention, and need no protocol change.
const (
	PropTargetFileSize           = "delta.targetFileSize"
	PropDeletedFileRetention     = "delta.deletedFileRetentionDuration"
	propLogRetention             = "delta.logRetentionDuration"
	PropCheckpointInterval       = "delta.checkpointInterval"
	propDataSkippingNumIndexCols = "delta.dataSkippingNumIndexedCols"
	propDataSkippingStatsColumns = "delta.dataSkippingStatsColumns"
)

// SettableProperties are the delta.* properties SetProperties changes;
// any key outside the delta. namespace may be set too.
var SettableProperties = []string{
	PropTargetFileSize, PropDeletedFileRetention, propLogRetention, PropCheckpointInterval,
	propDataSkippingNumIndexCols, propDataSkippingStatsColumns,
}

// protocolProperties name, for properties that switch a table feature on,
// the feature they need: changing them is a protocol upgrade.
var protocolProperties = map[string]string{
	"delta.enableDeletionVectors":     "deletionVectors",
	"delta.columnMapping.mode":        "columnMapping",
	"delta.columnMapping.maxColumnId": "columnMapping",
	"delta.enableChangeDataFeed":      "changeDataFeed",
	"delta.appendOnly":                "appendOnly",
	"delta.enableInCommitTimestamps":  "inCommitTimestamp",
	"delta.enableRowTracking":         "rowTracking",
	"delta.enableTypeWidening":        "typeWidening",
	"delta.checkpointPolicy":          "v2Checkpoint",
}

// PropertyError refuses a table property change this package does not make.
type PropertyError struct {
	Key    string
	Reason string
}

func (e *PropertyError) Error() string {
	return fmt.Sprintf("delta: table property %s: %s", e.Key, e.Reason)
}

// CheckProperty checks that key may be set to value (unset when unset is
// true) by SetProperties: a delta.* key must be one of SettableProperties,
// and its value must be what Delta readers parse. Properties that switch a
// table feature on or off are refused, naming the feature: they need a
// protocol upgrade this package does not perform.
func CheckProperty(key, value string, unset bool) error {
	if !strings.HasPrefix(key, "delta.") {
		return nil
	}
	if !slices.Contains(SettableProperties, key) {
		return &PropertyError{Key: key, Reason: protocolReason(key)}
	}
	if unset {
		return nil
	}
	return checkPropertyValue(key, value)
}

func protocolReason(key string) string {
	feature, ok := protocolProperties[key]
	if !ok && strings.HasPrefix(key, "delta.feature.") {
		feature, ok = strings.TrimPrefix(key, "delta.feature."), true
	}
	if ok && feature != "" {
		return fmt.Sprintf("changing it needs the table feature %q, a protocol upgrade geocompact does not perform; "+
			"change it with Spark or delta-rs (ALTER TABLE ... SET TBLPROPERTIES)", feature)
	}
	return fmt.Sprintf("not a property geocompact changes on a Delta table; the delta.* properties it changes are %s",
		strings.Join(SettableProperties, ", "))
}

func checkPropertyValue(key, value string) error {
	bad := func(want string) error {
		return &PropertyError{Key: key, Reason: fmt.Sprintf("value %q: want %s", value, want)}
	}
	switch key {
	case PropTargetFileSize:
		if n, err := strconv.ParseInt(value, 10, 64); err != nil || n <= 0 {
			return bad("a positive number of bytes")
		}
	case PropDeletedFileRetention, propLogRetention:
		d, err := ParseInterval(value)
		if err != nil {
			return &PropertyError{Key: key, Reason: err.Error()}
		}
		if d <= 0 {
			return bad(`a positive interval such as "interval 7 days"`)
		}
	case PropCheckpointInterval:
		if n, err := strconv.Atoi(value); err != nil || n <= 0 {
			return bad("a positive whole number of commits")
		}
	case propDataSkippingNumIndexCols:
		if n, err := strconv.Atoi(value); err != nil || n < -1 {
			return bad("a whole number of columns, or -1 for all")
		}
	case propDataSkippingStatsColumns:
		if strings.TrimSpace(value) == "" {
			return bad("a comma-separated list of columns")
		}
	}
	return nil
}

// PropertiesCommit is what SetProperties committed.
type PropertiesCommit struct {
	// Version is the committed version; ReadVersion the one the change
	// was made on (the last one read, after retries).
	Version, ReadVersion int64
	// Configuration is the table's configuration afterwards.
	Configuration map[string]string
}

// SetProperties sets and unsets table properties (metaData.configuration)
// in one commit: a metaData action with the new configuration and the
// same id, schema and partition columns, and a commitInfo with operation
// SET TBLPROPERTIES (UNSET TBLPROPERTIES when it only unsets). Every key
// is checked with CheckProperty first, and the table must be writable
// (CheckWrite). The commit is a put-if-absent of the next version; on
// losing the race the winning commits are read, and the change is made
// again on the new version unless one of them changed the protocol or
// metadata (a *ConflictError), up to maxAttempts times.
func (t *Table) SetProperties(ctx context.Context, set map[string]string, unset []string, maxAttempts int) (*PropertiesCommit, error) {
	for _, k := range slices.Sorted(maps.Keys(set)) {
		if err := CheckProperty(k, set[k], false); err != nil {
			return nil, err
		}
	}
	for _, k := range unset {
		if err := CheckProperty(k, "", true); err != nil {
			return nil, err
		}
	}
	s, err := t.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	if err := CheckWrite(s.Protocol, s.Metadata); err != nil {
		return nil, err
	}
	actions := propertiesActions(s, set, unset)
	read := s.Version
	for attempt := 0; attempt < max(maxAttempts, 1); attempt++ {
		err := Commit(ctx, t, read+1, actions)
		var ve *VersionExistsError
		if !errors.As(err, &ve) {
			if err != nil {
				return nil, fmt.Errorf("set table properties: %w", err)
			}
			_, _ = t.MaybeCheckpoint(ctx, read+1) // the commit stands; a later commit checkpoints again
			return &PropertiesCommit{Version: read + 1, ReadVersion: read, Configuration: actions[1].MetaData.Configuration}, nil
		}
		if err := checkRewriteConflicts(ctx, t, read, read+1, nil); err != nil {
			return nil, err
		}
		read++
		rv := read
		actions[0].CommitInfo.ReadVersion = &rv
	}
	return nil, fmt.Errorf("set table properties: gave up after %d attempts: %w", maxAttempts, &VersionExistsError{Version: read})
}

// propertiesActions are the commitInfo and metaData actions that change
// s's configuration.
func propertiesActions(s *Snapshot, set map[string]string, unset []string) []Action {
	md := *s.Metadata
	md.Configuration = maps.Clone(s.Metadata.Configuration)
	if md.Configuration == nil {
		md.Configuration = map[string]string{}
	}
	maps.Copy(md.Configuration, set)
	for _, k := range unset {
		delete(md.Configuration, k)
	}
	md.PartitionColumns = slices.Clone(s.Metadata.PartitionColumns)
	if md.PartitionColumns == nil {
		md.PartitionColumns = []string{}
	}
	op, params := "SET TBLPROPERTIES", map[string]any{"properties": set}
	if len(unset) > 0 {
		params["unsetPropertyKeys"] = unset
	}
	if len(set) == 0 {
		op, params = "UNSET TBLPROPERTIES", map[string]any{"propertyKeys": unset, "ifExists": true}
	}
	return []Action{NewCommitInfo(op, params, s.Version, nil), {MetaData: &md}}
}
