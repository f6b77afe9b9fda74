package icebergtable

import format "github.com/geocompact/geocompact/table"

// SetTamperGate makes every ingest of the test binary show the commit gate
// what f makes of it; nil undoes it.
func SetTamperGate(f func(*format.GateGroup)) { tamperGate = f }
