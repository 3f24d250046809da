package ledger

import (
	"errors"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/darrm/darrm/accountant"
)

// shareBudget is the budget of the tests of shares, and shareStep's
// labels those they charge.
var (
	shareBudget = accountant.Budget{Guarantee: accountant.Guarantee{Eps: 3, Delta: 1e-3}}
	shareStep   = accountant.ApproxStep(step)
)

// TestAnalysts: on a ledger file, each run records the analyst the Options
// names; a ledger that gives shares holds each analyst's runs to their
// share and refuses an analyst without one.
func TestAnalysts(t *testing.T) {
	testAnalysts(t, func(h Header) string {
		path := filepath.Join(t.TempDir(), "team.ledger")
		if _, err := book.create(ctx, path, h, false); err != nil {
			t.Fatal(err)
		}
		return path
	}, "", func(_ *testing.T, name, location string) (Options, string) {
		bk := book
		bk.Analyst = name
		return bk, location
	})
}

// testPGAnalysts is TestAnalysts on PostgreSQL ledgers, whose analysts
// are the database users that charge them: each analyst logs in as a
// role of their name, and a run records the database user.
func testPGAnalysts(t *testing.T, db string) {
	n := 0
	// The URL each analyst logs in with, by test, ledger and name: the
	// role is made once for the test that logs in first.
	logins := map[[3]string]string{}
	testAnalysts(t, func(h Header) string {
		n++
		u := pgURL(db, "team "+string(rune('a'+n)))
		if _, err := book.create(ctx, u, h, false); err != nil {
			t.Fatal(err)
		}
		return u
	}, pgUser(t, db), func(t *testing.T, name, location string) (Options, string) {
		if name == "" {
			return book, location
		}
		key := [3]string{t.Name(), location, name}
		if _, ok := logins[key]; !ok {
			logins[key] = analystURL(t, location, name)
		}
		return book, logins[key]
	})
}

// analystURL returns location, a ledger's URL in a test's database, as
// the analyst name logs in to it: a role of that name, made on the
// test's server with the GRANTs of an analyst of docs/aggregate.md ("A
// team"), dropped when the test ends.
func analystURL(t *testing.T, location, name string) string {
	t.Helper()
	u := mustParse(t, location)
	admin := *u
	admin.RawQuery = ""
	role := pgx.Identifier{name}.Sanitize()
	var exists bool
	conn, err := pgConnect(ctx, admin.String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT FROM pg_roles WHERE rolname = $1)", name).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	sqls := analystGrants(role)
	if !exists {
		sqls = append([]string{"CREATE ROLE " + role + " LOGIN PASSWORD 'analyst-pw'"}, sqls...)
		t.Cleanup(func() {
			sqlExec(t, admin.String(), "DROP OWNED BY "+role+"; DROP ROLE IF EXISTS "+role)
		})
	}
	for _, sql := range sqls {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	u.User = url.UserPassword(name, "analyst-pw")
	return u.String()
}

// pgUser is the user of the URL db.
func pgUser(t *testing.T, db string) string {
	t.Helper()
	u, err := url.Parse(db)
	if err != nil || u.User.Username() == "" {
		t.Fatalf("the test's URL %s names no user: %v", Redact(db), err)
	}
	return u.User.Username()
}

// testAnalysts checks analysts and shares on the ledgers made by mk; a
// run whose Options names no analyst records user.
func testAnalysts(t *testing.T, mk func(Header) string, user string, login func(t *testing.T, name, location string) (Options, string)) {
	// run opens a run of analyst name on the ledger at location and
	// returns its allowance, the error of a reservation of reserve
	// labels, and settles them.
	runOf := func(step accountant.Spend) func(*testing.T, string, string, int) (int, error) {
		return func(t *testing.T, name string, location string, reserve int) (int, error) {
			t.Helper()
			bk, location := login(t, name, location)
			l, err := bk.forRun(ctx, location)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			if err := l.begin(ctx, "darrm", binding(t, l), step); err != nil {
				return 0, err
			}
			allowed, err := l.allowance(step, -1)
			if err != nil {
				t.Fatal(err)
			}
			err = l.Reserve(ctx, reserve)
			if err == nil {
				err = l.Settle(ctx, reserve)
			}
			return allowed, err
		}
	}
	run := runOf(shareStep)
	maxSteps := func(t *testing.T, b accountant.Guarantee) int {
		n, err := (accountant.Composition{Method: accountant.Simple, DeltaPrime: 1e-5}).MaxSteps(step, accountant.Budget{Guarantee: b})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	t.Run("Recorded", func(t *testing.T) {
		u := mk(NewHeader(unique(bound), shareBudget, 1e-5, simpleFilter(shareBudget)))
		for _, c := range []struct{ analyst, want string }{{"alice", "alice"}, {"", user}, {"bob ä", "bob ä"}} {
			if _, err := run(t, c.analyst, u, 1); err != nil {
				t.Fatalf("analyst %q: %v", c.analyst, err)
			}
		}
		l, err := book.readOnly(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		var got []string
		for _, s := range runs(t, l) {
			got = append(got, s.Analyst)
		}
		if want := []string{"alice", user, "bob ä"}; strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("the runs' analysts: %q, want %q", got, want)
		}
		sums, err := l.Analysts(ctx)
		if err != nil || len(sums) != 3 || sums[0].Runs != 1 || sums[0].Labels != 1 || sums[0].ShareBudget != nil || sums[0].Spent != step {
			t.Errorf("Analysts: %+v, %v; want three of one run of one label of %v each, no share", sums, err, step)
		}
		if _, err := (Options{StateDir: book.StateDir, Analyst: "a\x01"}).forRun(ctx, u); err == nil || !strings.Contains(err.Error(), "analyst") {
			t.Errorf("an analyst's name with a control character: %v", err)
		}
	})

	t.Run("Shares", func(t *testing.T) {
		h := NewHeader(unique(bound), shareBudget, 1e-5, simpleFilter(shareBudget))
		h.Shares = map[string]float64{"alice": 0.5, "bob": 0.2}
		u := mk(h)
		alice := accountant.Guarantee{Eps: 0.5 * shareBudget.Eps, Delta: 0.5 * shareBudget.Delta}
		aliceMax, ledgerMax := maxSteps(t, alice), maxSteps(t, shareBudget.Guarantee)
		if aliceMax >= ledgerMax || aliceMax < 3 {
			t.Fatalf("alice's share allows %d labels, the ledger %d: the test needs fewer than the ledger's, and 3", aliceMax, ledgerMax)
		}
		if allowed, err := run(t, "alice", u, 2); allowed != aliceMax || err != nil {
			t.Errorf("alice's first run: allowance %d, %v; want %d, her share's", allowed, err, aliceMax)
		}
		allowed, err := run(t, "alice", u, aliceMax-1)
		if allowed != aliceMax-2 || !errors.Is(err, errBudget) || !strings.Contains(err.Error(), `"alice"'s share 0.5`) {
			t.Errorf("alice beyond her share: allowance %d, %v; want %d and a refusal naming her share", allowed, err, aliceMax-2)
		}
		if _, err := run(t, "alice", u, aliceMax-2); err != nil {
			t.Errorf("alice within her share: %v", err)
		}
		for _, who := range []string{"carol", ""} {
			_, err := run(t, who, u, 1)
			var se *shareError
			if !errors.As(err, &se) || !isBad(err) || !strings.Contains(err.Error(), `("alice", "bob")`) {
				t.Errorf("analyst %q, without a share: %v, want a *shareError naming the shares", who, err)
			}
		}
		l, err := book.readOnly(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		sums, err := l.Analysts(ctx)
		if err != nil || len(sums) != 2 || sums[0].Analyst != "alice" || sums[0].Runs != 2 || sums[0].Labels != aliceMax ||
			sums[0].ShareBudget == nil || *sums[0].ShareBudget != alice || sums[1].Analyst != "bob" || sums[1].Runs != 0 || sums[1].Share != 0.2 {
			t.Errorf("Analysts: %+v, %v; want alice's 2 runs of %d labels within %v, and bob's share unused", sums, err, aliceMax, alice)
		}
		if b, err := l.Balance(); err != nil || b.Publish.Guarantee != shareBudget.Guarantee {
			t.Errorf("the total to publish: %+v, %v; want the ledger's one budget %v", b.Publish, err, shareBudget)
		}
	})

	// On a ledger open to any use whose filter states its total at its
	// δ, an analyst's share allows what Header.ShareAllows counts, and
	// the analyst's spend is stated at the share's δ, not the budget's.
	t.Run("FilterShares", func(t *testing.T) {
		if testing.Short() && user != "" {
			// The count is the header's, whatever the store: TestAnalysts
			// checks it on a file under -short; Shares checks PostgreSQL's
			// analysts held to their shares.
			t.Skip("on PostgreSQL (about 1 s of the server's CPU): runs without -short")
		}
		b := unique(bound)
		pure := accountant.ApproxStep(accountant.Guarantee{Eps: 0.1})
		run := runOf(pure)
		f, err := NamedFilter(nil, b, shareBudget, &pure, accountant.ZCDPFilter)
		if err != nil {
			t.Fatal(err)
		}
		h := NewHeader(b, shareBudget, 1e-5, f)
		h.Shares = map[string]float64{"alice": 0.4}
		want, err := h.ShareAllows(nil, pure, 0.4)
		if err != nil || want < 2 {
			t.Fatalf("ShareAllows: %d, %v; the test needs 2 labels or more", want, err)
		}
		whole, err := f.MaxSteps(nil, accountant.Sequence{}, pure, shareBudget.Guarantee)
		if err != nil || whole <= want {
			t.Fatalf("the ledger allows %d labels (%v), alice's share %d: the test needs fewer in the share", whole, err, want)
		}
		u := mk(h)
		if allowed, err := run(t, "alice", u, want+1); allowed != want || !errors.Is(err, errBudget) {
			t.Errorf("alice: allowance %d, a reservation of %d: %v; want %d and a refusal", allowed, want+1, err, want)
		}
		if _, err := run(t, "alice", u, want); err != nil {
			t.Errorf("alice's %d labels: %v", want, err)
		}
		l, err := book.readOnly(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		sums, err := l.Analysts(ctx)
		share := accountant.Guarantee{Eps: 0.4 * shareBudget.Eps, Delta: 0.4 * shareBudget.Delta}
		if err != nil || len(sums) != 1 || sums[0].Labels != want || sums[0].Spent.Delta != share.Delta || !sums[0].Spent.Within(share) || sums[0].ShareLabels != 0 {
			t.Errorf("Analysts: %+v, %v; want alice's %d labels spent at her share's delta, within %v", sums, err, want, share)
		}
	})

	t.Run("BadShares", func(t *testing.T) {
		for _, shares := range []map[string]float64{{"alice": 0}, {"alice": 1.5}, {"": 0.5}, {"a\nb": 0.5}} {
			h := NewHeader(unique(bound), shareBudget, 1e-5, simpleFilter(shareBudget))
			h.Shares = shares
			_, err := book.create(ctx, filepath.Join(t.TempDir(), "bad.ledger"), h, false)
			if err == nil || !strings.Contains(err.Error(), "shares") {
				t.Errorf("shares %v: %v, want a refusal naming shares", shares, err)
			}
		}
	})
}

// TestCheckSharesNamesFirst: of several bad shares, CheckShares names the
// first by name, every time, where it named whichever the map's order
// reached first.
func TestCheckSharesNamesFirst(t *testing.T) {
	shares := map[string]float64{"zoe": 2, "bob": 0, "alice": 1.5, "carol": 0.5, "dan": -1}
	for range 50 {
		if err := CheckShares(shares); err == nil || !strings.Contains(err.Error(), "alice=1.5") {
			t.Fatalf("CheckShares: %v, want alice's share named", err)
		}
	}
}
