// Package plan inverts the accountant for a release: how many queries a
// budget buys for a mechanism and its parameters, which parameters let a
// number of queries fit a budget (in one run or on a new ledger), and
// which mechanism gives the most correct labels on proxy votes. It counts
// by the very accounting that holds darrm aggregate --budget-eps to a
// budget (accountant.Account.Allowed) and, for a ledger, by its filter
// (accountant.Filter.MaxSteps): the one ledger init fixes for the labels
// declared (ledger.ChooseFilter). A plan of parameters fits its queries
// to one run (ForRun) or to a new ledger (ForLedger). Make is the one
// call for a mechanism: a Request without Queries is a count, with them a
// plan of parameters (on its Proxy votes, if any); Compare plans them all.
//
// A plan of parameters searches on the predicate that count searches on
// (accountant.Account.Fits, whether Q queries fit, or the ledger's
// filter) with the bisection of the accountant's calibrations (roots.MostGenerous),
// returns the last value that fits, never a midpoint, and checks it by
// the release's own count, so a release with the plan's parameters and
// budget answers every planned query; it checks that a parameter 5% more
// generous does not fit. Confident-GNMax's (T, σ1, σ2) are scored on
// proxy votes the caller supplies, and Compare scores every mechanism
// that fits them at one total: votes that do not depend on the teachers'
// private data (synthetic, or of teachers trained on public data), never
// the votes to be released nor the same teachers' votes on other queries,
// which are functions of the private data too: tuning on them is itself a
// mechanism (Papernot and Steinke 2022) that a plan does not charge.
package plan
