package delta

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
)

// Action is one line of a commit file or one row of a checkpoint: exactly one
// of its fields is set. Unknown action kinds are kept out (the protocol asks
// readers to ignore them).
type Action struct {
	Protocol           *Protocol           `json:"protocol,omitempty"`
	MetaData           *Metadata           `json:"metaData,omitempty"`
	Add                *Add                `json:"add,omitempty"`
	Remove             *Remove             `json:"remove,omitempty"`
	Txn                *Txn                `json:"txn,omitempty"`
	CommitInfo         *CommitInfo         `json:"commitInfo,omitempty"`
	DomainMetadata     *DomainMetadata     `json:"domainMetadata,omitempty"`
	CheckpointMetadata *CheckpointMetadata `json:"checkpointMetadata,omitempty"`
	Sidecar            *Sidecar            `json:"sidecar,omitempty"`
}

// Protocol holds the versions and table features a client must implement.
type Protocol struct {
	MinReaderVersion int      `json:"minReaderVersion"`
	MinWriterVersion int      `json:"minWriterVersion"`
	ReaderFeatures   []string `json:"readerFeatures,omitempty"`
	WriterFeatures   []string `json:"writerFeatures,omitempty"`
}

// Format is the data file format of a table (always parquet in practice).
type Format struct {
	Provider string            `json:"provider"`
	Options  map[string]string `json:"options"`
}

// Metadata is the metaData action: schema, partitioning and table properties.
type Metadata struct {
	ID               string            `json:"id"`
	Name             string            `json:"name,omitempty"`
	Description      string            `json:"description,omitempty"`
	Format           Format            `json:"format"`
	SchemaString     string            `json:"schemaString"`
	PartitionColumns []string          `json:"partitionColumns"`
	Configuration    map[string]string `json:"configuration"`
	CreatedTime      *int64            `json:"createdTime,omitempty"`
}

// Schema parses SchemaString. Very old logs may have none: that is an empty
// schema (such a table holds no readable columns).
func (m *Metadata) Schema() (*StructType, error) {
	if m.SchemaString == "" {
		return &StructType{}, nil
	}
	return parseSchema(m.SchemaString)
}

// Add is a logical file entering the table. Path is as stored in the log
// (URL-encoded); DecodedPath gives the file system path.
type Add struct {
	Path                    string             `json:"path"`
	PartitionValues         map[string]*string `json:"partitionValues"`
	Size                    int64              `json:"size"`
	ModificationTime        int64              `json:"modificationTime"`
	DataChange              bool               `json:"dataChange"`
	Stats                   string             `json:"stats,omitempty"`
	Tags                    map[string]string  `json:"tags,omitempty"`
	DeletionVector          *DeletionVector    `json:"deletionVector,omitempty"`
	BaseRowID               *int64             `json:"baseRowId,omitempty"`
	DefaultRowCommitVersion *int64             `json:"defaultRowCommitVersion,omitempty"`
	ClusteringProvider      string             `json:"clusteringProvider,omitempty"`
}

// DecodedPath is Path with its URL encoding undone.
func (a *Add) DecodedPath() (string, error) { return decodePath(a.Path) }

// Key is the logical file's primary key in the table at root: the
// canonical path (Root.Canonical) and the deletion vector's unique id.
func (a *Add) Key(root Root) (FileKey, error) { return fileKey(root, a.Path, a.DeletionVector) }

// ParsedStats parses the stats JSON; a file without stats gives nil.
func (a *Add) ParsedStats() (*Stats, error) { return parseStats(a.Stats) }

// Remove is a logical file leaving the table; it stays as a tombstone for
// vacuum until its retention runs out.
type Remove struct {
	Path                    string             `json:"path"`
	DeletionTimestamp       *int64             `json:"deletionTimestamp,omitempty"`
	DataChange              bool               `json:"dataChange"`
	ExtendedFileMetadata    *bool              `json:"extendedFileMetadata,omitempty"`
	PartitionValues         map[string]*string `json:"partitionValues,omitempty"`
	Size                    *int64             `json:"size,omitempty"`
	Stats                   string             `json:"stats,omitempty"`
	Tags                    map[string]string  `json:"tags,omitempty"`
	DeletionVector          *DeletionVector    `json:"deletionVector,omitempty"`
	BaseRowID               *int64             `json:"baseRowId,omitempty"`
	DefaultRowCommitVersion *int64             `json:"defaultRowCommitVersion,omitempty"`
}

// Key is the removed logical file's primary key.
func (r *Remove) Key(root Root) (FileKey, error) { return fileKey(root, r.Path, r.DeletionVector) }

// Txn records the last version an application committed, for idempotent writes.
type Txn struct {
	AppID       string `json:"appId"`
	Version     int64  `json:"version"`
	LastUpdated *int64 `json:"lastUpdated,omitempty"`
}

// CommitInfo is provenance: what operation wrote a version and with which
// parameters. Fields of other writers beyond these are not kept.
type CommitInfo struct {
	Timestamp           int64          `json:"timestamp,omitempty"`
	Operation           string         `json:"operation,omitempty"`
	OperationParameters map[string]any `json:"operationParameters,omitempty"`
	ReadVersion         *int64         `json:"readVersion,omitempty"`
	IsBlindAppend       *bool          `json:"isBlindAppend,omitempty"`
	OperationMetrics    map[string]any `json:"operationMetrics,omitempty"`
	EngineInfo          string         `json:"engineInfo,omitempty"`
	TxnID               string         `json:"txnId,omitempty"`
	// InCommitTimestamp is the commit's timestamp under the
	// inCommitTimestamp table feature (milliseconds since the epoch).
	InCommitTimestamp *int64 `json:"inCommitTimestamp,omitempty"`
}

// DomainMetadata is named configuration owned by a feature or an application.
type DomainMetadata struct {
	Domain        string `json:"domain"`
	Configuration string `json:"configuration"`
	Removed       bool   `json:"removed"`
}

// CheckpointMetadata marks a v2 checkpoint.
type CheckpointMetadata struct {
	Version int64             `json:"version"`
	Tags    map[string]string `json:"tags,omitempty"`
}

// Sidecar points a v2 checkpoint at a file of add and remove actions under
// _delta_log/_sidecars.
type Sidecar struct {
	Path             string            `json:"path"`
	SizeInBytes      int64             `json:"sizeInBytes"`
	ModificationTime int64             `json:"modificationTime"`
	Tags             map[string]string `json:"tags,omitempty"`
}

// FileKey identifies a logical file: the same data file with another deletion
// vector is another logical file. Path is canonical (Root.Canonical), so
// an add and a remove of one file under two forms of its path match.
type FileKey struct {
	Path string
	DV   string
}

func fileKey(root Root, p string, dv *DeletionVector) (FileKey, error) {
	d, _, err := root.Canonical(p)
	if err != nil {
		return FileKey{}, err
	}
	k := FileKey{Path: d}
	if dv != nil {
		k.DV = dv.UniqueID()
	}
	return k, nil
}

func decodePath(p string) (string, error) {
	d, err := url.PathUnescape(p)
	if err != nil {
		return "", fmt.Errorf("decode file path %q: %w", p, err)
	}
	return d, nil
}

// ParseActions decodes a newline-delimited JSON commit file. Blank lines are
// skipped; a line that is not JSON is an error naming its number.
func ParseActions(b []byte) ([]Action, error) {
	var out []Action
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<30)
	line := 0
	for sc.Scan() {
		line++
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		var a Action
		if err := json.Unmarshal(raw, &a); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		out = append(out, a)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// EncodeActions writes actions as newline-delimited JSON, one per line.
func EncodeActions(actions []Action) ([]byte, error) {
	var buf bytes.Buffer
	for i := range actions {
		b, err := json.Marshal(&actions[i])
		if err != nil {
			return nil, fmt.Errorf("encode action %d: %w", i, err)
		}
		if bytes.Equal(b, []byte("{}")) {
			return nil, fmt.Errorf("encode action %d: no action set", i)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	return buf.Bytes(), nil
}
