package main

import "syscall"

// setParentDeathSignal asks the kernel to kill this process when the
// thread that started it exits (prctl PR_SET_PDEATHSIG).
func setParentDeathSignal() {
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0)
}
