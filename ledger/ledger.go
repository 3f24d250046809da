// Package ledger keeps a persistent, crash-safe record of the privacy spent
// on one teacher ensemble across runs, and enforces a total budget on it.
//
// A ledger is a file of JSON lines: a header naming the ensemble, its
// neighbouring relation, the parameters it is bound to (K, the teachers'
// (ε, Δ), kind and partition: a release that states others is refused),
// the total budget and the slack δ' of composition, then one record per
// write to disk of a release's spend, with the totals of the runs before
// it. Each line carries the SHA-256 of the line before it and its own,
// which covers both (a hash chain), so that a line changed, removed or
// moved is detected; and it must follow from the lines before it as a run
// writes them (a run's lines together, reservations rising, at most one
// settlement, of at most the labels reserved, and nothing of the run
// after it), so that a well-formed line appended at the end with its own
// hash cannot lower what a run counts either (*CorruptError). Spends are written ahead: a release reserves the labels it is
// about to hand out, and the reservation is on disk (fsync) before they
// leave the process, so that a crash can over-count the spend, never
// under-count it. A write that fails is cut off again before anything
// else is written. The file is locked (flock) for the whole of a run, so
// concurrent runs are serialised.
//
// A ledger may be kept in a PostgreSQL database instead of a file, for a
// team on several machines: its location is then a libpq URL,
// postgres://[user[:password]@]host[:port]/database?ledger=NAME (IsURL).
// The rules above are the same, one implementation for both; only where
// the lines live differs: one row per line, the same bytes and hashes. A
// run holds the ledger's advisory lock, and each reservation and
// settlement is one statement, committed synchronously whatever the
// server says, that the database takes only as the line after the head
// the run read, so that runs on every machine together never exceed the
// budget; a run whose connection is lost stops (Options.Lost), what it
// reserved charged. The database keeps one live ledger per ensemble and
// never renames, reopens or deletes one (its triggers and keys, which
// only a superuser or the tables' owner can drop). A URL's password is
// never printed or recorded (Redact).
//
// A ledger that no release may charge any more ends with an end line:
// Create with Options.Replace retires the ledgers it replaces so, and
// Options.Export writes an archive so, which Options.Import makes live again,
// without its end, only in a database that does not hold the ledger.
//
// Outside the ledger, a per-user record (Record, in a Options's StateDir,
// made once and used for every call on ledgers) keeps for
// each ensemble the identity of its ledger, its number of lines, the hash
// of its last line and their bytes, advanced after every write. A ledger
// that is behind its record (lines removed, an old copy restored) or that
// is a second ledger for a recorded ensemble is refused (*RecordError),
// until the user resolves it on purpose (Options.Adopt). The record vouches for
// the lines it covers, so a release reads only the line it names and the
// lines after it: the last line's totals are the ledger's. Open with Options.ReadOnly
// reads and checks every line. A record catches a rollback only for the
// user who wrote last; a witness kept outside the store (Witness: a
// checkpoint, Options.Checkpoint, or a label file's header) catches it for
// everyone given it (Options.Witnesses): a ledger behind a witness or forked
// from it is refused as one behind its record is. The threat is accidents and honest mistakes, not
// a user who edits the files on purpose: the hashes are not keyed.
//
// Totals come from the accountant (accountant.Sequence) by the filter
// fixed when the ledger was made (accountant.Sequence.FilterTotal): a zCDP filter
// (Feldman and Zrnic 2021) or simple composition, both valid when each
// run's parameters depend on earlier outputs; a run that would cross the
// budget is refused. The filter is chosen before the first run, from the
// labels the ledger will pay for when they are declared (ChooseFilter),
// else by the first run from its own labels before it releases any
// (Header.FirstRunFilter), and never changed: Options.Upgrade keeps it. For fixed private teachers the total is the smaller
// of that and the teachers' post-processing cap (provenance.Binding.Cap),
// which can make every further release free.
//
// A check recomputes each line's charge from its description (a one-bit
// release's, accountant.OneBitSpend: DaRRM's or RR's, from its pairs) by
// the function the run charged it by, so that a charge edited fails
// whatever the chain says. A one-bit release's pairs are kept reduced to
// those that dominate the others (a few tens, of the same privacy), each
// distinct list addressed by its SHA-256: a line holds its list
// (Spend.Bits) unless its writer has read a line that holds it, which it
// names instead (Spend.BitsAt). A release that reads from its record reads
// a line before the record that a later line names, that line alone, and
// holds a list again when no line it has read holds it: a list is held
// at most once a run. Lines written before the lists were kept state the
// digest alone; their charges are not recomputed, which a note says, and
// after a line that holds or names a list every line of a one-bit release
// must.
//
// A ledger or record that cannot be used as it is (damaged, of an earlier
// version, of other teachers, refused by its record) is the caller's
// input, not a failure: its error has BadInput() bool, true; a header
// parameter out of its domain has Param() (name string, value any, rule
// string), as the accountant's does.
//
// What the accountant computes of a ledger's steps is kept in the caller's
// accountant.Memo: Options.Memo for a ledger opened, the argument m of a
// function on a new ledger's header (nil keeps nothing from one call to
// the next).
package ledger

// Version is the version of the file format. Version 5 states in its
// header either a declared use (Header.Use), composed exactly, or the
// filter of several parts that holds a ledger open to any use
// (Header.Parts, accountant.Filter; or, chosen by its first run, in every
// spend line, Spend.Filter), and describes in every spend line
// the step (Spend.Laplace besides version 4's noise, a one-bit release's
// pairs by their digest, Spend.BitsSHA256, held once in the ledger,
// Spend.Bits and Spend.BitsAt) with what the filter charges each of its
// labels (Spend.Charge), so that a check recomputes the charge from a
// description that holds it whole, and the sums from the charges. Version 4 states the filter that holds the runs to
// the budget (Header.Filter: the zCDP filter or simple composition, each
// of one part) and describes in every spend line the mechanism
// (Spend.Step), whose running sums, the zCDP filter's Σρ among them, each
// line carries for the spends before it (Spend.Prior), so that a release
// reads only the lines its record does not vouch for; a version-4 ledger
// keeps its rule, and releases are charged to it as before. Version 3
// ledgers (the same without the filter and the descriptions) are read
// (Open with Options.ReadOnly) and upgraded to version 4 (Options.Upgrade, which keeps
// their rule, simple composition); no release can be charged to them.
// The development formats before them (versions 1 and 2) are refused
// (versionError).
const Version = 5

// version4 is the format of a ledger held by one filter of one part,
// which Upgrade makes of a version-3 ledger.
const version4 = 4

// version3 is the format Upgrade turns into version 4.
const version3 = 3
