// Package reliability holds the harnesses geocompact's reliability tests
// share: a local S3-compatible object store (versitygw on loopback), an
// order-independent content digest of a table, and checks that every file a
// table's metadata names exists and every file under its location is either
// referenced or an orphan that cleanup may remove.
//
// The tests that use it live next to the command they drive
// (cmd/geocompact/*_test.go); docs/reliability.md says what each one checks
// and what it last measured.
package reliability
