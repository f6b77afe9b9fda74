package table

// PropertyRules are a format's rules for the table properties alter
// sets and unsets.
type PropertyRules struct {
	// Known are the keys a key is checked against for a misspelling;
	// Known[1] is the example an empty key's error names.
	Known []string
	// IsSize says whether a key's value is a size, stored in bytes.
	IsSize func(key string) bool
	// Check, when set, checks a key (and its value, unless unset)
	// further.
	Check func(key, value string, unset bool) error
}
