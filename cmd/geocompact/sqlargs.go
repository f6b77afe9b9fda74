package main

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// sqlTextLast rewrites a command line running sql so that its statement
// text is never read as flags: a statement pasted with a leading comment
// ("-- compact the small files\nCALL ...") begins with "--", which the
// flag parser would take for an unknown flag. Only arguments that spell a
// flag sql knows (--name, --name=value, -f, -fFILE, with the value of a
// flag that takes one) stay flags; every other argument after "sql" is
// statement text and moves behind a "--", which ends the flags. Command
// lines running any other command are returned as they are.
func sqlTextLast(root *cobra.Command, args []string) []string {
	sqlCmd, at := findSubcommand(root, args)
	if sqlCmd == nil || sqlCmd.Name() != "sql" {
		return args
	}
	lookup := func(a string) *pflag.Flag { return lookupFlag(a, sqlCmd.Flags(), root.PersistentFlags()) }
	out := append([]string{}, args[:at+1]...)
	var text []string
	rest := args[at+1:]
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			text = append(text, rest[i+1:]...)
			break
		}
		f := lookup(a)
		if f == nil {
			text = append(text, a)
			continue
		}
		out = append(out, a)
		if takesNext(a, f) && i+1 < len(rest) {
			i++
			out = append(out, rest[i])
		}
	}
	if len(text) == 0 {
		return out
	}
	return append(append(out, "--"), text...)
}

// findSubcommand returns root's subcommand that args run and its index
// in args, skipping the root's own flags (and their values) before it; nil
// when args name no subcommand.
func findSubcommand(root *cobra.Command, args []string) (*cobra.Command, int) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return nil, -1
		}
		if strings.HasPrefix(a, "-") {
			if f := lookupFlag(a, root.PersistentFlags(), root.LocalFlags()); f != nil && takesNext(a, f) {
				i++
			}
			continue
		}
		for _, c := range root.Commands() {
			if c.Name() == a || c.HasAlias(a) {
				return c, i
			}
		}
		return nil, -1
	}
	return nil, -1
}

// lookupFlag returns the flag argument a spells in one of the sets: a
// long name (--name or --name=value) or a shorthand (-f, -fvalue, -v);
// nil when a is no flag of theirs. --help and -h are always flags.
func lookupFlag(a string, sets ...*pflag.FlagSet) *pflag.Flag {
	switch {
	case a == "--help" || a == "-h":
		return &pflag.Flag{Name: "help", Value: boolValue{}}
	case strings.HasPrefix(a, "--"):
		name, _, _ := strings.Cut(a[2:], "=")
		for _, s := range sets {
			if f := s.Lookup(name); f != nil && name != "" {
				return f
			}
		}
	case len(a) > 1 && a[0] == '-':
		for _, s := range sets {
			if f := s.ShorthandLookup(a[1:2]); f != nil {
				return f
			}
		}
	}
	return nil
}

// takesNext reports whether the flag argument a (of flag f) takes the
// next argument as its value: a non-boolean flag spelled without "=" or
// an attached shorthand value.
func takesNext(a string, f *pflag.Flag) bool {
	if f.NoOptDefVal != "" || f.Value.Type() == "bool" {
		return false
	}
	if strings.HasPrefix(a, "--") {
		return !strings.Contains(a, "=")
	}
	return len(a) == 2
}

// boolValue stands for the help flag, which cobra adds only when it runs.
type boolValue struct{}

func (boolValue) String() string   { return "false" }
func (boolValue) Set(string) error { return nil }
func (boolValue) Type() string     { return "bool" }
