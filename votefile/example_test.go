package votefile_test

import (
	"fmt"
	"strings"

	"github.com/darrm/darrm/votefile"
)

// Reading PATE's published layout: a NumPy array of class labels, one
// row per teacher, one column per query.
func ExampleOpen_numPy() {
	in, err := votefile.Open("../testdata/pate-teachers-labels-K25.npy", votefile.Options{Classes: 10, Orientation: votefile.TeachersInRows})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer in.Close()
	queries := 0
	for in.Next() {
		queries++
	}
	fmt.Println(in.Format(), "K =", in.K(), "C =", in.Classes(), "queries:", queries, in.Err())
	// Output: npy K = 25 C = 10 queries: 60 <nil>
}

// Open decides what the rows hold when nothing says: rows of three
// numbers with equal sums are vote counts of three classes, and a Note
// says so.
func ExampleOpen_counts() {
	in, err := votefile.Open("counts.csv", votefile.Options{
		In:   strings.NewReader("200,30,20\n10,230,10\n"),
		Note: func(note string) { fmt.Println(note) },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for in.Next() {
		fmt.Println(in.Query().Counts)
	}
	fmt.Println(in.Input(), in.Layout(), "K =", in.K(), in.Err())
	// Output:
	// counts.csv holds vote counts, one column per class: read as counts
	// [200 30 20]
	// [10 230 10]
	// multi-class votes counts K = 250 <nil>
}
