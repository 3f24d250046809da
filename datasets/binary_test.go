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
	for _, c := range []struct {
		name        string
		train, test int
	}{{"mnist58", 11272, 1866}, {"fashion58", 12000, 2000}, {"mnist39", 12080, 2019}, {"fashion39", 12000, 2000}} {
		b, err := LoadBinary(dir, c.name)
		var me *MissingError
		if errors.As(err, &me) {
			t.Skipf("%s: %v", c.name, err)
		}
		if err != nil {
			t.Fatal(err)
		}
		if b.Train.Len() != c.train || b.Test.Len() != c.test {
			t.Errorf("%s: %d training and %d test images, want %d and %d", c.name, b.Train.Len(), b.Test.Len(), c.train, c.test)
		}
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
