// Package codesize holds the check that keeps the module's code in pieces
// a reader can hold in mind: no function longer than MaxFuncLines lines
// and no file longer than MaxFileLines, tests excepted. It has no code of
// its own; its test walks the module.
package codesize

// The limits the test enforces.
const (
	MaxFuncLines = 80
	MaxFileLines = 800
)
