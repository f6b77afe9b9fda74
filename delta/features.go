package delta

import (
	"fmt"
	"slices"
	"strings"
)

// Highest protocol versions this package implements.
const (
	maxReaderVersion = 3
	maxWriterVersion = 7
)

// UnsupportedFeatureError refuses a table that needs a feature this package
// cannot honour. Op is "read" or "write"; nothing has been written when it is
// returned.
type UnsupportedFeatureError struct {
	Op      string
	Feature string
	Reason  string
}

func (e *UnsupportedFeatureError) Error() string {
	msg := fmt.Sprintf("delta: cannot %s table: feature %q is not supported", e.Op, e.Feature)
	if e.Reason != "" {
		msg += " (" + e.Reason + ")"
	}
	return msg
}

// ProtocolVersionError refuses a table whose protocol version is newer than
// this package implements.
type ProtocolVersionError struct {
	Op      string // "read" or "write"
	Version int
	Max     int
}

func (e *ProtocolVersionError) Error() string {
	kind := "reader"
	if e.Op == "write" {
		kind = "writer"
	}
	return fmt.Sprintf("delta: cannot %s table: min %s version %d, this build supports up to %d; upgrade geocompact",
		e.Op, kind, e.Version, e.Max)
}

// readerFeatures are the reader features whose requirements reads meet.
var readerFeatures = map[string]bool{
	"columnMapping":       true,
	"deletionVectors":     true,
	"timestampNtz":        true,
	"v2Checkpoint":        true,
	"vacuumProtocolCheck": true,
}

// writerFeature says whether writes honour a writer feature on this table;
// the reason explains a refusal.
type writerFeature func(md *Metadata, schema *StructType) (ok bool, reason string)

func always(*Metadata, *StructType) (bool, string) { return true, "" }

func inactiveIfColumnKey(key, what string) writerFeature {
	return func(_ *Metadata, s *StructType) (bool, string) {
		if s != nil && schemaHasMetadata(s, key) {
			return false, what + " are in use"
		}
		return true, ""
	}
}

func inactiveIfConfigPrefix(prefix, what string) writerFeature {
	return func(md *Metadata, _ *StructType) (bool, string) {
		for k := range md.Configuration {
			if strings.HasPrefix(k, prefix) {
				return false, what + " are in use"
			}
		}
		return true, ""
	}
}

func inactiveIfConfigTrue(key, what string) writerFeature {
	return func(md *Metadata, _ *StructType) (bool, string) {
		if strings.EqualFold(md.Configuration[key], "true") {
			return false, what + " are enabled"
		}
		return true, ""
	}
}

// writerFeatures lists the writer features writes can honour and when.
// Rewrites keep data unchanged (dataChange=false) and appends add whole files
// without deletion vectors; features that would need more of a writer are
// supported only while inactive.
var writerFeatures = map[string]writerFeature{
	"appendOnly":          always,
	"invariants":          inactiveIfColumnKey("delta.invariants", "column invariants"),
	"checkConstraints":    inactiveIfConfigPrefix("delta.constraints.", "CHECK constraints"),
	"changeDataFeed":      always,
	"generatedColumns":    inactiveIfColumnKey("delta.generationExpression", "generated columns"),
	"allowColumnDefaults": inactiveIfColumnKey("CURRENT_DEFAULT", "column defaults"),
	"columnMapping":       always,
	"identityColumns":     inactiveIfColumnKey("delta.identity.start", "identity columns"),
	"deletionVectors":     always,
	"timestampNtz":        always,
	"domainMetadata":      always,
	"v2Checkpoint":        always,
	"vacuumProtocolCheck": always,
	"inCommitTimestamp":   inactiveIfConfigTrue("delta.enableInCommitTimestamps", "in-commit timestamps"),
}

// legacyWriterFeatures are the features implied by writer versions 2 to 6.
var legacyWriterFeatures = [][]string{
	2: {"appendOnly", "invariants"},
	3: {"checkConstraints"},
	4: {"changeDataFeed", "generatedColumns"},
	5: {"columnMapping"},
	6: {"identityColumns"},
}

// checkRead returns an error when reading a table with this protocol would
// ignore a requirement: a reader version above maxReaderVersion or a reader
// feature this package does not implement.
func checkRead(p *Protocol) error {
	if p == nil {
		return fmt.Errorf("delta: table has no protocol action")
	}
	if p.MinReaderVersion > maxReaderVersion || p.MinReaderVersion < 1 {
		return &ProtocolVersionError{Op: "read", Version: p.MinReaderVersion, Max: maxReaderVersion}
	}
	if p.MinReaderVersion < 3 {
		return nil
	}
	for _, f := range p.ReaderFeatures {
		if !readerFeatures[f] {
			return &UnsupportedFeatureError{Op: "read", Feature: f}
		}
	}
	return nil
}

// CheckWrite returns an error when writing to a table with this protocol and
// metadata could break a requirement. It includes checkRead, since writers
// read the table first.
func CheckWrite(p *Protocol, md *Metadata) error {
	if err := checkRead(p); err != nil {
		return err
	}
	if p.MinWriterVersion > maxWriterVersion || p.MinWriterVersion < 1 {
		return &ProtocolVersionError{Op: "write", Version: p.MinWriterVersion, Max: maxWriterVersion}
	}
	if md == nil {
		return fmt.Errorf("delta: table has no metaData action")
	}
	schema, err := md.Schema()
	if err != nil {
		return err
	}
	for _, f := range writerFeatureNames(p) {
		check, known := writerFeatures[f]
		if !known {
			return &UnsupportedFeatureError{Op: "write", Feature: f}
		}
		if ok, reason := check(md, schema); !ok {
			return &UnsupportedFeatureError{Op: "write", Feature: f, Reason: reason}
		}
	}
	return nil
}

func writerFeatureNames(p *Protocol) []string {
	if p.MinWriterVersion >= 7 {
		return p.WriterFeatures
	}
	var out []string
	for v := 2; v <= p.MinWriterVersion && v < len(legacyWriterFeatures); v++ {
		out = append(out, legacyWriterFeatures[v]...)
	}
	return out
}

// HasReaderFeature says whether the table lists a reader feature (or, for
// columnMapping, is on reader version 2, which implies it).
func (p *Protocol) HasReaderFeature(name string) bool {
	if name == "columnMapping" && p.MinReaderVersion == 2 {
		return true
	}
	return p.MinReaderVersion >= 3 && slices.Contains(p.ReaderFeatures, name)
}

// HasWriterFeature says whether the table lists a writer feature, directly on
// writer version 7 or implied by a legacy writer version.
func (p *Protocol) HasWriterFeature(name string) bool {
	return slices.Contains(writerFeatureNames(p), name)
}

func schemaHasMetadata(t DataType, key string) bool {
	switch t := t.(type) {
	case *StructType:
		for _, f := range t.Fields {
			if _, ok := f.Metadata[key]; ok {
				return true
			}
			if schemaHasMetadata(f.Type, key) {
				return true
			}
		}
	case *ArrayType:
		return schemaHasMetadata(t.ElementType, key)
	case *MapType:
		return schemaHasMetadata(t.KeyType, key) || schemaHasMetadata(t.ValueType, key)
	}
	return false
}
