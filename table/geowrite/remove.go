package geowrite

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"

	"github.com/apache/iceberg-go/table"
)

// RemoveWritten deletes files that a write which will not commit made in
// tbl, logging to log (never returning) what it cannot delete: an
// undeleted file is an orphan that orphan cleanup removes later.
func RemoveWritten(ctx context.Context, tbl *table.Table, paths []string, log *slog.Logger) {
	if len(paths) == 0 {
		return
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		log.Warn("remove written files", "error", err)
		return
	}
	for _, p := range paths {
		if err := fsys.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			log.Warn("remove written file", "path", p, "error", err)
		}
	}
}
