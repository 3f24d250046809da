package cache

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/cachedir"
	"github.com/darrm/darrm/internal/fixtures"
)

var testParams = constraints.Problem{K: 11, M: 3, Eps: 0.1, Delta: 1e-5, TargetDelta: constraints.DefaultTargetDelta(1e-5, 3)}

func solvedEntry(t *testing.T, p constraints.Problem) *Entry {
	t.Helper()
	g, err := fixtures.GammaK11M3()
	if err != nil {
		t.Fatal(err)
	}
	coeffs, err := gamma.UniformPrior().Coefficients(p.K)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := gamma.Verify(context.Background(), p, g, gamma.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := g.Measure(context.Background(), nil, coeffs, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &Entry{
		K: p.K, M: p.M, Eps: p.Eps, Delta: p.Delta, TargetDelta: p.TargetDelta,
		Prior: "uniform", Gamma: g, Certificate: cert,
		Utility: m.Utility, SurrogateError: m.SurrogateError, Created: time.Now().UTC(),
	}
}

func TestPutGetRoundTrip(t *testing.T) {
	d, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	key := Key{Problem: testParams, Prior: "uniform"}
	if _, err := d.Get(key); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get on an empty cache: %v, want ErrNotFound", err)
	}
	e := solvedEntry(t, testParams)
	if err := d.Put(e); err != nil {
		t.Fatal(err)
	}
	got, err := d.Get(key)
	if err != nil {
		t.Fatal(err)
	}
	for l := range e.Gamma {
		if got.Gamma[l] != e.Gamma[l] {
			t.Errorf("gamma(%d) = %v after the round trip, stored %v", l, got.Gamma[l], e.Gamma[l])
		}
	}
	if got.Certificate.MaxF != e.Certificate.MaxF || got.Certificate.Configs.Cmp(e.Certificate.Configs) != 0 {
		t.Errorf("certificate changed in the round trip: %+v vs %+v", got.Certificate, e.Certificate)
	}
	// A different prior or delta is a different entry.
	other := testParams
	other.TargetDelta = 3e-5
	for _, k := range []Key{{testParams, "tp"}, {other, "uniform"}} {
		if _, err := d.Get(k); !errors.Is(err, ErrNotFound) {
			t.Errorf("Get(%v) = %v, want ErrNotFound", k, err)
		}
	}
	// No temporary files left behind.
	files, _ := os.ReadDir(d.path)
	if len(files) != 1 {
		t.Errorf("cache directory holds %d files, want 1", len(files))
	}
}

func TestCorruptEntries(t *testing.T) {
	e := solvedEntry(t, testParams)
	key := Key{Problem: testParams, Prior: "uniform"}
	long, digits := strings.Repeat("x", 300), strings.Repeat("9", 300)
	// signed returns the file of the entry JSON entry, its checksum valid.
	signed := func(entry string) []byte {
		return []byte(`{"entry":` + entry + `,"sha256":"` + checksum([]byte(entry)) + `"}`)
	}
	for _, tc := range []struct {
		name   string
		mutate func(b []byte) []byte
		want   string
	}{
		{"truncated", func(b []byte) []byte { return b[:len(b)/2] }, "not valid JSON"},
		{"flipped gamma digit", func(b []byte) []byte {
			i := strings.Index(string(b), `"gamma"`)
			for ; b[i] < '1' || b[i] > '9'; i++ {
			}
			c := append([]byte(nil), b...)
			c[i] = '0' + ('9'-c[i])%9 // another digit
			return c
		}, "sha256"},
		{"garbage", func([]byte) []byte { return []byte("\x00\x01binary") }, "not valid JSON"},
		{"empty", func([]byte) []byte { return nil }, "not valid JSON"},
		// A cache may be shared: its long values are quoted cut.
		{"a long digest", func(b []byte) []byte {
			return regexp.MustCompile(`"sha256": *"[0-9a-f]*"`).ReplaceAll(b, []byte(`"sha256":"`+long+`"`))
		}, "sha256 = "},
		{"a long key", func([]byte) []byte { return signed(`{"key":"` + long + `"}`) }, "key = "},
		{"a long number for K", func([]byte) []byte { return signed(`{"K":` + digits + `}`) }, "entry: json: cannot unmarshal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, _ := Open(t.TempDir())
			if err := d.Put(e); err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(d.Path(key))
			m := tc.mutate(b)
			if string(m) == string(b) {
				t.Fatal("the mutation left the file unchanged")
			}
			if err := os.WriteFile(d.Path(key), m, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := d.Get(key)
			var ce *CorruptError
			if !errors.As(err, &ce) {
				t.Fatalf("Get on a %s entry: %v, want a CorruptError", tc.name, err)
			}
			if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), long[:100]) || strings.Contains(err.Error(), digits[:100]) {
				t.Errorf("error %q does not mention %q, or quotes 100 bytes of a value", err, tc.want)
			}
		})
	}
}

// An entry with a valid checksum but an uncertified gamma, a wrong key or
// a gamma of the wrong size (a hand-edited cache) is still refused.
func TestTamperedEntries(t *testing.T) {
	key := Key{Problem: testParams, Prior: "uniform"}
	for _, tc := range []struct {
		name   string
		mutate func(e *Entry)
	}{
		{"certificate for another budget", func(e *Entry) { e.Certificate.Budget *= 1.5 }},
		{"violated certificate", func(e *Entry) { e.Certificate.MaxF = 2 * e.Certificate.Budget }},
		{"asymmetric gamma", func(e *Entry) { e.Gamma[0] = 0.5 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, _ := Open(t.TempDir())
			e := solvedEntry(t, testParams)
			tc.mutate(e)
			// Write it bypassing Put's refusal, with a valid checksum.
			e.Key = key.String()
			writeRaw(t, d, key, e)
			var ce *CorruptError
			if _, err := d.Get(key); !errors.As(err, &ce) {
				t.Errorf("Get: %v, want a CorruptError", err)
			}
		})
	}
}

// TestPutRefusesUncertified: Put refuses what Get would refuse to read: a
// violated certificate, one of another budget, a gamma of another K, and
// the zero Entry, whose status is the zero value, Certified (it was
// stored: the check on write was the status alone).
func TestPutRefusesUncertified(t *testing.T) {
	d, _ := Open(t.TempDir())
	for name, edit := range map[string]func(*Entry){
		"violated":          func(e *Entry) { e.Certificate.Status = gamma.Violated },
		"another budget":    func(e *Entry) { e.Certificate.Budget *= 2 },
		"max f over budget": func(e *Entry) { e.Certificate.MaxF = 2 * e.Certificate.Budget },
		"a gamma too short": func(e *Entry) { e.Gamma = e.Gamma[1:] },
		"the zero entry":    func(e *Entry) { *e = Entry{} },
	} {
		e := solvedEntry(t, testParams)
		edit(e)
		if err := d.Put(e); err == nil {
			t.Errorf("%s: Put stored it", name)
		}
	}
}

func TestUnreadableEntry(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads files regardless of permissions")
	}
	d, _ := Open(t.TempDir())
	e := solvedEntry(t, testParams)
	if err := d.Put(e); err != nil {
		t.Fatal(err)
	}
	key := Key{Problem: testParams, Prior: "uniform"}
	os.Chmod(d.Path(key), 0)
	var ce *CorruptError
	if _, err := d.Get(key); err == nil || errors.Is(err, ErrNotFound) || errors.As(err, &ce) {
		t.Errorf("Get on an unreadable entry: %v, want a read error", err)
	}
}

func TestKeyIsExact(t *testing.T) {
	a := Key{Problem: testParams, Prior: "uniform"}
	b := a
	b.Problem.Eps = 0.1 + 1e-17*8 // the next float64 after 0.1
	if a.String() == b.String() || a.file(version) == b.file(version) {
		t.Errorf("keys of eps = 0.1 and its float64 successor collide: %q", a)
	}
}

// TestOpenDefault: Open("") opens the default folder (cachedir.Default),
// and fails as cachedir.Default does when the environment names no cache
// directory.
func TestOpenDefault(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "c")
	for _, tc := range []struct {
		name             string
		env, xdg, home   string
		want, errorsWith string
	}{
		{"$DARRM_CACHE_DIR", dir, "", "", dir, ""},
		{"$XDG_CACHE_HOME", "", filepath.Dir(dir), "", filepath.Join(filepath.Dir(dir), "darrm"), ""},
		{"nothing set", "", "", "", "", "set " + cachedir.Env},
	} {
		t.Setenv(cachedir.Env, tc.env)
		t.Setenv("XDG_CACHE_HOME", tc.xdg)
		t.Setenv("HOME", tc.home)
		d, err := Open("")
		switch {
		case tc.errorsWith != "":
			if err == nil || !strings.Contains(err.Error(), tc.errorsWith) || strings.Contains(err.Error(), "--") {
				t.Errorf("%s: %v, want an error saying %q and naming no flag", tc.name, err, tc.errorsWith)
			}
		case err != nil || d.root() != tc.want:
			t.Errorf("%s: Open(\"\") = %v, %v; want %s", tc.name, d, err, tc.want)
		default:
			if st, err := os.Stat(tc.want); err != nil || !st.IsDir() {
				t.Errorf("%s: %s not created: %v", tc.name, tc.want, err)
			}
		}
	}
}

// TestEarlierVersionsAreNotUsed: an entry written under an earlier
// version's key (by an older solver, whose gamma is optimal but not the
// canonical one) is never found, and storing the new entry removes it.
func TestEarlierVersionsAreNotUsed(t *testing.T) {
	d, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	key := Key{Problem: testParams, Prior: "uniform"}
	e := solvedEntry(t, testParams)
	if err := d.Put(e); err != nil {
		t.Fatal(err)
	}
	// Move the entry to where version 2 kept it, under version 2's key.
	b, err := os.ReadFile(d.Path(key))
	if err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(d.path, key.file(2))
	b = []byte(strings.Replace(string(b), "darrm-gamma/v3 ", "darrm-gamma/v2 ", 1))
	if err := os.WriteFile(old, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(d.Path(key)); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Get(key); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get with only a version 2 entry: %v, want ErrNotFound", err)
	}
	if err := d.Put(e); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the version 2 entry is still there after Put: %v", err)
	}
	if _, err := d.Get(key); err != nil {
		t.Errorf("Get after Put: %v", err)
	}
}

// TestEntriesOfEarlierVersionsAreNotFound: an entry under the key of any
// earlier version is not found, as at version 2 (an optimal gamma, not the
// canonical one) so at version 4 (at m = 1 gamma_Sub with its own utility
// as the bound, which optimal.Solve no longer claims).
func TestEntriesOfEarlierVersionsAreNotFound(t *testing.T) {
	for _, v := range []int{2, 3, 4} {
		d, err := Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		key := Key{Problem: testParams, Prior: "uniform"}
		if err := d.Put(solvedEntry(t, testParams)); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(d.Path(key))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(d.Path(key)); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d.path, key.file(v)), b, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Get(key); !errors.Is(err, ErrNotFound) {
			t.Errorf("Get with only a version %d entry: %v, want ErrNotFound", v, err)
		}
	}
}

// TestOneVoteKey: a problem in the one-vote relation has a key and file of
// its own, and the keys of DaRRM's problems are those of the entries stored
// before the relation was part of the key (the file name is a digest of
// the key, so their files are found).
func TestOneVoteKey(t *testing.T) {
	old := Key{Problem: constraints.Problem{K: 11, M: 1, Eps: 0.3, TargetDelta: 1e-5}, Prior: "uniform"}
	if got, want := old.String(), fmt.Sprintf("darrm-gamma/v%d K=11 m=1 eps=0.3 Delta=0 delta=1e-05 prior=uniform", version); got != want {
		t.Errorf("DaRRM's key %q, want the unchanged %q", got, want)
	}
	ov := Key{Problem: constraints.NewOneVote(11, 0.3, 1e-5), Prior: "uniform"}
	if got, want := ov.String(), old.String()+" relation=one-vote"; got != want {
		t.Errorf("one-vote key %q, want %q", got, want)
	}
	d, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if d.Path(ov) == d.Path(old) {
		t.Fatal("the two relations share a file")
	}
	g := gamma.Gamma{0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1}
	cert, err := gamma.Verify(context.Background(), ov.Problem, g, gamma.VerifyOptions{})
	if err != nil || cert.Status != gamma.Certified {
		t.Fatalf("%v %v", cert.Status, err)
	}
	p := ov.Problem
	e := &Entry{K: p.K, M: p.M, Eps: p.Eps, Delta: p.Delta, TargetDelta: p.TargetDelta, Relation: p.Relation,
		Prior: "uniform", Gamma: g, Certificate: cert, Created: time.Now().UTC()}
	if err := d.Put(e); err != nil {
		t.Fatal(err)
	}
	got, err := d.Get(ov)
	if err != nil || got.Relation != accountant.OneVote || !strings.HasSuffix(got.Key, "relation=one-vote") {
		t.Fatalf("one-vote entry read back as %+v, %v", got, err)
	}
	if _, err := d.Get(old); !errors.Is(err, ErrNotFound) {
		t.Errorf("the one-vote entry was found under DaRRM's key: %v", err)
	}
}

// TestFolder: another cache's folder is inside the cache's, and none
// without a cache.
func TestFolder(t *testing.T) {
	root := t.TempDir()
	d, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := d.Folder("teachers"), filepath.Join(root, "teachers"); got != want {
		t.Errorf("Folder = %q, want %q", got, want)
	}
	if got := (*Dir)(nil).Folder("teachers"); got != "" {
		t.Errorf("Folder of no cache = %q, want \"\"", got)
	}
}

// root returns the cache's folder, where other caches (trained teachers)
// keep their own subfolders.
func (d *Dir) root() string { return d.path }
