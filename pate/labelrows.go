package pate

import (
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/votefile"
)

// labelOf reads the row of the label file lr for the n-th query q of
// the votes (counted from 1) and returns what became of it: answerGiven
// or answerWithheld, or ended when the file has no more rows (after the
// first query: the rest were not released). A row of another query's id
// is refused: the labels are of other votes.
func labelOf(lr *votefile.LabelReader, q *votefile.Query, n int) (a answer, ended bool, err error) {
	if !lr.Next() {
		if err := lr.Err(); err != nil {
			return answerUnknown, false, err
		}
		if n == 1 {
			return answerUnknown, false, lr.Errorf("no label rows: nothing was released")
		}
		return answerUnknown, true, nil
	}
	row := lr.Row()
	if row.ID != q.Key() {
		return answerUnknown, false, lr.Errorf("row %d: id %s, but query %d of the votes has id %s: the labels are of other votes", row.Index, param.Quote(row.ID), n, param.Quote(q.Key()))
	}
	if row.Answered {
		return answerGiven, false, nil
	}
	return answerWithheld, false, nil
}

// labelsEnd refuses a label file lr with rows left after the votes'
// last query, unless its rows had ended before (labelled false).
func labelsEnd(lr *votefile.LabelReader, labelled bool) error {
	if labelled && lr.Next() {
		return lr.Errorf("row %d: more rows than the votes have queries", lr.Row().Index)
	}
	return lr.Err()
}
