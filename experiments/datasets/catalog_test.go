package datasets

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestLoadFixtures(t *testing.T) {
	tests := []struct {
		name           string
		loss           Task
		nPriv, nPub, d int
	}{
		{"breast-cancer", Classification, 2, 2, 31},
		{"diabetes", Regression, 2, 2, 10},
		{"compas", Classification, 3, 3, 11},
		{"crime", Regression, 2, 3, 125},
	}
	for _, tc := range tests {
		pair, err := Load("testdata", tc.name, tc.loss)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if pair.Private.Len() != tc.nPriv || pair.Public.Len() != tc.nPub || pair.Private.D != tc.d || pair.Public.D != tc.d {
			t.Errorf("%s: D %d×%d, P %d×%d; want %d, %d of dimension %d", tc.name, pair.Private.Len(), pair.Private.D, pair.Public.Len(), pair.Public.D, tc.nPriv, tc.nPub, tc.d)
		}
		if err := checkPair(pair, tc.loss); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// idxImages returns IDX files of images (n of side×side pixels, pixel j
// of image i being (7i + j) mod 256) and of their labels.
func idxImages(labels []byte, side int) (images, labelFile []byte) {
	var im, lb bytes.Buffer
	binary.Write(&im, binary.BigEndian, []uint32{0x803, uint32(len(labels)), uint32(side), uint32(side)})
	for i := range labels {
		for j := range side * side {
			im.WriteByte(byte((7*i + j) % 256))
		}
	}
	binary.Write(&lb, binary.BigEndian, []uint32{0x801, uint32(len(labels))})
	lb.Write(labels)
	return im.Bytes(), lb.Bytes()
}

// TestMNIST69 checks the construction of Table 4.5 on a small IDX file: D
// holds the first sixes, P the first nines rotated by 180 degrees, and too
// few of either digit is an error that says so.
func TestMNIST69(t *testing.T) {
	const side, d = 28, 28 * 28
	labels := []byte{9, 6, 1, 9, 6, 6, 9, 9}
	images, lab := idxImages(labels, side)
	priv, pub, err := mnist69(bytes.NewReader(images), bytes.NewReader(lab), 2)
	if err != nil {
		t.Fatal(err)
	}
	if priv.Len() != 2 || pub.Len() != 2 || priv.D != d || pub.D != d || priv.Y != nil || pub.Y != nil {
		t.Fatalf("D %d×%d, P %d×%d; want 2 images of %d pixels each, no responses", priv.Len(), priv.D, pub.Len(), pub.D, d)
	}
	pixel := func(img, j int) float64 { return float64((7*img+j)%256) / 255 }
	for k, img := range []int{1, 4} { // the first two sixes
		for j := range d {
			if got := priv.Row(k)[j]; got != pixel(img, j) {
				t.Fatalf("D image %d pixel %d = %v, want %v (image %d)", k, j, got, pixel(img, j), img)
			}
		}
	}
	for k, img := range []int{0, 3} { // the first two nines, rotated
		for r := range side {
			for c := range side {
				if got, want := pub.Row(k)[r*side+c], pixel(img, (side-1-r)*side+(side-1-c)); got != want {
					t.Fatalf("P image %d pixel (%d, %d) = %v, want pixel (%d, %d) of image %d = %v", k, r, c, got, side-1-r, side-1-c, img, want)
				}
			}
		}
	}
	if _, _, err := mnist69(bytes.NewReader(images), bytes.NewReader(lab), 4); err == nil || !strings.Contains(err.Error(), "class 6 has 3 images") {
		t.Errorf("4 per digit from 3 sixes: %v", err)
	}
	_, short := idxImages(labels[:7], side)
	if _, _, err := mnist69(bytes.NewReader(images), bytes.NewReader(short), 2); err == nil || !strings.Contains(err.Error(), "7 labels for 8 images") {
		t.Errorf("a label short: %v", err)
	}
}

// TestStandardizeUsesPublicStatistics checks that the tabular constructions
// scale by the public set only: P's features have mean 0 and std 1 (or are
// constant), the intercept column is 1.
func TestStandardizeUsesPublicStatistics(t *testing.T) {
	for _, name := range []string{"compas", "diabetes", "breast-cancer"} {
		info, _ := Lookup(name)
		pair, err := Load("testdata", name, info.Tasks[0])
		if err != nil {
			t.Fatal(err)
		}
		p := pair.Public
		d := p.D
		mean, std := columnStats(p.X, d)
		for j := range d - 1 {
			if math.Abs(mean[j]) > 1e-12 || (math.Abs(std[j]-1) > 1e-12 && std[j] != 1) {
				t.Errorf("%s: public feature %d has mean %v, std %v", name, j, mean[j], std[j])
			}
		}
		for i := range pair.Private.Len() {
			if pair.Private.Row(i)[d-1] != 1 {
				t.Fatalf("%s: intercept of private row %d = %v", name, i, pair.Private.Row(i)[d-1])
			}
		}
	}
}

// TestCatalogEntries checks that every entry names itself for figures and
// says how to get its files.
func TestCatalogEntries(t *testing.T) {
	for _, info := range Catalog() {
		if info.Title == "" || info.Split == "" || info.Fetch == "" || len(info.Tasks) == 0 {
			t.Errorf("%s: incomplete entry %+v", info.Name, info)
		}
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(t.TempDir(), "mnist69", Mean)
	var me *MissingError
	if !errors.As(err, &me) || !strings.Contains(err.Error(), FetchScript) {
		t.Fatalf("error %v, want a *MissingError naming %s", err, FetchScript)
	}
	_, err = Load(t.TempDir(), "compas", Classification)
	if !errors.As(err, &me) || !strings.Contains(err.Error(), "ProPublica") {
		t.Fatalf("error %v, want a *MissingError saying where COMPAS comes from", err)
	}
}

func TestLoadRejects(t *testing.T) {
	if _, err := Load("testdata", "mnist", Mean); err == nil || !strings.Contains(err.Error(), "must be one of") {
		t.Errorf("unknown dataset: %v", err)
	}
	if _, err := Load("testdata", "mnist69", Classification); err == nil || !strings.Contains(err.Error(), "no construction") {
		t.Errorf("wrong task: %v", err)
	}
	// The fixtures are too small for the thesis' per-class counts.
	if _, err := Load("testdata", "cifar10", Regression); err == nil || !strings.Contains(err.Error(), "need 100") {
		t.Errorf("small cifar10: %v", err)
	}
	if _, err := Load("testdata", "credit", Classification); err == nil || !strings.Contains(err.Error(), "EDUCATION = 3") {
		t.Errorf("small credit: %v", err)
	}
}

// TestClassSplit checks the CIFAR-10 construction (shared by Fashion-MNIST
// ridge regression) on generated labels: 100 per class in D with the class
// as response, the next 250 of classes 0-3 in P.
func TestClassSplit(t *testing.T) {
	const d = 2
	var labels []int
	for i := range 4000 {
		labels = append(labels, (i*7)%10)
	}
	px := make([]byte, len(labels)*d)
	for i := range labels {
		px[i*d] = byte(i % 251)
	}
	priv, pub, err := classSplit(px, d, labels, 100, 250)
	if err != nil {
		t.Fatal(err)
	}
	if priv.Len() != 1000 || pub.Len() != 1000 {
		t.Fatalf("D %d, P %d; want 1000 each", priv.Len(), pub.Len())
	}
	count := map[float64]int{}
	for _, y := range pub.Y {
		count[y]++
	}
	if len(count) != 4 || count[0] != 250 || count[3] != 250 {
		t.Fatalf("P classes %v", count)
	}
}

// TestCreditSplit builds the credit construction from a generated table
// large enough for it.
func TestCreditSplit(t *testing.T) {
	var b strings.Builder
	b.WriteString("ID,LIMIT_BAL,SEX,EDUCATION,MARRIAGE,AGE,PAY_0,PAY_2,PAY_3,PAY_4,PAY_5,PAY_6,BILL_AMT1,BILL_AMT2,BILL_AMT3,BILL_AMT4,BILL_AMT5,BILL_AMT6,PAY_AMT1,PAY_AMT2,PAY_AMT3,PAY_AMT4,PAY_AMT5,PAY_AMT6,default payment next month\n")
	for i := range 1200 {
		ed := 2 + i%2
		fmt.Fprintf(&b, "%d,%d,1,%d,1,30%s,%d\n", i, 1000*(i%17+1), ed, strings.Repeat(",0", 18), (i/2)%3%2)
	}
	priv, pub, err := credit(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	var dDefault, pDefault float64
	for _, y := range priv.Y {
		dDefault += y
	}
	for _, y := range pub.Y {
		pDefault += y
	}
	if priv.Len() != 200 || pub.Len() != 200 || dDefault != 100 || pDefault != 10 || priv.D != 23 {
		t.Fatalf("D %d (defaults %v), P %d (defaults %v), d %d", priv.Len(), dDefault, pub.Len(), pDefault, priv.D)
	}
}

func TestSynthetic(t *testing.T) {
	for _, l := range []Task{Mean, Regression, Classification} {
		a, err := Synthetic(context.Background(), l, 30, 5, 7)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Synthetic(context.Background(), l, 30, 5, 7)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkPair(a, l); err != nil {
			t.Fatalf("%v: %v", l, err)
		}
		for i := range a.Private.X {
			if a.Private.X[i] != b.Private.X[i] {
				t.Fatalf("%v: not deterministic", l)
			}
		}
	}
}

// TestSyntheticCancelled: a cancelled context stops the drawing of a
// synthetic set, of either kind, with its error. The largest sets darrm
// allows take seconds to draw, and SIGTERM may wait one at most.
func TestSyntheticCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, l := range []Task{Mean, Regression, Classification} {
		// Sets of no samples: the templates alone, of dimension 2^18,
		// are the work (darrm allows 2^25 with two samples).
		if p, err := Synthetic(ctx, l, 0, 1<<18, 1); !errors.Is(err, context.Canceled) || p != nil {
			t.Errorf("%v: Synthetic of dimension 2^18 on a cancelled context: error %v, a pair %t; want context.Canceled and none", l, err, p != nil)
		}
		if p, err := Synthetic(ctx, l, 1000, 784, 1); !errors.Is(err, context.Canceled) || p != nil {
			t.Errorf("%v: Synthetic on a cancelled context: error %v, a pair %t; want context.Canceled and none", l, err, p != nil)
		}
	}
}

// dataDir is the folder where scripts/fetch-data.sh puts the real datasets.
func dataDir() string {
	d, err := DefaultDir()
	if err != nil {
		return ""
	}
	return d
}

// TestRealData loads the fetched datasets and checks the sizes of D and P.
// It skips, saying so, when scripts/fetch-data.sh has not been run.
func TestRealData(t *testing.T) {
	type realCase struct {
		name           string
		loss           Task
		nPriv, nPub, d int
	}
	tests := []realCase{
		{"mnist69", Mean, 1000, 1000, 784},
		{"fashion-mnist", Mean, 1000, 1000, 784},
		{"fashion-mnist", Regression, 1000, 1000, 784},
		{"breast-cancer", Classification, 284, 285, 31},
		{"diabetes", Regression, 207, 235, 10},
	}
	if testing.Short() {
		// Under -short at a smaller size: Fashion-MNIST for one task, each
		// dataset and each task still loaded once (every load of
		// Fashion-MNIST decompresses its 47 MB of images, 0.4 s of CPU);
		// its regression set is classSplit's, which TestClassSplit checks.
		tests = slices.DeleteFunc(tests, func(tc realCase) bool { return tc.name == "fashion-mnist" && tc.loss == Regression })
	}
	for _, tc := range tests {
		pair, err := Load(dataDir(), tc.name, tc.loss)
		var me *MissingError
		if errors.As(err, &me) {
			t.Skipf("real data not fetched (%v): run %s to include this test", err, FetchScript)
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if pair.Private.Len() != tc.nPriv || pair.Public.Len() != tc.nPub || pair.Private.D != tc.d {
			t.Errorf("%s/%v: D %d×%d, P %d; want %d, %d of dimension %d", tc.name, tc.loss, pair.Private.Len(), pair.Private.D, pair.Public.Len(), tc.nPriv, tc.nPub, tc.d)
		}
	}
}

// checkPair checks that both sets of p are valid and shaped for task t:
// responses exactly when t has them, 0/1 labels for classification.
func checkPair(p *Pair, t Task) error {
	for _, s := range []struct {
		name string
		d    *Dataset
	}{{"private", p.Private}, {"public", p.Public}} {
		if err := s.d.Validate(s.name); err != nil {
			return err
		}
		if (s.d.Y != nil) != (t != Mean) {
			return fmt.Errorf("%s set: responses %v for %v", s.name, s.d.Y != nil, t)
		}
		for i, y := range s.d.Y {
			if t == Classification && y != 0 && y != 1 {
				return fmt.Errorf("%s set: label %d = %v, want 0 or 1", s.name, i, y)
			}
		}
	}
	if p.Private.D != p.Public.D {
		return fmt.Errorf("dimensions %d and %d differ", p.Private.D, p.Public.D)
	}
	return nil
}

// TestCanonical: every name the package knows reads in any case, as its
// own spelling; other names stay as given.
func TestCanonical(t *testing.T) {
	var names []string
	for _, info := range Catalog() {
		names = append(names, info.Name)
	}
	names = append(append(names, binaryNames()...), "mnist39", "fashion07", "mnist", "fashion-mnist")
	for _, n := range names {
		for _, typed := range []string{n, strings.ToUpper(n), strings.ToUpper(n[:1]) + n[1:]} {
			if got := Canonical(typed); got != n {
				t.Errorf("Canonical(%q) = %q, want %q", typed, got, n)
			}
		}
	}
	for _, n := range []string{"MNIST55", "cifar100", "", "Mnist 58"} {
		if got := Canonical(n); got != n {
			t.Errorf("Canonical(%q) = %q, want it unchanged", n, got)
		}
	}
}
