// Package dup is one of two packages of that name.
package dup

// Two is in two/dup.
const Two = 2
