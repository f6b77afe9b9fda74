// Package engine is geocompact's rewrite core: it compacts a spatial
// table into target-size files, clustered by a sort order or a
// space-filling curve, and commits the result as one replace (or, with
// partial progress, a few). Rewrite, its one entry, takes a table.Table,
// which table/icebergtable and table/deltatable open: what planning needs
// of the table and its format (read a group, write its files, read them
// back, commit, remove). The core never asks which format it runs on and
// imports neither iceberg-go nor the Delta layer. Maintenance (maintain), the
// metadata tables (inspect), ingest and table creation
// (ingest), the config file (table/config),
// recording a table's layout and properties (alter) and distributed
// jobs (job) are packages of their own that use the core; the core
// imports none of them. It uses these leaf packages: the format seam
// (table), layout names and recorded layouts (table/layouts), the spill
// directory and its bucket files (engine/spill), the order-independent
// digest of rows (engine/verify), where a group's rows are cut into files
// (engine/cuts), and option values and byte sizes (table/optval).
//
// The files read in the order a rewrite runs:
//
//	check.go                         Request.Check: a request's strategy, curve, sort order and options, parsed once
//	plan.go, options.go, layout.go   pure: which files, in which groups, in which order, and why the rest are skipped
//	tablelayout.go                   checking an order against the table's columns (table/layouts reads the recorded layout)
//	rewrite.go                       Rewrite = Prepare (check and plan, once) + Prepared.Run: run the groups, commit them batch by batch, clean up
//	auto.go                          --curve auto: each group's layout chosen from a sample of its row boxes
//	group.go                         one group: read (deletes applied), sort in memory, cut and write target-size files
//	extsort.go                       a group larger than its memory budget: sample, scatter to spill files, sort unit by unit
//	sink.go                          the file writer both sorts and binpack stream into, one file at a time per lane
//	verify.go                        the digest of the rows read and of the rows written, compared per group
//	pieces.go                        the same steps as plain functions for another process (plan and sample, scatter, write, commit)
//	replace.go                       what a commit hands the format (table.Replacement)
//	commit.go                        the commit through the format (Iceberg: a replace snapshot on a fresh base,
//	                                 with its conflict checks and retries, in table/icebergtable)
//
// # Invariants
//
// Data never changes, only layout. Every group's rows are digested as they
// are read (row count, bbox extent, an order-independent checksum of every
// value) and again as the written files are read back; a group whose
// digests differ fails with ErrVerify and is not committed
// (execution.verify in verify.go). Geometry is validated before it is
// written unless validate-geometry=false (execution.geometryCheck).
// Tested by checkUnchanged in rewrite_test.go, which compares a digest of
// the whole table before and after each rewrite, and by
// TestRewriteRefusesInvalidGeometry.
//
// A replace never resurrects a deleted row. Groups read their files with
// the delete files that apply to them, so deleted rows are not written
// again; the commit then checks, on the fresh base it commits on, that
// every replaced file is still live with exactly the delete files that
// were applied when it was read, and fails with catalogs.ErrConflict otherwise
// (Table.checkBase in table/icebergtable; a Delta table's commit checks
// the commits that won the race the same way, in table/deltatable). A delete file is dropped only when
// every live data file it applies to is replaced. Tested by
// TestRewriteConcurrentDeleteConflicts and TestRewriteMergeOnReadDeletes,
// and under load by cmd/geocompact's TestDeletesRacingRewrite.
//
// A failed rewrite leaves no files. Every file a group writes is tracked,
// and after the last batch every file that is not part of a committed
// snapshot is deleted, whether its group failed, its commit failed or the
// run was cancelled (execution.track and execution.cleanup in rewrite.go);
// a commit replaces exactly its groups' files or nothing. Tested by
// TestRewriteFailedWriteLeavesNoFiles, and for kills by cmd/geocompact's
// TestRewriteSurvivesSIGKILL, where what a kill leaves is orphans only.
//
// A sort's memory follows its budget, whatever the group's size. A group
// whose in-memory estimate exceeds its share of max-group-memory-bytes is
// sorted through spill files (sortSpilled in extsort.go: sorted runs
// merged by key for a curve, sortMerged in extmerge.go; key-range buckets
// for a linear order) and writes the files the in-memory sort would
// write; spill directories are removed on
// success and failure, and those of killed runs by the next run
// (spill.CleanAbandoned; the spill directory, its segment files and the
// default memory budget live in engine/spill). Tested by
// TestSpilledSortMatchesInMemory, spill's TestMergeIsStable,
// TestSpillDirProblems and cmd/geocompact's
// TestSpilledRewriteSurvivesSIGKILL; peak memory is measured by
// BenchmarkRewriteMemory (docs/perf.md).
//
// A no-op always says why. A rewrite that commits nothing returns a Result
// whose NoopReason names the reason (no snapshot, nothing matches --where,
// or the planner's Hint: which option kept which files out), and never an
// error (rewriter.plan in rewrite.go, Options.hint in plan.go). Tested by
// TestRewriteMinInputFiles and TestPlanMinInputFilesHint.
//
// Every data file written is GeoParquet 1.1. Its footer's geo key states the
// geometry types and bbox of the rows written with it, and the data file
// records the file's final size (geowrite.Records in table/geowrite, used by
// the file sink, ingest and generate). Tested by TestRewriteWritesGeoParquet,
// ingest's TestIngestWritesGeoParquet and bench's
// TestGenerateWritesGeoParquet.
package engine
