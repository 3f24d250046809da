// Package beta is a fixture of the docs test's name checks.
package beta

// Stated is what a caller states.
type Stated struct{ Teachers int }

// Check checks it.
func (s Stated) Check() error { return nil }

// Bind binds it.
func Bind(s Stated) Stated { return s }
