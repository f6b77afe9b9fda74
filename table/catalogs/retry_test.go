package catalogs

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
)

func TestIsRetryableLostBase(t *testing.T) {
	gone := &fs.PathError{Op: "open", Path: "/t/metadata/snap-1.avro", Err: fs.ErrNotExist}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"base expired", fmt.Errorf("commit rewrite of a.b: %w: base snapshot 1 not found", table.ErrCommitDiverged), true},
		{"concurrent manifest expired", fmt.Errorf("loading entries for concurrent snapshot 7: could not open manifest file: %w", gone), true},
		{"a data file missing while reading", fmt.Errorf("read: %w", gone), false},
		{"plain failure", errors.New("boom"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, IsRetryable(tc.err), "IsRetryable(%v)", tc.err)
		})
	}
}
