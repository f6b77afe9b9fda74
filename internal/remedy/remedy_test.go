package remedy_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/geocompact/geocompact/internal/remedy"
)

var (
	errBad = errors.New("pkg: bad option")
	// force: the library says "force it", the test's front end "--force".
	force = remedy.Define("remedy_test.force", func(remedy.Advice) string { return "force it if you are sure" })
	// setProp names a property (Name) and a value (Value).
	setProp = remedy.Define("remedy_test.set", func(a remedy.Advice) string { return "set " + a.Name + " to " + a.Value })
	// silent has no library words: the facts say enough.
	silent = remedy.Define("remedy_test.silent", func(remedy.Advice) string { return "" })
)

// flags is the test's front end: each kind as a flag.
func flags(a remedy.Advice) string {
	switch a.Kind {
	case force:
		return "use --force if you are sure"
	case setProp:
		return "pass --set " + a.Name + "=" + a.Value
	case silent:
		return "--option x=VALUE"
	}
	return remedy.Library(a)
}

// carrier is a typed error that carries its remedy, as a library's
// …Error type does.
type carrier struct{ table string }

func (e *carrier) Error() string { return e.Say(remedy.Library) }
func (e *carrier) Remedy() remedy.Advice {
	return remedy.Advice{Kind: setProp, Name: "layout", Value: e.table}
}
func (e *carrier) Say(w remedy.Wording) string {
	return "table " + e.table + " is odd; " + w(e.Remedy())
}

func TestMessage(t *testing.T) {
	sentinel := &remedy.Error{Advice: remedy.Advice{Kind: force}}
	for _, tc := range []struct {
		name      string
		err       error
		lib, said string
	}{
		{"sentinel", sentinel, "force it if you are sure", "use --force if you are sure"},
		{"wrapped", fmt.Errorf("expire: %w (twice)", sentinel), "expire: force it if you are sure (twice)", "expire: use --force if you are sure (twice)"},
		{"category and facts", &remedy.Error{Err: errBad, Facts: "age 1h", Sep: "; ", Advice: remedy.Advice{Kind: force}},
			"pkg: bad option: age 1h; force it if you are sure", "pkg: bad option: age 1h; use --force if you are sure"},
		{"parameters", fmt.Errorf("alter: %w", &remedy.Error{Facts: "no layout", Advice: remedy.Advice{Kind: setProp, Name: "p", Value: "v"}}),
			"alter: no layout: set p to v", "alter: no layout: pass --set p=v"},
		{"no library words", &remedy.Error{Err: errBad, Facts: "option x needs a value", Advice: remedy.Advice{Kind: silent}},
			"pkg: bad option: option x needs a value", "pkg: bad option: option x needs a value: --option x=VALUE"},
		{"typed carrier", fmt.Errorf("rewrite: %w", &carrier{table: "db.t"}), "rewrite: table db.t is odd; set layout to db.t", "rewrite: table db.t is odd; pass --set layout=db.t"},
		{"joined", errors.Join(errors.New("first"), sentinel), "first\nforce it if you are sure", "first\nuse --force if you are sure"},
		{"no remedy", fmt.Errorf("x: %w", errBad), "x: pkg: bad option", "x: pkg: bad option"},
		{"no kind", &remedy.Error{Facts: "just facts"}, "just facts", "just facts"},
		{"carrier in a carrier", &remedy.Error{Err: sentinel, Facts: "again", Advice: remedy.Advice{Kind: setProp, Name: "p", Value: "v"}},
			"force it if you are sure: again: set p to v", "use --force if you are sure: again: pass --set p=v"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.lib, tc.err.Error())
			assert.Equal(t, tc.lib, remedy.Message(tc.err, remedy.Library))
			assert.Equal(t, tc.said, remedy.Message(tc.err, flags))
		})
	}
}

func TestErrorKeepsItsCategory(t *testing.T) {
	err := fmt.Errorf("x: %w", &remedy.Error{Err: errBad, Advice: remedy.Advice{Kind: force}})
	assert.ErrorIs(t, err, errBad)
	c, ok := errors.AsType[remedy.Carrier](err)
	if assert.True(t, ok) {
		assert.Equal(t, force, c.Remedy().Kind)
	}
}

func TestKinds(t *testing.T) {
	ks := remedy.Kinds()
	assert.Subset(t, ks, []*remedy.Kind{force, setProp, silent})
	for i := 1; i < len(ks); i++ {
		assert.Less(t, ks[i-1].String(), ks[i].String(), "sorted by name")
	}
	assert.Equal(t, "remedy_test.force", force.String())
	assert.Panics(t, func() { remedy.Define("remedy_test.force", remedy.Library) }, "a name is defined once")
	assert.Empty(t, remedy.Library(remedy.Advice{}), "no kind, no words")
}
