package engine

import "github.com/geocompact/geocompact/table"

// outPaths returns the paths of files.
func outPaths(files []table.OutFile) []string {
	ps := make([]string, len(files))
	for i, f := range files {
		ps[i] = f.Path
	}
	return ps
}

// replacements are the commit's view of outs.
func replacements(outs []*groupOut) []table.Replacement {
	rs := make([]table.Replacement, len(outs))
	for i, o := range outs {
		rs[i] = table.Replacement{Files: o.files, New: o.newFiles, Read: o.in.Rows}
	}
	return rs
}
