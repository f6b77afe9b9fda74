package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/iceberg-go/table"
)

// nameBrokenInput adds to err, a failure reading tasks' data files, the
// path of the first file whose Parquet footer cannot be read, when err does
// not name any input file already. Parquet's own errors ("file is smaller
// than indicated metadata size") do not say which of a group's files is
// broken; the path is what a person needs to repair or remove it.
func nameBrokenInput(ctx context.Context, tbl *table.Table, tasks []table.FileScanTask, err error) error {
	if err == nil || ctx.Err() != nil {
		return err
	}
	msg := err.Error()
	for _, t := range tasks {
		if strings.Contains(msg, trimScheme(t.File.FilePath())) {
			return err
		}
	}
	fsys, ferr := tbl.FS(ctx)
	if ferr != nil {
		return err
	}
	for _, t := range tasks {
		p := t.File.FilePath()
		f, oerr := fsys.Open(p)
		if oerr != nil {
			return fmt.Errorf("%w (data file %s: %v)", err, p, oerr)
		}
		r, perr := file.NewParquetReader(f)
		if perr == nil {
			r.Close()
		}
		f.Close()
		if perr != nil {
			return fmt.Errorf("%w (data file %s is not readable Parquet: %v)", err, p, perr)
		}
	}
	return err
}

// trimScheme drops a file:// prefix, as os errors print bare paths.
func trimScheme(p string) string {
	if rest, ok := strings.CutPrefix(p, "file://"); ok {
		return rest
	}
	return p
}
