//go:build !linux

package main

// setParentDeathSignal does nothing where there is no PR_SET_PDEATHSIG:
// exitWithParent polls the parent's pid instead.
func setParentDeathSignal() {}
