// Package setup is darrm's commands' side of the library: it binds their
// flags into the library's values, opens the files and ledgers they read,
// and says their errors as the command's exit status and message.
//
// It holds, one file each:
//
//   - the flags that name one concept in every command that has them
//     (sharedflags.go, rr.go): their names, defaults and help, defined
//     once (Registry), the types of their values that the libraries do not
//     define, and the rule each is checked by wherever it is given
//     (CheckFlagRules);
//   - the DaRRM problem a command works on (problem.go), from its flags
//     (--K, --m, --eps, --Delta, --delta, and --relation and --target-eps
//     where the command has them) and the gamma file it reads, each value
//     checked by its rule and an error named as its flag;
//   - the mechanisms of release as the flags know them (mechanisms.go,
//     aggregators.go; ensemble.Mechanisms): which flags each takes, as its
//     fields' tags name them, the one place that binds the flags into a
//     mechanism (MechanismInfo.With), and the aggregators built from the
//     flags (MechanismConfig);
//   - the noise function gamma that a release, a plan or a solve uses
//     (gammasource.go), from an optimal.Source (a gamma file given, or
//     gamma_opt from the cache, solved on demand), its solve shown on
//     standard error and its errors said in terms of the flags;
//   - the files the commands read (kinds.go, readers.go, votes.go),
//     recognised by their first bytes, so that a file given where another
//     kind is read is refused as what it is, with what reads it, and vote
//     files opened as their flags and their metadata header say;
//   - the privacy ledgers a command opens (ledgeropen.go), checked against
//     the witnesses its --witness gives, and what using a ledger found
//     worth telling: its notes, a wait for its lock, and its errors in the
//     command's terms (what the commands that make or change a ledger
//     print is in package report);
//   - generalized PTR as the flags know it (ptr.go): the accountings a
//     release takes (--accounting), the mechanisms whose labels PTR tests
//     and the settings a declared use of PTR releases records, a failed
//     test's message, and the refusal of a PTR release that a ledger's
//     declared use does not hold;
//   - the exit status and message of each error (exitstatus.go): bad input
//     exits 2, with a library's parameter or setting named as the flag that
//     sets it, unless labels may have left before it, a certificate that
//     fails 3, a budget that stops a release 4 (ErrBudget), an
//     interrupt 130, and anything else 1.
//
// They are one package because each leans on the others (a mechanism's
// flags are checked by the shared rules, its gamma loaded, its votes and
// ledger opened, its errors named as flags), and because every test binary
// of a package that reaches the ledger or the solver links the PostgreSQL
// driver and HiGHS: eight packages cost the test suite eight such links.
package setup
