package datasets

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/darrm/darrm/internal/param"
)

// maxIDXBytes bounds what readIDX accepts (the Fashion-MNIST training
// images are 47 MB), so that a corrupt header cannot make it allocate
// without limit.
const maxIDXBytes = 1 << 30

// idxPrealloc bounds the room readIDX makes for the data its header
// promises before reading it: all of MNIST's 47 MB, read without the
// copies of a growing buffer, while a header that promises more than its
// file holds costs at most this much beyond the data there is.
const idxPrealloc = 64 << 20

// readIDX reads an IDX file of unsigned bytes (the format of MNIST and
// Fashion-MNIST, gzip-compressed or not): a magic number 0x0000080N, N
// big-endian uint32 dimensions, then the bytes. It returns the dimensions
// and the data.
func readIDX(r io.Reader) (dims []int, data []byte, err error) {
	br := bufio.NewReader(r)
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, fmt.Errorf("idx: %w", err)
		}
		defer gz.Close()
		r = gz
	} else {
		r = br
	}
	var head [4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return nil, nil, fmt.Errorf("idx header: %w", err)
	}
	if head[0] != 0 || head[1] != 0 || head[2] != 0x08 {
		return nil, nil, fmt.Errorf("idx magic %x: must be 00 00 08 (unsigned bytes) followed by the number of dimensions", head[:3])
	}
	nd := int(head[3])
	if nd < 1 || nd > 4 {
		return nil, nil, fmt.Errorf("idx: %d dimensions: must be 1 to 4", nd)
	}
	total := 1
	dims = make([]int, nd)
	for i := range dims {
		var d uint32
		if err := binary.Read(r, binary.BigEndian, &d); err != nil {
			return nil, nil, fmt.Errorf("idx dimension %d: %w", i, err)
		}
		if d == 0 || uint64(total)*uint64(d) > maxIDXBytes {
			return nil, nil, fmt.Errorf("idx dimension %d = %d: must be >= 1 with at most %d bytes in all", i, d, maxIDXBytes)
		}
		dims[i] = int(d)
		total *= int(d)
	}
	// One byte more than total tells a file that is too long.
	buf := bytes.NewBuffer(make([]byte, 0, min(total, idxPrealloc)+1+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(r, int64(total)+1)); err != nil {
		return nil, nil, fmt.Errorf("idx data: %w", err)
	}
	data = buf.Bytes()
	if len(data) != total {
		return nil, nil, fmt.Errorf("idx data: %d bytes for dimensions %v: must be %d", len(data), dims, total)
	}
	return dims, data, nil
}

// readIDXLabels reads an IDX label file (one dimension) and returns the
// labels.
func readIDXLabels(r io.Reader) ([]int, error) {
	dims, data, err := readIDX(r)
	if err != nil {
		return nil, err
	}
	if len(dims) != 1 {
		return nil, fmt.Errorf("idx labels: %d dimensions: must be 1", len(dims))
	}
	labels := make([]int, len(data))
	for i, b := range data {
		labels[i] = int(b)
	}
	return labels, nil
}

// table is a numeric table read from a file: n rows of D features and one
// response per row.
type table struct {
	X []float64 // n·D, row-major
	Y []float64 // n
	D int
}

// Len returns the number of rows.
func (t *table) Len() int { return len(t.Y) }

// Row returns row i's features.
func (t *table) Row(i int) []float64 { return t.X[i*t.D : (i+1)*t.D] }

// parseFloat parses a finite number; where says which field it is.
func parseFloat(s, where string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%s = %s: must be a finite number", where, param.Quote(s))
	}
	return v, nil
}

// readBreastCancer reads scikit-learn's breast_cancer.csv: a first line
// "n,d,name0,name1", then n rows of d features and a 0/1 target
// (0 = malignant, 1 = benign in scikit-learn's coding).
func readBreastCancer(r io.Reader) (*table, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("breast cancer: header: %w", err)
	}
	if len(head) < 2 {
		return nil, fmt.Errorf("breast cancer: header %s: must start with n,d", param.Quote(strings.Join(head, ",")))
	}
	n, err1 := strconv.Atoi(head[0])
	d, err2 := strconv.Atoi(head[1])
	if err1 != nil || err2 != nil || n < 1 || d < 1 {
		return nil, fmt.Errorf("breast cancer: header %s: must start with n,d (positive integers)", param.Quote(strings.Join(head, ",")))
	}
	t := &table{D: d}
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("breast cancer: %w", err)
		}
		if len(rec) != d+1 {
			return nil, fmt.Errorf("breast cancer line %d: %d fields: must be %d (d features and the target)", line, len(rec), d+1)
		}
		for j := range d {
			v, err := parseFloat(rec[j], fmt.Sprintf("breast cancer line %d field %d", line, j+1))
			if err != nil {
				return nil, err
			}
			t.X = append(t.X, v)
		}
		y, err := parseFloat(rec[d], fmt.Sprintf("breast cancer line %d target", line))
		if err != nil || (y != 0 && y != 1) {
			return nil, fmt.Errorf("breast cancer line %d target = %s: must be 0 or 1", line, param.Quote(rec[d]))
		}
		t.Y = append(t.Y, y)
	}
	if t.Len() != n {
		return nil, fmt.Errorf("breast cancer: %d rows: the header says %d", t.Len(), n)
	}
	return t, nil
}

// diabetesColumns are the ten features of scikit-learn's diabetes table.
var diabetesColumns = []string{"age", "sex", "bmi", "bp", "s1", "s2", "s3", "s4", "s5", "s6"}

// readDiabetes reads scikit-learn's diabetes_data_raw.csv(.gz) (442 rows of
// ten whitespace-separated raw features, diabetesColumns) and
// diabetes_target.csv(.gz) (one response per line).
func readDiabetes(data, target io.Reader) (*table, error) {
	data, err := maybeGunzip(data)
	if err != nil {
		return nil, fmt.Errorf("diabetes data: %w", err)
	}
	target, err = maybeGunzip(target)
	if err != nil {
		return nil, fmt.Errorf("diabetes target: %w", err)
	}
	d := len(diabetesColumns)
	t := &table{D: d}
	sc := bufio.NewScanner(data)
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != d {
			return nil, fmt.Errorf("diabetes data line %d: %d fields: must be %d", line, len(f), d)
		}
		for j, s := range f {
			v, err := parseFloat(s, fmt.Sprintf("diabetes data line %d field %s", line, diabetesColumns[j]))
			if err != nil {
				return nil, err
			}
			t.X = append(t.X, v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("diabetes data: %w", err)
	}
	sc = bufio.NewScanner(target)
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		if s == "" {
			continue
		}
		v, err := parseFloat(s, fmt.Sprintf("diabetes target line %d", line))
		if err != nil {
			return nil, err
		}
		t.Y = append(t.Y, v)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("diabetes target: %w", err)
	}
	if n := len(t.X) / d; n != len(t.Y) || n == 0 {
		return nil, fmt.Errorf("diabetes: %d feature rows and %d targets: must be equal and positive", n, len(t.Y))
	}
	return t, nil
}

// maybeGunzip returns r decompressed when it starts with the gzip magic.
func maybeGunzip(r io.Reader) (io.Reader, error) {
	br := bufio.NewReader(r)
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		return gzip.NewReader(br)
	}
	return br, nil
}

// csvHeader maps column names to indices; the first occurrence of a
// repeated name wins (ProPublica's file repeats decile_score and
// priors_count).
func csvHeader(rec []string) map[string]int {
	m := make(map[string]int, len(rec))
	for i, name := range rec {
		name = strings.TrimSpace(strings.TrimPrefix(name, "\ufeff"))
		if _, dup := m[name]; !dup {
			m[name] = i
		}
	}
	return m
}

func requireColumns(file string, h map[string]int, names ...string) error {
	for _, name := range names {
		if _, ok := h[name]; !ok {
			return fmt.Errorf("%s: header has no column %q", file, name)
		}
	}
	return nil
}

// compasRow is one defendant of ProPublica's compas-scores-two-years.csv,
// kept after ProPublica's filters.
type compasRow struct {
	Race     string
	Features []float64 // compasFeatures
	Recid    float64   // two_year_recid, 0 or 1
}

// compasFeatures names the ten features read from each COMPAS row.
var compasFeatures = []string{"male", "age", "age<25", "age25-45", "age>45", "juv_fel_count", "juv_misd_count", "juv_other_count", "priors_count", "felony"}

// readCOMPAS reads ProPublica's compas-scores-two-years.csv and applies
// ProPublica's filters (|days_b_screening_arrest| <= 30, is_recid != -1,
// c_charge_degree != "O", score_text != "N/A"), as in their analysis.
func readCOMPAS(r io.Reader) ([]compasRow, error) {
	const file = "compas"
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: header: %w", file, err)
	}
	h := csvHeader(head)
	if err := requireColumns(file, h, "sex", "age", "age_cat", "race", "juv_fel_count", "juv_misd_count", "juv_other_count",
		"priors_count", "c_charge_degree", "days_b_screening_arrest", "is_recid", "score_text", "two_year_recid"); err != nil {
		return nil, err
	}
	var rows []compasRow
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if len(rec) != len(head) {
			return nil, fmt.Errorf("%s line %d: %d fields: the header has %d", file, line, len(rec), len(head))
		}
		get := func(name string) string { return strings.TrimSpace(rec[h[name]]) }
		num := func(name string) (float64, error) {
			return parseFloat(get(name), fmt.Sprintf("%s line %d column %s", file, line, name))
		}
		days := get("days_b_screening_arrest")
		if days == "" || get("score_text") == "N/A" || get("c_charge_degree") == "O" {
			continue
		}
		dv, err := num("days_b_screening_arrest")
		if err != nil {
			return nil, err
		}
		isRecid, err := num("is_recid")
		if err != nil {
			return nil, err
		}
		if dv > 30 || dv < -30 || isRecid == -1 {
			continue
		}
		f := make([]float64, 0, len(compasFeatures))
		switch get("sex") {
		case "Male":
			f = append(f, 1)
		case "Female":
			f = append(f, 0)
		default:
			return nil, fmt.Errorf("%s line %d column sex = %s: must be Male or Female", file, line, param.Quote(get("sex")))
		}
		age, err := num("age")
		if err != nil {
			return nil, err
		}
		f = append(f, age)
		cat := get("age_cat")
		var lt25, mid, gt45 float64
		switch cat {
		case "Less than 25":
			lt25 = 1
		case "25 - 45":
			mid = 1
		case "Greater than 45":
			gt45 = 1
		default:
			return nil, fmt.Errorf("%s line %d column age_cat = %s: must be \"Less than 25\", \"25 - 45\" or \"Greater than 45\"", file, line, param.Quote(cat))
		}
		f = append(f, lt25, mid, gt45)
		for _, c := range []string{"juv_fel_count", "juv_misd_count", "juv_other_count", "priors_count"} {
			v, err := num(c)
			if err != nil {
				return nil, err
			}
			f = append(f, v)
		}
		switch get("c_charge_degree") {
		case "F":
			f = append(f, 1)
		case "M":
			f = append(f, 0)
		default:
			return nil, fmt.Errorf("%s line %d column c_charge_degree = %s: must be F, M or O", file, line, param.Quote(get("c_charge_degree")))
		}
		y, err := num("two_year_recid")
		if err != nil || (y != 0 && y != 1) {
			return nil, fmt.Errorf("%s line %d column two_year_recid = %s: must be 0 or 1", file, line, param.Quote(get("two_year_recid")))
		}
		rows = append(rows, compasRow{Race: get("race"), Features: f, Recid: y})
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no rows left after ProPublica's filters", file)
	}
	return rows, nil
}

// Communities and Crime layout (UCI communities.data, 128 columns).
const (
	communitiesColumns = 128
	communitiesTarget  = 127 // ViolentCrimesPerPop
)

// communitiesDropped are the columns that are not used as features: county
// and community (mostly missing codes) and communityname (a string). The
// thesis' d = 124 keeps state and fold beside the 122 predictive columns.
var communitiesDropped = map[int]bool{1: true, 2: true, 3: true}

// readCommunities reads UCI's communities.data (comma-separated, 128
// columns, "?" for missing) and returns the rows without a missing value
// in the 124 feature columns or the target, ViolentCrimesPerPop.
func readCommunities(r io.Reader) (*table, error) {
	const file = "communities"
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	t := &table{D: communitiesColumns - 1 - len(communitiesDropped)}
	for line := 1; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if len(rec) != communitiesColumns {
			return nil, fmt.Errorf("%s line %d: %d fields: must be %d", file, line, len(rec), communitiesColumns)
		}
		row := make([]float64, 0, t.D)
		complete := true
		for j, s := range rec {
			if communitiesDropped[j] {
				continue
			}
			if strings.TrimSpace(s) == "?" {
				complete = false
				break
			}
			v, err := parseFloat(s, fmt.Sprintf("%s line %d column %d", file, line, j+1))
			if err != nil {
				return nil, err
			}
			row = append(row, v)
		}
		if !complete {
			continue
		}
		t.Y = append(t.Y, row[len(row)-1])
		t.X = append(t.X, row[:len(row)-1]...)
	}
	if t.Len() == 0 {
		return nil, fmt.Errorf("%s: no row without missing values", file)
	}
	return t, nil
}

// creditRow is one client of UCI's default of credit card clients table.
type creditRow struct {
	Education int
	Features  []float64 // creditFeatures
	Default   float64   // 0 or 1
}

// creditFeatures are the columns read as features: all of X1-X23 but
// EDUCATION, which splits the data.
var creditFeatures = []string{"LIMIT_BAL", "SEX", "MARRIAGE", "AGE", "PAY_0", "PAY_2", "PAY_3", "PAY_4", "PAY_5", "PAY_6",
	"BILL_AMT1", "BILL_AMT2", "BILL_AMT3", "BILL_AMT4", "BILL_AMT5", "BILL_AMT6",
	"PAY_AMT1", "PAY_AMT2", "PAY_AMT3", "PAY_AMT4", "PAY_AMT5", "PAY_AMT6"}

// readCreditDefault reads UCI's default of credit card clients table saved
// as CSV. The header row is the one naming LIMIT_BAL (UCI's spreadsheet has
// an X1..X23 row above it, which is skipped); the target column is
// "default payment next month" (or "default.payment.next.month").
func readCreditDefault(r io.Reader) ([]creditRow, error) {
	const file = "credit"
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	var h map[string]int
	var width int
	line := 0
	for h == nil {
		line++
		rec, err := cr.Read()
		if err == io.EOF {
			return nil, fmt.Errorf("%s: no header row naming LIMIT_BAL", file)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if slicesContains(rec, "LIMIT_BAL") {
			h, width = csvHeader(rec), len(rec)
		} else if line > 2 {
			return nil, fmt.Errorf("%s: no header row naming LIMIT_BAL in the first two lines", file)
		}
	}
	target := ""
	for _, name := range []string{"default payment next month", "default.payment.next.month"} {
		if _, ok := h[name]; ok {
			target = name
		}
	}
	if target == "" {
		return nil, fmt.Errorf(`%s: header has no column "default payment next month"`, file)
	}
	if err := requireColumns(file, h, append([]string{"EDUCATION"}, creditFeatures...)...); err != nil {
		return nil, err
	}
	var rows []creditRow
	for {
		line++
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if len(rec) != width {
			return nil, fmt.Errorf("%s line %d: %d fields: the header has %d", file, line, len(rec), width)
		}
		num := func(name string) (float64, error) {
			return parseFloat(rec[h[name]], fmt.Sprintf("%s line %d column %s", file, line, name))
		}
		ed, err := num("EDUCATION")
		if err != nil {
			return nil, err
		}
		f := make([]float64, len(creditFeatures))
		for j, name := range creditFeatures {
			if f[j], err = num(name); err != nil {
				return nil, err
			}
		}
		y, err := num(target)
		if err != nil || (y != 0 && y != 1) {
			return nil, fmt.Errorf("%s line %d column %s = %s: must be 0 or 1", file, line, target, param.Quote(rec[h[target]]))
		}
		rows = append(rows, creditRow{Education: int(ed), Features: f, Default: y})
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no data rows", file)
	}
	return rows, nil
}

func slicesContains(rec []string, s string) bool {
	for _, v := range rec {
		if strings.TrimSpace(v) == s {
			return true
		}
	}
	return false
}

// CIFAR-10 binary record: one label byte and 3·32·32 pixel bytes.
const (
	cifarPixels = 3 * 32 * 32
	cifarRecord = 1 + cifarPixels
)

// readCIFAR10Batch reads one CIFAR-10 binary batch (data_batch_N.bin):
// records of a label byte (0-9) and 3072 pixel bytes. It returns the pixel
// bytes row-major (red, green, blue planes of 32×32) and the labels.
func readCIFAR10Batch(r io.Reader) ([]byte, []int, error) {
	data, err := io.ReadAll(io.LimitReader(r, 10000*cifarRecord+1))
	if err != nil {
		return nil, nil, fmt.Errorf("cifar-10 batch: %w", err)
	}
	if len(data) == 0 || len(data)%cifarRecord != 0 || len(data) > 10000*cifarRecord {
		return nil, nil, fmt.Errorf("cifar-10 batch: %d bytes: must be 1 to 10000 records of %d bytes (label byte + 3072 pixels)", len(data), cifarRecord)
	}
	n := len(data) / cifarRecord
	px := make([]byte, 0, n*cifarPixels)
	labels := make([]int, n)
	for i := range n {
		rec := data[i*cifarRecord : (i+1)*cifarRecord]
		if rec[0] > 9 {
			return nil, nil, fmt.Errorf("cifar-10 batch record %d: label %d: must be 0-9", i, rec[0])
		}
		labels[i] = int(rec[0])
		px = append(px, rec[1:]...)
	}
	return px, labels, nil
}
