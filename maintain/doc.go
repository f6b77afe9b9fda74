// Package maintain keeps a table healthy around the rewrite core: expiring
// snapshots, removing orphan files, merging manifests, the maintain loop a
// scheduler calls (lease, measure, gate, rewrite, verify, expire, orphans)
// with its policy file, the advice that suggests such a policy, and the
// health metrics the gate and the advice read.
//
// It depends on package engine and never the reverse: the core knows
// nothing of leases, policies or retention.
package maintain
