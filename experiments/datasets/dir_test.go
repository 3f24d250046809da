package datasets

import (
	"errors"
	"path/filepath"
	"strings"
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

// TestLoadDefaultDir: "" names the default data folder in LoadBinary and
// Load, which fail with ErrNoDir when the environment names none.
func TestLoadDefaultDir(t *testing.T) {
	data := t.TempDir()
	for _, tc := range []struct {
		name      string
		env, home string
		missing   string // the path a *MissingError names, or
		noDir     bool   // ErrNoDir
	}{
		{"$DARRM_DATA", data, "", data, false},
		{"home", "", data, filepath.Join(data, ".local", "share", "darrm"), false},
		{"nothing set", "", "", "", true},
	} {
		t.Setenv(EnvDir, tc.env)
		t.Setenv("XDG_DATA_HOME", "")
		t.Setenv("HOME", tc.home)
		for _, load := range []struct {
			what string
			err  func() error
		}{
			{"LoadBinary", func() error { _, err := LoadBinary("", "mnist58"); return err }},
			{"Load", func() error { _, err := Load("", "mnist69", Mean); return err }},
		} {
			err := load.err()
			var me *MissingError
			switch {
			case tc.noDir && (!errors.Is(err, ErrNoDir) || !strings.Contains(err.Error(), "set "+EnvDir)):
				t.Errorf("%s, %s: %v, want ErrNoDir", tc.name, load.what, err)
			case !tc.noDir && (!errors.As(err, &me) || !strings.HasPrefix(me.Path, tc.missing)):
				t.Errorf("%s, %s: %v, want a *MissingError under %s", tc.name, load.what, err, tc.missing)
			}
		}
	}
}
