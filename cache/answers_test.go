package cache

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/statedir"
)

// TestAnswersSecret: the secret of the accountant's answers is made once,
// of random bytes private to the user, in the state folder, and read back
// as it is after; a file of another length there is refused, not replaced.
func TestAnswersSecret(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	t.Setenv(statedir.Env, state)
	first, err := answersSecret()
	if err != nil || len(first) != answersSecretBytes {
		t.Fatalf("a new secret: %d bytes, %v", len(first), err)
	}
	path := filepath.Join(state, "answers.key")
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the secret's file: %v, %v", st, err)
	}
	if again, err := answersSecret(); err != nil || !bytes.Equal(again, first) {
		t.Errorf("the secret read again differs: %v", err)
	}
	os.WriteFile(path, []byte("short"), 0o600)
	if _, err := answersSecret(); err == nil {
		t.Errorf("a secret of 5 bytes accepted")
	}
	if b, _ := os.ReadFile(path); string(b) != "short" {
		t.Errorf("a bad secret replaced: %q", b)
	}
}

// TestKeepAnswersNil: a nil Memo, which keeps nothing, is left as it is,
// in a cache or none (a nil Dir), where it was a nil dereference; a Memo
// of no cache keeps its answers in memory.
func TestKeepAnswersNil(t *testing.T) {
	t.Setenv(statedir.Env, filepath.Join(t.TempDir(), "state"))
	d, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []*Dir{d, nil} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("KeepAnswers(nil) of cache %v: panic %v", dir, r)
				}
			}()
			dir.KeepAnswers(nil)
		}()
	}
	var m accountant.Memo
	(*Dir)(nil).KeepAnswers(&m)
	if m.Dir != "" {
		t.Errorf("no cache: the answers kept in %q", m.Dir)
	}
}
