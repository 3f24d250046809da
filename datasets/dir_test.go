package datasets

import (
	"path/filepath"
	"testing"
)

func TestDefaultDir(t *testing.T) {
	for _, tc := range []struct {
		env, xdg, home, want string
	}{
		{"/d", "/x", "/h", "/d"},
		{"", "/x", "/h", filepath.Join("/x", "darrm")},
		{"", "", "/h", filepath.Join("/h", ".local", "share", "darrm")},
	} {
		t.Setenv(EnvDir, tc.env)
		t.Setenv("XDG_DATA_HOME", tc.xdg)
		t.Setenv("HOME", tc.home)
		got, err := DefaultDir()
		if err != nil || got != tc.want {
			t.Errorf("DARRM_DATA=%q XDG_DATA_HOME=%q HOME=%q: %q, %v; want %q", tc.env, tc.xdg, tc.home, got, err, tc.want)
		}
	}
}
