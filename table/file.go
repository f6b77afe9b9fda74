package table

import "io"

// File is one of a table's files opened for reading: what a Parquet
// footer and its row groups are read from.
type File interface {
	io.ReaderAt
	io.ReadSeeker
	io.Closer
}
