// Package scriptcheck holds the checks on the module's shell scripts (every
// *.sh file and .ci/run): a script that removes what it made in an EXIT
// trap never replaces itself with exec, which would skip the trap and
// leave the folder behind. It has no code of its own; its test walks the
// module.
package scriptcheck
