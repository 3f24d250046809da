// Package plan inverts the accountant for a release: how many queries a
// budget buys for a mechanism and its parameters, and which parameters
// let a number of queries fit a budget. It counts by the very accounting
// that holds darrm aggregate --budget-eps to a budget
// (ensemble.NewAccounting) and, for a ledger, by its filter
// (accountant.MaxFilterSteps).
//
// A plan of parameters searches on the predicate that count searches on
// (accountant.Account.Fits, whether Q queries fit) with the accountant's own
// bisection (accountant.MostGenerous), returns the last value that fits,
// never a midpoint, and checks it by the release's own count, so a
// release with the plan's parameters and budget answers every planned
// query; it checks that a parameter 5% more generous does not fit. Confident-GNMax's (T, σ1, σ2) are scored on
// proxy votes the caller supplies (votes on public or already released
// data), never on the private votes: tuning on those is itself a
// mechanism (Papernot and Steinke 2022) that a plan does not charge.
package plan
