// Package layers holds the tests that keep darrm's layout honest: every
// import runs down the layers docs/design.md draws, and the package tables
// of README.md and docs/design.md say what each package's documentation
// says. The release and PATE's account link no ledger and no solver of
// γ_opt: their caller opens those. And the library keeps no state of
// its own: no package-level variable changes after its declaration, no
// struct holds a context, no exported item names an internal type, and no
// file is over 800 lines.
//
// It has no code: the layers are declared once, in layers_test.go.
package layers
