package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"testing"

	"github.com/apache/iceberg-go/table"
)

func TestOnlyNotExist(t *testing.T) {
	gone := &fs.PathError{Op: "remove", Path: "/t/data/a.parquet", Err: fs.ErrNotExist}
	gone2 := &fs.PathError{Op: "remove", Path: "/t/data/b.parquet", Err: os.ErrNotExist}
	denied := &fs.PathError{Op: "remove", Path: "/t/data/c.parquet", Err: fs.ErrPermission}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"one missing file", gone, true},
		{"joined missing files", errors.Join(gone, gone2), true},
		{"joined with nil first", errors.Join(nil, errors.Join(gone, gone2)), true},
		{"wrapped", fmt.Errorf("cleanup: %w", errors.Join(gone, gone2)), true},
		{"a permission error among them", errors.Join(gone, denied), false},
		{"commit failure", errors.New("requirement failed"), false},
		{"a missing file on write", &fs.PathError{Op: "open", Path: "/t/metadata/v2.json", Err: fs.ErrNotExist}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := onlyNotExist(tc.err); got != tc.want {
				t.Fatalf("onlyNotExist(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

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
			if got := IsRetryable(tc.err); got != tc.want {
				t.Fatalf("IsRetryable(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}
