// Package plural writes counts for people: "1 query", "2 queries".
package plural

import "strconv"

// Of returns n followed by one when n is 1 (or -1), and by many otherwise.
func Of(n int, one, many string) string {
	return strconv.Itoa(n) + " " + Word(n, one, many)
}

// Word returns one when n is 1 (or -1), and many otherwise.
func Word(n int, one, many string) string {
	if n == 1 || n == -1 {
		return one
	}
	return many
}
