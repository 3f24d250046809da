package datasets

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darrm/darrm/internal/quotetest"
)

func open(t *testing.T, rel string) *os.File {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", rel))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestReadIDX(t *testing.T) {
	dims, data, err := readIDX(open(t, "fashion-mnist/train-images-idx3-ubyte.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dims) != 3 || dims[0] != 3 || dims[1] != 28 || dims[2] != 28 || len(data) != 3*784 || data[1] != 13 {
		t.Fatalf("dims %v, %d bytes, data[1] = %d", dims, len(data), data[1])
	}
	labels, err := readIDXLabels(open(t, "fashion-mnist/train-labels-idx1-ubyte.gz"))
	if err != nil || len(labels) != 3 || labels[0] != 6 || labels[1] != 0 {
		t.Fatalf("labels %v, %v", labels, err)
	}
	// Uncompressed input works too; a short file and a bad magic do not.
	var raw bytes.Buffer
	binary.Write(&raw, binary.BigEndian, []uint32{0x801, 2})
	raw.Write([]byte{4, 5})
	if l, err := readIDXLabels(bytes.NewReader(raw.Bytes())); err != nil || len(l) != 2 {
		t.Errorf("plain IDX: %v, %v", l, err)
	}
	if _, err := readIDXLabels(bytes.NewReader(raw.Bytes()[:9])); err == nil || !strings.Contains(err.Error(), "must be 2") {
		t.Errorf("short IDX: %v", err)
	}
	if _, _, err := readIDX(bytes.NewReader([]byte{0, 0, 9, 1, 0, 0, 0, 1, 7})); err == nil || !strings.Contains(err.Error(), "magic") {
		t.Errorf("bad magic: %v", err)
	}
}

func TestReadBreastCancer(t *testing.T) {
	tab, err := readBreastCancer(open(t, "sklearn/breast_cancer.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if tab.Len() != 4 || tab.D != 30 || tab.Row(1)[1] != 20 || tab.Y[1] != 1 {
		t.Fatalf("%d rows of %d, row 1 texture %v label %v", tab.Len(), tab.D, tab.Row(1)[1], tab.Y[1])
	}
	for name, bad := range map[string]string{
		"count":  "2,2,a,b\n1,2,0\n",
		"label":  "1,2,a,b\n1,2,3\n",
		"NaN":    "1,2,a,b\nNaN,2,1\n",
		"ragged": "1,2,a,b\n1,1\n",
		"header": "x,2\n",
	} {
		if _, err := readBreastCancer(strings.NewReader(bad)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestReadDiabetes(t *testing.T) {
	tab, err := readDiabetes(open(t, "sklearn/diabetes_data_raw.csv.gz"), open(t, "sklearn/diabetes_target.csv.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if tab.Len() != 4 || tab.D != 10 || tab.Row(3)[0] != 53 || tab.Y[3] != 130 {
		t.Fatalf("%d rows, row 3 age %v target %v", tab.Len(), tab.Row(3)[0], tab.Y[3])
	}
	if _, err := readDiabetes(strings.NewReader("1 2 3\n"), strings.NewReader("1\n")); err == nil || !strings.Contains(err.Error(), "3 fields") {
		t.Errorf("short row: %v", err)
	}
	if _, err := readDiabetes(strings.NewReader("1 2 3 4 5 6 7 8 9 10\n"), strings.NewReader("1\n2\n")); err == nil {
		t.Error("1 row, 2 targets: no error")
	}
}

func TestReadCOMPAS(t *testing.T) {
	rows, err := readCOMPAS(open(t, "compas/compas-scores-two-years.csv"))
	if err != nil {
		t.Fatal(err)
	}
	// Rows 4, 5, 8, 9 and 10 fail one of ProPublica's filters each.
	if len(rows) != 7 {
		t.Fatalf("%d rows after the filters, want 7", len(rows))
	}
	got := rows[5] // id 11
	want := []float64{0, 50, 0, 0, 1, 2, 1, 3, 5, 0}
	if got.Race != "Caucasian" || got.Recid != 0 || len(got.Features) != len(want) {
		t.Fatalf("row %+v", got)
	}
	for j := range want {
		if got.Features[j] != want[j] {
			t.Fatalf("features %v, want %v (%v)", got.Features, want, compasFeatures)
		}
	}
	if _, err := readCOMPAS(strings.NewReader("sex,age\nMale,3\n")); err == nil || !strings.Contains(err.Error(), `no column "age_cat"`) {
		t.Errorf("missing column: %v", err)
	}
}

func TestReadCommunities(t *testing.T) {
	tab, err := readCommunities(open(t, "crime/communities.data"))
	if err != nil {
		t.Fatal(err)
	}
	if tab.Len() != 5 || tab.D != 124 {
		t.Fatalf("%d complete rows of %d features, want 5 of 124", tab.Len(), tab.D)
	}
	if _, err := readCommunities(strings.NewReader("1,2,3\n")); err == nil || !strings.Contains(err.Error(), "must be 128") {
		t.Errorf("short row: %v", err)
	}
}

func TestReadCreditDefault(t *testing.T) {
	rows, err := readCreditDefault(open(t, "credit/default_of_credit_card_clients.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 6 || rows[0].Education != 3 || rows[0].Default != 1 || rows[1].Features[0] != 40000 || len(rows[0].Features) != 22 {
		t.Fatalf("rows %+v", rows[:2])
	}
	if _, err := readCreditDefault(strings.NewReader("a,b\nc,d\ne,f\n")); err == nil || !strings.Contains(err.Error(), "LIMIT_BAL") {
		t.Errorf("no header: %v", err)
	}
}

func TestReadCIFAR10Batch(t *testing.T) {
	px, labels, err := readCIFAR10Batch(open(t, "cifar10/data_batch_1.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if len(labels) != 3 || labels[1] != 9 || len(px) != 3*cifarPixels || px[cifarPixels] != 63 {
		t.Fatalf("labels %v, %d pixels, px[3072] = %d", labels, len(px), px[cifarPixels])
	}
	if _, _, err := readCIFAR10Batch(bytes.NewReader(make([]byte, 100))); err == nil {
		t.Error("short batch: no error")
	}
	bad := make([]byte, cifarRecord)
	bad[0] = 10
	if _, _, err := readCIFAR10Batch(bytes.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "label 10") {
		t.Errorf("label 10: %v", err)
	}
}

func FuzzReadIDX(f *testing.F) {
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write([]byte{0, 0, 8, 1, 0, 0, 0, 2, 1, 2})
	w.Close()
	f.Add(gz.Bytes())
	f.Add([]byte{0, 0, 8, 3, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 9})
	f.Fuzz(func(t *testing.T, b []byte) {
		dims, data, err := readIDX(bytes.NewReader(b))
		if err != nil {
			return
		}
		total := 1
		for _, d := range dims {
			total *= d
		}
		if total != len(data) {
			t.Fatalf("dims %v but %d bytes", dims, len(data))
		}
	})
}

// long is a field of a data file far longer than an error quotes.
var long = strings.Repeat("x", 200)

// FuzzReadCOMPAS: no file panics the reader, its errors quote a few
// bytes of it (quotetest.Check), and its rows hold every feature and a 0/1
// recidivism.
func FuzzReadCOMPAS(f *testing.F) {
	b, _ := os.ReadFile(filepath.Join("testdata", "compas", "compas-scores-two-years.csv"))
	f.Add(string(b))
	f.Add(strings.Replace(string(b), ",Male,", ","+long+",", 1))
	f.Fuzz(func(t *testing.T, s string) {
		rows, err := readCOMPAS(strings.NewReader(s))
		if err != nil {
			quotetest.Check(t, err.Error(), []byte(s), 1000)
			return
		}
		for _, r := range rows {
			if len(r.Features) != len(compasFeatures) || (r.Recid != 0 && r.Recid != 1) {
				t.Fatalf("bad row %+v", r)
			}
		}
	})
}

// FuzzReadCommunities: no file panics the reader, its errors quote a
// few bytes of it (quotetest.Check), and its table holds D values a row.
func FuzzReadCommunities(f *testing.F) {
	b, _ := os.ReadFile(filepath.Join("testdata", "crime", "communities.data"))
	f.Add(string(b))
	f.Add(strings.Replace(string(b), ",0.85,", ","+long+",", 1))
	f.Fuzz(func(t *testing.T, s string) {
		tab, err := readCommunities(strings.NewReader(s))
		if err != nil {
			quotetest.Check(t, err.Error(), []byte(s), 1000)
			return
		}
		if len(tab.X) != tab.Len()*tab.D {
			t.Fatalf("%d values for %d rows of %d", len(tab.X), tab.Len(), tab.D)
		}
	})
}

// FuzzReadCreditDefault: no file panics the reader, its errors quote a
// few bytes of it (quotetest.Check), and its rows hold every feature and a
// 0/1 default.
func FuzzReadCreditDefault(f *testing.F) {
	b, _ := os.ReadFile(filepath.Join("testdata", "credit", "default_of_credit_card_clients.csv"))
	f.Add(string(b))
	f.Add(strings.Replace(string(b), ",0,0,0,0,1\n", ",0,0,0,0,"+long+"\n", 1))
	f.Fuzz(func(t *testing.T, s string) {
		rows, err := readCreditDefault(strings.NewReader(s))
		if err != nil {
			quotetest.Check(t, err.Error(), []byte(s), 1000)
			return
		}
		for _, r := range rows {
			if len(r.Features) != len(creditFeatures) || (r.Default != 0 && r.Default != 1) {
				t.Fatalf("bad row %+v", r)
			}
		}
	})
}

// FuzzReadBreastCancer: no file panics the reader, its errors quote a
// few bytes of it (quotetest.Check), and its table holds D values a row.
func FuzzReadBreastCancer(f *testing.F) {
	b, _ := os.ReadFile(filepath.Join("testdata", "sklearn", "breast_cancer.csv"))
	f.Add(string(b))
	f.Add(long + string(b))
	f.Add(strings.Replace(string(b), "5.689,", long+",", 1))
	f.Fuzz(func(t *testing.T, s string) {
		tab, err := readBreastCancer(strings.NewReader(s))
		if err != nil {
			quotetest.Check(t, err.Error(), []byte(s), 1000)
			return
		}
		if len(tab.X) != tab.Len()*tab.D {
			t.Fatalf("%d values for %d rows of %d", len(tab.X), tab.Len(), tab.D)
		}
	})
}
