package votefile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"codeberg.org/sbinet/npyio/npy"

	"github.com/darrm/darrm/internal/tally"
)

// WriteVotes writes a CSV vote file that Open reads as 0/1 votes: the
// metadata header meta (none when meta is nil: such a file needs the
// teachers' guarantee stated at every release), a header row
// "id,t1,...,tK", then per query its id (its index from 1 when ids is nil)
// and its K votes, each 0 or 1.
func WriteVotes(w io.Writer, meta *Meta, ids []string, votes [][]byte) error {
	if len(votes) == 0 {
		return fmt.Errorf("write votes: no queries")
	}
	k := len(votes[0])
	var b []byte
	if meta != nil {
		if meta.K != k || meta.Classes != 2 || meta.Layout != LayoutVotes {
			return fmt.Errorf("write votes: the header states K = %d, %d classes, layout %v; the votes are of K = %d teachers, 0 or 1", meta.K, meta.Classes, meta.Layout, k)
		}
		var err error
		if b, err = meta.AppendHeader(b, FormatCSV); err != nil {
			return fmt.Errorf("write votes: %w", err)
		}
	}
	b = append(b, "id"...)
	for t := 1; t <= k; t++ {
		b = append(b, ",t"...)
		b = strconv.AppendInt(b, int64(t), 10)
	}
	b = append(b, '\n')
	err := writeRows(w, b, ids, len(votes), func(b []byte, q int) ([]byte, error) {
		if _, err := tally.Votes(k, votes[q]); err != nil {
			return b, err
		}
		for i, x := range votes[q] {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '0'+x)
		}
		return b, nil
	})
	if err != nil {
		return fmt.Errorf("write votes: %w", err)
	}
	return nil
}

// WriteCounts writes a CSV counts file that Open reads as counts: the
// metadata header meta (none when meta is nil), whose layout must be
// counts, a header row "id,c0,...,c(C-1)", then per query its id (its
// index from 1 when ids is nil) and its C counts, which sum to K.
func WriteCounts(w io.Writer, meta *Meta, ids []string, counts [][]int) error {
	if len(counts) == 0 {
		return fmt.Errorf("write counts: no queries")
	}
	c := len(counts[0])
	k := 0
	for _, n := range counts[0] {
		k += n
	}
	var b []byte
	if meta != nil {
		if meta.K != k || meta.Classes != c || meta.Layout != LayoutCounts {
			return fmt.Errorf("write counts: the header states K = %d, %d classes, layout %v; the counts are of K = %d teachers over %d classes", meta.K, meta.Classes, meta.Layout, k, c)
		}
		var err error
		if b, err = meta.AppendHeader(b, FormatCSV); err != nil {
			return fmt.Errorf("write counts: %w", err)
		}
	}
	b = append(b, "id"...)
	for j := range c {
		b = append(b, ",c"...)
		b = strconv.AppendInt(b, int64(j), 10)
	}
	b = append(b, '\n')
	err := writeRows(w, b, ids, len(counts), func(b []byte, q int) ([]byte, error) {
		if err := checkCountRow(counts[q], q, k, c); err != nil {
			return b, err
		}
		for j, n := range counts[q] {
			if j > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(n), 10)
		}
		return b, nil
	})
	if err != nil {
		return fmt.Errorf("write counts: %w", err)
	}
	return nil
}

// checkCountRow checks the counts of query q (from 0) that a writer
// writes: C counts >= 0 summing to K, the first query's. Teachers that
// vote all vote: a file that they write has no abstentions.
func checkCountRow(counts []int, q, k, c int) error {
	if _, err := tally.Counts(counts, k, c); err != nil {
		return err
	}
	sum := 0
	for _, n := range counts {
		sum += n
	}
	if sum != k {
		return &tally.CountsError{Msg: fmt.Sprintf("query %d: sum to %d, want K = %d, as the first query's", q+1, sum, k)}
	}
	return nil
}

// WriteCountsNPY writes vote counts as a NumPy int64 array of shape
// (queries, C), which Open reads as counts: the counts alone,
// as a NumPy file has no room for a metadata header. Each query's C
// counts sum to K, the first query's.
func WriteCountsNPY(w io.Writer, counts [][]int) error {
	if len(counts) == 0 {
		return fmt.Errorf("write counts: no queries")
	}
	c, k := len(counts[0]), 0
	for _, n := range counts[0] {
		k += n
	}
	flat := make([]int64, 0, len(counts)*c)
	rows := make([][]int64, len(counts))
	for q, r := range counts {
		if err := checkCountRow(r, q, k, c); err != nil {
			return fmt.Errorf("write counts: %w", err)
		}
		for _, n := range r {
			flat = append(flat, int64(n))
		}
		rows[q] = flat[q*c : (q+1)*c]
	}
	if err := npy.Write(w, rows); err != nil {
		return fmt.Errorf("write counts: %w", err)
	}
	return nil
}

// appendID appends the id of q to a row in format f: its id column (in
// JSON a number as written, else a string; in CSV quoted when it must
// be), or its position from 1 without one.
func appendID(b []byte, q *Query, f Format) []byte {
	switch {
	case q.ID == nil:
		return strconv.AppendInt(b, int64(q.Index), 10)
	case f == FormatJSONL && q.IDNumber:
		return append(b, q.ID...)
	case f == FormatJSONL:
		s, _ := json.Marshal(string(q.ID)) // a string always marshals
		return append(b, s...)
	case csvNeedsQuotes(q.ID):
		b = append(b, '"')
		b = append(b, bytes.ReplaceAll(q.ID, []byte{'"'}, []byte{'"', '"'})...)
		return append(b, '"')
	}
	return append(b, q.ID...)
}

// csvNeedsQuotes reports whether an id must be quoted in CSV output.
func csvNeedsQuotes(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	if b[0] == ' ' || b[0] == '\t' || b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[0] == '#' {
		return true
	}
	return bytes.ContainsAny(b, "\",\r\n")
}

// writeRows writes the CSV file that starts with b (a header) and has a
// row per query q < n, which row appends, in blocks of labelBuffer bytes;
// ids[q] is query q's id, its position from 1 when ids is nil.
func writeRows(w io.Writer, b []byte, ids []string, n int, row func(b []byte, q int) ([]byte, error)) error {
	if ids != nil && len(ids) != n {
		return fmt.Errorf("%d ids for %d queries", len(ids), n)
	}
	for q := range n {
		query := Query{Index: q + 1}
		if ids != nil {
			query.ID = []byte(ids[q])
		}
		b = append(appendID(b, &query, FormatCSV), ',')
		var err error
		if b, err = row(b, q); err != nil {
			return fmt.Errorf("query %d: %w", q+1, err)
		}
		b = append(b, '\n')
		if len(b) >= labelBuffer {
			if _, err := w.Write(b); err != nil {
				return err
			}
			b = b[:0]
		}
	}
	_, err := w.Write(b)
	return err
}
