// Package dup is one of two packages of that name.
package dup

// One is in one/dup.
const One = 1
