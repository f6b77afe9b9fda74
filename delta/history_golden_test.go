package delta

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHistoryGolden(t *testing.T) {
	// Ten appends and deletes, a checkpoint at 10, then three more
	// (GoldenTables.scala "basic-with-inserts-deletes-checkpoint").
	h, err := golden(t, "basic-with-inserts-deletes-checkpoint").History(t.Context())
	require.NoError(t, err)
	require.Len(t, h, 14)
	var ops []string
	for i, c := range h {
		assert.Equal(t, int64(i), c.Version)
		require.NotNil(t, c.Info)
		ops = append(ops, c.Info.Operation)
		if i > 0 {
			assert.True(t, c.Timestamp.After(h[i-1].Timestamp), "version %d", i)
		}
	}
	assert.Equal(t, []string{"WRITE", "WRITE", "WRITE", "WRITE", "WRITE", "DELETE", "DELETE", "DELETE", "DELETE",
		"DELETE", "WRITE", "WRITE", "WRITE", "DELETE"}, ops)
	assert.Equal(t, int64(1691426732135), h[0].Timestamp.UnixMilli(), "the commitInfo timestamp")
	assert.Equal(t, "10", h[0].Info.OperationMetrics["numOutputRows"])
}
