package teachers

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/experiments/datasets"
	"github.com/darrm/darrm/experiments/dpsgd"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

func config(private bool, seed uint64) Config {
	c := Config{Dataset: "synthetic", K: 5, Filters: 2, Private: private, Epochs: 3, Batch: 10, LR: 0.1, Seed: &seed}
	if private {
		c.Delta, c.Conversion = 1e-4, accountant.ImprovedConversion
	}
	c.DP = dpsgd.Config{Epochs: 3, Rate: 0.2, Clip: 1, Sigma: 1, LR: 0.2}
	return c
}

func TestTrainSaveLoadVote(t *testing.T) {
	b := datasets.SyntheticBinary(250, 40, 1)
	for _, private := range []bool{true, false} {
		cfg := config(private, 7)
		e, err := Train(context.Background(), b, cfg)
		if err != nil {
			t.Fatal(err)
		}
		total := 0
		for _, n := range e.ShareSizes {
			total += n
		}
		if total != 250 || len(e.Accuracy) != 5 || e.Partition.Rule != provenance.KeyedHash || len(e.Partition.Key) != 64 {
			t.Fatalf("shares %v, %d accuracies, partition %+v", e.ShareSizes, len(e.Accuracy), e.Partition)
		}
		for i, a := range e.Accuracy {
			if a < 0.75 {
				t.Errorf("private %v teacher %d: accuracy %v on a separable task", private, i, a)
			}
		}
		// The same seed trains the same teachers.
		again, _ := Train(context.Background(), b, cfg)
		if again.Params[3][10] != e.Params[3][10] || again.Partition != e.Partition {
			t.Error("seeded training is not reproducible")
		}
		path := filepath.Join(t.TempDir(), "t.json")
		if err := e.Save(path); err != nil {
			t.Fatal(err)
		}
		got, err := Load(path, cfg)
		if err != nil {
			t.Fatal(err)
		}
		votes := got.Votes(b.Test)
		if len(votes) != 40 || len(votes[0]) != 5 {
			t.Fatalf("votes %dx%d", len(votes), len(votes[0]))
		}
		if _, err := Load(path, config(private, 8)); err == nil {
			t.Error("a file trained with another seed was accepted")
		}
		raw, _ := os.ReadFile(path)
		os.WriteFile(path, []byte(strings.Replace(string(raw), `"accuracy":[`, `"accuracy":[1,`, 1)), 0o644)
		var ce *CorruptError
		if _, err := Load(path, cfg); !errors.As(err, &ce) {
			t.Errorf("edited file: %v", err)
		}
	}
	if _, err := Load(filepath.Join(t.TempDir(), "none.json"), config(true, 1)); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing file: %v", err)
	}
}

func TestTrainChecks(t *testing.T) {
	b := datasets.SyntheticBinary(20, 5, 1)
	for _, c := range []Config{{K: 4, Filters: 1}, {K: 3, Filters: 0}, {K: 21, Filters: 1, Private: true},
		{K: 3, Filters: 1, Private: true, Setting: 2}, {K: 3, Filters: 1, Setting: accountant.Shared, Epochs: 1, Batch: 1, LR: 0.1}} {
		c.Dataset = "synthetic"
		c.DP = dpsgd.Config{Epochs: 1, Rate: 0.5, Clip: 1, Sigma: 1, LR: 0.1}
		if _, err := Train(context.Background(), b, c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

// TestCached: the first call trains and saves, the second loads; a damaged
// file is reported and replaced; without a folder nothing is saved.
func TestCached(t *testing.T) {
	ctx := context.Background()
	b := datasets.SyntheticBinary(100, 20, 1)
	cfg := config(false, 3)
	dir := filepath.Join(t.TempDir(), "teachers")
	var notes []string
	note := func(s string) { notes = append(notes, s) }
	for i, tc := range []struct {
		damage bool
		cached bool
		note   string
	}{
		{false, false, "training 5 non-private teachers on synthetic"},
		{false, true, ""},
		{true, false, "; retraining"},
	} {
		if tc.damage {
			os.WriteFile(filepath.Join(dir, cfg.Key()+".json"), []byte("{"), 0o644)
		}
		notes = nil
		e, cached, err := Cached(ctx, dir, b, cfg, note)
		if err != nil || cached != tc.cached || len(e.Params) != 5 {
			t.Fatalf("call %d: cached %v (%v), want %v", i, cached, err, tc.cached)
		}
		if got := strings.Join(notes, "\n"); !strings.Contains(got, tc.note) || tc.note == "" && got != "" {
			t.Errorf("call %d: notes %q, want %q", i, got, tc.note)
		}
	}
	if _, err := Load(filepath.Join(dir, cfg.Key()+".json"), cfg); err != nil {
		t.Errorf("the replaced file: %v", err)
	}
	// Of the private training data: readable by their owner alone.
	for path, want := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, cfg.Key()+".json"): 0o600} {
		if st, err := os.Stat(path); err != nil {
			t.Error(err)
		} else if st.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", path, st.Mode().Perm(), want)
		}
	}
	if _, cached, err := Cached(ctx, "", b, cfg, nil); err != nil || cached {
		t.Errorf("no folder: cached %v (%v)", cached, err)
	}
}

// TestWriteVotes: the vote file holds a row per image, its index as id,
// that a vote reader reads back as the teachers' votes.
func TestWriteVotes(t *testing.T) {
	b := datasets.SyntheticBinary(250, 12, 2)
	e, err := Train(context.Background(), b, config(true, 3))
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []*datasets.Dataset{b.Test, b.Train} {
		var out bytes.Buffer
		if err := e.WriteVotes(&out, x); err != nil {
			t.Fatal(err)
		}
		r, err := votefile.Open("votes", votefile.Options{In: &out})
		if err != nil {
			t.Fatal(err)
		}
		want := e.Votes(x)
		q := 0
		for ; r.Next(); q++ {
			if got := r.Query(); string(got.ID) != strconv.Itoa(q) || !bytes.Equal(got.Votes, want[q]) {
				t.Errorf("row %d: id %q, votes %v; want %v", q, got.ID, got.Votes, want[q])
			}
		}
		if r.Err() != nil || q != x.Len() {
			t.Errorf("%d rows of %d (%v)", q, x.Len(), r.Err())
		}
	}
}

// TestShareStable: the keyed hash sends each record to the same teacher
// whatever other records are added or removed, spreads the records evenly,
// and another key cuts other shares.
func TestShareStable(t *testing.T) {
	key := []byte("a key of the test")
	// Under -short 1,000 records, not 3,000: every record is hashed and
	// keyed by its whole image, for each set of records.
	n := 3000
	if testing.Short() {
		n = 1000
	}
	all := datasets.SyntheticBinary(n, 1, 4).Train
	const k = 11
	shares := func(d *datasets.Dataset) [][]int {
		s, err := recordShares(context.Background(), key, d, k)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	teacher := func(d *datasets.Dataset) map[string]int {
		m := map[string]int{}
		for s, idx := range shares(d) {
			for _, i := range idx {
				m[string(RecordID(d, i))] = s
			}
		}
		return m
	}
	full := teacher(all)
	// Remove every third record, then add 500 new ones in front.
	var kept []int
	for i := range all.Len() {
		if i%3 != 0 {
			kept = append(kept, i)
		}
	}
	extra := datasets.SyntheticBinary(500, 1, 5).Train
	rest := datasets.Subset(all, kept)
	changed := &datasets.Dataset{D: all.D, X: append(slices.Clone(extra.X), rest.X...), Y: append(slices.Clone(extra.Y), rest.Y...)}
	moved := 0
	for id, s := range teacher(changed) {
		if was, ok := full[id]; ok && was != s {
			moved++
		}
	}
	if moved != 0 {
		t.Errorf("%d of %d kept records changed teacher", moved, len(kept))
	}
	// Even: each share within 5 standard deviations of n/k.
	sizes := shares(all)
	mean, sd := float64(n)/k, math.Sqrt(float64(n)/k*(1-1.0/k))
	for s, idx := range sizes {
		if math.Abs(float64(len(idx))-mean) > 5*sd {
			t.Errorf("share %d has %d records, expected %.0f ± %.0f", s, len(idx), mean, sd)
		}
	}
	other := 0
	for i := range 200 {
		if Share(key, RecordID(all, i), k) != Share([]byte("another key"), RecordID(all, i), k) {
			other++
		}
	}
	if other < 150 {
		t.Errorf("another key sends only %d of 200 records elsewhere", other)
	}
}

// TestSettings: shared teachers each train on the whole set; unseeded
// disjoint teachers draw a fresh key; the file records the partition and
// a file of another version or partition is refused.
func TestSettings(t *testing.T) {
	b := datasets.SyntheticBinary(120, 10, 3)
	cfg := config(true, 1)
	cfg.Setting = accountant.Shared
	e, err := Train(context.Background(), b, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if e.Partition != (Partition{Rule: provenance.SharedData}) || e.Meta.Partition != provenance.SharedData.String() || !slices.Equal(e.ShareSizes, []int{120, 120, 120, 120, 120}) {
		t.Errorf("shared: partition %+v, shares %v", e.Partition, e.ShareSizes)
	}
	unseeded := config(true, 1)
	unseeded.Seed = nil
	k1, _ := Train(context.Background(), b, unseeded)
	k2, _ := Train(context.Background(), b, unseeded)
	if k1.Partition.Key == k2.Partition.Key || k1.Partition.Rule != provenance.KeyedHash {
		t.Errorf("two unseeded ensembles have partitions %+v and %+v", k1.Partition, k2.Partition)
	}
	dir := t.TempDir()
	long := strings.Repeat("z", 300)
	for name, edit := range map[string]func(string) string{
		"version 2": func(s string) string { return strings.Replace(s, `"version":3`, `"version":2`, 1) },
		"partition": func(s string) string { return strings.Replace(s, `"rule":"shared"`, `"rule":"keyed-hash"`, 1) },
		// A long value of a file is quoted cut.
		"a long partition key": func(s string) string {
			return strings.Replace(s, `"rule":"shared"`, `"rule":"shared","key":"`+long+`"`, 1)
		},
		"a long version": func(s string) string {
			return strings.Replace(s, `"version":3`, `"version":`+strings.Repeat("9", 300), 1)
		},
		"a long number": func(s string) string {
			return strings.Replace(s, `"share_sizes":[`, `"share_sizes":[`+strings.Repeat("9", 300)+`,`, 1)
		},
	} {
		path := filepath.Join(dir, "e.json")
		if err := e.Save(path); err != nil {
			t.Fatal(err)
		}
		raw, _ := os.ReadFile(path)
		edited := edit(string(raw))
		if !strings.Contains(name, "version") {
			edited = resum(t, edited)
		}
		os.WriteFile(path, []byte(edited), 0o644)
		var ce *CorruptError
		if _, err := Load(path, cfg); !errors.As(err, &ce) || strings.Contains(err.Error(), long[:100]) || strings.Contains(err.Error(), strings.Repeat("9", 100)) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// resum recomputes the checksum of an edited ensemble file, so that Load
// gets past it to the check under test.
func resum(t *testing.T, file string) string {
	t.Helper()
	var s stored
	if err := json.Unmarshal([]byte(file), &s); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(s.Ensemble)
	s.SHA256 = hex.EncodeToString(sum[:])
	b, _ := json.Marshal(s)
	return string(b)
}

// TestMeta: training records the ensemble's id and each teacher's
// guarantee, which Load recomputes and the vote file states.
func TestMeta(t *testing.T) {
	b := datasets.SyntheticBinary(250, 12, 2)
	for _, private := range []bool{true, false} {
		cfg := config(private, 3)
		e, err := Train(context.Background(), b, cfg)
		if err != nil {
			t.Fatal(err)
		}
		m := e.Meta
		if !strings.HasPrefix(m.Ensemble, "synthetic-k5-") || len(m.Ensemble) != len("synthetic-k5-")+16 || m.K != 5 || m.Kind != "fixed" || m.Partition != "keyed-hash" || len(m.Teachers) != 1 || m.Teachers[0].Count != 5 {
			t.Errorf("private %v: meta %+v", private, m)
		}
		g := m.Teachers[0]
		if private {
			want, _, _ := accountant.SGM{Q: 0.2, Sigma: 1, Steps: 15}.Eps(1e-4, accountant.ImprovedConversion)
			if m.Relation != "private-teachers" || g.Source.Method != "dp-sgd" || *g.Eps != want || *g.Delta != 1e-4 || *g.Source.Steps != 15 {
				t.Errorf("private teachers: %+v, %+v, want eps %v", m, g, want)
			}
		} else if m.Relation != "one-vote" || g.Source.Method != "none" || g.Eps != nil {
			t.Errorf("SGD teachers: %+v", m)
		}
		other, _ := Train(context.Background(), b, config(private, 4))
		if again, _ := Train(context.Background(), b, cfg); again.Meta.Ensemble != m.Ensemble || other.Meta.Ensemble == m.Ensemble {
			t.Errorf("ids: %s, same seed %s, other seed %s", m.Ensemble, again.Meta.Ensemble, other.Meta.Ensemble)
		}
		var out bytes.Buffer
		if err := e.WriteVotes(&out, b.Test); err != nil {
			t.Fatal(err)
		}
		r, err := votefile.Open("votes", votefile.Options{In: &out})
		if err != nil || !reflect.DeepEqual(r.Meta(), m) {
			t.Errorf("vote file header %+v (%v), want %+v", r.Meta(), err, m)
		}
	}
	// A file whose recorded guarantee or id was changed, with its checksum
	// made to match, is refused; so is an earlier version.
	cfg := config(true, 3)
	e, _ := Train(context.Background(), b, cfg)
	for _, edit := range []func(*Ensemble){
		func(e *Ensemble) { half := *e.Meta.Teachers[0].Eps / 2; e.Meta.Teachers[0].Eps = &half },
		func(e *Ensemble) { e.Meta.Ensemble = "someone-else" },
		func(e *Ensemble) { e.Meta.Partition = provenance.FilePosition.String() },
		func(e *Ensemble) { e.Meta = nil },
	} {
		c := *e
		m := *e.Meta
		m.Teachers = append([]votefile.TeacherGroup(nil), m.Teachers...)
		c.Meta = &m
		edit(&c)
		path := filepath.Join(t.TempDir(), "t.json")
		if err := c.Save(path); err != nil {
			t.Fatal(err)
		}
		var ce *CorruptError
		if _, err := Load(path, cfg); !errors.As(err, &ce) {
			t.Errorf("edited meta %+v: %v", c.Meta, err)
		}
	}
	path := filepath.Join(t.TempDir(), "t.json")
	e.Save(path)
	raw, _ := os.ReadFile(path)
	os.WriteFile(path, []byte(strings.Replace(string(raw), `"version":3`, `"version":2`, 1)), 0o644)
	if _, err := Load(path, cfg); err == nil || !strings.Contains(err.Error(), "version 2, want 3") {
		t.Errorf("version 2 file: %v", err)
	}
}

// classesConfig is a PATE-like ensemble of 7 three-class teachers (an even
// K works too) keeping their votes on 40 queries.
func classesConfig(seed uint64) Config {
	return Config{Dataset: "synthetic", K: 8, Filters: 2, Epochs: 4, Batch: 10, LR: 0.1, Seed: &seed, Classes: 3, Queries: 40}
}

// C-class teachers: trained on keyed-hash shares, their votes kept with
// them and checked on load, written as a counts file with their header.
func TestTrainClasses(t *testing.T) {
	m := datasets.SyntheticClasses(800, 60, 3, 1)
	cfg := classesConfig(3)
	e, err := trainClasses(context.Background(), m, cfg)
	if err != nil {
		t.Fatal(err)
	}
	key, _ := hex.DecodeString(e.Partition.Key)
	shares, err := sharesOf(context.Background(), key, m.Train.Len(), func(i int) []byte { return ImageID(m.Train, i) }, cfg.K)
	if err != nil {
		t.Fatal(err)
	}
	for i, idx := range shares {
		if e.ShareSizes[i] != len(idx) {
			t.Errorf("teacher %d trained on %d images, its share has %d", i, e.ShareSizes[i], len(idx))
		}
	}
	var mean float64
	for i, v := range e.QueryVotes {
		right := 0
		for q, c := range v {
			if int(c) == m.Test.Labels[q] {
				right++
			}
		}
		if got := float64(right) / 40; got != e.Accuracy[i] {
			t.Errorf("teacher %d: accuracy %v, its votes %v", i, e.Accuracy[i], got)
		}
		mean += e.Accuracy[i] / 8
	}
	if mean < 0.7 {
		t.Errorf("mean accuracy %v on an easy task", mean)
	}
	counts := e.Counts()
	if len(counts) != 40 || counts[0][0]+counts[0][1]+counts[0][2] != 8 {
		t.Fatalf("counts %v", counts[:1])
	}
	if e.Meta.Classes != 3 || e.Meta.Relation != accountant.OneVote.String() || e.Meta.Partition != provenance.KeyedHash.String() || e.Meta.K != 8 {
		t.Errorf("header %+v", e.Meta)
	}
	var buf bytes.Buffer
	if err := e.WriteCounts(&buf); err != nil {
		t.Fatal(err)
	}
	r, err := votefile.Open("counts.csv", votefile.Options{In: &buf})
	if err != nil {
		t.Fatal(err)
	}
	for q := 0; r.Next(); q++ {
		if !slices.Equal(r.Query().Counts, counts[q]) || string(r.Query().ID) != strconv.Itoa(q) {
			t.Fatalf("row %d: %s %v, want %v", q, r.Query().ID, r.Query().Counts, counts[q])
		}
	}
	if r.Err() != nil || r.Meta().Layout != votefile.LayoutCounts || r.Meta().Ensemble != e.Meta.Ensemble {
		t.Errorf("read back: %v, header %+v", r.Err(), r.Meta())
	}

	// Saved and loaded as it was; edited votes are refused.
	path := filepath.Join(t.TempDir(), "e.json")
	if err := e.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path, cfg)
	if err != nil || !reflect.DeepEqual(back, e) {
		t.Fatalf("load: %v", err)
	}
	raw, _ := os.ReadFile(path)
	var s stored
	json.Unmarshal(raw, &s)
	var edit map[string]any
	json.Unmarshal(s.Ensemble, &edit)
	edit["votes"] = edit["votes"].([]any)[:7]
	s.Ensemble, _ = json.Marshal(edit)
	b, _ := json.Marshal(s)
	os.WriteFile(path, []byte(resum(t, string(b))), 0o644)
	var ce *CorruptError
	if _, err := Load(path, cfg); !errors.As(err, &ce) || !strings.Contains(err.Error(), "votes of 7 teachers, want 8") {
		t.Errorf("7 teachers' votes: %v", err)
	}

	for _, bad := range []func(*Config){
		func(c *Config) { c.Private = true },
		func(c *Config) { c.Queries = 0 },
		func(c *Config) { c.Classes = 1 },
		func(c *Config) { c.Queries = 61 },
		func(c *Config) { c.Classes = 4 },
	} {
		c := classesConfig(1)
		bad(&c)
		if _, err := trainClasses(context.Background(), m, c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	if err := (&Ensemble{Config: config(false, 1)}).WriteCounts(&buf); err == nil {
		t.Error("counts of two-class teachers written")
	}
}

// TestWriteChecksMeta: the header that WriteVotes and WriteCounts write
// must pass the check of every release (provenance.Check) against what the
// ensemble states of itself; one that contradicts it is refused, naming
// the field, and nothing is written.
func TestWriteChecksMeta(t *testing.T) {
	ctx := context.Background()
	b := datasets.SyntheticBinary(250, 12, 2)
	dp, err := Train(ctx, b, config(true, 3))
	if err != nil {
		t.Fatal(err)
	}
	sgd, err := Train(ctx, b, config(false, 3))
	if err != nil {
		t.Fatal(err)
	}
	pate, err := trainClasses(ctx, datasets.SyntheticClasses(800, 60, 3, 1), classesConfig(3))
	if err != nil {
		t.Fatal(err)
	}
	stated := func(eps float64) []votefile.TeacherGroup {
		return []votefile.TeacherGroup{provenance.StatedTeachers(5, accountant.Guarantee{Eps: eps, Delta: 1e-4})}
	}
	for _, tc := range []struct {
		name  string
		e     *Ensemble
		edit  func(m *votefile.Meta)
		field string
	}{
		{"another ensemble's id", dp, func(m *votefile.Meta) { m.Ensemble = "someone-else" }, "ensemble"},
		{"another partition", dp, func(m *votefile.Meta) { m.Partition = provenance.FilePosition.String() }, "partition"},
		{"the one-vote relation for DP-SGD teachers", dp, func(m *votefile.Meta) { m.Relation = accountant.OneVote.String() }, "relation"},
		{"a larger eps than the DP-SGD run's", dp, func(m *votefile.Meta) { eps := *m.Teachers[0].Eps * 2; m.Teachers[0].Eps = &eps }, "eps"},
		{"a guarantee for SGD teachers", sgd, func(m *votefile.Meta) { m.Teachers = stated(1) }, "eps"},
		{"per-query SGD teachers", sgd, func(m *votefile.Meta) { m.Kind = provenance.PerQuery.String() }, "kind"},
		{"the private-teachers relation for SGD teachers", sgd, func(m *votefile.Meta) {
			m.Relation, m.Partition, m.Teachers = accountant.PrivateTeachers.String(), provenance.SharedData.String(), stated(1)
		}, "relation"},
		{"another K", sgd, func(m *votefile.Meta) { m.K, m.Teachers[0].Count = 7, 7 }, "K"},
		// PATE's teachers are in the one-vote relation, which holds on
		// keyed-hash shares only: a header of another partition breaks
		// its own rules (provenance.Check), so their kind is edited.
		{"another kind of PATE's teachers", pate, func(m *votefile.Meta) { m.Kind = provenance.PerQuery.String() }, "kind"},
		{"other classes of PATE's teachers", pate, func(m *votefile.Meta) { m.Classes = 4 }, "classes"},
	} {
		c := *tc.e
		m := *tc.e.Meta
		m.Teachers = slices.Clone(m.Teachers)
		tc.edit(&m)
		if err := m.Validate(); err != nil {
			t.Fatalf("%s: the edited header breaks its own rules: %v", tc.name, err)
		}
		c.Meta = &m
		var out bytes.Buffer
		if c.Config.Classes > 0 {
			err = c.WriteCounts(&out)
		} else {
			err = c.WriteVotes(&out, b.Test)
		}
		var te *provenance.TeachersError
		if !errors.As(err, &te) || te.Field != tc.field || te.By != "the ensemble's training" || out.Len() != 0 {
			t.Errorf("%s: %v, %d bytes written; want a *TeachersError on %s", tc.name, err, out.Len(), tc.field)
		}
	}
	c := *dp
	c.Meta = nil
	var out bytes.Buffer
	if err := c.WriteVotes(&out, b.Test); err == nil || out.Len() != 0 {
		t.Errorf("an ensemble without its header: %v, %d bytes written", err, out.Len())
	}
	for _, e := range []*Ensemble{dp, sgd} {
		if err := e.WriteVotes(&out, b.Test); err != nil {
			t.Errorf("private %v: %v", e.Config.Private, err)
		}
	}
}

// TestValidateNames: a configuration's value out of range is a
// parameter error naming its field, as a command names its flag.
func TestValidateNames(t *testing.T) {
	for _, tc := range []struct {
		edit func(*Config)
		name string
	}{
		{func(c *Config) { c.K = 0 }, "K"},
		{func(c *Config) { c.K = math.MaxInt }, "K"},
		{func(c *Config) { c.Epochs = 0 }, "epochs"},
		{func(c *Config) { c.Batch = 0 }, "batch"},
		{func(c *Config) { c.LR = -1 }, "lr"},
	} {
		c := classesConfig(1)
		tc.edit(&c)
		var pe *param.Error
		if err := c.Validate(); !errors.As(err, &pe) || pe.Name != tc.name {
			t.Errorf("%s: error %v", tc.name, err)
		}
	}
	if err := classesConfig(1).Validate(); err != nil {
		t.Error(err)
	}
}

// TestEnsembleIDOfNoData: a seeded ensemble's id, which every vote and
// label file states, is the same whatever data it trained on (it hashes
// the configuration, the seed among it), so that whoever knows the seed
// cannot test a guess of the data against it; an unseeded one's hashes
// its parameters, trained with randomness no one can replay, and two
// such trainings differ.
func TestEnsembleIDOfNoData(t *testing.T) {
	cfg := config(false, 3)
	train := func(data uint64) *Ensemble {
		t.Helper()
		e, err := Train(context.Background(), datasets.SyntheticBinary(100, 20, data), cfg)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	a, b := train(1), train(2)
	if a.Params[0][0] == b.Params[0][0] || a.Meta.Ensemble != b.Meta.Ensemble || !strings.HasPrefix(a.Meta.Ensemble, "synthetic-k5-") {
		t.Errorf("seeded on other data: ids %s and %s, first parameters %v and %v; want one id, other parameters", a.Meta.Ensemble, b.Meta.Ensemble, a.Params[0][0], b.Params[0][0])
	}
	cfg.Seed = nil
	c, d := train(1), train(1)
	if c.Meta.Ensemble == d.Meta.Ensemble || c.Meta.Ensemble == a.Meta.Ensemble {
		t.Errorf("unseeded: ids %s and %s (seeded %s), want three ids", c.Meta.Ensemble, d.Meta.Ensemble, a.Meta.Ensemble)
	}
}
