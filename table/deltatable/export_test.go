package deltatable

import "github.com/geocompact/geocompact/table"

// SetTamperGate makes f alter what the commit gate of an append is shown.
func SetTamperGate(f func([]table.GateGroup)) { tamperGate = f }
