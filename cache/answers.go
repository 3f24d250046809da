package cache

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/atomicfile"
	"github.com/darrm/darrm/internal/statedir"
)

// answersFolder is the cache's subfolder of the accountant's answers.
const answersFolder = "onebit"

// KeepAnswers makes m keep the answers of its one-bit compositions in the
// folder onebit of d (accountant.Memo's Dir; accountant.Memo.Save saves
// them), so that a budget asked again composes nothing, authenticated by
// the secret in the user's private state folder (answersSecret). With no
// secret, m keeps them in memory only. Call it before m's first use.
// A nil m, which keeps nothing, is left as it is.
func (d *Dir) KeepAnswers(m *accountant.Memo) {
	if m == nil {
		// It was a nil dereference: a nil *Memo is a Memo that keeps
		// nothing, which every function that takes one accepts.
		return
	}
	m.Dir, m.Secret = "", nil
	if secret, err := answersSecret(); err == nil {
		m.Dir, m.Secret = d.Folder(answersFolder), secret
	}
}

// answersSecretBytes is the length of the secret of the accountant's
// answers.
const answersSecretBytes = 32

// answersSecret returns the secret that authenticates the accountant's
// answers (KeepAnswers): the file answers.key of the state
// folder (statedir.Default, private to the user, where the ledgers'
// records are), made of random bytes when there is none. The cache folder
// may be shared or synced; an answer read from it counts only if written
// by a process that knew the secret.
func answersSecret() ([]byte, error) {
	dir, err := statedir.Default()
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "answers.key")
	b, err := atomicfile.ReadFile(path, answersSecretBytes)
	if err == nil && len(b) == answersSecretBytes {
		return b, nil
	}
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: not a secret of %d bytes: %v", path, answersSecretBytes, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	secret := make([]byte, answersSecretBytes)
	if _, err := rand.Read(secret); err != nil {
		return nil, err
	}
	err = atomicfile.WriteNew(path, 0o600, func(f *os.File) error {
		_, err := f.Write(secret)
		return err
	})
	if errors.Is(err, fs.ErrExist) {
		// Another process made it first.
		return answersSecret()
	}
	return secret, err
}
