// Package cachedir locates darrm's gamma cache on disk and names the files
// it keeps. Package cache stores its entries there; the command names the
// folder in its messages and refuses to write an output over a file the
// cache keeps, whether or not the cache is open.
package cachedir

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Env is the environment variable that overrides the cache location.
const Env = "DARRM_CACHE_DIR"

// Default returns the cache folder: $DARRM_CACHE_DIR if set, else
// $XDG_CACHE_HOME/darrm, else ~/.cache/darrm.
func Default() (string, error) {
	if d := os.Getenv(Env); d != "" {
		return d, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("cache: no cache directory (set %s): %w", Env, err)
	}
	return filepath.Join(base, "darrm"), nil
}

// Entry is the file name of the entry whose key is key: a digest of the
// key, 32 hexadecimal digits and ".json".
func Entry(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:16]) + ".json"
}

// Owns reports whether rel, a path relative to a cache folder, names a
// file that the cache keeps: an entry (Entry), or any file in a subfolder
// (where other caches keep theirs: the trained teachers', the accountant's
// answers). A command
// refuses to write its output over one.
func Owns(rel string) bool {
	rel = filepath.ToSlash(filepath.Clean(rel))
	if strings.Contains(rel, "/") {
		return !strings.HasPrefix(rel, "../")
	}
	name, ok := strings.CutSuffix(rel, ".json")
	if !ok || len(name) != 32 {
		return false
	}
	_, err := hex.DecodeString(name)
	return err == nil
}
