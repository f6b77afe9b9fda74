package maintain

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestOnlyNotExist(t *testing.T) {
	t.Parallel()
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
			assert.Equal(t, tc.want, onlyNotExist(tc.err), "onlyNotExist(%v)", tc.err)
		})
	}
}
