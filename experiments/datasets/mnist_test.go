package datasets

import (
	"errors"
	"testing"
)

// The full MNIST, when fetched: 60,000 and 10,000 digits, every class
// present, pixels scaled to [0, 1].
func TestLoadMNIST(t *testing.T) {
	names := []string{"mnist", "fashion-mnist"}
	if testing.Short() {
		// Under -short the same check at a smaller size: MNIST alone, by
		// the same code; TestLoadBinaryFetched's fashion39 reads
		// Fashion-MNIST's files whole.
		names = names[:1]
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) { testLoadMNIST(t, name) })
	}
}

func testLoadMNIST(t *testing.T, name string) {
	m, err := LoadMNIST("", name)
	var miss *MissingError
	if errors.As(err, &miss) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if m.Train.Len() != 60000 || m.Test.Len() != 10000 || m.Classes != 10 {
		t.Fatalf("%d training and %d test images, %d classes", m.Train.Len(), m.Test.Len(), m.Classes)
	}
	seen := make([]int, 10)
	for _, l := range m.Test.Labels {
		seen[l]++
	}
	for c, n := range seen {
		if n < 800 {
			t.Errorf("digit %d: %d test images", c, n)
		}
	}
	d := m.Test.Dataset(Range(5, 8))
	if d.Len() != 3 || d.Y[0] != float64(m.Test.Labels[5]) || d.X[784*2+300] != float64(m.Test.Image(7)[300])/255 {
		t.Errorf("Dataset(5..7): %d images, label %v", d.Len(), d.Y[0])
	}
}

func TestLoadMNISTMissing(t *testing.T) {
	_, err := LoadMNIST(t.TempDir(), "mnist")
	var miss *MissingError
	if !errors.As(err, &miss) || miss.Dataset != "mnist" {
		t.Errorf("empty folder: %v", err)
	}
	if _, err := LoadMNIST("", "cifar"); err == nil {
		t.Error("an unknown set accepted")
	}
}

func TestSyntheticClasses(t *testing.T) {
	m := SyntheticClasses(100, 20, 10, 1)
	if m.Train.Len() != 100 || m.Test.Len() != 20 || m.Classes != 10 {
		t.Fatal("sizes")
	}
	for i, l := range m.Train.Labels {
		if l < 0 || l >= 10 || m.Train.Image(i)[l*28/10+1] < 127 {
			t.Fatalf("image %d of class %d is not bright in its band", i, l)
		}
	}
}
