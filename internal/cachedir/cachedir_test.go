package cachedir

import (
	"path/filepath"
	"testing"
)

func TestDefault(t *testing.T) {
	t.Setenv(Env, "/tmp/x-darrm")
	if d, _ := Default(); d != "/tmp/x-darrm" {
		t.Errorf("Default with %s set = %q", Env, d)
	}
	t.Setenv(Env, "")
	t.Setenv("XDG_CACHE_HOME", "/tmp/xdg")
	if d, _ := Default(); d != filepath.Join("/tmp/xdg", "darrm") {
		t.Errorf("Default with XDG_CACHE_HOME = %q", d)
	}
}

// TestOwns: the cache keeps its entries (Entry) and every file in a
// subfolder, and nothing else: not a file of another name beside its
// entries, nor one outside its folder.
func TestOwns(t *testing.T) {
	for _, tc := range []struct {
		rel  string
		want bool
	}{
		{Entry("darrm-gamma/v4 K=11"), true},
		{"teachers/mnist/model.bin", true},
		{"./teachers/../" + Entry("k"), true},
		{"notes.json", false},
		{"0123456789abcdef0123456789abcdeg.json", false},
		{"0123456789abcdef0123456789abcdef.txt", false},
		{"../" + Entry("k"), false},
		{"../elsewhere/out.csv", false},
	} {
		if got := Owns(tc.rel); got != tc.want {
			t.Errorf("Owns(%q) = %v, want %v", tc.rel, got, tc.want)
		}
	}
}
