package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestAggregateOneSchema: aggregate --format json writes one schema for
// every registered mechanism, of two classes and of many: the same keys
// at every depth of the summary's own objects, null where a key does not
// apply (an object that is null has none of its keys). A mechanism
// registered later is compared without a line here. Each release runs
// twice, plainly and seeded under a budget, so that the keys of the
// randomness and of the budget are compared too. The votes' header, the
// certificate, the cap, the ledger and the mechanism's settings are
// documents of their own (a file's header, gamma.Certificate,
// accountant.Cap, the ledger's state, the mechanism's JSON): their keys
// are compared, not what is inside them.
func TestAggregateOneSchema(t *testing.T) {
	cache := t.TempDir()
	// Under -short at a smaller size: releases of 10 queries, not 30 (the
	// keys are those of any count).
	queries := 30
	if testing.Short() {
		queries = 10
	}
	type run struct {
		name        string
		keys, nulls []string
	}
	var runs []run
	for _, m := range testMechanisms().All() {
		name := string(m.Name) + "/" + strings.ReplaceAll(m.Input.String(), " ", "-")
		dir := t.TempDir()
		votes := filepath.Join(dir, "votes.csv")
		flags := checkFile(t, votes, m, "schema-"+string(m.Name)+"-"+strconv.Itoa(int(m.Input)), queries)
		release := append([]string{"aggregate", votes, "--mechanism", string(m.Name), "--cache-dir", cache, "--format", "json",
			"--out", filepath.Join(dir, "labels.csv")}, append(exampleFlags(t, m), flags...)...)
		for _, more := range [][]string{nil, {"--seed", "1", "--budget-eps", "5", "--budget-delta", "1e-3"}} {
			stdout, stderr, code := darrm(t, "", append(slices.Clone(release), more...)...)
			if code != 0 && code != exitBudget {
				t.Fatalf("%s %v: exit %d: %s", name, more, code, stderr)
			}
			var doc any
			decode(t, stdout, &doc)
			r := run{name: fmt.Sprintf("%s %v", name, more)}
			keyPaths(doc, "", &r.keys, &r.nulls)
			runs = append(runs, r)
		}
	}
	var schema []string
	for _, r := range runs {
		schema = append(schema, r.keys...)
	}
	slices.Sort(schema)
	schema = slices.Compact(schema)
	for _, r := range runs {
		var missing []string
		for _, k := range schema {
			// A null object excuses its keys, a null array its objects'.
			if !slices.Contains(r.keys, k) && !slices.ContainsFunc(r.nulls, func(n string) bool { return strings.HasPrefix(k, n+".") || strings.HasPrefix(k, n+"[]") }) {
				missing = append(missing, k)
			}
		}
		if len(missing) > 0 {
			t.Errorf("%s: the summary lacks %v", r.name, missing)
		}
	}
	for _, key := range []string{"queries_per_second", "m", "sigma2", "noise", "votes_abstained", "budget.allowed_by.eps", "totals[].profile_point.eps"} {
		if !slices.Contains(schema, key) {
			t.Errorf("no key %s in %v", key, schema)
		}
	}
}

// ownDocuments are the keys whose values are documents of their own.
var ownDocuments = map[string]bool{"votes_header": true, "certificate": true, "cap": true, "ledger": true, "settings": true}

// keyPaths appends to keys the keys of a decoded JSON value, as dotted
// paths below prefix, and to nulls those whose value is null; an array's
// objects contribute their keys under "name[]".
func keyPaths(v any, prefix string, keys, nulls *[]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			*keys = append(*keys, p)
			if x == nil {
				*nulls = append(*nulls, p)
			}
			if !ownDocuments[p] {
				keyPaths(x, p, keys, nulls)
			}
		}
	case []any:
		for _, x := range v {
			keyPaths(x, prefix+"[]", keys, nulls)
		}
	}
}

// TestAggregateLedgerKeys: the summary's ledger object has the same keys
// on every ledger, as docs/aggregate.md lists them ("every key below is in
// every summary, null where it does not apply"): cap is the teachers' cap
// of fixed private teachers and null on a ledger of teachers that have
// none (the one-vote relation), not left out, so that a script reading
// ledger.cap reads null rather than failing on a missing key.
func TestAggregateLedgerKeys(t *testing.T) {
	dir := t.TempDir()
	testdata := filepath.Join("..", "..", "testdata")
	var keys [][]string
	for _, tc := range []struct {
		votes string
		flags []string
		cap   bool
	}{
		{"votes-K11.csv", nil, true},
		{"votes-K11-one-vote.csv", []string{"--mechanism", "darrm-one-vote", "--target-eps", "0.3", "--delta", "1e-5"}, false},
	} {
		votes := filepath.Join(testdata, tc.votes)
		led := filepath.Join(dir, tc.votes+".ledger")
		if _, e, code := darrm(t, "", "ledger", "init", led, "--votes", votes, "--budget-eps", "10", "--budget-delta", "1e-3"); code != 0 {
			t.Fatalf("ledger init %s: exit %d: %s", tc.votes, code, e)
		}
		args := append([]string{"aggregate", votes, "--cache-dir", dir, "--ledger", led, "--format", "json", "--out", filepath.Join(dir, tc.votes+".labels.csv")}, tc.flags...)
		stdout, e, code := darrm(t, "", args...)
		if code != 0 {
			t.Fatalf("aggregate %s: exit %d: %s", tc.votes, code, e)
		}
		var doc struct {
			Ledger map[string]any `json:"ledger"`
		}
		decode(t, stdout, &doc)
		c, ok := doc.Ledger["cap"]
		if !ok || (c != nil) != tc.cap {
			t.Errorf("%s: ledger.cap = %v (present %v), want an object %v, else null", tc.votes, c, ok, tc.cap)
		}
		var k []string
		for key := range doc.Ledger {
			k = append(k, key)
		}
		slices.Sort(k)
		keys = append(keys, k)
	}
	if !slices.Equal(keys[0], keys[1]) {
		t.Errorf("the ledger's keys differ: private teachers %v, one-vote %v", keys[0], keys[1])
	}
}
