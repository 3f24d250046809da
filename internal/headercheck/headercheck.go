// Package headercheck counts the checks of vote files' metadata headers
// (provenance.CheckHeader), so that the tests of a release can tell that
// it checks its votes' header once. A check that comes back in a second
// place is a count that grows.
package headercheck

import "sync/atomic"

var checks atomic.Int64

// Count records a check of a header.
func Count() { checks.Add(1) }

// Checks returns the number of headers checked so far in this process.
func Checks() int64 { return checks.Load() }
