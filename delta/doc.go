// Package delta is geocompact's Delta Lake log layer: it reads and writes
// Delta tables by the Delta transaction protocol, with no dependency on the
// rewrite engine.
//
// What it covers:
//   - log replay over JSON commits, classic (single and multi-part) and v2
//     (JSON or Parquet, with sidecars) checkpoints and _last_checkpoint, which
//     is only a hint: a corrupt or stale one falls back to listing the log;
//   - protocol versions and table features, checked separately for reading
//     (checkRead) and writing (CheckWrite) before anything is written;
//   - column mapping (none, name, id), deletion vectors (inline, relative and
//     absolute files), partition values and per-file statistics;
//   - streaming reads of a snapshot's live files as Arrow record batches;
//   - atomic commits (put-if-absent of the next version), the conflict rules
//     of a data-preserving rewrite, classic checkpoints and vacuum planning;
//   - new tables (CreateActions, SchemaFromArrow) and appends retried on the
//     latest version after a lost race (CommitAppend, CheckAppend), with
//     txn actions (NewTxn) for idempotent writers.
//
// Invariants:
//   - a snapshot is built only from a contiguous run of versions; a gap is an
//     error, never silently skipped;
//   - a commit either creates exactly the file of the next version or fails
//     with *VersionExistsError and leaves the log unchanged;
//   - vacuum never deletes a file that the current snapshot references, nor
//     one removed inside the retention window, nor anything under _delta_log.
//
// Storage is the only I/O seam (see Storage): the local file system is
// implemented here; an object store needs a conditional create
// (S3 PutObject with If-None-Match: *) for PutIfAbsent, which is left to a
// later Storage implementation.
package delta
