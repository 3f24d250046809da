package ledger

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/votefile"
)

// writeV1 writes a ledger of version 1 as darrm wrote them: the header's
// budget with upper-case keys, each line with the SHA-256 of its JSON.
func writeV1(t *testing.T, path, ensemble string, spends []Spend, tail string) {
	t.Helper()
	enc := func(kind string, v any) string {
		raw, _ := json.Marshal(v)
		return `{"` + kind + `":` + string(raw) + `,"sha256":"` + v1Hash(raw) + `"}` + "\n"
	}
	type budget struct{ Eps, Delta float64 }
	s := enc("header", struct {
		Version    int       `json:"version"`
		Ensemble   string    `json:"ensemble"`
		Relation   string    `json:"relation"`
		Budget     budget    `json:"budget"`
		DeltaPrime float64   `json:"delta_prime"`
		Created    time.Time `json:"created"`
	}{1, ensemble, "private-teachers", budget{10, 1e-3}, 1e-5, time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)})
	for _, sp := range spends {
		s += enc("spend", sp)
	}
	if err := os.WriteFile(path, []byte(s+tail), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestUpgrade turns a version-1 ledger into a version-2 one: a run
// refuses version 1 and names the command; the upgrade carries every
// run's last record over (the same total), binds the ensemble stated,
// keeps the old file under .v1 marked so that version-1 readers refuse
// it, records the new ledger, and is refused for an ensemble recorded
// with another ledger unless told to replace it.
func TestUpgrade(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "old.ledger")
	now := time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC)
	spends := []Spend{
		{Run: "a1", Time: now, Mechanism: "darrm", Eps: 0.3, Delta: 3e-5, Queries: 10},
		{Run: "a1", Time: now, Mechanism: "darrm", Eps: 0.3, Delta: 3e-5, Queries: 7, Final: true},
		{Run: "b2", Time: now, Mechanism: "rr", Eps: 0.1, Delta: 0, Queries: 4},
	}
	writeV1(t, path, "k11", spends, `{"spend":{"run":"c3"`)
	v1, err := ReadOnly(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	total1, _, _ := v1.Total()
	v1.Close()
	var ve *VersionError
	if err := openErr(path, Options{}); !errors.As(err, &ve) || !strings.Contains(err.Error(), "darrm ledger upgrade") {
		t.Fatalf("a run on version 1: %v", err)
	}
	if _, err := Upgrade(ctx, path, votefile.Binding{}, InitOptions{}); err == nil || !strings.Contains(err.Error(), "state K, the teachers' eps and Delta, kind and partition") {
		t.Errorf("upgrade of version 1 without the parameters: %v", err)
	}
	stated := bound
	stated.Ensemble = "mnist58-k11-upgraded"
	res, err := Upgrade(ctx, path, stated, InitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Runs != 2 || res.Backup != backupName(path, 1) {
		t.Errorf("upgrade: %+v", res)
	}
	l := open(t, path)
	h := l.Header()
	total2, _, _ := l.Total()
	if h.Version != Version || h.Ensemble != "mnist58-k11-upgraded" || h.Budget != (accountant.Guarantee{Eps: 10, Delta: 1e-3}) || h.Teachers == nil || h.Teachers.K != 11 ||
		h.Upgraded == nil || h.Upgraded.Lines != 4 || total2 != total1 || len(runs(t, l)) != 2 || runs(t, l)[0].Queries != 7 {
		t.Errorf("upgraded: header %+v, total %v (was %v), spends %+v", h, total2, total1, runs(t, l))
	}
	l.Close()
	spend(t, path, 1)

	// The kept file: version-1 readers refuse its last line; darrm reads
	// it and says what it is.
	b, _ := os.ReadFile(res.Backup)
	last := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if !isMarker([]byte(last[len(last)-1])) {
		t.Errorf("the kept file does not end with the mark: %q", last[len(last)-1])
	}
	k, err := ReadOnly(ctx, res.Backup, Options{})
	if err != nil || !strings.Contains(strings.Join(k.Notes(), "; "), "marked as upgraded") {
		t.Errorf("the kept file: %v, %v", err, k)
	}

	// Interrupted after the mark: upgrading again completes it.
	again := filepath.Join(dir, "again.ledger")
	writeV1(t, again, "k11-again", spends, "")
	f, _ := os.OpenFile(again, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"upgraded":{"to":2,"time":"2025-03-01T00:00:00Z"}}` + "\n")
	f.Close()
	if _, err := Upgrade(ctx, again, bound, InitOptions{}); err != nil {
		t.Fatalf("upgrade after an interrupted one: %v", err)
	}
	spend(t, again, 1)

	// An ensemble recorded with another ledger.
	third := filepath.Join(dir, "third.ledger")
	writeV1(t, third, "k11-again", spends, "")
	_, err = Upgrade(ctx, third, bound, InitOptions{})
	recordError(t, "upgrade of a second ledger", err, SecondLedger)
	if _, err := os.Stat(backupName(third, 1)); err == nil {
		t.Error("a refused upgrade kept a copy")
	}
	if _, err := Upgrade(ctx, third, bound, InitOptions{Replace: true}); err != nil {
		t.Fatal(err)
	}
	err = openErr(again, Options{})
	recordError(t, "the replaced ledger", err, SecondLedger)
	if res, err := Upgrade(ctx, third, bound, InitOptions{}); err != nil || !res.Current || res.From != Version {
		t.Errorf("upgrade of a ledger of the current version: %+v, %v", res, err)
	}
}

// TestUpgradeUnchained: a version-2 ledger of a development build (bound
// to its ensemble, no hash chain) is read, refused for a run, and upgraded
// keeping its own binding, which the upgrade may repeat, not contradict.
func TestUpgradeUnchained(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dev.ledger")
	own := unique(bound)
	h := NewHeader(own, accountant.Guarantee{Eps: 10, Delta: 1e-3}, 1e-5)
	h.Version = 2
	raw, _ := json.Marshal(h)
	sp, _ := json.Marshal(Spend{Run: "a1", Time: time.Now().UTC(), Mechanism: "darrm", Eps: 0.3, Delta: 3e-5, Queries: 5, Final: true})
	os.WriteFile(path, []byte(`{"header":`+string(raw)+`,"sha256":"`+v1Hash(raw)+`"}`+"\n"+`{"spend":`+string(sp)+`,"sha256":"`+v1Hash(sp)+`"}`+"\n"), 0o644)
	var ve *VersionError
	if err := openErr(path, Options{}); !errors.As(err, &ve) || !strings.Contains(err.Error(), "without a hash chain") {
		t.Errorf("a run on an unchained version 2: %v", err)
	}
	other := own
	other.K = 9
	var be *BindingError
	if _, err := Upgrade(ctx, path, other, InitOptions{}); !errors.As(err, &be) {
		t.Errorf("upgrade contradicting the binding: %v", err)
	}
	if _, err := Upgrade(ctx, path, votefile.Binding{}, InitOptions{}); err != nil {
		t.Fatal(err)
	}
	l := open(t, path)
	defer l.Close()
	if b := binding(t, l); b != own || l.Header().Upgraded.Version != 2 || len(runs(t, l)) != 1 {
		t.Errorf("upgraded: %+v, %+v", b, l.Header())
	}
}

// writeV2 writes a ledger of version 2 as darrm wrote them, bound to b: a
// hash chain, the spends without their totals, and returns its header.
func writeV2(t *testing.T, path string, b votefile.Binding, spends []Spend) Header {
	t.Helper()
	h := NewHeader(b, accountant.Guarantee{Eps: 10, Delta: 1e-3}, 1e-5)
	h.Version, h.ID, h.Created = 2, "0123456789abcdef0123456789abcdef", time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	enc := func(prev, kind string, v any) (string, string) {
		raw, _ := json.Marshal(v)
		sum := chainHash(2, prev, kind, raw)
		b, _ := json.Marshal(line{Prev: &prev, Header: map[bool]*json.RawMessage{true: (*json.RawMessage)(&raw)}[kind == "header"],
			Spend: map[bool]*json.RawMessage{true: (*json.RawMessage)(&raw)}[kind == "spend"], SHA256: sum})
		return string(b) + "\n", sum
	}
	s, head := enc("", "header", h)
	for _, sp := range spends {
		var l string
		l, head = enc(head, "spend", sp)
		s += l
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return h
}

// recordV2 writes, in the state folder of opts, the record that darrm of
// version 2 kept of the ledger of header h: its id, lines and last line,
// no byte count.
func recordV2(t *testing.T, opts Options, h Header, path string, lines int, head string) {
	t.Helper()
	st, err := openState(ctx, opts, h.Ensemble)
	if err != nil {
		t.Fatal(err)
	}
	defer st.close()
	fi, _ := os.Stat(path)
	r := newRecord(h, "", path, fi, lines, 0, head)
	if err := st.write(r); err != nil {
		t.Fatal(err)
	}
}

// TestUpgradeVersion2: a ledger of version 2 (a hash chain without
// totals) is read, refused for a run with the command that upgrades it,
// and upgraded without --replace when the record is its own, keeping its
// binding and totals; the record of another user, of the old ledger as it
// was or behind it, follows it to the new one; a version-2 ledger that its
// record refuses (lines removed) is not upgraded.
func TestUpgradeVersion2(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "v2.ledger")
	own := unique(bound)
	now := time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC)
	spends := []Spend{
		{Run: "a1", Time: now, Mechanism: "darrm", Eps: 0.3, Delta: 3e-5, Queries: 10},
		{Run: "a1", Time: now, Mechanism: "darrm", Eps: 0.3, Delta: 3e-5, Queries: 7, Final: true},
		{Run: "b2", Time: now, Mechanism: "rr", Eps: 0.1, Delta: 0, Queries: 4, Final: true},
	}
	h := writeV2(t, path, own, spends)
	old, err := ReadOnly(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	before, _ := old.Balance()
	head, lines := old.Head(), old.Lines()
	old.Close()
	recordV2(t, Options{}, h, path, lines, head)
	other := Options{StateDir: t.TempDir()}
	recordV2(t, other, h, path, lines-1, "an older line")
	var ve *VersionError
	if err := openErr(path, Options{}); !errors.As(err, &ve) || !ve.Chain || !strings.Contains(err.Error(), "darrm ledger upgrade "+path) {
		t.Fatalf("a run on version 2: %v", err)
	}
	res, err := Upgrade(ctx, path, votefile.Binding{}, InitOptions{})
	if err != nil || res.From != 2 || res.Runs != 2 || res.Backup != path+".v2" || res.Previous != nil {
		t.Fatalf("upgrade of version 2: %+v, %v", res, err)
	}
	l := open(t, path)
	after, _ := l.Balance()
	u := l.Header().Upgraded
	if b := binding(t, l); b != own || after != before || u == nil || u.ID != h.ID || u.Head != head || u.Lines != lines {
		t.Errorf("upgraded: binding %+v, balance %+v (was %+v), upgraded from %+v", b, after, before, u)
	}
	l.Close()
	if l, err := Open(ctx, path, other); err != nil {
		t.Errorf("another user's record of the old ledger: %v", err)
	} else {
		l.Close()
	}
	stranger := Options{StateDir: t.TempDir()}
	recordV2(t, stranger, Header{Ensemble: h.Ensemble, ID: "fedcba9876543210fedcba9876543210"}, path, 2, "x")
	recordError(t, "a record of another ledger", openErr(path, stranger), SecondLedger)

	// Behind its record: not upgraded.
	cut := filepath.Join(dir, "cut.ledger")
	own2 := unique(bound)
	h2 := writeV2(t, cut, own2, spends)
	r, _ := ReadOnly(ctx, cut, Options{})
	recordV2(t, Options{}, h2, cut, r.Lines(), r.Head())
	r.Close()
	writeV2(t, cut, own2, spends[:2])
	_, err = Upgrade(ctx, cut, votefile.Binding{}, InitOptions{})
	recordError(t, "upgrade of a version 2 behind its record", err, Behind)
}

// TestUpgradeCurrentDamaged: Upgrade of a ledger of the current version
// checks it: a damaged one is a *CorruptError, not Current.
func TestUpgradeCurrentDamaged(t *testing.T) {
	path := newLedger(t, accountant.Guarantee{Eps: 50, Delta: 1e-2})
	spend(t, path, 2)
	if res, err := Upgrade(ctx, path, votefile.Binding{}, InitOptions{}); err != nil || !res.Current {
		t.Fatalf("a sound current ledger: %+v, %v", res, err)
	}
	b := mustReadFile(t, path)
	os.WriteFile(path, []byte(strings.Replace(string(b), `"queries":2`, `"queries":1`, 1)), 0o644)
	res, err := Upgrade(ctx, path, votefile.Binding{}, InitOptions{})
	corruptAt(t, "a damaged current ledger", err, 2, "sha256")
	if res.Current {
		t.Error("a damaged ledger was said to be current")
	}
}
