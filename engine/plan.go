package engine

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/optval"
)

// Group is a set of files of one partition rewritten together.
type Group struct {
	Partition string           `json:"partition"`
	Files     []table.PlanFile `json:"files"`
	Bytes     int64            `json:"bytes"`
	Records   int64            `json:"records"`
	// OutputFiles is the number of files the group is written as.
	OutputFiles int `json:"output_files"`
	// Reason says why the group is rewritten.
	Reason string `json:"reason"`
	// CutWindow, when above 0 and cut-window-fraction is not set, is the
	// window area (a fraction of the group's extent) that the sorted
	// group's files are cut for (see Options.CutWindowFraction): set for
	// the group the overlap-aware selection merged (overlapSelect).
	CutWindow float64 `json:"cut_window_fraction,omitempty"`
	// Sort says how a sorted group is sorted (nil for binpack): set by the
	// rewrite from the memory budget, not by Options.Plan.
	Sort *SortPlan `json:"sort,omitempty"`
}

// Skipped is a file the plan leaves alone, with the reason.
type Skipped struct {
	table.PlanFile
	Reason string `json:"reason"`
}

// Plan is which files are rewritten, in which groups, and why the others
// are not. It is printable (--dry-run) and serialisable.
type Plan struct {
	Groups  []Group   `json:"groups"`
	Skipped []Skipped `json:"skipped_files"`
	// Deferred are groups that would be rewritten but exceed
	// max-files-to-rewrite in this run.
	Deferred []Group `json:"deferred_groups,omitempty"`
	// Hint says what would change a plan with no groups; empty otherwise.
	Hint string `json:"hint,omitempty"`
}

// Files returns how many files the plan rewrites.
func (p *Plan) Files() int {
	n := 0
	for _, g := range p.Groups {
		n += len(g.Files)
	}
	return n
}

// Bytes returns how many bytes the plan rewrites.
func (p *Plan) Bytes() int64 {
	var n int64
	for _, g := range p.Groups {
		n += g.Bytes
	}
	return n
}

// Plan groups files for rewriting the way Iceberg's size-based planner
// does. Per partition:
//   - a file is a candidate when its size is outside [min, max] (small
//     files merge, large ones split) or it carries at least
//     delete-file-threshold delete files; with rewrite-all every file is;
//   - for a rewrite that sorts by position, the candidates are merged with
//     a region of files along the curve and the files they overlap, or the
//     partition is re-sorted whole when its files overlap too deeply
//     (overlapSelect, engine/overlap.go);
//   - candidates are packed, in input order, into groups of at most
//     max-file-group-size-bytes;
//   - a group is kept when it has at least min-input-files files (and more
//     than one), more than one file and more than a target file's worth of
//     bytes, a file above max-file-size (it must be split), delete files to
//     drop, or more than max-file-group-size-bytes; with rewrite-all always.
//
// Every input file lands in exactly one group or in Skipped with its
// reason; no group spans partitions; the same input gives the same plan.
// Groups are then ordered by JobOrder and cut at MaxFilesToRewrite.
func (o Options) Plan(files []table.PlanFile) *Plan {
	p := &Plan{}
	var order []string
	byPart := map[string][]table.PlanFile{}
	for _, f := range files {
		if _, ok := byPart[f.Partition]; !ok {
			order = append(order, f.Partition)
		}
		byPart[f.Partition] = append(byPart[f.Partition], f)
	}
	var hints []string
	for _, part := range order {
		var cands []table.PlanFile
		var healthy []Skipped
		for _, f := range byPart[part] {
			if reason := o.notCandidate(f); reason != "" {
				healthy = append(healthy, Skipped{PlanFile: f, Reason: reason})
				continue
			}
			cands = append(cands, f)
		}
		cands, healthy, overlapReason, cutWindow := o.overlapSelect(cands, healthy)
		p.Skipped = append(p.Skipped, healthy...)
		for _, g := range o.pack(part, cands) {
			if g.Reason = cmp.Or(overlapReason, o.keepReason(g)); g.Reason != "" {
				g.OutputFiles = o.outputFiles(g.Bytes)
				g.CutWindow = cutWindow
				p.Groups = append(p.Groups, g)
				continue
			}
			reason := fmt.Sprintf("group of %d candidate files (%s) is below %s=%d and holds less than one target file (%s=%d)",
				len(g.Files), optval.FormatBytes(g.Bytes), OptMinInputFiles, o.MinInputFiles, OptTargetFileSize, o.TargetFileSize)
			for _, f := range g.Files {
				p.Skipped = append(p.Skipped, Skipped{PlanFile: f, Reason: reason})
			}
			hints = append(hints, o.groupHint(part, g))
		}
	}
	o.orderGroups(p.Groups)
	if o.MaxFilesToRewrite > 0 {
		n := 0
		for i, g := range p.Groups {
			if n+len(g.Files) > o.MaxFilesToRewrite && n > 0 {
				p.Deferred = p.Groups[i:]
				p.Groups = p.Groups[:i:i]
				break
			}
			n += len(g.Files)
		}
		for _, g := range p.Deferred {
			for _, f := range g.Files {
				p.Skipped = append(p.Skipped, Skipped{PlanFile: f, Reason: fmt.Sprintf("deferred: %s=%d reached", OptMaxFilesToRewrite, o.MaxFilesToRewrite)})
			}
		}
	}
	if len(p.Groups) == 0 {
		p.Hint = o.hint(files, hints)
	}
	return p
}

// notCandidate returns why f is not a rewrite candidate, or "" if it is.
func (o Options) notCandidate(f table.PlanFile) string {
	switch {
	case o.PurgeDeletes && f.DeleteFiles > 0:
		return ""
	case o.PurgeDeletes:
		return "carries no deletes (a purge rewrites only files that do)"
	case o.RewriteAll:
		return ""
	case f.DeleteFiles >= o.DeleteFileThreshold:
		return ""
	case f.Size < o.MinFileSize || f.Size > o.MaxFileSize:
		return ""
	}
	return fmt.Sprintf("size %s is within [%s=%s, %s=%s]", optval.FormatBytes(f.Size), OptMinFileSize, optval.FormatBytes(o.MinFileSize), OptMaxFileSize, optval.FormatBytes(o.MaxFileSize))
}

// pack packs candidates, in order, into groups of at most
// MaxFileGroupSize bytes (a single larger file forms its own group).
func (o Options) pack(part string, cands []table.PlanFile) []Group {
	var groups []Group
	cur := Group{Partition: part}
	for _, f := range cands {
		if len(cur.Files) > 0 && cur.Bytes+f.Size > o.MaxFileGroupSize {
			groups = append(groups, cur)
			cur = Group{Partition: part}
		}
		cur.Files = append(cur.Files, f)
		cur.Bytes += f.Size
		cur.Records += f.Records
	}
	if len(cur.Files) > 0 {
		groups = append(groups, cur)
	}
	return groups
}

// keepReason says why g is worth rewriting, or "" when it is not.
func (o Options) keepReason(g Group) string {
	n := len(g.Files)
	switch {
	case o.PurgeDeletes:
		return "purge: its files carry deletes"
	case o.RewriteAll:
		return OptRewriteAll
	case n > 1 && n >= o.MinInputFiles:
		return fmt.Sprintf("%d files >= %s=%d", n, OptMinInputFiles, o.MinInputFiles)
	case n > 1 && g.Bytes > o.TargetFileSize:
		return fmt.Sprintf("%d files hold more than one target file (%s)", n, optval.FormatBytes(g.Bytes))
	case g.Bytes > o.MaxFileGroupSize:
		return fmt.Sprintf("more than %s", OptMaxFileGroupSize)
	}
	for _, f := range g.Files {
		if f.Size > o.MaxFileSize {
			return fmt.Sprintf("file of %s above %s=%s must be split", optval.FormatBytes(f.Size), OptMaxFileSize, optval.FormatBytes(o.MaxFileSize))
		}
		if f.DeleteFiles >= o.DeleteFileThreshold {
			return fmt.Sprintf("file has %d delete files >= %s=%d", f.DeleteFiles, OptDeleteFileThreshold, o.DeleteFileThreshold)
		}
	}
	return ""
}

// outputFiles is how many files a group of inputBytes is written as,
// following Iceberg's rewriter: whole target-size files, plus one more for
// a remainder above min-file-size. A smaller remainder is spread over the
// other files only when their average stays under 1.1x the target and
// under the target plus half the distance to max-file-size; otherwise it
// keeps a file of its own too, so no file grows far past the target.
func (o Options) outputFiles(inputBytes int64) int {
	if inputBytes < o.TargetFileSize {
		return 1
	}
	n := inputBytes / o.TargetFileSize
	if inputBytes%o.TargetFileSize > o.MinFileSize {
		return int(n) + 1
	}
	writeMax := float64(o.TargetFileSize) + float64(o.MaxFileSize-o.TargetFileSize)*0.5
	if float64(inputBytes/n) < min(1.1*float64(o.TargetFileSize), writeMax) {
		return int(n)
	}
	return int(n) + 1
}

func (o Options) orderGroups(gs []Group) {
	var key func(a, b Group) int
	switch o.JobOrder {
	case JobOrderBytesAsc:
		key = func(a, b Group) int { return cmp.Compare(a.Bytes, b.Bytes) }
	case JobOrderBytesDesc:
		key = func(a, b Group) int { return cmp.Compare(b.Bytes, a.Bytes) }
	case JobOrderFilesAsc:
		key = func(a, b Group) int { return cmp.Compare(len(a.Files), len(b.Files)) }
	case JobOrderFilesDesc:
		key = func(a, b Group) int { return cmp.Compare(len(b.Files), len(a.Files)) }
	default:
		return
	}
	slices.SortStableFunc(gs, key)
}

// groupHint says why a partition's group is not rewritten and which
// option would change that. A lone small file is never compacted on its
// own, so lowering min-input-files cannot help it.
func (o Options) groupHint(part string, g Group) string {
	if len(g.Files) < 2 {
		return fmt.Sprintf("partition %s has one candidate file (%s), which is not compacted on its own; set the option %s=true to rewrite it anyway (for example to sort it), or a %s nearer its size",
			PartitionLabel(part), optval.FormatBytes(g.Bytes), OptRewriteAll, OptTargetFileSize)
	}
	return fmt.Sprintf("partition %s has %d candidate files (%s), below %s=%d; set the option %s=%d (or %s=true) to rewrite them",
		PartitionLabel(part), len(g.Files), optval.FormatBytes(g.Bytes), OptMinInputFiles, o.MinInputFiles, OptMinInputFiles, len(g.Files), OptRewriteAll)
}

// hint explains an empty plan and what would change it.
func (o Options) hint(files []table.PlanFile, groupHints []string) string {
	if len(files) == 0 {
		return "the table (or the where filter's scope) has no data files"
	}
	if len(groupHints) > 0 {
		return strings.Join(groupHints, "; ")
	}
	if o.PurgeDeletes {
		return fmt.Sprintf("none of the %d files carries deletes: there is nothing to purge", len(files))
	}
	return fmt.Sprintf("all %d files are within the size band [%s, %s] around %s=%s with no delete files to drop; set the option %s=true to rewrite them anyway (for example to apply a new sort order)",
		len(files), optval.FormatBytes(o.MinFileSize), optval.FormatBytes(o.MaxFileSize), OptTargetFileSize, optval.FormatBytes(o.TargetFileSize), OptRewriteAll)
}
