// Package suggest finds the closest of a set of known words to a misspelled
// one, for did-you-mean hints in error messages.
package suggest

import (
	"fmt"
	"strconv"
	"strings"
)

// Closest returns the candidate nearest to word by edit distance (a swap
// of two neighbouring letters counts as one edit), when it is close
// enough to be a likely misspelling: at most a third of word's length (but
// at least 1) edits away. Failing that, the shortest candidate word of at
// least three letters begins ("target-file-size" for
// "target-file-size-bytes") is taken. Ties go to the earlier candidate.
func Closest(word string, candidates []string) (string, bool) {
	best, bestDist := "", max(1, len(word)/3)+1
	for _, c := range candidates {
		if d := distance(word, c); d < bestDist {
			best, bestDist = c, d
		}
	}
	if best == "" && len(word) >= 3 {
		for _, c := range candidates {
			if strings.HasPrefix(c, word) && (best == "" || len(c) < len(best)) {
				best = c
			}
		}
	}
	return best, best != ""
}

// Hint returns "; did you mean X?" for the candidate closest to word, or
// "" when none is close.
func Hint(word string, candidates []string) string {
	if c, ok := Closest(word, candidates); ok {
		return "; did you mean " + c + "?"
	}
	return ""
}

// distance is the optimal string alignment distance between a and b, by
// bytes: Levenshtein's insertions, deletions and substitutions plus swaps
// of neighbouring bytes, each one edit.
func distance(a, b string) int {
	pprev := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], pprev[j-2]+1)
			}
		}
		pprev, prev, cur = prev, cur, pprev
	}
	return prev[len(b)]
}

// excerptRunes is how much of a long input Excerpt keeps.
const excerptRunes = 64

// Excerpt quotes s, a user's input (a predicate, a value), for an error
// message: whole when short, else its first characters followed by its
// length, so that an input of any size is echoed on one short line.
func Excerpt(s string) string {
	if r := []rune(s); len(r) > excerptRunes {
		return strconv.Quote(string(r[:excerptRunes])) + fmt.Sprintf("… (%d bytes)", len(s))
	}
	return strconv.Quote(s)
}

// Clip is Excerpt for input already written as the user wrote it (a
// token, a quoted literal): it is cut the same way but not quoted.
func Clip(s string) string {
	if r := []rune(s); len(r) > excerptRunes {
		return string(r[:excerptRunes]) + fmt.Sprintf("… (%d bytes)", len(s))
	}
	return s
}
