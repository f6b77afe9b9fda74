package engine

import format "github.com/geocompact/geocompact/table"

// The seam to table formats, as table defines it.
type (
	PlanFile    = format.PlanFile
	Format      = format.Format
	Replacement = format.Replacement
	SinkConfig  = format.SinkConfig
	Sink        = format.Sink
	OutFile     = format.OutFile
)

// outPaths returns the paths of files.
func outPaths(files []OutFile) []string {
	ps := make([]string, len(files))
	for i, f := range files {
		ps[i] = f.Path
	}
	return ps
}

// replacements are the commit's view of outs.
func replacements(outs []*groupOut) []Replacement {
	rs := make([]Replacement, len(outs))
	for i, o := range outs {
		rs[i] = Replacement{Files: o.files, New: o.newFiles}
	}
	return rs
}
