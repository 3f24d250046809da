package ledger

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/quotetest"
)

// TestExactKeys: a spend or end line that names a field by a key of
// another case than darrm's ("Run" for "run", at any depth) or twice is
// refused, its hash recomputed so that only its keys are wrong: Go's
// decoder would take "Run" for the run where PostgreSQL's jsonb, which
// the database's trigger checks a line with, takes "run" (a line so settled another analyst's run). Lines as darrm writes
// them pass.
func TestExactKeys(t *testing.T) {
	head := strings.Repeat("a", 64)
	at := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	prior, err := accountant.Sequence{}.Add(accountant.Guarantee{Eps: 0.05}, 138)
	if err != nil {
		t.Fatal(err)
	}
	spend := Spend{Run: "0123456789abcdef", Analyst: "bob", Time: at, Mechanism: "darrm", Eps: 0.05, Queries: 0, Final: true, Prior: &prior}
	b, _, err := encodeLine(Version, head, spend)
	if err != nil {
		t.Fatal(err)
	}
	_, raw, _, ok := splitSpendLine(bytes.TrimSuffix(b, []byte("\n")))
	if !ok {
		t.Fatalf("not a spend line: %s", b)
	}
	// rewrite returns the spend line of the spend JSON edited by edit,
	// hashed anew.
	rewrite := func(kind string, edit func(string) string) []byte {
		j := edit(string(raw))
		return []byte(`{"prev":"` + head + `","` + kind + `":` + j + `,"sha256":"` + chainHash(Version, head, kind, []byte(j)) + `"}`)
	}
	same := func(s string) string { return s }
	if _, got, _, err := parseSpendLine(Version, rewrite("spend", same)); err != nil || got.Run != spend.Run {
		t.Fatalf("the line as darrm writes it: %v, run %q", err, got.Run)
	}
	// A key spelt by an escape reads to darrm as to the database: the
	// field it names (the database's bad_key unescapes it too).
	escaped := rewrite("spend", func(s string) string { return strings.Replace(s, `"run":`, `"r\u0075n":`, 1) })
	if _, got, _, err := parseSpendLine(Version, escaped); err != nil || got.Run != spend.Run {
		t.Errorf("a run spelt r\u0075n: %v, run %q", err, got.Run)
	}
	for _, tc := range []struct {
		name string
		edit func(string) string
		want string
	}{
		{"a run of another case after the run", func(s string) string {
			return strings.Replace(s, `"analyst":"bob"`, `"analyst":"bob","Run":"fedcba9876543210"`, 1)
		}, "key Run"},
		{"the run twice", func(s string) string {
			return strings.Replace(s, `"analyst":"bob"`, `"analyst":"bob","run":"fedcba9876543210"`, 1)
		}, "key run: given twice"},
		{"an analyst of another case alone", func(s string) string { return strings.Replace(s, `"analyst":`, `"Analyst":`, 1) }, "key Analyst"},
		{"a count of labels of another case", func(s string) string { return strings.Replace(s, `"queries":0`, `"queries":0,"Queries":88`, 1) }, "key Queries"},
		{"the prior's steps of another case, nested", func(s string) string { return strings.Replace(s, `"steps":138`, `"steps":138,"Steps":50`, 1) }, "key prior.Steps"},
		{"a key folded by Unicode (the Kelvin sign)", func(s string) string {
			return strings.Replace(s, `"mechanism":`, "\"\u212aind\":\"pure\",\"mechanism\":", 1)
		}, "key \u212aind"},
		{"a run of another case spelt by an escape", func(s string) string {
			return strings.Replace(s, `"analyst":"bob"`, `"analyst":"bob","\u0052un":"fedcba9876543210"`, 1)
		}, "key Run"},
		{"the run again, spelt by an escape", func(s string) string {
			return strings.Replace(s, `"analyst":"bob"`, `"analyst":"bob","r\u0075n":"fedcba9876543210"`, 1)
		}, "key run: given twice"},
		{"an escaped quote in a key", func(s string) string {
			return strings.Replace(s, `"analyst":"bob"`, `"analyst":"bob","r\"un":"fedcba9876543210"`, 1)
		}, `key "r\"un": not a field`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line := rewrite("spend", tc.edit)
			if bytes.Equal(line, rewrite("spend", same)) {
				t.Fatal("the edit changed nothing")
			}
			_, got, _, err := parseSpendLine(Version, line)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: err %v (run %q, analyst %q, queries %d), want %q", line, err, got.Run, got.Analyst, got.Queries, tc.want)
			}
		})
	}

	e := ending{Reason: reasonRetired, At: at, By: "alice", Successor: "x"}
	eb, _, err := encodeLine(Version, head, e)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := parseEndLine(Version, bytes.TrimSuffix(eb, []byte("\n"))); err != nil {
		t.Fatalf("an end line as darrm writes it: %v", err)
	}
	j := strings.Replace(string(eb[len(`{"prev":"`)+64+len(`","end":`):bytes.LastIndex(eb, []byte(`,"sha256"`))]), `"by":"alice"`, `"by":"alice","By":"mallory"`, 1)
	forged := []byte(`{"prev":"` + head + `","end":` + j + `,"sha256":"` + chainHash(Version, head, "end", []byte(j)) + `"}`)
	if _, got, _, err := parseEndLine(Version, forged); err == nil || !strings.Contains(err.Error(), "key By") {
		t.Errorf("an end line naming who ended it twice: err %v (by %q)", err, got.By)
	}
}

// TestExactKeysBounded: the key check's memory grows with a line's
// length, not with the square of its nesting or of its keys. A forged
// spend line nested 20,000 arrays deep (40 KB) made it hold 650 MB, each
// level's path kept while the levels below it were scanned, where
// encoding/json's depth bound (10,000) comes too late; 90,000 keys in one
// object took 12.8 s of CPU, each compared with every key before it.
// Such lines are refused, in little memory; a key's path is still named
// through arrays and objects.
func TestExactKeysBounded(t *testing.T) {
	keys := make([]string, 90000)
	for i := range keys {
		keys[i] = fmt.Sprintf(`"k%d":1`, i)
	}
	wide := `{"time":{` + strings.Join(keys, ",") + `,"k0":2}}`
	for _, tc := range []struct {
		name, line, want string
	}{
		{"arrays 20,000 deep", `{"run":"x","gaussian":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`, "nested more than 32 deep"},
		{"objects 20,000 deep", `{"run":"x","time":` + strings.Repeat(`{"a":`, 20000) + "1" + strings.Repeat("}", 20000) + `}`, "nested more than 32 deep"},
		{"90,000 keys, the first again last", wide, "key time.k0: given twice"},
		{"a key within an array", `{"gaussian":[{"sigma":1},{"Sigma":2}]}`, "key gaussian[1].Sigma: not a field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			err := exactKeys([]byte(tc.line), spendKeys)
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want %q", err, tc.want)
			}
			if alloc, limit := after.TotalAlloc-before.TotalAlloc, uint64(64*len(tc.line)); alloc > limit {
				t.Errorf("allocated %d bytes for a line of %d, over %d", alloc, len(tc.line), limit)
			}
		})
	}
	// A value as deep as the bound allows passes.
	ok := `{"gaussian":` + strings.Repeat("[", maxDepth-1) + strings.Repeat("]", maxDepth-1) + `}`
	if err := exactKeys([]byte(ok), spendKeys); err != nil {
		t.Errorf("a value %d deep: %v", maxDepth, err)
	}
}

// FuzzExactKeys: no input panics the key check or passes it with a key
// that is not a field's exact name: a JSON object that passes and decodes
// holds, in each object at the place of a struct of a spend (header
// true: of a header), at any depth, only that struct's keys (badKey). A
// refusal quotes a few bytes of the line (quotetest.Check), whose keys may be
// as long as it is.
func FuzzExactKeys(f *testing.F) {
	f.Add([]byte(`{"run":"a","queries":1,"prior":{"steps":2}}`), false)
	f.Add([]byte(`{"run":"a","Run":"b"}`), false)
	f.Add([]byte(`[{"x":[1,"\"}",{}]}, "\\"]`), false)
	f.Add([]byte(`{"gaussian":[{"sigma":1}],"bits":[[0.5,0.25]]}`), false)
	f.Add([]byte(`{"prior":{"steps":2,"Steps":3}}`), false)
	long := strings.Repeat("k", 200)
	f.Add([]byte(`{"run":"a","`+long+`":1}`), false)
	f.Add([]byte(`{"ensemble":"e","shares":{"bob":0.5,"`+long+`":0.25,"`+long+`":0.25}}`), true)
	f.Fuzz(func(t *testing.T, b []byte, header bool) {
		keys := spendKeys
		if header {
			keys = headerKeys
		}
		if err := exactKeys(b, keys); err != nil {
			quotetest.Check(t, err.Error(), b, 2000)
			return
		}
		var v any
		if json.Unmarshal(b, &v) != nil {
			return
		}
		if path, bad := badKey(v, keys); bad {
			t.Fatalf("%s passes with key %s", b, path)
		}
	})
}

// badKey returns the path of a key of v, a JSON value decoded, that is
// not the exact name of a field of the struct in whose place it is, by
// the key tree k of v's type, and whether there is one.
func badKey(v any, k *keyTree) (string, bool) {
	if k == nil {
		return "", false
	}
	switch v := v.(type) {
	case map[string]any:
		if k.fields == nil && !k.isMap {
			return "", false
		}
		for key, x := range v {
			next := k.elem
			if k.fields != nil {
				f, ok := k.fields[key]
				if !ok {
					return strconv.Quote(key), true
				}
				next = f
			}
			if path, bad := badKey(x, next); bad {
				return strconv.Quote(key) + "." + path, true
			}
		}
	case []any:
		if k.isMap {
			return "", false
		}
		for i, x := range v {
			if path, bad := badKey(x, k.elem); bad {
				return fmt.Sprintf("[%d].%s", i, path), true
			}
		}
	}
	return "", false
}
