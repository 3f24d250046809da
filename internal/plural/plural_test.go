package plural

import "testing"

func TestOf(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{{0, "0 queries"}, {1, "1 query"}, {2, "2 queries"}, {-1, "-1 query"}, {1000, "1000 queries"}} {
		if got := Of(tc.n, "query", "queries"); got != tc.want {
			t.Errorf("Of(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
