package datasets

import (
	"errors"
	"testing"
)

// TestLoadBinaryFetched checks the sizes of the thesis' 5-vs-8 tasks and
// of the 3-vs-9 tuning tasks when
// the data have been fetched (skipped otherwise: CI has no data).
func TestLoadBinaryFetched(t *testing.T) {
	dir, err := DefaultDir()
	if err != nil {
		t.Skip(err)
	}
	cases := []struct {
		name        string
		train, test int
	}{{"mnist58", 11272, 1866}, {"fashion39", 12000, 2000}, {"fashion58", 12000, 2000}, {"mnist39", 12080, 2019}}
	if testing.Short() {
		// Under -short the same check at a smaller size: two of the four
		// tasks, one of each source set and of each pair of classes (each
		// task decompresses its set's images, about 0.4 s of CPU).
		cases = cases[:2]
	}
	for _, c := range cases {
		b, err := LoadBinary(dir, c.name)
		var me *MissingError
		if errors.As(err, &me) {
			t.Skipf("%s: %v", c.name, err)
		}
		if err != nil {
			t.Fatal(err)
		}
		if b.Train.Len() != c.train || b.Test.Len() != c.test || b.PublicTrainSize != c.train {
			t.Errorf("%s: %d training and %d test images (public size %d), want %d and %d", c.name, b.Train.Len(), b.Test.Len(), b.PublicTrainSize, c.train, c.test)
		}
	}
}

// TestPublicTrainSize: the published sizes, without data, for the thesis'
// tasks and any pair of classes; an unknown name is an error.
func TestPublicTrainSize(t *testing.T) {
	for name, want := range map[string]int{"mnist58": 11272, "fashion58": 12000, "mnist39": 12080, "mnist01": 12665, "fashion17": 12000} {
		if got, err := PublicTrainSize(name); err != nil || got != want {
			t.Errorf("%s: %d, %v; want %d", name, got, err, want)
		}
	}
	if _, err := PublicTrainSize("cifar"); err == nil {
		t.Error("unknown task accepted")
	}
	if b := SyntheticBinary(30, 5, 1); b.PublicTrainSize != 30 {
		t.Errorf("synthetic: public size %d", b.PublicTrainSize)
	}
}

func TestLoadBinaryErrors(t *testing.T) {
	if _, err := LoadBinary(t.TempDir(), "cifar"); err == nil {
		t.Error("unknown task accepted")
	}
	_, err := LoadBinary(t.TempDir(), "mnist58")
	var me *MissingError
	if !errors.As(err, &me) || me.Fetch == "" {
		t.Errorf("missing data: %v", err)
	}
}

func TestBinarySet(t *testing.T) {
	px := []byte{0, 255, 10, 20, 30, 40, 50, 60}
	s := binarySet(px, 2, []int{5, 3, 8, 5}, [2]int{5, 8})
	if s.Len() != 3 || s.Y[0] != 0 || s.Y[1] != 1 || s.Y[2] != 0 || s.X[1] != 1 || s.X[2] != 30.0/255 {
		t.Errorf("binarySet: %+v", s)
	}
}
