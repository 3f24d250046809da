//go:build unix

package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/decimal"
	"github.com/darrm/darrm/internal/statedir"
	"github.com/darrm/darrm/ledger"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// recordLock returns the lock file of ensemble's record in the tests'
// state folder (TestMain).
func recordLock(ensemble string) string {
	sum := sha256.Sum256([]byte(ensemble))
	return filepath.Join(os.Getenv(statedir.Env), "ledgers", hex.EncodeToString(sum[:16])+".lock")
}

// TestRecordLockInterrupt: a release that waits for the lock of its
// ledger's record (held by another run during its check of the whole
// ledger) says so and ends with exit status 130 on SIGINT or SIGTERM.
func TestRecordLockInterrupt(t *testing.T) {
	dir := t.TempDir()
	votes := smallVotes(t, dir, 10)
	led := newLedgerFile(t, dir, "record-lock", votes)
	f, err := os.OpenFile(recordLock("record-lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		cmd := child("aggregate", votes, "--mechanism", "subsample", "--m", "1", "--eps", "0.1", "--Delta", "1e-5", "--no-cache", "--ledger", led, "--out", filepath.Join(dir, "labels.csv"))
		var stderr syncBuffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && !strings.Contains(stderr.String(), "waiting"); time.Sleep(10 * time.Millisecond) {
		}
		cmd.Process.Signal(sig)
		if code := waitExitWithin(t, cmd, 10*time.Second); code != exitInterrupted || !strings.Contains(stderr.String(), "waiting for the lock on the record of ensemble record-lock") {
			t.Errorf("%v while the record is held: exit %d: %s", sig, code, stderr.String())
		}
	}
}

// readOnlyDir returns a folder that darrm cannot write to: a folder
// without write permission, or, for root, whom permissions do not stop, a
// place under /sys where no folder can be made; the test is skipped where
// there is none.
func readOnlyDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ro")
	os.Mkdir(dir, 0o500)
	t.Cleanup(func() { os.Chmod(dir, 0o700) })
	if f, err := os.Create(filepath.Join(dir, "probe")); err == nil {
		f.Close()
		dir = "/sys/darrm-state-test"
		if err := os.Mkdir(dir, 0o700); err == nil || !os.IsPermission(err) {
			os.Remove(dir)
			t.Skip("no folder here that this user cannot write")
		}
	}
	return dir
}

// TestLedgerSmallerRefusals: a damaged record is bad input (exit 2, as
// docs/aggregate.md's table says), and ledger show prints the ledger with
// a warning all the same; a file that is no ledger is said to be none; an
// upgrade of a ledger of the current version says so and exits 0; init
// --replace prints the record it replaces; and a state folder that darrm
// cannot write names DARRM_STATE_DIR.
func TestLedgerSmallerRefusals(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(statedir.Env, t.TempDir())
	votes := smallVotes(t, dir, 10)
	led := newLedgerFile(t, dir, "smaller", votes)
	release := []string{"aggregate", votes, "--mechanism", "subsample", "--m", "1", "--eps", "0.1", "--Delta", "1e-5", "--no-cache", "--out", filepath.Join(dir, "labels.csv")}
	if _, e, code := darrm(t, "", append(release, "--ledger", led)...); code != 0 {
		t.Fatalf("release: exit %d: %s", code, e)
	}
	record := strings.TrimSuffix(recordLock("smaller"), ".lock") + ".json"
	good, _ := os.ReadFile(record)
	os.WriteFile(record, []byte("{not a record"), 0o600)
	if _, e, code := darrm(t, "", append(release, "--ledger", led)...); code != exitUsage || !strings.Contains(e, "ledger record") {
		t.Errorf("damaged record: exit %d: %s", code, e)
	}
	if out, e, code := darrm(t, "", "ledger", "show", led); code != 0 || !strings.Contains(e, "warning") || !strings.Contains(out, "subsample") {
		t.Errorf("ledger show with a damaged record: exit %d:\n%s%s", code, out, e)
	}
	os.WriteFile(record, good, 0o600)

	if _, e, code := darrm(t, "", append(release, "--ledger", votes)...); code != exitUsage || !strings.Contains(e, "not a ledger") || strings.Contains(e, "good copy") {
		t.Errorf("--ledger votes.csv: exit %d: %s", code, e)
	}

	out, e, code := darrm(t, "", "ledger", "upgrade", led)
	if code != 0 || !strings.Contains(out, "nothing to upgrade") {
		t.Errorf("upgrade of a current ledger: exit %d: %s%s", code, out, e)
	}

	again := filepath.Join(dir, "again.ledger")
	out, e, code = darrm(t, "", append([]string{"ledger", "init", again, "--ensemble", "smaller", "--budget-eps", "1e9", "--budget-delta", "0.5", "--replace"}, binding3...)...)
	if code != 0 || !containsFlat(out, "it replaces ledger "+led) || !containsFlat(out, "retired") {
		t.Errorf("init --replace: exit %d: %s%s", code, out, e)
	}
	if _, e, code := darrm(t, "", append(release, "--ledger", led)...); code != exitUsage || !containsFlat(e, "was retired on") {
		t.Errorf("a release on the ledger replaced: exit %d: %s", code, e)
	}
	// Read, the ledger replaced is checked on its own: no second ledger
	// of the ensemble (its budget is closed), nor one to adopt.
	for _, cmd := range []string{"show", "verify"} {
		if out, e, code := darrm(t, "", "ledger", cmd, led); code != 0 || !containsFlat(e, "ledger "+led+": it was retired on") || !containsFlat(e, "names ledger "+again) || strings.Contains(e, "adopt") {
			t.Errorf("ledger %s of the ledger replaced: exit %d: %s%s", cmd, code, out, e)
		}
	}

	t.Setenv(statedir.Env, readOnlyDir(t))
	if _, e, code := darrm(t, "", append(release, "--ledger", again)...); code == 0 || !strings.Contains(e, "DARRM_STATE_DIR") {
		t.Errorf("a state folder that cannot be written: exit %d: %s", code, e)
	}
}

// TestLedgerRefusals: reading a file as a ledger never changes it; a
// second ledger for an ensemble, an old copy restored and lines removed
// are refused with the command that resolves them, and darrm ledger
// adopt resolves them.
func TestLedgerRefusals(t *testing.T) {
	dir := t.TempDir()
	votes := smallVotes(t, dir, 10)
	config := filepath.Join(dir, "config.json")
	os.WriteFile(config, []byte(`{"a":1}`), 0o644)
	noEnd := filepath.Join(dir, "noend.csv")
	os.WriteFile(noEnd, []byte("1,1,0\n1,0,0"), 0o644)
	for _, args := range [][]string{{"ledger", "show", config}, {"aggregate", votes, "--mechanism", "subsample", "--m", "1", "--eps", "0.1", "--Delta", "1e-5", "--no-cache", "--ledger", noEnd}} {
		if _, stderr, code := darrm(t, "", args...); code != exitUsage {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
		}
	}
	if b, _ := os.ReadFile(config); string(b) != `{"a":1}` {
		t.Errorf("ledger show changed config.json to %q", b)
	}
	if b, _ := os.ReadFile(noEnd); string(b) != "1,1,0\n1,0,0" {
		t.Errorf("--ledger changed the vote file to %q", b)
	}

	led := newLedgerFile(t, dir, "refusals", votes)
	release := []string{"aggregate", votes, "--mechanism", "subsample", "--m", "1", "--eps", "0.1", "--Delta", "1e-5", "--no-cache", "--ledger", led, "--out", filepath.Join(dir, "labels.csv")}
	if _, e, code := darrm(t, "", release...); code != 0 {
		t.Fatal(e)
	}
	old, _ := os.ReadFile(led)
	if _, e, code := darrm(t, "", release...); code != 0 {
		t.Fatal(e)
	}
	os.WriteFile(led, old, 0o644) // an old copy restored
	_, stderr, code := darrm(t, "", release...)
	if code != exitUsage || !strings.Contains(stderr, "darrm ledger adopt "+led) || !strings.Contains(stderr, "older copy was restored") {
		t.Errorf("old copy: exit %d: %s", code, stderr)
	}
	if out, stderr, code := darrm(t, "", "ledger", "adopt", led); code != 0 || recorded(t, led) != 10 || !containsFlat(out, "what it counted beyond these lines is forgotten") || containsFlat(out, "retired") {
		t.Errorf("adopt of an older copy: exit %d: %s%s", code, out, stderr)
	}
	if out, stderr, code := darrm(t, "", "ledger", "adopt", led); code != 0 || !containsFlat(out, "your record had it so already") {
		t.Errorf("adopt of the recorded ledger: exit %d: %s%s", code, out, stderr)
	}
	if _, e, code := darrm(t, "", release...); code != 0 {
		t.Errorf("after adopt: %s", e)
	}
	second := filepath.Join(dir, "second.ledger")
	_, stderr, code = darrm(t, "", append([]string{"ledger", "init", second, "--ensemble", "refusals", "--budget-eps", "1e9", "--budget-delta", "0.5"}, binding3...)...)
	if code != exitUsage || !strings.Contains(stderr, "--replace") {
		t.Errorf("second ledger: exit %d: %s", code, stderr)
	}
}

// v3Ledger writes a ledger of version 3, as darrm wrote them, of the
// ensemble of binding3 with budget (10, 1e-3) and the spends given as
// JSON without their prior: a hash chain, each spend with the (ε, δ) sums
// before it (one spend per run).
func v3Ledger(t *testing.T, path string, spends ...string) {
	t.Helper()
	v3LedgerOf(t, path, `{"version":3,"id":"0123456789abcdef0123456789abcdef","ensemble":"v3","relation":"private-teachers","budget":{"eps":10,"delta":0.001},"delta_prime":0.00001,"created":"2025-01-02T03:04:05Z","teachers":{"K":3,"eps":0.1,"Delta":0.00001,"kind":"per-query","partition":"shared"}}`, spends...)
}

// v3LedgerOf is v3Ledger with the header given as JSON.
func v3LedgerOf(t *testing.T, path, header string, spends ...string) {
	t.Helper()
	prev := ""
	line := func(kind, raw string) string {
		h := sha256.New()
		fmt.Fprintf(h, "darrm-ledger/3\n%s\n%s\n", prev, kind)
		h.Write([]byte(raw))
		sum := hex.EncodeToString(h.Sum(nil))
		l := `{"prev":"` + prev + `","` + kind + `":` + raw + `,"sha256":"` + sum + `"}` + "\n"
		prev = sum
		return l
	}
	s := line("header", header)
	var seq accountant.Sequence
	for _, sp := range spends {
		prior, _ := json.Marshal(seq)
		s += line("spend", strings.TrimSuffix(sp, "}")+`,"prior":`+string(prior)+"}")
		var g struct{ Eps, Delta float64 }
		var q struct{ Queries int }
		json.Unmarshal([]byte(sp), &g)
		json.Unmarshal([]byte(sp), &q)
		if next, err := seq.Add(accountant.Guarantee{Eps: g.Eps, Delta: g.Delta}, q.Queries); err == nil {
			seq = next
		}
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLedgerMessages: the ledger's exit statuses, messages and output:
// I/O failures exit 1; a directory or an unwritable ledger is not told to
// be created; ledger show names no flag it lacks; an infinite budget is refused in the flag's terms; a
// spend of eps 0 names its line; an ESC in a field is printed escaped;
// JSON says eps and delta in lower case; totals are not printed to the
// last float digit.
func TestLedgerMessages(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{append([]string{"ledger", "init", filepath.Join(dir, "inf"), "--ensemble", "e", "--budget-eps", "Inf", "--budget-delta", "0"}, binding3...), exitUsage, "--budget-eps = +Inf: must be a finite number > 0"},
		{append([]string{"ledger", "init", filepath.Join(dir, "nan"), "--ensemble", "e", "--budget-eps", "NaN", "--budget-delta", "0"}, binding3...), exitUsage, "--budget-eps = NaN"},
		{append([]string{"ledger", "init", filepath.Join(dir, "esc"), "--ensemble", "e\x1b[31m", "--budget-eps", "1", "--budget-delta", "0"}, binding3...), exitUsage, `--ensemble = "e\x1b[31m": control characters are not allowed`},
		{[]string{"ledger", "show", dir}, exitUsage, "is a directory, not a ledger file"},
		{[]string{"ledger", "show", filepath.Join(dir, "missing")}, exitUsage, "no such file (create it with darrm ledger init)"},
	} {
		_, stderr, code := darrm(t, "", tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "--ledger:") || strings.Contains(stderr, "json:") {
			t.Errorf("%v: exit %d: %s", tc.args, code, stderr)
		}
	}
	if _, stderr, _ := darrm(t, "", "ledger", "show", dir); strings.Contains(stderr, "ledger init") {
		t.Errorf("a directory is told to be created: %s", stderr)
	}

	// A full disk (here a file size limit of 0) at init: a failure, not
	// bad input, and no file left.
	full := filepath.Join(dir, "full.ledger")
	cmd := inShell("ulimit -f 0", append([]string{"ledger", "init", full, "--ensemble", "full", "--budget-eps", "1", "--budget-delta", "0"}, binding3...)...)
	var e strings.Builder
	cmd.Stderr = &e
	cmd.Start()
	if code := waitExit(t, cmd); code != exitFailure {
		t.Errorf("init on a full disk: exit %d: %s", code, e.String())
	}
	if _, err := os.Stat(full); err == nil {
		t.Error("init on a full disk left a file")
	}

	votes := smallVotes(t, dir, 5)

	// Version 3, with an ESC in a field and a spend of eps 0.
	v1 := filepath.Join(dir, "v3.ledger")
	v3Ledger(t, v1, `{"run":"r1","time":"2025-01-02T03:04:05Z","mechanism":"darrm\u001b[2J","eps":0.30000000000000004,"delta":0,"queries":3,"final":true}`)
	out, stderr, code := darrm(t, "", "ledger", "show", v1)
	if code != 0 || strings.ContainsRune(out, 0x1b) || !strings.Contains(out, `darrm\x1b[2J`) || !strings.Contains(stderr, "darrm ledger upgrade") {
		t.Errorf("ESC in a field: exit %d: %q %s", code, out, stderr)
	}
	l, err := ledger.Open(context.Background(), v1, ledger.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	bal, _ := l.Balance()
	total := bal.Total
	l.Close()
	if full := strconv.FormatFloat(total.Eps, 'g', -1, 64); !strings.Contains(out, "spent_eps="+decimal.FormatBound(total.Eps)+" ") || len(full) > 8 && strings.Contains(out, full) {
		t.Errorf("the total %s is not rounded up to 6 digits: %s", full, out)
	}
	out, _, _ = darrm(t, "", "ledger", "show", v1, "--format", "json")
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc["budget_eps"] != 10.0 || doc["version"] != 3.0 {
		t.Errorf("ledger show JSON: %v %v", doc, err)
	}
	v3Ledger(t, v1, `{"run":"r1","time":"2025-01-02T03:04:05Z","mechanism":"darrm","eps":0,"delta":0,"queries":3,"final":true}`)
	if _, stderr, code := darrm(t, "", "ledger", "show", v1); code != exitUsage || !strings.Contains(stderr, "line 2: spend: eps = 0: must be a finite number > 0") {
		t.Errorf("spend of eps 0: exit %d: %s", code, stderr)
	}

	// The upgrade, and the ledger block of aggregate's JSON in lower case.
	v3Ledger(t, v1, `{"run":"r1","time":"2025-01-02T03:04:05Z","mechanism":"subsample","eps":0.1,"delta":0,"queries":3,"final":true}`)
	if _, stderr, code := darrm(t, "", "aggregate", votes, "--mechanism", "subsample", "--m", "1", "--eps", "0.1", "--Delta", "1e-5", "--no-cache", "--ledger", v1); code != exitUsage || !strings.Contains(stderr, "darrm ledger upgrade") {
		t.Errorf("a release on version 3: exit %d: %s", code, stderr)
	}
	if out, stderr, code := darrm(t, "", append([]string{"ledger", "upgrade", v1}, binding3...)...); code != 0 || !strings.Contains(unwrapped(out), "the spends of 1 run carried over") {
		t.Errorf("upgrade: exit %d: %s%s", code, out, stderr)
	}
	withHeader(t, votes, provenance.Binding{Ensemble: "v3", Teachers: provenance.Teachers{K: 3, Each: accountant.Guarantee{Eps: 0.1, Delta: 1e-5}, Relation: accountant.PrivateTeachers, Kind: provenance.PerQuery, Partition: provenance.SharedData}}.Header(2, votefile.LayoutVotes))
	out, stderr, code = darrm(t, "", "aggregate", votes, "--mechanism", "subsample", "--m", "1", "--eps", "0.1", "--Delta", "1e-5", "--no-cache", "--ledger", v1, "--out", filepath.Join(dir, "l.csv"), "--format", "json")
	if code != 0 || !strings.Contains(out, `"budget": {`+"\n"+`      "eps": 10,`) || strings.Contains(out, `"Eps"`) {
		t.Errorf("aggregate JSON after the upgrade: exit %d: %s%s", code, out, stderr)
	}
	if r := recorded(t, v1); r != 8 {
		t.Errorf("after the upgrade and a release of 5: %d labels recorded", r)
	}
}

// TestUnwritableLedger: a ledger this user cannot write is a failure
// (exit 1) that says why, not bad input, and is not told to be created.
// As root, which may write any file, the release runs
// as nobody, from a copy of the test binary that nobody may run.
func TestUnwritableLedger(t *testing.T) {
	dir := t.TempDir()
	votes := smallVotes(t, dir, 5)
	led := newLedgerFile(t, dir, "unwritable", votes)
	os.Chmod(led, 0o444)
	cmd := child("aggregate", votes, "--mechanism", "subsample", "--m", "1", "--eps", "0.1", "--Delta", "1e-5", "--no-cache", "--ledger", led)
	if os.Getuid() == 0 {
		bin := filepath.Join(dir, "darrm.test")
		b, err := os.ReadFile(os.Args[0])
		if err != nil || os.WriteFile(bin, b, 0o755) != nil {
			t.Skip("cannot copy the test binary")
		}
		for d := dir; d != "/"; d = filepath.Dir(d) {
			if st, err := os.Stat(d); err == nil && st.Mode().Perm()&0o005 != 0o005 && strings.HasPrefix(d, os.TempDir()) && d != os.TempDir() {
				os.Chmod(d, st.Mode().Perm()|0o005)
			}
		}
		// nobody's records go to a folder of the test's, open to nobody,
		// so that the ledger is the only file nobody cannot write.
		state := filepath.Join(dir, "nobody-state")
		if os.Mkdir(state, 0o777) != nil || os.Chmod(state, 0o777) != nil {
			t.Skip("cannot make a folder for nobody's records")
		}
		cmd.Path, cmd.Args[0] = bin, bin
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		cmd.Env = append(cmd.Env, statedir.Env+"="+state, "HOME=/nonexistent")
	}
	var e strings.Builder
	cmd.Stderr = &e
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	if code := waitExit(t, cmd); code != exitFailure || !strings.Contains(e.String(), "permission denied") || strings.Contains(e.String(), "ledger init") {
		t.Errorf("read-only ledger: exit %d: %s", code, e.String())
	}
}

// TestLedgerUpgradeKeepsComposition: issue 46's version-3 one-vote
// ledger at budget (3, 1e-5) that spent (2.95, 0) in pure labels by
// simple composition, upgraded: it keeps simple composition and says so,
// its total stays 2.95, and the next release of pure labels at 0.05
// answers at most one (before, the upgrade chose the zCDP filter, which
// lowered the total and answered a hundred more).
func TestLedgerUpgradeKeepsComposition(t *testing.T) {
	dir := t.TempDir()
	led := filepath.Join(dir, "v3-one-vote.ledger")
	v3LedgerOf(t, led, `{"version":3,"id":"fedcba9876543210fedcba9876543210","ensemble":"v3-one-vote","relation":"one-vote","budget":{"eps":3,"delta":0.00001},"delta_prime":0.00001,"created":"2025-01-02T03:04:05Z","teachers":{"K":3,"eps":0,"Delta":0,"kind":"fixed","partition":"keyed-hash"}}`,
		`{"run":"r1","time":"2025-01-02T03:04:05Z","mechanism":"darrm-one-vote","eps":0.05,"delta":0,"queries":30,"final":true}`,
		`{"run":"r2","time":"2025-01-03T03:04:05Z","mechanism":"darrm-one-vote","eps":0.05,"delta":0,"queries":29,"final":true}`)
	out, stderr, code := darrm(t, "", "ledger", "upgrade", led)
	if code != 0 || !containsFlat(out, "filter simple, kept from version 3") {
		t.Fatalf("upgrade: exit %d: %s%s", code, out, stderr)
	}
	out, stderr, code = darrm(t, "", "ledger", "show", led, "--format", "json")
	var doc struct {
		TotalEps    float64 `json:"spent_eps"`
		Composition string  `json:"composition"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 || doc.Composition != "simple" || math.Abs(doc.TotalEps-2.95) > 1e-9 {
		t.Errorf("ledger show after the upgrade: exit %d, %+v: %s%s", code, doc, out, stderr)
	}
	votes := filepath.Join(dir, "votes.csv")
	os.WriteFile(votes, []byte(strings.Repeat("1,1,0\n", 50)), 0o644)
	withHeader(t, votes, provenance.Binding{Ensemble: "v3-one-vote", Teachers: provenance.Teachers{K: 3, Relation: accountant.OneVote, Kind: provenance.Fixed, Partition: provenance.KeyedHash}}.Header(2, votefile.LayoutVotes))
	labels := filepath.Join(dir, "labels.csv")
	_, stderr, code = darrm(t, "", "aggregate", votes, "--mechanism", "darrm-one-vote", "--target-eps", "0.05", "--delta", "0", "--cache-dir", dir, "--ledger", led, "--out", labels)
	b, _ := os.ReadFile(labels)
	if n := labelsIn(b); code != exitBudget || n > 1 {
		t.Errorf("release after the upgrade: exit %d, %d labels: %s", code, n, stderr)
	}
}

// TestPlanLedgerStory: the ledger flow tells one story (issue 55). plan
// --for ledger prints the ledger init that declares its labels; run as
// printed (through a shell, its lines continued), with LEDGER and VOTES
// named, it keeps the filter the plan counted; the planned labels are all
// released on it, with the settings it declares; and the number to
// publish is printed the same by the plan, the release and ledger show
// (the budget, with the same line of why), while what the labels spent,
// the same in the plan and ledger show, is labelled as spent. A
// two-class plan (over a second of solving) runs without -short.
func TestPlanLedgerStory(t *testing.T) {
	dir := t.TempDir()
	many := filepath.Join(dir, "votes-many.csv")
	var rows strings.Builder
	rows.WriteString(`# {"darrm-votes":1,"ensemble":"plan-story-many","K":25,"classes":10,"layout":"votes","relation":"one-vote","kind":"fixed","partition":"keyed-hash","teachers":[{"count":25,"source":{"method":"none"}}]}` + "\n")
	for q := range 40 {
		for k := range 25 {
			if k > 0 {
				rows.WriteString(",")
			}
			rows.WriteString(strconv.Itoa((q + k/8) % 10))
		}
		rows.WriteString("\n")
	}
	os.WriteFile(many, []byte(rows.String()), 0o644)
	// The same votes of another ensemble, for a ledger of its own.
	open := filepath.Join(dir, "votes-open.csv")
	os.WriteFile(open, []byte(strings.Replace(rows.String(), `"plan-story-many"`, `"plan-story-open"`, 1)), 0o644)
	// The README's 11 private teachers, as fresh mechanisms per query: no
	// teachers' cap, which a plan does not know.
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "votes-K11.csv"))
	if err != nil {
		t.Fatal(err)
	}
	two := filepath.Join(dir, "votes-two.csv")
	body := strings.Replace(strings.Replace(string(raw), `"testdata-votes-K11"`, `"plan-story-two"`, 1), `"kind":"fixed"`, `"kind":"per-query"`, 1)
	os.WriteFile(two, []byte(body), 0o644)
	cases := []struct {
		name, votes string
		plan        []string
	}{
		{"gnmax", many, []string{"--mechanism", "gnmax", "--K", "25", "--classes", "10", "--queries", "40", "--budget-eps", "2", "--budget-delta", "1e-5"}},
		// Issue 57: a ledger open to any use, by the filter named, tells
		// the same story: its budget to publish, with the same why.
		{"gnmax open", open, []string{"--mechanism", "gnmax", "--K", "25", "--classes", "10", "--queries", "40", "--budget-eps", "2", "--budget-delta", "1e-5",
			"--filter", "zcdp-filter"}},
		{"rr", two, []string{"--mechanism", "rr", "--K", "11", "--eps", "0.1", "--Delta", "1e-5", "--queries", "20", "--budget-eps", "10", "--budget-delta", "1e-3"}},
	}
	if testing.Short() {
		cases = cases[:2]
	}
	// settings are the words of the printed init that aggregate takes.
	settings := map[string]bool{"--mechanism": true, "--sigma2": true, "--sigma1": true, "--threshold": true, "--delta": true, "--m": true, "--laplace-scale": true, "--target-eps": true}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			text, e, code := darrm(t, "", append(append([]string{"plan"}, c.plan...), "--for", "ledger")...)
			if code != 0 {
				t.Fatalf("plan: exit %d: %s", code, e)
			}
			for _, l := range strings.Split(text, "\n") {
				if len([]rune(l)) > 100 {
					t.Errorf("a line of %d columns: %s", len([]rune(l)), l)
				}
			}
			cell := func(key string) string {
				for _, l := range strings.Split(text, "\n") {
					if f := strings.Fields(strings.Trim(l, "│ ")); len(f) >= 3 && f[0] == key {
						return f[2]
					}
				}
				t.Fatalf("plan: no %s:\n%s", key, text)
				return ""
			}
			publish := "(" + cell("publish_eps") + ", " + cell("publish_delta") + ")-DP"
			_, printed, ok := strings.Cut(text, "To make the ledger")
			if _, printed, _ = strings.Cut(printed, "\n"); !ok || !strings.HasPrefix(printed, "darrm ledger init LEDGER --votes VOTES") {
				t.Fatalf("plan --for ledger prints no ledger init:\n%s", text)
			}
			led := filepath.Join(dir, c.name+".ledger")
			script := strings.NewReplacer(" LEDGER ", " '"+led+"' ", " VOTES ", " '"+c.votes+"' ").Replace(printed)
			sh := exec.Command("sh", "-c", `darrm() { GO_DARRM_MAIN=1 "$DARRM_TEST_BINARY" "$@"; }`+"\n"+script)
			sh.Env = append(os.Environ(), "DARRM_TEST_BINARY="+os.Args[0])
			out, err := sh.CombinedOutput()
			if err != nil || !containsFlat(string(out), "kept: "+cell("ledger_filter")) || !containsFlat(string(out), "to publish: "+publish) {
				t.Fatalf("the printed ledger init, run as printed: %v\n%s\n%s", err, script, out)
			}

			release := []string{"aggregate", c.votes, "--ledger", led, "--out", filepath.Join(dir, c.name+"-labels.csv")}
			words := strings.Fields(strings.ReplaceAll(printed, "\\\n", " "))
			for i, w := range words {
				if settings[w] {
					release = append(release, w, words[i+1])
				}
			}
			sum, e, code := darrm(t, "", release...)
			if code != 0 || !containsFlat(sum, "TO PUBLISH: "+publish+" for every release charged to the ledger") ||
				!containsFlat(sum, fmt.Sprintf("%s (csv): %s of %s queries", filepath.Join(dir, c.name+"-labels.csv"), cell("queries"), cell("queries"))) {
				t.Fatalf("aggregate %v: exit %d:\n%s%s", release, code, sum, e)
			}
			show, _, _ := darrm(t, "", "ledger", "show", led)
			if !containsFlat(show, "publish_eps="+cell("publish_eps")+" publish_delta="+cell("publish_delta")) ||
				!containsFlat(show, "spent_eps="+cell("ledger_spent_eps")+" spent_delta="+cell("ledger_spent_delta")) {
				t.Errorf("ledger show does not say what the plan said (to publish %s, spent (%s, %s)):\n%s", publish, cell("ledger_spent_eps"), cell("ledger_spent_delta"), show)
			}
			js, _, _ := darrm(t, "", "ledger", "show", led, "--format", "json")
			var l map[string]any
			decode(t, js, &l)
			if why, _ := l["publish_why"].(string); why == "" || !containsFlat(sum, "why: "+why) || !containsFlat(text, why) {
				t.Errorf("why %q: not said alike by plan and aggregate:\n%s\n%s", why, text, sum)
			}
			if c.name != "gnmax" {
				return
			}
			// account pate of the labels: the ledger's total to publish with
			// --ledger; without it, the labels' own total is not the one to
			// publish, since their header names the ledger they were charged to.
			account := []string{"account", "pate", c.votes, "--labels", filepath.Join(dir, c.name+"-labels.csv"), "--target-delta", cell("publish_delta"), "--format", "json"}
			var alone, with map[string]any
			rl, err := ledger.Open(t.Context(), led, ledger.Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			id := rl.Header().ID
			rl.Close()
			js, e, code = darrm(t, "", account...)
			decode(t, js, &alone)
			if code != 0 || alone["publish"] != "ledger" || !strings.Contains(alone["publication"].(string), "charged to the ledger of id "+id) {
				t.Errorf("account pate of the ledger's labels, without --ledger: exit %d: publish %v: %v%s", code, alone["publish"], alone["publication"], e)
			}
			js, e, code = darrm(t, "", append(account, "--ledger", led)...)
			decode(t, js, &with)
			if code != 0 || with["publish"] != "eps_guarantee" || decimal.FormatBound(with["eps_guarantee"].(float64)) != cell("publish_eps") {
				t.Errorf("account pate with --ledger: exit %d: publish %v = %v, want the ledger's %s%s", code, with["publish"], with["eps_guarantee"], cell("publish_eps"), e)
			}
		})
	}
}

// TestLedgerAdoptSays: ledger adopt of a second ledger of the ensemble
// retires the one the record named and says so, and a release on that one
// is then refused to anyone; adopt of a ledger put in the recorded one's
// place says there is none to retire.
func TestLedgerAdoptSays(t *testing.T) {
	dir := t.TempDir()
	votes := smallVotes(t, dir, 4)
	mine, theirs := t.TempDir(), t.TempDir()
	t.Setenv(statedir.Env, mine)
	first := newLedgerFile(t, dir, "adopted", votes)
	t.Setenv(statedir.Env, theirs)
	second := filepath.Join(t.TempDir(), "second.ledger")
	if _, e, code := darrm(t, "", append([]string{"ledger", "init", second, "--ensemble", "adopted", "--budget-eps", "1e9", "--budget-delta", "0.5"}, binding3...)...); code != 0 {
		t.Fatal(e)
	}
	t.Setenv(statedir.Env, mine)
	if out, e, code := darrm(t, "", "ledger", "adopt", second); code != 0 || !containsFlat(out, "it replaces ledger "+first) || !containsFlat(out, "retired where it still is") {
		t.Errorf("adopt of a second ledger: exit %d: %s%s", code, out, e)
	}
	t.Setenv(statedir.Env, theirs)
	release := []string{"aggregate", votes, "--mechanism", "subsample", "--m", "1", "--no-cache", "--out", filepath.Join(dir, "labels.csv")}
	if _, e, code := darrm(t, "", append(release, "--ledger", first)...); code != exitUsage || !containsFlat(e, "was retired on") {
		t.Errorf("a release on the ledger adopt replaced: exit %d: %s", code, e)
	}

	t.Setenv(statedir.Env, t.TempDir())
	third := filepath.Join(t.TempDir(), "third.ledger")
	if _, e, code := darrm(t, "", append([]string{"ledger", "init", third, "--ensemble", "adopted", "--budget-eps", "1e9", "--budget-delta", "0.5"}, binding3...)...); code != 0 {
		t.Fatal(e)
	}
	if err := os.Rename(third, second); err != nil {
		t.Fatal(err)
	}
	t.Setenv(statedir.Env, mine)
	if out, e, code := darrm(t, "", "ledger", "adopt", second); code != 0 || !containsFlat(out, "there is none to retire") {
		t.Errorf("adopt of a ledger in the recorded one's place: exit %d: %s%s", code, out, e)
	}
}
