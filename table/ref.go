package table

// Ref names a table as a caller names it: by its name in a catalog
// (an Iceberg table, NAMESPACE.TABLE) or by its location (a Delta
// table: a directory, file: URL or s3://BUCKET/PREFIX). Exactly one of
// Name and Location is set; which one picks the format.
type Ref struct {
	Name     string
	Location string
}

// IsDelta reports whether r names a Delta table by its location.
func (r Ref) IsDelta() bool { return r.Location != "" }

// String is how r is named in messages: the catalog name or the
// location.
func (r Ref) String() string {
	if r.Location != "" {
		return r.Location
	}
	return r.Name
}
