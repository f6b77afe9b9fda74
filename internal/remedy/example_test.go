package remedy_test

import (
	"fmt"

	"github.com/geocompact/geocompact/internal/remedy"
)

// retry: the library says to retry later; Value is how much later.
var retry = remedy.Define("example.retry", func(a remedy.Advice) string { return "retry in " + a.Value })

func ExampleMessage() {
	err := fmt.Errorf("commit db.t: %w", &remedy.Error{Facts: "the catalog is busy", Advice: remedy.Advice{Kind: retry, Value: "1m"}})
	cli := func(a remedy.Advice) string {
		if a.Kind == retry {
			return "run it again with --wait " + a.Value
		}
		return remedy.Library(a)
	}
	fmt.Println(err)
	fmt.Println(remedy.Message(err, cli))
	// Output:
	// commit db.t: the catalog is busy: retry in 1m
	// commit db.t: the catalog is busy: run it again with --wait 1m
}
