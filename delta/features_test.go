package delta

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestProtocolChecks(t *testing.T) {
	plain := &Metadata{SchemaString: `{"type":"struct","fields":[{"name":"a","type":"integer","nullable":true,"metadata":{}}]}`}
	withInvariant := &Metadata{SchemaString: `{"type":"struct","fields":[{"name":"a","type":"integer","nullable":true,` +
		`"metadata":{"delta.invariants":"{\"expression\":{\"expression\":\"a > 0\"}}"}}]}`}
	cases := []struct {
		name    string
		p       Protocol
		md      *Metadata
		readErr string // feature named in the read refusal, "" for none
		writeOK bool
		feature string // feature named in the write refusal
	}{
		{"legacy 1/2", Protocol{MinReaderVersion: 1, MinWriterVersion: 2}, plain, "", true, ""},
		{"legacy invariants in use", Protocol{MinReaderVersion: 1, MinWriterVersion: 2}, withInvariant, "", false, "invariants"},
		{"features we read and write", Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
			ReaderFeatures: []string{"deletionVectors", "columnMapping", "timestampNtz", "v2Checkpoint"},
			WriterFeatures: []string{"deletionVectors", "columnMapping", "domainMetadata", "appendOnly"}}, plain, "", true, ""},
		{"unknown reader feature", Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
			ReaderFeatures: []string{"variantType"}, WriterFeatures: []string{"variantType"}}, plain, "variantType", false, "variantType"},
		{"writer-only feature we cannot honour", Protocol{MinReaderVersion: 1, MinWriterVersion: 7,
			WriterFeatures: []string{"rowTracking"}}, plain, "", false, "rowTracking"},
		{"in-commit timestamps enabled", Protocol{MinReaderVersion: 1, MinWriterVersion: 7,
			WriterFeatures: []string{"inCommitTimestamp"}},
			&Metadata{SchemaString: plain.SchemaString, Configuration: map[string]string{"delta.enableInCommitTimestamps": "true"}},
			"", false, "inCommitTimestamp"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := checkRead(&tc.p)
			if tc.readErr == "" {
				assert.NoError(t, err)
			} else {
				var fe *UnsupportedFeatureError
				require.ErrorAs(t, err, &fe)
				assert.Equal(t, tc.readErr, fe.Feature)
				assert.Equal(t, "read", fe.Op)
			}
			err = CheckWrite(&tc.p, tc.md)
			if tc.writeOK {
				assert.NoError(t, err)
				return
			}
			var fe *UnsupportedFeatureError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tc.feature, fe.Feature)
			assert.Contains(t, err.Error(), tc.feature)
		})
	}
	var pe *ProtocolVersionError
	require.ErrorAs(t, CheckWrite(&Protocol{MinReaderVersion: 1, MinWriterVersion: 8}, plain), &pe)
	assert.Equal(t, "write", pe.Op)
}

func TestParseInterval(t *testing.T) {
	for in, want := range map[string]string{
		"interval 1 week": "168h0m0s", "interval 36 hours 30 minutes": "36h30m0s", "7 days": "168h0m0s",
	} {
		d, err := ParseInterval(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, d.String(), in)
	}
	_, err := ParseInterval("interval 1 month")
	assert.ErrorContains(t, err, "month")
}

func TestParsePartitionValueTypes(t *testing.T) {
	ts := "1970-01-01T00:00:00.123456Z"
	v, err := ParsePartitionValue(&ts, &PrimitiveType{Name: "timestamp"})
	require.NoError(t, err)
	assert.Equal(t, "1970-01-01T00:00:00.123456Z", v.(interface{ Format(string) string }).Format("2006-01-02T15:04:05.000000Z07:00"))
	dec := "12.34"
	v, err = ParsePartitionValue(&dec, &DecimalType{Precision: 5, Scale: 2})
	require.NoError(t, err)
	assert.NotNil(t, v)
	empty := ""
	v, err = ParsePartitionValue(&empty, &PrimitiveType{Name: "long"})
	require.NoError(t, err)
	assert.Nil(t, v, "an empty string is null")
	bad := "x"
	_, err = ParsePartitionValue(&bad, &PrimitiveType{Name: "integer"})
	assert.ErrorContains(t, err, `"x"`)
}
